"""Ranking metrics against cases computed by hand."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch")

from trainers.metrics import ndcg_at_k, ranking_metrics, recall_at_k, reciprocal_rank  # noqa: E402


def test_reciprocal_rank_is_one_over_the_first_relevant_rank():
    assert reciprocal_rank(["a", "b", "c"], {"c"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a", "b", "c"], {"b", "c"}) == pytest.approx(1 / 2)
    assert reciprocal_rank(["a", "b"], {"z"}) == 0.0


def test_recall_counts_relevant_papers_in_the_first_k():
    ranking = ["a", "b", "c", "d", "e"]
    assert recall_at_k(ranking, {"b", "e"}, 1) == 0.0
    assert recall_at_k(ranking, {"b", "e"}, 2) == 0.5
    assert recall_at_k(ranking, {"b", "e"}, 5) == 1.0
    assert recall_at_k(ranking, {"b", "z"}, 100) == 0.5


def test_ndcg_with_binary_gains():
    # relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); ideal: ranks 1 and 2 = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "b", "c", "d"], {"b", "d"}, 10) == pytest.approx(expected)
    assert ndcg_at_k(["b", "a"], {"b"}, 10) == 1.0
    assert ndcg_at_k(["a", "b"], {"b"}, 1) == 0.0


def test_ranking_metrics_average_over_queries():
    metrics = ranking_metrics([["a", "b"], ["c", "d"]], [{"b"}, {"c"}], recall_ks=(1, 2))
    assert metrics["num_queries"] == 2
    assert metrics["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert metrics["recall@1"] == pytest.approx(0.5)
    assert metrics["recall@2"] == pytest.approx(1.0)
    assert metrics["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1) / 2)


def test_precision_average_precision_and_both_f1s_by_hand():
    from trainers.metrics import average_precision, precision_at_k, set_metrics

    ranking = ["a", "x", "b", "y", "z"]
    # relevant a (rank 1), b (rank 3), c (never ranked): AP = (1/1 + 2/3 + 0) / 3
    assert average_precision(ranking, {"a", "b", "c"}) == pytest.approx((1 + 2 / 3) / 3)
    assert precision_at_k(ranking, {"a", "b", "c"}, 4) == pytest.approx(2 / 4)
    assert precision_at_k(["a"], {"a"}, 4) == pytest.approx(1 / 4)  # k in the denominator
    # query 1: P@2 = 1/2, R@2 = 1/3; query 2: P@2 = 0, R@2 = 0
    m = set_metrics([ranking, ["q", "r"]], [{"a", "b", "c"}, {"s"}], 2)
    assert m["precision@2"] == pytest.approx(0.25)
    assert m["recall@2"] == pytest.approx(1 / 6)
    assert m["f1_of_means@2"] == pytest.approx(2 * 0.25 * (1 / 6) / (0.25 + 1 / 6))
    assert m["mean_f1@2"] == pytest.approx((2 * 0.5 * (1 / 3) / (0.5 + 1 / 3)) / 2)
    assert m["map"] == pytest.approx(((1 + 2 / 3) / 3 + 0) / 2)
