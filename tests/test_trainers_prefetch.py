"""Exact chunked top-K search against a plain numpy reference, with the citing-paper and date exclusions."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trainers.prefetch import PaperIndex, top_k_cosine, top_k_one  # noqa: E402


def numpy_top_k(queries, papers, k, query_days, paper_days, excluded):
    scores = queries @ papers.T
    scores[paper_days[None, :] > query_days[:, None]] = -np.inf
    for q, own in enumerate(excluded):
        if own >= 0:
            scores[q, own] = -np.inf
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), order


def normalised(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize(("query_chunk", "paper_chunk"), [(1024, 262_144), (7, 50), (3, 1)])
def test_chunked_top_k_matches_numpy(query_chunk, paper_chunk):
    rng = np.random.default_rng(0)
    queries, papers = normalised(rng, 23, 16), normalised(rng, 301, 16)
    query_days = rng.integers(0, 1000, 23)
    paper_days = rng.integers(0, 1000, 301)
    excluded = rng.integers(-1, 301, 23)
    expected_scores, expected_indices = numpy_top_k(queries, papers, 40, query_days, paper_days, excluded)
    scores, indices = top_k_cosine(
        torch.from_numpy(queries),
        torch.from_numpy(papers),
        40,
        torch.from_numpy(query_days),
        torch.from_numpy(paper_days),
        torch.from_numpy(excluded),
        query_chunk=query_chunk,
        paper_chunk=paper_chunk,
    )
    np.testing.assert_allclose(scores.numpy(), expected_scores, rtol=1e-5, atol=1e-6)
    finite = np.isfinite(expected_scores)
    # random vectors have no ties, so the finite part of the ranking is unique
    assert (indices.numpy()[finite] == expected_indices[finite]).all()


def test_index_never_returns_the_citing_paper_or_later_papers():
    vectors = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [0.0, 1.0]]), dim=1)
    dates = [dt.date(2020, 1, 1), dt.date(2022, 1, 1), None, dt.date(2019, 1, 1)]
    index = PaperIndex.build(["a", "b", "c", "d"], vectors, dates)
    query = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0]]), dim=1)
    assert index.search(query, 10, ["a"], [dt.date(2021, 1, 1)]) == [["c", "d"]]  # b is later, a is the citing paper
    assert index.search(query, 10, ["zzz"], [None]) == [["a", "b", "c", "d"]]
    assert index.search(query, 2, ["zzz"], [None]) == [["a", "b"]]


def test_single_queries_give_the_batchs_rows_from_one_position_map():
    """Each query searched alone ranks as its row of the batch, and every search reads the index's one id ->
    position map (a rebuild per call cost a single query O(papers)): a map changed in place is what counts."""
    rng = np.random.default_rng(1)
    ids = [f"p{i}" for i in range(40)]
    dates = [dt.date(2000 + i % 20, 1, 1) for i in range(40)]
    index = PaperIndex.build(ids, torch.from_numpy(normalised(rng, 40, 8)), dates)
    queries = torch.from_numpy(normalised(rng, 6, 8))
    citing, when = ["p3", "p7", "zzz", "p0", "p39", "p12"], [dt.date(2030, 6, 1)] * 6
    batch = index.search(queries, 5, citing, when)
    alone = [index.search(queries[q : q + 1], 5, citing[q : q + 1], when[q : q + 1])[0] for q in range(6)]
    assert alone == batch and all(c not in row for c, row in zip(citing, batch, strict=True))
    top = index.search(queries[:1], 1, ["zzz"], [None])[0][0]
    index.positions["zzz"] = ids.index(top)  # "zzz" now names the top paper: it is the citing paper, left out
    assert top not in index.search(queries[:1], 5, ["zzz"], [None])[0]


@pytest.mark.parametrize("k", [1, 40, 301, 500])
def test_one_query_path_matches_numpy(k):
    rng = np.random.default_rng(1)
    queries, papers = normalised(rng, 9, 16), normalised(rng, 301, 16)
    query_days = rng.integers(0, 1000, 9)
    paper_days = rng.integers(0, 1000, 301)
    excluded = rng.integers(-1, 301, 9)
    expected_scores, expected_indices = numpy_top_k(queries, papers, k, query_days, paper_days, excluded)
    for q in range(9):
        got = top_k_one(queries[q], papers, k, int(query_days[q]), paper_days, int(excluded[q]))
        finite = np.isfinite(expected_scores[q])
        assert got.shape == (min(k, 301),)
        assert (got[finite] == expected_indices[q][finite]).all()
        assert (got[~finite] == -1).all()


def test_one_query_on_the_cpu_ranks_as_the_batched_search():
    rng = np.random.default_rng(2)
    papers = normalised(rng, 2000, 32)
    queries = torch.from_numpy(normalised(rng, 5, 32))
    dates = [dt.date(2000 + i % 25, 1 + i % 12, 1) for i in range(2000)]
    index = PaperIndex.build([f"p{i}" for i in range(2000)], torch.from_numpy(papers), dates)
    citing, when = ["p3", "p10", "zzz", "p1999", "p0"], [dt.date(2010, 6, 1), None, dt.date(2024, 1, 1), None, None]
    batched = index.search_positions(queries, 100, citing, when)
    single = np.concatenate(
        [index.search_positions(queries[q : q + 1], 100, citing[q : q + 1], when[q : q + 1]) for q in range(5)]
    )
    assert (single == batched).all()
    assert 3 not in single[0] and 10 not in single[1]
    assert all(dates[i] <= dt.date(2010, 6, 1) for i in single[0] if i >= 0)
