"""The BM25 baseline (bm25s): papers indexed by title and abstract, queries are the local context.

    python -m trainers.bm25 --dataset out/ --split test --output runs/bm25

Like the neural prefetcher it never returns the citing paper or a paper published after it, and it writes
the same metrics (`results_<split>.json`, Recall@K for K up to --top_k and the number of candidates) and, for the
reranker, `prefetched_<split>.json` (`trainers.rerank evaluate` on it gives the oracle-BM25 protocol of Table 3).
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from trainers.data import SPLITS, CitationDataset, ContextQuery, EmptySplitError, load_dataset
from trainers.metrics import ranking_metrics, recall_ks_up_to
from trainers.prefetch import UNKNOWN_PAPER_DAY, UNKNOWN_QUERY_DAY, day_number
from trainers.runtime import add_dataset_flags, write_json, write_split_metrics
from trainers.tokenization import word_tokens

MARKER_WORDS = {"targetcit", "othercit"}


def query_words(text: str) -> list[str]:
    return [w for w in word_tokens(text) if w not in MARKER_WORDS]


class BM25Prefetcher:
    """Exact BM25 over the paper database with the citing-paper and publication-date exclusions."""

    def __init__(self, dataset: CitationDataset, k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s

        self.paper_ids = dataset.paper_ids()
        self.position = {p: i for i, p in enumerate(self.paper_ids)}
        self.days = np.array([day_number(dataset.papers[p].date, UNKNOWN_PAPER_DAY) for p in self.paper_ids])
        corpus = [
            word_tokens(f"{dataset.papers[p].title} {dataset.papers[p].abstract}") or ["<empty>"]
            for p in self.paper_ids
        ]
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index(corpus, show_progress=False)

    def search(self, text: str, k: int, citing_id: str, citing_date: dt.date | None) -> list[str]:
        words = query_words(text)
        scores = (
            np.asarray(self.retriever.get_scores(words), dtype=np.float64) if words else np.zeros(len(self.paper_ids))
        )
        scores[self.days > day_number(citing_date, UNKNOWN_QUERY_DAY)] = -np.inf
        if citing_id in self.position:
            scores[self.position[citing_id]] = -np.inf
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]  # by score, ties by database order
        return [self.paper_ids[i] for i in top if np.isfinite(scores[i])]

    def search_all(self, queries: Sequence[ContextQuery], k: int) -> tuple[list[list[str]], float]:
        start = time.perf_counter()
        rankings = [self.search(q.context, k, q.citing_id, q.citing_date) for q in queries]
        return rankings, (time.perf_counter() - start) / max(1, len(queries))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m trainers.bm25", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_dataset_flags(parser)
    parser.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    parser.add_argument("--top_k", type=int, default=2000, help="Papers retrieved per query.")
    parser.add_argument("--k1", type=float, default=1.2, help="BM25 k1.")
    parser.add_argument("--b", type=float, default=0.75, help="BM25 b.")
    parser.add_argument(
        "--output", required=True, help="Directory for results_<split>.json and prefetched_<split>.json."
    )
    args = parser.parse_args(argv)
    dataset = load_dataset(args.dataset, args.context_field)
    try:
        split_queries = {split: dataset.split_queries(split, "BM25") for split in args.split}
    except EmptySplitError as error:
        raise SystemExit(f"error: {error}") from error
    prefetcher = BM25Prefetcher(dataset, args.k1, args.b)
    pool = min(args.top_k, len(prefetcher.paper_ids))
    results = {}
    for split, queries in split_queries.items():
        rankings, seconds = prefetcher.search_all(queries, args.top_k)
        metrics = ranking_metrics(rankings, [set(q.cited_ids) for q in queries], recall_ks_up_to(pool))
        metrics.update({"prefetch_seconds_per_query": seconds, "split": split, "papers": len(dataset.papers)})
        write_split_metrics(Path(args.output) / f"results_{split}.json", split, metrics)
        write_json(
            Path(args.output) / f"prefetched_{split}.json",
            {q.context_id: r for q, r in zip(queries, rankings, strict=True)},
        )
        results[split] = metrics
    return results


if __name__ == "__main__":
    main()
