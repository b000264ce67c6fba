"""BM25's two candidate conventions on three hand-made papers: citrec's (every candidate ranked) and RMC's
(`--candidates matching`: only the papers sharing a query word, Whoosh's stop words aside). The scores below are
worked out by hand with bm25s's Lucene BM25 (k1 1.2, b 0.75):

    papers  d0 "graph neural network" (3 words), d1 "the of and" (3), d2 "citation recommendation" (2); avgdl 8/3
    idf     any word in one paper: ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(8/3) = 0.98083
    tf 1    d0, d1: 1 / (1 + 1.2 * (0.25 + 0.75 * 3 / (8/3))) = 1 / 2.3125 = 0.43243 -> 0.42414
            d2:     1 / (1 + 1.2 * (0.25 + 0.75 * 2 / (8/3))) = 1 / 1.975  = 0.50633 -> 0.49662

Query "graph of citation TARGETCIT": d2 0.49662 > d0 0.42414 = d1 0.42414 (d1 by the stop word "of"; the tie goes
to paper order). RMC's convention drops "of" (a Whoosh stop word), so d1 shares no query word and is not ranked."""

from __future__ import annotations

import json
import math

import pytest

from trainers.data import CitationDataset, ContextQuery, PaperText
from trainers.metrics import ranking_metrics

bm25 = pytest.importorskip("trainers.bm25")
pytest.importorskip("bm25s", reason="bm25s is in the [train] extra")

PAPERS = {
    "d0": PaperText("d0", "graph neural", "network"),
    "d1": PaperText("d1", "the of", "and"),
    "d2": PaperText("d2", "citation", "recommendation"),
}
QUERY = "graph of citation TARGETCIT"


def _dataset() -> CitationDataset:
    query = ContextQuery("q", "citing", QUERY, ("d1",))
    return CitationDataset(dict(PAPERS), {"test": [query]})


def test_the_hand_computed_scores_are_bm25s_lucene_scores():
    import bm25s

    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index([["graph", "neural", "network"], ["the", "of", "and"], ["citation", "recommendation"]])
    idf = math.log(8 / 3)
    expected = [idf / 2.3125, idf / 2.3125, idf / 1.975]
    assert retriever.get_scores(["graph", "of", "citation"]).tolist() == pytest.approx(expected, abs=1e-5)
    assert expected == pytest.approx([0.42414, 0.42414, 0.49662], abs=1e-5)


def test_all_candidates_ranks_every_paper():
    prefetcher = bm25.BM25Prefetcher(_dataset())
    assert prefetcher.search(QUERY, 10, "citing", None) == ["d2", "d0", "d1"]


def test_matching_ranks_only_papers_sharing_a_query_word():
    prefetcher = bm25.BM25Prefetcher(_dataset(), candidates="matching")
    assert prefetcher.search(QUERY, 10, "citing", None) == ["d2", "d0"]
    assert prefetcher.search("the of and a", 10, "citing", None) == []  # stop words only: nothing to match
    assert prefetcher.search("and network", 10, "citing", None) == ["d0"]


def test_a_cited_paper_sharing_no_word_counts_as_missed_under_rmc_convention():
    """d1 is cited: ranked third of three (MRR 1/3) by citrec's convention, not at all (MRR 0) by RMC's."""
    relevant = [{"d1"}]
    every = bm25.BM25Prefetcher(_dataset()).search(QUERY, 10, "citing", None)
    matching = bm25.BM25Prefetcher(_dataset(), candidates="matching").search(QUERY, 10, "citing", None)
    assert ranking_metrics([every], relevant, (2, 3))["mrr"] == pytest.approx(1 / 3)
    assert ranking_metrics([every], relevant, (2, 3))["recall@3"] == 1.0
    assert ranking_metrics([matching], relevant, (2,)) | {"num_queries": 1.0} == {
        "num_queries": 1.0,
        "mrr": 0.0,
        "recall@2": 0.0,
        "ndcg@10": 0.0,
    }


def test_an_unknown_convention_is_refused():
    with pytest.raises(ValueError, match="matching"):
        bm25.BM25Prefetcher(_dataset(), candidates="some")


def test_the_command_records_its_convention(tmp_path):
    """`python -m trainers.bm25 --candidates matching` on the same papers in HAtten's JSON layout."""
    dataset = tmp_path / "data"
    dataset.mkdir()
    (dataset / "papers.json").write_text(
        json.dumps(
            {p.paper_id: {"title": p.title, "abstract": p.abstract} for p in PAPERS.values()}
            | {"citing": {"title": "", "abstract": ""}}
        )
    )
    (dataset / "contexts.json").write_text(
        json.dumps({"q": {"masked_text": QUERY, "context_id": "q", "citing_id": "citing", "refid": "d1"}})
    )
    for name in ("train", "val"):
        (dataset / f"{name}.json").write_text("[]")
    (dataset / "test.json").write_text(json.dumps([{"context_id": "q", "positive_ids": ["d1"]}]))
    out = tmp_path / "run"
    results = bm25.main(["--dataset", str(dataset), "--output", str(out), "--candidates", "matching"])
    assert results["test"]["candidates"] == "matching" and results["test"]["mrr"] == 0.0
    assert json.loads((out / "prefetched_test.json").read_text()) == {"q": ["d2", "d0"]}
