"""Corpora in their shipped form: gzipped shards with hostile lines, mistyped metadata, runs that never mix,
flags that are checked before any work, and the per-input accounting."""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.arsyta import run
from tests.support.paths import REPO

CAP = 400_000


def _gz(path: Path, data: bytes) -> None:
    path.write_bytes(gzip.compress(data))


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def shipped(shared, examples, tmp_path_factory) -> dict:
    """The example corpus and real documents as a user downloads them: gzipped, with hostile records."""
    root = tmp_path_factory.mktemp("shipped")
    for name in ("tei", "s2orc", "metadata"):
        (root / name).mkdir()
    for tei in sorted((examples / "tei").glob("*.tei.xml")):
        _gz(root / "tei" / f"{tei.name}.gz", tei.read_bytes())
    _gz(root / "tei/paper18.tei.xml.gz", (shared / "grobid/os-ia-pipegrobid/paper18.tei.xml").read_bytes())
    broken = gzip.compress((shared / "grobid/os-ia-pipegrobid/paper24.tei.xml").read_bytes())
    (root / "tei/broken.tei.xml.gz").write_bytes(broken[: len(broken) // 2])  # a download cut short

    for single in sorted((examples / "s2orc").glob("*.json")):
        _gz(root / "s2orc" / f"{single.name}.gz", single.read_bytes())
    good = _lines(examples / "s2orc/papers.jsonl") + _lines(examples / "unarxive/papers.jsonl")
    unarxive = json.loads(_lines(examples / "unarxive/papers.jsonl")[0])
    int_section = json.loads(json.dumps(unarxive))
    int_section["paper_id"] = int_section["metadata"]["id"] = "2109.00999"
    int_section["body_text"][0]["section"] = 7
    overlapping = json.loads(json.dumps(unarxive))
    overlapping["paper_id"] = overlapping["metadata"]["id"] = "2109.00998"
    first = overlapping["body_text"][0]["cite_spans"][0]
    overlapping["body_text"][0]["cite_spans"].append({**first, "start": first["start"] + 5, "end": first["end"] + 3})
    overlapping["body_text"][0]["cite_spans"].append({**first, "start": 10**6, "end": 10**6 + 5})  # past the text
    too_large = json.loads(json.dumps(unarxive))
    too_large["paper_id"] = too_large["metadata"]["id"] = "2109.00997"
    too_large["body_text"][0]["text"] += " padding" * (CAP // 8)
    hostile = ["{not json", json.dumps(int_section), json.dumps(overlapping), json.dumps(too_large)]
    _gz(root / "s2orc/shard-000.jsonl.gz", ("\n".join(good + hostile) + "\n").encode())
    # the real S2ORC 2020 documents too, one per line
    real = [
        json.dumps(json.loads(p.read_text())) for p in sorted((shared / "s2orc/s2orc-doc2json/20200705").glob("*.json"))
    ]
    _gz(root / "s2orc/shard-001.jsonl.gz", ("\n".join(real) + "\n").encode())

    for meta in sorted((examples / "metadata").glob("*.jsonl")):
        _gz(root / "metadata" / f"{meta.name}.gz", meta.read_bytes())
    arxiv = _lines(shared / "arxiv/arxiv-browse_abs_derived.jsonl")
    record = json.loads(arxiv[0])
    mistyped = [
        {**record, "id": "2101.00001", "versions": [{"version": "v1", "created": 1609459200}]},
        {**record, "id": "2101.00002", "versions": 5},
        {**record, "id": "2101.00003", "authors": ["A. Smith", "B. Lee"]},
        {**record, "id": "2101.00004", "authors": 7},
        {**record, "id": "2101.00005", "doi": 101234},
    ]
    metadata_lines = arxiv + [json.dumps(m) for m in mistyped] + ["[1, 2]", '{"id": "2101.00006", "title": "Trunc']
    _gz(root / "metadata/arxiv-snapshot.jsonl.gz", ("\n".join(metadata_lines) + "\n").encode())
    return {
        "root": root,
        "documents": 7 + 1 + 1 + 2 + len(good) + len(hostile) + len(real),
        "metadata_records": len(_lines(examples / "metadata/arxiv-metadata.jsonl"))
        + len(_lines(examples / "metadata/s2orc-metadata.jsonl"))
        + len(metadata_lines),
    }


def _args(root: Path, out: Path, *extra: str) -> list[str]:
    return [
        "--runner=FnApiRunner",
        "--tei",
        str(root / "tei/*.xml.gz"),
        "--s2orc",
        str(root / "s2orc/*.json.gz"),
        "--s2orc",
        str(root / "s2orc/*.jsonl.gz"),
        "--metadata",
        str(root / "metadata/*.jsonl.gz"),
        "--max_document_bytes",
        str(CAP),
        "--output",
        str(out),
        *extra,
    ]


@pytest.fixture(scope="module")
def first_run(shipped, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "out"
    stats = run(_args(shipped["root"], out))
    return out, stats


def _table(out: Path, name: str) -> list[dict]:
    """A table as the README reads it: `papers` is papers/*.parquet, `contexts/train` contexts/train-*.parquet."""
    files = sorted(glob.glob(str(out / (f"{name}-*.parquet" if "/" in name else f"{name}/*.parquet"))))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


@pytest.mark.e2e
def test_gzipped_shards_with_hostile_lines_finish_and_balance(shipped, first_run):
    out, stats = first_run
    funnel = stats["funnel"]
    assert funnel["documents_in"] == shipped["documents"]
    assert funnel["documents_in"] == funnel["documents_parsed"] + funnel["documents_dead_lettered"]
    # every mention is a written context or a counted drop
    written = sum(len(_table(out, f"contexts/{split}")) for split in ("train", "validation", "test"))
    assert written + sum(v for k, v in funnel.items() if k.startswith("dropped_")) == funnel["mentions"]
    letters = {(Path(r["source"]).name, r["stage"], r["reason"]) for r in _table(out, "dead_letter")}
    assert ("broken.tei.xml.gz", "read", "unreadable_file") in letters
    assert ("shard-000.jsonl.gz:4", "parse", "malformed_json") in letters
    assert ("shard-000.jsonl.gz:7", "read", "too_large") in letters
    assert ("arxiv-snapshot.jsonl.gz:1197", "metadata", "unknown_layout") in letters
    assert ("arxiv-snapshot.jsonl.gz:1198", "metadata", "truncated_json") in letters
    assert funnel["dropped_overlapping_span"] == 1
    assert stats["other_counts"]["cite_spans_dropped:out_of_range"] == 1
    document_letters = [r for r in _table(out, "dead_letter") if r["stage"] != "metadata"]
    assert len(document_letters) == funnel["documents_dead_lettered"]


@pytest.mark.e2e
def test_every_context_holds_exactly_one_targetcit(first_run):
    out, stats = first_run
    contexts = [row for split in ("train", "validation", "test") for row in _table(out, f"contexts/{split}")]
    assert len(contexts) == stats["funnel"]["contexts"] > 40
    for row in contexts:
        assert row["char_context"].count("TARGETCIT") == 1, row["context_id"]
        assert row["sentence_context"].count("TARGETCIT") == 1, row["context_id"]
    # the overlapping copy of the unarXive paper still gives contexts, and the coerced integer section is text
    assert any(row["citing_id"] == "2109.00998" for row in contexts)
    assert {row["section_heading"] for row in contexts if row["citing_id"] == "2109.00999"} >= {"7"}


@pytest.mark.e2e
def test_the_inputs_table_accounts_for_every_file_and_failed_line(shipped, first_run):
    out, stats = first_run
    rows = {row["path"]: row for row in _table(out, "inputs")}
    files = {p: r for p, r in rows.items() if Path(p).parent.name in ("tei", "s2orc", "metadata")}
    files = {p: r for p, r in files.items() if not (":" in Path(p).name or "@" in Path(p).name)}
    documents = [r for r in files.values() if r["kind"] in ("tei", "s2orc")]
    assert sum(r["records_read"] for r in documents) == shipped["documents"]
    assert sum(r["records_read"] for r in files.values() if r["kind"] == "metadata") == shipped["metadata_records"]
    for row in files.values():
        assert row["records_read"] == row["parsed"] + row["dead_lettered"], row
    shard = rows[str(shipped["root"] / "s2orc/shard-000.jsonl.gz")]
    assert (shard["records_read"], shard["dead_lettered"]) == (7, 2)  # 3 good + 4 hostile lines
    assert rows[str(shipped["root"] / "s2orc/shard-000.jsonl.gz") + ":7"]["reason"] == "too_large"
    assert rows[str(shipped["root"] / "tei/broken.tei.xml.gz")]["reason"] == "unreadable_file"
    assert sum(r["parsed"] for r in documents) == stats["funnel"]["documents_parsed"]


def _snapshot(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*") if p.is_file()}


@pytest.mark.e2e
def test_a_second_run_into_the_same_output_is_refused_and_leaves_it_intact(shipped, first_run, capsys):
    out, _ = first_run
    before = _snapshot(out)
    assert (out / "_SUCCESS").is_file() and (out / "manifest.json").is_file()
    with pytest.raises(SystemExit) as stopped:
        run(_args(shipped["root"], out))
    assert stopped.value.code == 2
    assert "--overwrite" in capsys.readouterr().err
    assert _snapshot(out) == before


@pytest.mark.e2e
def test_overwrite_with_other_shard_counts_reads_back_exactly_the_stats(shipped, tmp_path):
    out = tmp_path / "out"
    run(_args(shipped["root"], out, "--num_shards", "3"))
    stats = run(_args(shipped["root"], out, "--num_shards", "1", "--overwrite"))
    for split, n in stats["contexts"].items():
        assert len(_table(out, f"contexts/{split}")) == n  # the README's glob, contexts/{split}-*.parquet
        assert len(glob.glob(str(out / f"contexts/{split}-*.parquet"))) == (1 if n else 0)
    assert len(_table(out, "papers")) == stats["papers"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tables"]["contexts/train"] == stats["contexts"]["train"]
    listed = {f["path"] for f in manifest["files"]}
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    on_disk -= {"manifest.json", "_SUCCESS", "_citrec_output.json"}
    assert listed == on_disk
    assert not list(out.rglob("beam-temp-*")) and not (out / "_staging").exists()


@pytest.mark.e2e
def test_a_killed_run_is_not_mistaken_for_a_dataset(examples, tmp_path, capsys):
    """What a run killed mid-job leaves (its marker, its lease, half a staging directory) is refused, explained,
    and replaced only with --overwrite and --break_lease."""
    import subprocess
    import sys

    from pipelines.ownership import Lease, acquire_lease, write_marker

    out = tmp_path / "out"
    (out / "_staging/contexts/beam-temp-train-123").mkdir(parents=True)
    (out / "_staging/contexts/beam-temp-train-123/part").write_bytes(b"half")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lease = Lease.new("arsyta")
    lease = Lease(lease.run_id, "arsyta", lease.host, int(dead.stdout), lease.started)
    acquire_lease(str(out), lease)
    write_marker(str(out))
    for flags in ([], ["--overwrite"]):
        with pytest.raises(SystemExit) as stopped:
            run(["--runner=FnApiRunner", "--output", str(out), *flags])
        assert stopped.value.code == 2
        assert "no longer running" in capsys.readouterr().err
    stats = run(["--runner=FnApiRunner", "--output", str(out), "--overwrite", "--break_lease"])
    assert not list(out.rglob("beam-temp-*"))
    from datasets import load_dataset

    files = {s: str(out / f"contexts/{s}-*.parquet") for s in ("train", "validation", "test")}
    loaded = load_dataset("parquet", data_files=files)
    assert {s: loaded[s].num_rows for s in files} == stats["contexts"]


@pytest.mark.e2e
def test_byte_range_reading_gives_the_same_dataset(shipped, first_run, tmp_path):
    out, stats = first_run
    ranged = run(_args(shipped["root"], tmp_path / "ranged", "--read_range_bytes", "700"))
    # gzipped files cannot be split: the plain copy of the metadata is read in ~700-byte ranges
    assert ranged["funnel"] == stats["funnel"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "arxiv.jsonl").write_bytes(
        gzip.decompress((shipped["root"] / "metadata/arxiv-snapshot.jsonl.gz").read_bytes())
    )
    args = [a for a in _args(shipped["root"], tmp_path / "r2") if a != str(shipped["root"] / "metadata/*.jsonl.gz")]
    args.remove("--metadata")
    by_range = run(
        [
            *args,
            "--metadata",
            str(plain / "arxiv.jsonl"),
            "--metadata",
            str(shipped["root"] / "metadata/*metadata.jsonl.gz"),
            "--read_range_bytes",
            "700",
        ]
    )
    whole = run(
        [
            *args[:-1],
            str(tmp_path / "r3"),
            "--metadata",
            str(plain / "arxiv.jsonl"),
            "--metadata",
            str(shipped["root"] / "metadata/*metadata.jsonl.gz"),
        ]
    )
    assert by_range["funnel"] == whole["funnel"] == stats["funnel"]
    assert by_range["metadata"] == whole["metadata"]
    sources = {r["source"] for r in _table(tmp_path / "r2", "dead_letter") if r["stage"] == "metadata"}
    assert sources and all("@" in s for s in sources)  # ranged lines are named by byte offset


@pytest.mark.e2e
def test_a_mistyped_flag_exits_2_before_any_work(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.arsyta", "--teii", "x", "--output", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 2
    assert "unrecognized arguments: --teii x" in result.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("case", ["directory_flag", "output_under_file", "output_is_file", "unwritable"])
def test_bad_paths_stop_with_one_error_line_and_exit_2(examples, tmp_path, capsys, case):
    args = ["--runner=FnApiRunner"]
    if case == "directory_flag":
        args += ["--tei", str(examples / "tei"), "--output", str(tmp_path / "o")]
    elif case == "output_under_file":
        (tmp_path / "file").write_text("x")
        args += ["--output", str(tmp_path / "file/sub/out")]
    elif case == "output_is_file":
        (tmp_path / "file").write_text("x")
        args += ["--output", str(tmp_path / "file")]
    else:  # /proc takes no new directory, even from root
        args += ["--output", "/proc/citrec-test/out"]
    with pytest.raises(SystemExit) as stopped:
        run(args)
    assert stopped.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith("error: ")


def test_a_directory_matched_by_a_glob_is_a_dead_letter(tmp_path):
    from mapping.records import DeadLetter
    from pipelines.inputs import PlanReadsFn, ReadConfig

    (tmp_path / "sub.tei.xml").mkdir()
    outputs = list(PlanReadsFn("tei", ReadConfig()).process(str(tmp_path / "sub.tei.xml")))
    letters = [o.value for o in outputs if getattr(o, "tag", None) == "dead"]
    assert letters == [DeadLetter(str(tmp_path / "sub.tei.xml"), "read", "is_a_directory", letters[0].detail)]
    tallies = dict(o.value for o in outputs if getattr(o, "tag", None) == "tally")
    assert tallies["documents_in"] == tallies["documents_dead_lettered"] == 1


@pytest.mark.e2e
def test_duplicates_keep_the_file_named_for_the_paper(shared, tmp_path):
    real = (shared / "grobid/os-ia-pipegrobid/paper18.tei.xml").read_bytes()  # arXiv 2602.14645
    (tmp_path / "a-copy.tei.xml").write_bytes(real)
    (tmp_path / "2602.14645v1.tei.xml").write_bytes(real)
    (tmp_path / "0-another.tei.xml").write_bytes(real)
    run(["--runner=FnApiRunner", "--tei", str(tmp_path / "*.xml"), "--output", str(tmp_path / "out")])
    duplicates = {
        Path(r["source"]).name for r in _table(tmp_path / "out", "dead_letter") if r["reason"] == "duplicate_id"
    }
    assert duplicates == {"a-copy.tei.xml", "0-another.tei.xml"}
    rows = {Path(r["path"]).name: r for r in _table(tmp_path / "out", "inputs")}
    assert rows["a-copy.tei.xml"]["duplicate_of"] == [str(tmp_path / "2602.14645v1.tei.xml")]
    assert (rows["2602.14645v1.tei.xml"]["parsed"], rows["a-copy.tei.xml"]["parsed"]) == (1, 0)


@pytest.mark.e2e
def test_unarxive_2020_plain_text_is_one_dead_letter_per_file(shared, tmp_path, capsys):
    papers = sorted((shared / "unarxive2020/paper_centered_sample/papers").glob("*.txt"))[:3]
    for paper in papers:
        shutil.copy(paper, tmp_path / paper.name)
    shutil.copy(shared / "unarxive2020/paper_centered_sample/papers/refs.db", tmp_path / "refs.db")
    stats = run(["--runner=FnApiRunner", "--s2orc", str(tmp_path / "*"), "--output", str(tmp_path / "out")])
    letters = _table(tmp_path / "out", "dead_letter")
    assert stats["funnel"]["documents_in"] == len(papers) + 1 == len(letters)
    assert {r["reason"] for r in letters} == {"unknown_layout"}
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: no split has contexts: ")  # every split is empty
    assert not (tmp_path / "out/contexts").exists()


@pytest.mark.beam
def test_s2ag_abstracts_join_their_papers_by_corpus_id_in_gzipped_shards(tmp_path):
    """The `papers` and `abstracts` datasets as S2 ships them (gzipped JSONL shards; records written by hand
    from the documented layout, see tests/test_s2ag.py) become one database paper with its abstract."""
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.transforms import ReadPaperDatabase

    papers = [
        {"corpusid": 11, "externalids": {"ArXiv": "2004.00011"}, "title": "Graph Citation Models", "year": 2020},
        {"corpusid": 12, "externalids": {"DOI": "10.1000/XYZ"}, "title": "Text Citation Models", "year": 2021},
        {"corpusid": 13, "externalids": {}, "title": "No Abstract Anywhere", "year": 2019},
    ]
    abstracts = [
        {"corpusid": 11, "abstract": "Graphs help.", "openaccessinfo": None},
        {"corpusid": 12, "abstract": "Text helps.", "openaccessinfo": None},
        {"corpusid": 99, "abstract": "An orphan.", "openaccessinfo": None},
    ]
    _gz(tmp_path / "papers-000.jsonl.gz", "\n".join(json.dumps(p) for p in papers).encode())
    _gz(tmp_path / "abstracts-000.jsonl.gz", "\n".join(json.dumps(a) for a in abstracts).encode())
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | ReadPaperDatabase([str(tmp_path / "*.jsonl.gz")])
        assert_that(
            out["papers"] | beam.Map(lambda paper: (paper.paper_id, paper.abstract)),
            equal_to([("2004.00011", "Graphs help."), ("doi:10.1000/xyz", "Text helps."), ("s2corpus:13", None)]),
            label="Papers",
        )
        assert_that(
            out["tally"] | beam.CombinePerKey(sum) | beam.Filter(lambda kv: kv[0].startswith("metadata_")),
            equal_to(
                [
                    ("metadata_records_in", 6),
                    ("metadata_abstracts_joined", 2),
                    ("metadata_abstracts_without_paper", 1),
                ]
            ),
            label="Tallies",
        )
