"""SymTax's Enricher (trainers/symtax.py) on hand-made cases: the frequency order, the exclusions, and the graph
built without the test split's citations (the published code's graph holds them: a leak)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

pytest.importorskip("torch")

from tests.support.trainer_data import write_json_layout  # noqa: E402
from trainers import symtax  # noqa: E402
from trainers.data import CitationDataset, ContextQuery, PaperText  # noqa: E402


def test_by_frequency_counts_and_breaks_ties_by_first_appearance():
    assert symtax.by_frequency(["b", "a", "b", "c", "a", "b"]) == ["b", "a", "c"]
    assert symtax.by_frequency(["y", "x", "x", "y", "z"]) == ["y", "x", "z"]  # y and x tie at 2: y came first


def test_enrich_keeps_the_top_n_then_appends_the_most_cited_not_yet_listed():
    graph = {"p1": ("a", "b"), "p2": ("b", "c", "p1"), "p3": ("b",), "p4": ("d", "d2")}
    # p4 is beyond top_n: its citations are not pooled. Pooled: a, b, b, c, p1, b -> b (3), a, c, p1 (1 each);
    # p1 is already listed, and extra = 2 takes b and a.
    assert symtax.enrich(["p1", "p2", "p3", "p4"], graph, top_n=3, extra=2) == ["p1", "p2", "p3", "b", "a"]
    assert symtax.enrich(["p1", "p2", "p3"], graph, top_n=3, extra=5, allowed=lambda p: p != "b") == [
        "p1",
        "p2",
        "p3",
        "a",
        "c",
    ]


def leak_case() -> CitationDataset:
    day = dt.date
    papers = {
        pid: PaperText(pid, f"title {pid}", f"abstract {pid}", date)
        for pid, date in {
            "x1": day(2019, 1, 1),
            "x2": day(2019, 2, 1),
            "a": day(2018, 1, 1),
            "b": day(2018, 1, 1),
            "c": day(2018, 1, 1),
            "late": day(2022, 1, 1),
            "out": day(2018, 1, 1),
            "cq": day(2021, 1, 1),
        }.items()
    }
    train = [
        ContextQuery("tr1", "x1", "ctx", ("a",), day(2019, 1, 1)),
        ContextQuery("tr2", "x1", "ctx", ("b",), day(2019, 1, 1)),
        ContextQuery("tr3", "x2", "ctx", ("b",), day(2019, 2, 1)),
        ContextQuery("tr4", "x2", "ctx", ("late",), day(2019, 2, 1)),
        ContextQuery("tr5", "x2", "ctx", ("out",), day(2019, 2, 1)),
    ]
    test = [
        ContextQuery("te1", "cq", "ctx", ("c",), day(2021, 1, 1)),
        ContextQuery("te2", "x1", "ctx", ("c",), day(2019, 1, 1)),  # x1 -> c exists only in the test split
    ]
    pool = frozenset(papers) - {"out"}
    return CitationDataset(papers, {"train": train, "validation": [], "test": test}, pool)


def test_the_training_graph_holds_no_test_citation_and_all_holds_the_leak():
    dataset = leak_case()
    assert symtax.citation_graph(dataset, symtax.GRAPHS["train"]) == {"x1": ("a", "b"), "x2": ("b", "late", "out")}
    assert symtax.citation_graph(dataset, symtax.GRAPHS["all"])["x1"] == ("a", "b", "c")


def test_enriched_lists_and_recall_with_and_without_the_leak():
    dataset = leak_case()
    query = dataset.queries["test"][:1]  # cq (2021) cites c; prefetched: x1, x2
    prefetched = {"te1": ["x1", "x2"]}
    # train graph: pooled a, b, b, late, out -> b, a (late, of 2022, is after the query; out is not in the pool)
    lists, metrics = symtax.enrich_split(dataset, query, prefetched, symtax.citation_graph(dataset, ("train",)), 2, 5)
    assert lists == {"te1": ["x1", "x2", "b", "a"]}
    assert metrics["enriched_recall@5"] == 0.0 and metrics["prefetched_recall@5"] == 0.0
    # the published graph adds x1 -> c from the test split, and c reaches the list
    lists, metrics = symtax.enrich_split(
        dataset, query, prefetched, symtax.citation_graph(dataset, symtax.SPLITS), 2, 5
    )
    assert lists == {"te1": ["x1", "x2", "b", "a", "c"]}
    assert metrics["enriched_recall@5"] == 1.0
    assert metrics["enriched_mrr"] == pytest.approx(1 / 5)
    assert metrics["prefetched_recall@5"] == 0.0


def test_the_command_writes_lists_for_the_reranker_and_refuses_a_missing_prefetch(tmp_path):
    papers = {"p1": {"title": "one", "abstract": "a"}, "p2": {"title": "two", "abstract": "b"}}
    papers.update({"p3": {"title": "three", "abstract": "c"}, "c1": {"title": "citing", "abstract": "d"}})
    contexts = {
        "p1_p2_0": {"masked_text": "x TARGETCIT y", "context_id": "p1_p2_0", "citing_id": "p1", "refid": "p2"},
        "c1_p3_0": {"masked_text": "x TARGETCIT y", "context_id": "c1_p3_0", "citing_id": "c1", "refid": "p3"},
    }
    splits = {
        "train": [{"context_id": "p1_p2_0", "positive_ids": ["p2"]}],
        "val": [],
        "test": [{"context_id": "c1_p3_0", "positive_ids": ["p3"]}],
    }
    data = write_json_layout(tmp_path / "data", papers, contexts, splits)
    prefetched = tmp_path / "prefetched"
    with pytest.raises(SystemExit, match="prefetched_test.json is missing"):
        symtax.main(["enrich", "--dataset", str(data), "--prefetched", str(prefetched), "--output", str(tmp_path)])
    prefetched.mkdir()
    (prefetched / "prefetched_test.json").write_text(json.dumps({"c1_p3_0": ["p1"]}))
    out = tmp_path / "out"
    results = symtax.main(["enrich", "--dataset", str(data), "--prefetched", str(prefetched), "--output", str(out)])
    assert json.loads((out / "prefetched_test.json").read_text()) == {"c1_p3_0": ["p1", "p2"]}  # p1 cites p2
    assert results["test"]["graph"] == "train"
    assert json.loads((out / "results_enrich_test.json").read_text())["enriched_recall@5"] == 0.0
