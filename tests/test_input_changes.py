"""Inputs that change between the listing and the reading: a file rewritten or appended to mid-run, a file that
vanishes after the launcher checked it. What was read of a changed file is never counted as a complete read: the
file is dead-lettered `changed_while_read`, record by record, and its `inputs/` row says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mapping.records import DeadLetter, InputTally, ParsedDocument
from pipelines.inputs import ReadConfig, ReadRecordsFn, ReadTask

N_DOCUMENTS = 300


def _documents(examples: Path, n: int = N_DOCUMENTS, prefix: str = "77") -> list[str]:
    """`n` S2ORC lines: the example's first document under `n` distinct paper ids."""
    record = json.loads((examples / "s2orc" / "papers.jsonl").read_text().splitlines()[0])
    lines = []
    for i in range(n):
        record["paper_id"] = f"{prefix}{i:05d}"
        lines.append(json.dumps(record))
    return lines


def _dead_letters(out: Path) -> list[dict]:
    return [row for path in sorted((out / "dead_letter").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def _inputs(out: Path) -> dict[str, dict]:
    rows = [row for path in sorted((out / "inputs").glob("*.parquet")) for row in pq.read_table(path).to_pylist()]
    return {row["path"]: row for row in rows}


def _paper_ids(out: Path) -> set[str]:
    return {r["paper_id"] for p in (out / "papers").glob("*.parquet") for r in pq.read_table(p).to_pylist()}


# --------------------------------------------------------------------------------------------------- units


def test_a_file_is_unchanged_only_while_its_size_and_time_are_as_listed(tmp_path):
    from pipelines.inputs import FileChanged, check_unchanged

    path = tmp_path / "a.jsonl"
    path.write_text("{}\n")
    stat = os.stat(path)
    task = ReadTask(str(path), "s2orc", size=stat.st_size, mtime=stat.st_mtime)
    check_unchanged(task)
    check_unchanged(ReadTask(str(path), "s2orc"))  # nothing listed: nothing to compare
    os.utime(path, (stat.st_atime, stat.st_mtime + 5))
    with pytest.raises(FileChanged, match="modified since"):
        check_unchanged(task)
    path.write_text("{}\n{}\n")
    with pytest.raises(FileChanged, match="3 bytes then, 6 now"):
        check_unchanged(task)
    path.unlink()
    with pytest.raises(FileChanged, match="is gone"):
        check_unchanged(task)


def test_a_document_file_rewritten_after_its_listing_is_one_dead_letter_and_no_document(examples, tmp_path):
    source = examples / "tei" / "1811.00101.tei.xml"
    path = tmp_path / "1811.00101.tei.xml"
    path.write_bytes(source.read_bytes())
    stat = os.stat(path)
    listed = ReadTask(str(path), "tei", size=stat.st_size - 1, mtime=stat.st_mtime)  # as it was before a rewrite
    fn = ReadRecordsFn("tei", ReadConfig())
    out = list(fn.process(listed))
    values = [getattr(o, "value", o) for o in out]
    letters = [v for v in values if isinstance(v, DeadLetter)]
    assert [(d.source, d.reason) for d in letters] == [(str(path), "changed_while_read")]
    assert not [v for v in values if isinstance(v, tuple) and isinstance(v[-1], ParsedDocument)]
    [account] = [v for v in values if isinstance(v, InputTally)]
    assert (account.records_read, account.parsed, account.dead_lettered) == (1, 0, 1)
    # the same file as listed reads normally
    ok = [getattr(o, "value", o) for o in fn.process(ReadTask(str(path), "tei", size=stat.st_size, mtime=stat.st_mtime))]
    assert not [v for v in ok if isinstance(v, DeadLetter)]
    assert [v[1].paper_id for v in ok if isinstance(v, tuple) and isinstance(v[-1], ParsedDocument)] == ["1811.00101"]


# ------------------------------------------------------------------------------------------------ pipelines


def _rewrite_on_second_range(monkeypatch, path: Path, new_text: str) -> None:
    """The file at `path` is rewritten as the second of its byte ranges starts to be read: mid-run, after its first
    range was read from the original."""
    import pipelines.inputs as inputs

    real = inputs.iter_task_lines
    calls = {"n": 0}

    def rewriting(task, cap):
        if task.path == str(path):
            calls["n"] += 1
            if calls["n"] == 2:
                path.write_text(new_text)
        return real(task, cap)

    monkeypatch.setattr(inputs, "iter_task_lines", rewriting)


@pytest.mark.e2e
def test_a_jsonl_rewritten_while_read_in_ranges_uses_none_of_it(examples, tmp_path, monkeypatch):
    from pipelines.arsyta import run

    lines = _documents(examples)
    path = tmp_path / "shard.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rewritten = "\n".join(lines[120:] + _documents(examples, 50, prefix="88")) + "\n"
    _rewrite_on_second_range(monkeypatch, path, rewritten)
    out = tmp_path / "out"
    args = ["--runner=FnApiRunner", "--s2orc", str(path), "--output", str(out), "--read_range_bytes", "100000"]
    assert path.stat().st_size > 300_000  # several ranges
    stats = run([*args, "--metadata", str(examples / "metadata" / "arxiv-metadata.jsonl")])
    assert stats["checks"]["documents_balance"] is True
    ids = _paper_ids(out)
    assert not {i for i in ids if i.startswith(("77", "88"))}, "records of a changed file were used"
    letters = [d for d in _dead_letters(out) if d["source"].startswith(str(path))]
    assert letters and {d["reason"] for d in letters} == {"changed_while_read"}
    assert stats["funnel"]["documents_in"] == stats["funnel"]["documents_dead_lettered"] == len(letters)
    row = _inputs(out)[str(path)]
    assert row["reason"] == "changed_while_read" and row["parsed"] == 0
    assert row["records_read"] == row["dead_lettered"] == len(letters)


@pytest.mark.e2e
def test_lines_appended_while_a_file_is_read_are_never_a_silent_partial_read(examples, tmp_path, monkeypatch):
    from pipelines.arsyta import run

    lines = _documents(examples)
    path = tmp_path / "shard.jsonl"
    path.write_text("\n".join(lines) + "\n")
    appended = path.read_text() + "\n".join(_documents(examples, 40, prefix="99")) + "\n"
    _rewrite_on_second_range(monkeypatch, path, appended)
    out = tmp_path / "out"
    stats = run(["--runner=FnApiRunner", "--s2orc", str(path), "--output", str(out), "--read_range_bytes", "100000"])
    assert not {i for i in _paper_ids(out) if i.startswith(("77", "99"))}
    assert _inputs(out)[str(path)]["reason"] == "changed_while_read"
    assert stats["checks"]["documents_balance"] is True


@pytest.mark.e2e
def test_a_metadata_file_that_vanishes_after_the_launchers_check_is_a_dead_letter(examples, tmp_path, monkeypatch):
    import pipelines.skeleton as skeleton
    from pipelines.arsyta import run

    metadata = tmp_path / "arxiv-metadata.jsonl"
    metadata.write_bytes((examples / "metadata" / "arxiv-metadata.jsonl").read_bytes())
    checked = skeleton.check_patterns

    def check_then_vanish(inputs):
        checked(inputs)
        metadata.unlink()

    monkeypatch.setattr(skeleton, "check_patterns", check_then_vanish)
    out = tmp_path / "out"
    stats = run(
        ["--runner=FnApiRunner", "--tei", str(examples / "tei" / "*.xml"), "--metadata", str(metadata), "--output",
         str(out)]
    )
    letters = [d for d in _dead_letters(out) if d["source"] == str(metadata)]
    assert [(d["stage"], d["reason"]) for d in letters] == [("read", "no_file_matched")]
    assert stats["dead_letters"]["read:no_file_matched"] == 1
    assert _inputs(out)[str(metadata)]["reason"] == "no_file_matched"


def test_a_pdf_rewritten_after_its_listing_is_never_sent_to_grobid(tmp_path):
    """The PDF step reads a PDF whole: one that is not the file listed is dead-lettered before any cache lookup or
    request (the URL below answers nothing)."""
    from pipelines.grobid import GrobidConfig, GrobidParseFn

    path = tmp_path / "paper.pdf"
    path.write_bytes(b"%PDF-1.4 a paper")
    stat = os.stat(path)
    fn = GrobidParseFn(GrobidConfig(url="http://127.0.0.1:9", version="0.8.2"))
    fn.setup()
    listed = ReadTask(str(path), "pdfs", size=stat.st_size, mtime=stat.st_mtime)
    path.write_bytes(b"%PDF-1.4 another paper, longer")
    _, letter, counts = fn._fetch(listed)
    assert isinstance(letter, DeadLetter) and (letter.stage, letter.reason) == ("read", "changed_while_read")
    assert "grobid_requests" not in counts


def test_a_review_file_rewritten_after_its_listing_is_one_dead_letter_and_no_review(tmp_path):
    from pipelines.citationr import ParseReviewFileFn

    path = tmp_path / "304.json"
    path.write_text(json.dumps({"id": "304", "title": "A paper", "reviews": [{"comments": "Cite X (2020)."}]}))
    stat = os.stat(path)
    listed = ReadTask(str(path), "reviews", size=stat.st_size, mtime=stat.st_mtime)
    path.write_text(json.dumps({"id": "305", "title": "Another paper", "reviews": []}))
    values = [getattr(o, "value", o) for o in ParseReviewFileFn().process(listed)]
    letters = [v for v in values if isinstance(v, DeadLetter)]
    assert [(d.source, d.reason) for d in letters] == [(str(path), "changed_while_read")]
    assert not [v for v in values if type(v).__name__ in ("Review", "Submission")]
