"""The peer layouts (`--export hatten,symtax` for arsyta, `--export rmc` for citationr), read back the way each
peer's own loader reads them. The `read_like_*` helpers below follow the peers' code line by line (the file
and commit are named in each); the fixtures are small hand-made Parquet tables written with the dataset's
schemas, and the expected files are written out by hand, not taken from the exporter."""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractors.schemas import CANDIDATES_SCHEMA, CONTEXTS_SCHEMA, PAPERS_SCHEMA, POSITIVES_SCHEMA, QUERIES_SCHEMA
from pipelines.exports import (
    ExportRequest,
    export_hatten,
    export_rmc,
    export_symtax,
    plan_exports,
    symtax_classes,
    symtax_context_id,
    symtax_id,
    write_exports,
)
from tests.support.example_corpus import REVIEWS_RECOMMEND, expected_contexts, expected_spec, reviews_database

# The keys of SymTax's category embeddings (Scibert_data.json, Specter_data.json @ e3de5b2c): per.py and
# src/rerank/train.py look every paper's categories[0] up in them.
SYMTAX_CLASSES = frozenset(
    "cs.AI cs.AR cs.CC cs.CE cs.CG cs.CL cs.CR cs.CV cs.CY cs.DB cs.DC cs.DL cs.DM cs.DS cs.ET cs.FL cs.GL cs.GR "
    "cs.GT cs.HC cs.IR cs.IT cs.LG cs.LO cs.MA cs.MM cs.MS cs.NA cs.NE cs.NI cs.OH cs.OS cs.PF cs.PL cs.RO cs.SC "
    "cs.SD cs.SE cs.SI cs.SY".split()
)


# ------------------------------------------------------------------------------- the peers' loaders, re-read


def read_like_hatten(directory: Path) -> dict[str, list[dict]]:
    """nianlonggu/Local-Citation-Recommendation @ e46cae55: src/prefetch/datautils.py (PrefetchDataset),
    test.py, get_prefetched_ids.py, compute_papers_embedding.py, src/rerank/datautils.py (RerankDataset).
    Returns the queries per split as {context_id, citing_id, masked_text, positive_ids}."""
    papers = json.loads((directory / "papers.json").read_text(encoding="utf-8"))
    contexts = json.loads((directory / "contexts.json").read_text(encoding="utf-8"))
    for paper in papers.values():  # compute_papers_embedding.py: paper["title"], paper["abstract"] as text
        assert isinstance(paper["title"], str) and isinstance(paper["abstract"], str)
    queries = {}
    for name in ("train", "val", "test"):
        corpus = json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
        assert isinstance(corpus, list)
        queries[name] = []
        for item in corpus:
            context = contexts[item["context_id"]]  # test.py / datautils.py: a KeyError stops their run
            masked_text, citing_id = context["masked_text"], context["citing_id"]
            assert isinstance(masked_text, str) and "TARGETCIT" in masked_text  # rerank: TARGETCIT -> <cit>
            citing = papers.get(citing_id, {})
            assert isinstance(citing.get("title", ""), str) and isinstance(citing.get("abstract", ""), str)
            positive_ids = item["positive_ids"]
            assert isinstance(positive_ids, list) and positive_ids  # test.py divides by len(set(positive_ids))
            assert all(isinstance(p, str) and p in papers for p in positive_ids)  # rankable: in the index
            queries[name].append(
                {"context_id": item["context_id"], "citing_id": citing_id, "masked_text": masked_text}
                | {"positive_ids": positive_ids}
            )
    return queries


