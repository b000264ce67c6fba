"""The ACM-CR table's fold logic on hand-made data: what a fold trains on, how per-fold rankings are pooled, how
separate runs are merged. Plain Python, no model."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.acm_cr_table import citing_folds, fold_dataset, merge_tables, pooled
from trainers.data import CitationDataset, ContextQuery, PaperText

DAY = dt.date(2020, 1, 1)


def query(context_id: str, citing_id: str, cited: str = "p0") -> ContextQuery:
    return ContextQuery(context_id, citing_id, f"text of {context_id}", (cited,), DAY)


def dataset(queries: list[ContextQuery]) -> CitationDataset:
    papers = {p: PaperText(p, p, "", DAY) for p in ["p0", "p1", *sorted({q.citing_id for q in queries})]}
    return CitationDataset(papers, {"test": queries}, frozenset({"p0", "p1"}))


def test_a_fold_trains_on_the_other_citing_papers_only() -> None:
    queries = [query("x1", "c0"), query("x2", "c1"), query("x3", "c0"), query("x4", "c2"), query("x5", "c3")]
    fold = fold_dataset(dataset(queries), queries, ["c1", "c3"])
    assert [q.context_id for q in fold.queries["train"]] == ["x1", "x3", "x4"]
    assert [q.context_id for q in fold.queries["test"]] == ["x2", "x5"]
    assert fold.pool == frozenset({"p0", "p1"})
    assert fold.paper_ids() == ["p0", "p1"]


@given(st.lists(st.integers(0, 7), min_size=1, max_size=30), st.integers(2, 5), st.integers(0, 3))
def test_folds_test_every_context_once_and_never_train_on_it(citing: list[int], folds: int, seed: int) -> None:
    queries = [query(f"x{i:02d}", f"c{c}") for i, c in enumerate(citing)]
    data = dataset(queries)
    tested_ids: list[str] = []
    for tested in citing_folds(queries, folds, seed):
        fold = fold_dataset(data, queries, tested)
        train_citing = {q.citing_id for q in fold.queries["train"]}
        assert train_citing.isdisjoint({q.citing_id for q in fold.queries["test"]})
        assert len(fold.queries["train"]) + len(fold.queries["test"]) == len(queries)
        tested_ids += [q.context_id for q in fold.queries["test"]]
    assert sorted(tested_ids) == [q.context_id for q in queries]


def test_pooled_rankings_follow_the_query_order() -> None:
    queries = [query("x1", "c0"), query("x2", "c1"), query("x3", "c0")]
    folds = [{"x2": ["p1", "p0"]}, {"x3": ["p0"], "x1": ["p1"]}]
    assert pooled(queries, folds) == [["p1"], ["p1", "p0"], ["p0"]]


def test_pooled_refuses_a_context_ranked_twice_or_never() -> None:
    queries = [query("x1", "c0"), query("x2", "c1")]
    with pytest.raises(ValueError, match="two folds"):
        pooled(queries, [{"x1": [], "x2": []}, {"x2": []}])
    with pytest.raises(ValueError, match="no fold, e.g. x2"):
        pooled(queries, [{"x1": []}])


def table(systems: dict[str, list[float]], ids: list[str] | None = None) -> dict:
    summary = {name: (0.5, 0.0, 1.0) for name in ("mrr", "recall@10", "ndcg@10")}
    rows = [{"system": s, "queries": 2, "cpu_seconds": 60.0, "summary": summary} for s in systems]
    per_query = {s: {"mrr": v, "recall@10": v, "ndcg@10": v} for s, v in systems.items()}
    return {
        "date": "d",
        "pool": {"ids": ids or ["p0", "p1"], "seed": 0},
        "folds": [["c0"], ["c1"]],
        "rows": rows,
        "per_query": {"context_ids": ["x1", "x2"], **per_query},
    }


def test_merged_tables_keep_bm25_once_and_every_other_row() -> None:
    merged = merge_tables([table({"BM25": [1.0, 0.0], "A": [0.5, 0.5]}), table({"BM25": [1.0, 0.0], "B": [0.0, 1.0]})])
    assert [row["system"] for row in merged["rows"]] == ["BM25", "A", "B"]
    assert merged["per_query"]["B"]["mrr"] == [0.0, 1.0]
    assert merged["per_query"]["context_ids"] == ["x1", "x2"]
    assert merged["markdown"].count("\n") == 5


def test_tables_of_different_pools_are_not_merged() -> None:
    with pytest.raises(ValueError, match="pool ids"):
        merge_tables([table({"BM25": [1.0, 0.0]}), table({"BM25": [1.0, 0.0]}, ids=["p0", "p2"])])
