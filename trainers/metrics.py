"""Ranking metrics of the local-citation-recommendation literature, per query and averaged.

A ranking is a list of paper ids, best first; the relevant set is the papers the context cites.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

RECALL_KS = (5, 10, 20, 50, 100, 200, 500, 1000, 2000)
RERANK_POOL_SIZES = (100, 200, 500, 1000, 2000)


def recall_ks_up_to(pool: int, ks: Sequence[int] = RECALL_KS) -> tuple[int, ...]:
    """The Ks of `ks` that a ranking of at most `pool` papers can answer: Recall@K for a K beyond the papers
    ranked (the top-K asked for, or every candidate there is) repeats Recall@pool and is not reported."""
    return tuple(k for k in ks if k <= pool)


def reciprocal_rank(ranking: Sequence[str], relevant: set[str]) -> float:
    """1 / rank of the first relevant paper; 0 when none is ranked."""
    for rank, paper_id in enumerate(ranking, start=1):
        if paper_id in relevant:
            return 1.0 / rank
    return 0.0


def recall_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> float:
    """The fraction of relevant papers among the first k."""
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def ndcg_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> float:
    """Binary-gain NDCG: sum of 1/log2(rank+1) over relevant papers in the first k, over the ideal sum."""
    dcg = sum(1.0 / math.log2(rank + 1) for rank, paper_id in enumerate(ranking[:k], start=1) if paper_id in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def ranking_metrics(
    rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], recall_ks: Sequence[int] = RECALL_KS
) -> dict[str, float]:
    """MRR, Recall@K for each K and NDCG@10, averaged over queries."""
    if len(rankings) != len(relevant):
        raise ValueError("one ranking per query")
    n = len(rankings)
    if n == 0:
        return {}
    metrics = {
        "num_queries": float(n),
        "mrr": sum(reciprocal_rank(r, p) for r, p in zip(rankings, relevant, strict=True)) / n,
    }
    for k in recall_ks:
        metrics[f"recall@{k}"] = sum(recall_at_k(r, p, k) for r, p in zip(rankings, relevant, strict=True)) / n
    metrics["ndcg@10"] = sum(ndcg_at_k(r, p, 10) for r, p in zip(rankings, relevant, strict=True)) / n
    return metrics


def bootstrap_ci(
    values: Sequence[float], resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-query `values` and its percentile bootstrap interval at `level`, from
    `resamples` resamples of the queries with replacement (numpy's generator seeded with `seed`, so a run repeats).
    Paired comparisons pass per-query differences. No values: NaNs."""
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return (math.nan, math.nan, math.nan)
    if resamples < 1 or not 0 < level < 1:
        raise ValueError("resamples must be at least 1 and level between 0 and 1")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(data.mean()), float(low), float(high))


def precision_at_k(ranking: Sequence[str], relevant: set[str], k: int) -> float:
    """The fraction of the first k slots holding a relevant paper (k in the denominator even when fewer are
    ranked: Citeomatic's and Kieu et al.'s definition)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    return len(relevant.intersection(ranking[:k])) / k


def average_precision(ranking: Sequence[str], relevant: set[str]) -> float:
    """Mean of precision@rank over the ranks of the relevant papers, over all relevant papers (a relevant paper
    not ranked adds 0): the AP of MAP as RMCNet (Long et al.) and trec_eval define it."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, paper_id in enumerate(ranking, start=1):
        if paper_id in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def set_metrics(rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], k: int) -> dict[str, float]:
    """P@k, R@k and two F1s over queries: `f1_of_means@k` = F1 of the mean P@k and mean R@k (Citeomatic's
    corpus-level F1@20, Bhagavatula et al. 2018, Sec. 5), `mean_f1@k` = the mean of each query's F1; and MAP."""
    if len(rankings) != len(relevant):
        raise ValueError("one ranking per query")
    n = len(rankings)
    if n == 0:
        return {}
    pairs = list(zip(rankings, relevant, strict=True))
    p = [precision_at_k(r, rel, k) for r, rel in pairs]
    r = [recall_at_k(rk, rel, k) for rk, rel in pairs]
    mean_p, mean_r = sum(p) / n, sum(r) / n
    return {
        f"precision@{k}": mean_p,
        f"recall@{k}": mean_r,
        f"f1_of_means@{k}": f1(mean_p, mean_r),
        f"mean_f1@{k}": sum(f1(a, b) for a, b in zip(p, r, strict=True)) / n,
        "map": sum(average_precision(rk, rel) for rk, rel in pairs) / n,
    }