def read_like_symtax(directory: Path) -> dict[str, list[dict]]:
    """goyalkaraniit/SymTax @ e3de5b2c: per.py (file names, the citation graph from context ids, the test
    loop), citation_recommender.py::Reranker_PER_v1 (cat_map[categories[0]] for the query and every
    candidate), src/rerank/datautils.py::get_paper_cat (categories[0] of citing, positive, candidates)."""
    contexts = json.loads((directory / "contexts_new_head.json").read_text(encoding="utf-8"))
    papers = json.loads((directory / "papers_cat.json").read_text(encoding="utf-8"))
    for paper in papers.values():  # every paper can come back from the prefetcher or the enricher
        assert isinstance(paper["title"], str) and isinstance(paper["abstract"], str)
        assert paper["categories"][0] in SYMTAX_CLASSES
    for key, context in contexts.items():  # per.py: G.add_edge(*context.split("_")[:2])
        citing, cited = key.split("_")[:2]
        assert (citing, cited) == (context["citing_id"], context["ref_id"]), key
        assert citing in papers and cited in papers  # enrich_300 hands graph neighbours to papers[pid]
    queries = {}
    for name in ("train", "val", "test"):
        split = json.loads((directory / f"{name}_data.json").read_text(encoding="utf-8"))
        queries[name] = []
        for item in split:
            info = contexts[item["context_id"]]
            citing_id, refid = info["citing_id"], info["ref_id"]
            assert isinstance(info["masked_text"], str) and "TARGETCIT" in info["masked_text"]
            assert isinstance(info["heading"], str)  # Reranker_PER_v2 appends it to the context
            citing = papers[citing_id]
            assert citing["categories"][0] in SYMTAX_CLASSES
            assert item["positive_ids"] and papers[item["positive_ids"][0]]["categories"][0] in SYMTAX_CLASSES
            assert refid in item["positive_ids"]
            queries[name].append({"context_id": item["context_id"], "citing_id": citing_id, "ref_id": refid})
    return queries


def read_like_rmc(root: Path, version: str = "base") -> dict[str, list[dict]]:
    """ChainsawM/RMC @ 89dc46ea: src/utils/helper.py::prepare_config (data/{split}.json, data/{version}/
    papers.json, bibref2info.json), src/datautils/dataset.py::MCDataset (get_paper_text, get_paper_ref_lst,
    paper_batches), src/modules/rankers.py::get_bib_titles. Returns {id, text, refs, positives} per split."""
    pid2info = json.loads((root / "data" / version / "papers.json").read_text(encoding="utf-8"))
    bibref2info = json.loads((root / "data" / version / "bibref2info.json").read_text(encoding="utf-8"))

    def paper_text(pid: str) -> str:
        return pid2info[pid]["title"] + " [SEP] " + pid2info[pid]["abstract"]

    def ref_titles(pid: str) -> list[str]:
        ids = pid2info[pid]["bib_refs"]
        return [bibref2info[b]["title"] for b in ids if not bibref2info[b]["already_recommended"]] if ids else []

    for pid in pid2info:  # paper_batches: every paper is encoded with its references
        paper_text(pid), ref_titles(pid)
    for info in bibref2info.values():
        assert isinstance(info["title"], str) and isinstance(info["already_recommended"], bool)
    queries = {}
    for split in ("train", "val", "test"):
        samples = json.loads((root / "data" / f"{split}.json").read_text(encoding="utf-8"))
        queries[split] = []
        for sample in samples:
            assert sample["positive_ids"]  # metrics.py divides by len(set(positive_ids))
            queries[split].append(
                {
                    "id": sample["id"],
                    "text": paper_text(sample["id"]),  # PLMRanker.get_top_n(qid): the query is a paper too
                    "refs": ref_titles(sample["id"]),
                    "positives": [paper_text(p) for p in sample["positive_ids"]],
                }
            )
    return queries


# ------------------------------------------------------------------------------------------------ fixtures


def _write(path: Path, schema: pa.Schema, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([{name: row.get(name) for name in schema.names} for row in rows], schema=schema)
    pq.write_table(table, path, row_group_size=2)  # several row groups per file: read back one at a time


def _paper(pid, title, abstract, categories, date=None):
    return {"paper_id": pid, "title": title, "abstract": abstract, "categories": categories, "date": date}


def _context(citing, cited, k, char, sentence, heading, split):
    return {
        "context_id": f"{citing}_{cited}_{k}",
        "citing_id": citing,
        "cited_id": cited,
        "char_context": char,
        "sentence_context": sentence,
        "section_heading": heading,
        "split": split,
    }


P1, P2, P3, P4, P5 = "2101.00001", "2101.00002", "2101.00003", "doi:10.1000/a_b", "2101.00005"
P4_SYMTAX = "doi:10.1000/a%5Fb"


@pytest.fixture
def arsyta_dataset(tmp_path: Path) -> Path:
    papers = [
        _paper(P1, "Citing Paper One", "About one.", ["cs.CL", "cs.LG"]),
        _paper(P2, "Control of Things", None, ["eess.SY", "cs.LG"], dt.date(2019, 5, 1)),  # SymTax knows eess.SY as cs.SY
        _paper(P3, "A Statistics Paper", "S.", ["stat.ML", "cs.LG"]),  # primary outside SymTax's 40 classes
        _paper(P4, None, "An id with an underscore.", ["cs.IR"]),
        _paper(P5, "Numerical Things", "N.", ["math.NA"]),  # SymTax: cs.NA
    ]
    for paper in papers:
        paper["primary_category"] = paper["categories"][0]
    _write(tmp_path / "papers" / "papers-00000-of-00001.parquet", PAPERS_SCHEMA, papers)
    train = [
        _context(P1, P2, 0, "a TARGETCIT b", "One. Two TARGETCIT. Three.", "Introduction", "train"),
        _context(P1, P4, 0, "c TARGETCIT d OTHERCIT", "Four TARGETCIT OTHERCIT.", None, "train"),
        _context(P1, P3, 0, "e TARGETCIT f", "Five TARGETCIT.", "Related Work", "train"),
    ]
    validation = [_context(P4, P5, 0, "g TARGETCIT h", "Six TARGETCIT.", "Method", "validation")]
    test = [
        _context(P3, P1, 0, "i TARGETCIT j", "Seven TARGETCIT.", "Results", "test"),
        _context(P1, P5, 1, "k TARGETCIT l", None, "Discussion", "test"),
        _context(P5, P1, 0, None, "Eight TARGETCIT.", "Conclusion", "test"),
    ]
    for split, rows in (("train", train), ("validation", validation), ("test", test)):
        _write(tmp_path / "contexts" / f"{split}-00000-of-00001.parquet", CONTEXTS_SCHEMA, rows)
    return tmp_path


# --------------------------------------------------------------------------------------------------- hatten


def test_hatten_layout_is_what_their_loader_reads(arsyta_dataset, tmp_path):
    out = tmp_path / "hatten"
    counts = export_hatten(str(arsyta_dataset), str(out))
    written = {"papers.json": 5, "contexts.json": 6, "train.json": 3, "val.json": 1, "test.json": 2}
    assert counts == written | {"dropped_contexts:no_char_context": 1}
    queries = read_like_hatten(out)
    assert json.loads((out / "train.json").read_text()) == [
        {"context_id": f"{P1}_{P2}_0", "positive_ids": [P2]},
        {"context_id": f"{P1}_{P3}_0", "positive_ids": [P3]},
        {"context_id": f"{P1}_{P4}_0", "positive_ids": [P4]},
    ]
    assert [q["context_id"] for q in queries["test"]] == [f"{P1}_{P5}_1", f"{P3}_{P1}_0"]
    contexts = json.loads((out / "contexts.json").read_text())
    assert contexts[f"{P4}_{P5}_0"] == {
        "masked_text": "g TARGETCIT h",  # the character window, not the sentences
        "context_id": f"{P4}_{P5}_0",
        "citing_id": P4,
        "refid": P5,
    }
    papers = json.loads((out / "papers.json").read_text())
    assert papers[P4] == {"title": "", "abstract": "An id with an underscore.", "date": None}
    assert papers[P2] == {"title": "Control of Things", "abstract": "", "date": "2019-05-01"}


# --------------------------------------------------------------------------------------------------- symtax


def test_symtax_layout_is_what_per_py_reads(arsyta_dataset, tmp_path):
    out = tmp_path / "symtax"
    counts = export_symtax(str(arsyta_dataset), str(out))
    written = {"papers_cat.json": 4, "contexts_new_head.json": 4, "train_data.json": 2}
    written |= {"val_data.json": 1, "test_data.json": 1}
    contexts_dropped = ("cited_paper_not_exported", "citing_paper_not_exported", "no_sentence_context")
    dropped = {f"dropped_contexts:{why}": 1 for why in contexts_dropped}
    assert counts == written | dropped | {"dropped_papers:primary_category_not_in_symtax": 1}
    queries = read_like_symtax(out)
    assert json.loads((out / "train_data.json").read_text()) == [
        {"context_id": f"{P1}_{P2}_0", "positive_ids": [P2]},
        {"context_id": f"{P1}_{P4_SYMTAX}_0", "positive_ids": [P4_SYMTAX]},
    ]
    assert queries["val"] == [{"context_id": f"{P4_SYMTAX}_{P5}_0", "citing_id": P4_SYMTAX, "ref_id": P5}]
    assert queries["test"] == [{"context_id": f"{P5}_{P1}_0", "citing_id": P5, "ref_id": P1}]
    contexts = json.loads((out / "contexts_new_head.json").read_text())
    assert contexts[f"{P1}_{P2}_0"] == {
        "masked_text": "One. Two TARGETCIT. Three.",  # the sentence context, not the character window
        "citing_id": P1,
        "ref_id": P2,
        "heading": "Introduction",
    }
    assert contexts[f"{P1}_{P4_SYMTAX}_0"]["heading"] == ""
    papers = json.loads((out / "papers_cat.json").read_text())
    assert {pid: p["categories"] for pid, p in papers.items()} == {
        P1: ["cs.CL", "cs.LG"],
        P2: ["cs.SY", "cs.LG"],
        P4_SYMTAX: ["cs.IR"],
        P5: ["cs.NA"],
    }


@given(st.text(min_size=1), st.text(min_size=1), st.integers(min_value=0, max_value=99))
def test_symtax_context_ids_split_into_their_papers_for_any_ids(citing, cited, k):
    key = symtax_context_id(f"{citing}_{cited}_{k}", citing, cited)
    assert key.split("_")[:2] == [symtax_id(citing), symtax_id(cited)]
    assert symtax_id(citing).replace("%5F", "_").replace("%25", "%") == citing  # reversible, so no two ids meet


def test_symtax_classes_are_the_40_of_symtax_own_mapping(shared):
    with open(shared / "peers" / "symtax-arxiv-acm-mapping.csv", encoding="utf-8") as handle:
        theirs = {row["Category_code"] for row in csv.DictReader(handle)}
    assert symtax_classes() == theirs == SYMTAX_CLASSES


# ------------------------------------------------------------------------------------------------------ rmc

GRAPH_REWIRING = "Graph Rewiring for Long-Range Message Passing"


@pytest.fixture
def citationr_dataset(tmp_path: Path) -> Path:
    queries = {
        "train": [
            {
                "submission_id": "S1",
                "title": "Sub One",
                "abstract": "First.",
                "reference_titles": ["Known Work", GRAPH_REWIRING + "."],  # the recommended paper itself
                "positive_ids": ["P-a"],
            },
            {"submission_id": "S4", "title": "Sub Four", "abstract": "", "positive_ids": ["title:abc"]},
        ],
        "validation": [
            {
                "submission_id": "S2",
                "title": None,
                "abstract": None,
                "reference_titles": [],
                "positive_ids": ["P-a", "P-b"],
            }
        ],
        "test": [
            {
                "submission_id": "S3",
                "title": "Sub Three",
                "abstract": "Third.",
                "reference_titles": ["c title exactly", "Other"],
                "positive_ids": ["P-c"],
            }
        ],
    }
    for split, rows in queries.items():
        for row in rows:
            row["split"] = split
        _write(tmp_path / "queries" / f"{split}-00000-of-00001.parquet", QUERIES_SCHEMA, rows)
    positives = [
        {"submission_id": "S1", "paper_id": "P-a", "title": None, "resolved": True, "split": "train"},
        {"submission_id": "S4", "paper_id": "title:abc", "title": "Some Title", "resolved": False, "split": "train"},
        {"submission_id": "S2", "paper_id": "P-a", "title": "graph rewiring", "resolved": True, "split": "validation"},
        {"submission_id": "S2", "paper_id": "P-b", "title": "B", "resolved": True, "split": "validation"},
        {"submission_id": "S3", "paper_id": "P-c", "title": "C Title, Exactly", "resolved": True, "split": "test"},
    ]
    _write(tmp_path / "positives" / "positives-00000-of-00001.parquet", POSITIVES_SCHEMA, positives)
    candidates = [
        {"paper_id": "P-a", "title": GRAPH_REWIRING, "abstract": "Rewiring.", "role": "positive"},
        {"paper_id": "P-c", "title": "A Database Title For C", "abstract": None, "role": "positive"},
        {"paper_id": "title:abc", "title": "Some Title", "abstract": None, "role": "unresolved_title"},
        {"paper_id": "X-1", "title": "Extension", "abstract": "Ext.", "role": "extension"},
    ]
    _write(tmp_path / "candidates" / "candidates-00000-of-00001.parquet", CANDIDATES_SCHEMA, candidates)
    return tmp_path


def test_rmc_layout_is_what_their_mcdataset_reads(citationr_dataset, tmp_path):
    out = tmp_path / "rmc"
    counts = export_rmc(str(citationr_dataset), str(out))
    splits = {"data/train.json": 1, "data/val.json": 1, "data/test.json": 1}
    versions = {"data/base/papers.json": 5, "data/base/bibref2info.json": 4}
    versions |= {"data/extended/papers.json": 6, "data/extended/bibref2info.json": 4}
    dropped = ("positives:no_paper_record", "positives:unresolved", "queries:no_exported_positive")
    assert counts == splits | versions | {f"dropped_{why}": 1 for why in dropped}
    queries = read_like_rmc(out)
    assert queries["train"] == [
        {
            "id": "S1",
            "text": "Sub One [SEP] First.",
            "refs": ["Known Work"],  # the recommended paper in its own bibliography is left out
            "positives": [GRAPH_REWIRING + " [SEP] Rewiring."],
        }
    ]
    assert queries["val"] == [
        {"id": "S2", "text": " [SEP] ", "refs": [], "positives": [GRAPH_REWIRING + " [SEP] Rewiring."]}
    ]
    assert queries["test"][0]["refs"] == ["Other"]  # matched through the reviewer's title
    assert json.loads((out / "data" / "base" / "bibref2info.json").read_text()) == {
        "S1#ref0": {"title": "Known Work", "already_recommended": False},
        "S1#ref1": {"title": GRAPH_REWIRING + ".", "already_recommended": True},
        "S3#ref0": {"title": "c title exactly", "already_recommended": True},
        "S3#ref1": {"title": "Other", "already_recommended": False},
    }
    papers = json.loads((out / "data" / "base" / "papers.json").read_text())
    assert sorted(papers) == ["P-a", "P-c", "S1", "S2", "S3"]
    assert papers["S1"]["bib_refs"] == ["S1#ref0", "S1#ref1"] and papers["P-a"]["bib_refs"] == []
    extended = read_like_rmc(out, "extended")
    assert extended == queries
    assert sorted(json.loads((out / "data" / "extended" / "papers.json").read_text())) == sorted([*papers, "X-1"])


def test_rmc_keeps_title_only_positives_when_asked(citationr_dataset, tmp_path):
    counts = export_rmc(str(citationr_dataset), str(tmp_path / "rmc"), include_unresolved=True)
    assert counts["data/train.json"] == 2 and "dropped_positives:unresolved" not in counts
    queries = read_like_rmc(tmp_path / "rmc")
    assert [q["id"] for q in queries["train"]] == ["S1", "S4"]
    assert queries["train"][1]["positives"] == ["Some Title [SEP] "]


def test_our_split_items_have_the_keys_of_the_peers_published_splits(
    shared, arsyta_dataset, citationr_dataset, tmp_path
):
    export_hatten(str(arsyta_dataset), str(tmp_path / "hatten"))
    export_symtax(str(arsyta_dataset), str(tmp_path / "symtax"))
    export_rmc(str(citationr_dataset), str(tmp_path / "rmc"))
    acl200 = json.loads((shared / "peers" / "hatten-acl200" / "train.json").read_text())
    citationr = json.loads((shared / "peers" / "rmc-citationr" / "train.json").read_text())
    ours_hatten = json.loads((tmp_path / "hatten" / "train.json").read_text())
    ours_symtax = json.loads((tmp_path / "symtax" / "train_data.json").read_text())
    ours_rmc = json.loads((tmp_path / "rmc" / "data" / "train.json").read_text())
    assert {k for item in ours_hatten for k in item} == {k for item in acl200 for k in item}
    assert {k for item in ours_symtax for k in item} == {k for item in acl200 for k in item}
    assert {k for item in ours_rmc for k in item} == {k for item in citationr for k in item}
    # ACL-200 ids follow CITING_CITED_k with the cited paper as the positive: the rule per.py relies on
    assert all(item["context_id"].split("_")[1] == item["positive_ids"][0] for item in acl200)
    assert all(item["context_id"].split("_")[1] == item["positive_ids"][0] for item in ours_symtax)


# --------------------------------------------------------------------------------------------- the flag


def test_export_names_are_checked_per_pipeline(capsys):
    assert plan_exports(["hatten,symtax"], False, "arsyta") == (
        ExportRequest("hatten", "export/hatten"),
        ExportRequest("symtax", "export/symtax"),
    )
    assert plan_exports(["symtax", " hatten , symtax"], True, "arsyta") == (
        ExportRequest("symtax", "export/symtax"),
        ExportRequest("hatten", "export/hatten"),
        ExportRequest("hatten", "json"),  # --export_json keeps writing OUTPUT/json/
    )
    assert plan_exports([], True, "citationr") == (ExportRequest("rmc", "json"),)
    with pytest.raises(SystemExit) as stop:
        plan_exports(["hatten,rmc"], False, "arsyta")
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --export 'rmc'") and "pipelines.citationr" in err


@pytest.mark.e2e
def test_an_unknown_export_stops_the_run_before_any_work(tmp_path, capsys):
    from pipelines.arsyta import run

    with pytest.raises(SystemExit) as stop:
        run(["--runner=FnApiRunner", "--output", str(tmp_path / "out"), "--export", "hatten,acl"])
    assert stop.value.code == 2
    assert "error: --export 'acl'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_write_exports_puts_each_layout_in_its_directory(arsyta_dataset):
    requests = plan_exports(["symtax"], True, "arsyta")
    results = write_exports(str(arsyta_dataset), requests)
    assert [
        (r.directory, c["contexts_new_head.json" if r.name == "symtax" else "contexts.json"]) for r, c in results
    ] == [
        ("export/symtax", 4),
        ("json", 6),
    ]
    assert (arsyta_dataset / "export" / "symtax" / "papers_cat.json").is_file()
    assert (arsyta_dataset / "json" / "papers.json").is_file()


# ------------------------------------------------------------------------------- end to end, example corpus


# 2506.01212 citing 2502.01111 ("[3]"), written out by hand from examples/corpus/tei/2506.01212.tei.xml: the running
# text is the abstract, then the body's paragraphs, joined by a space; the other markers are OTHERCIT. Before the
# marker, 191 characters (all there is); after it, the first 200.
HAND_CHAR_CONTEXT = (
    "We study revisiting bm25 for local citation recommendation and report results on a new benchmark. BM25 "
    "OTHERCIT is a strong baseline that is rarely tuned. We tune it. Unlike dense prefetching TARGETCIT , it needs "
    "no training, as also seen by N. Frost OTHERCIT. Time-aware evaluation OTHERCIT and reviewer labels OTHERCIT "
    "complete our study. BM25 with tuned parameters recalls 60 percent of cited papers"
)
# and its sentence view: the citing sentence, one before it and one after it in the same section (Introduction)
HAND_SENTENCE_CONTEXT = (
    "We tune it. Unlike dense prefetching TARGETCIT , it needs no training, as also seen by N. Frost OTHERCIT. "
    "Time-aware evaluation OTHERCIT and reviewer labels OTHERCIT complete our study."
)
PEER_SPLITS = {"train": "train", "val": "validation", "test": "test"}


@pytest.mark.e2e
def test_arsyta_run_writes_hatten_and_symtax_for_the_example_corpus(tmp_path):
    """The contexts examples/corpus/expected.json specifies, in each peer's split files, and one context by hand."""
    from pipelines.arsyta import run

    out = tmp_path / "out"
    run(["--runner=FnApiRunner", "--output", str(out), "--export", "hatten,symtax", "--export_json"])
    want = expected_contexts(expected_spec())
    hatten = read_like_hatten(out / "export" / "hatten")
    # every example paper is cs.* and no id holds "_": SymTax keeps every context, keyed as we key it
    symtax = read_like_symtax(out / "export" / "symtax")
    for name, split in PEER_SPLITS.items():
        specified = Counter({(citing, cited): n for (citing, cited, s), n in want.items() if s == split})
        assert Counter((q["citing_id"], q["positive_ids"][0]) for q in hatten[name]) == specified
        assert Counter((q["citing_id"], q["ref_id"]) for q in symtax[name]) == specified
    key = "2506.01212_2502.01111_0"
    assert json.loads((out / "export" / "hatten" / "contexts.json").read_text())[key]["masked_text"] == (
        HAND_CHAR_CONTEXT
    )
    assert json.loads((out / "export" / "symtax" / "contexts_new_head.json").read_text())[key] == {
        "masked_text": HAND_SENTENCE_CONTEXT,
        "citing_id": "2506.01212",
        "ref_id": "2502.01111",
        "heading": "Introduction",
    }
    # --export_json keeps writing HAtten's layout to OUTPUT/json/
    assert (out / "json" / "contexts.json").read_bytes() == (out / "export" / "hatten" / "contexts.json").read_bytes()


@pytest.mark.e2e
def test_citationr_run_writes_rmc_for_the_bundled_example(tmp_path):
    """Each submission's positives are the papers its reviewers ask for (read by hand), as title [SEP] abstract."""
    from pipelines.citationr import run

    out = tmp_path / "out"
    run(["--runner=FnApiRunner", "--output", str(out), "--export", "rmc"])
    queries = read_like_rmc(out / "export" / "rmc")
    database = reviews_database()
    exported = {q["id"]: sorted(q["positives"]) for split in queries.values() for q in split}
    assert exported == {
        submission: sorted(f"{database[p]['title']} [SEP] {database[p]['abstract']}" for p in papers)
        for submission, papers in REVIEWS_RECOMMEND.items()
    }
