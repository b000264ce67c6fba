"""The BM25 baseline (bm25s): papers indexed by title and abstract, queries are the local context.

    python -m trainers.bm25 --dataset out/ --split test --output runs/bm25
    python -m trainers.bm25 --dataset out/ --split test --output runs/bm25-rmc --candidates matching

Like the neural prefetcher it never returns the citing paper or a paper published after it, and it writes
the same metrics (`results_<split>.json`, Recall@K for K up to --top_k and the number of candidates) and, for the
reranker, `prefetched_<split>.json` (`trainers.rerank evaluate` on it gives the oracle-BM25 protocol of Table 3).

`--candidates all` (the default) ranks every candidate, those sharing no word with the query last (score 0, in
paper-id order). `--candidates matching` is RMC's convention (ChainsawM/RMC src/modules/rankers.py: a Whoosh
OR query returns only the papers holding a query term, and a cited paper it does not return counts as missed):
only the papers sharing a query word are ranked, the query's Whoosh stop words and one-letter words left out
(they would match nearly every paper).
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
ALL_CANDIDATES = "all"
MATCHING_CANDIDATES = "matching"
CANDIDATE_CONVENTIONS = (ALL_CANDIDATES, MATCHING_CANDIDATES)
WHOOSH_STOP_WORDS = frozenset(
    "a an and are as at be by can for from have if in is it may not of on or tbd that the this to us we when will "
    "with yet you your".split()
)
"""`whoosh.analysis.STOP_WORDS`: the words the StandardAnalyzer of RMC's index schema drops (with words of one
letter, its StopFilter's minsize 2), so they are never query terms there."""


def query_words(text: str) -> list[str]:
    return [w for w in word_tokens(text) if w not in MARKER_WORDS]


def matching_query_words(text: str) -> list[str]:
    """The query words RMC's convention matches on: `query_words` less Whoosh's stop words and one-letter words."""
    return [w for w in query_words(text) if w not in WHOOSH_STOP_WORDS and len(w) > 1]


class BM25Prefetcher:
    """Exact BM25 over the paper database with the citing-paper and publication-date exclusions. `candidates`:
    `all` ranks every paper; `matching` (RMC's convention) only the papers sharing a query word, read off the
    scores: under bm25s's Lucene BM25 every term's idf, log(1 + (N - df + 0.5) / (df + 0.5)), is positive, so a
    paper scores above 0 exactly when it holds a query word."""

    def __init__(
        self, dataset: CitationDataset, k1: float = 1.2, b: float = 0.75, candidates: str = ALL_CANDIDATES
    ) -> None:
        import bm25s

        if candidates not in CANDIDATE_CONVENTIONS:
            raise ValueError(f"candidates must be one of {', '.join(CANDIDATE_CONVENTIONS)}, not {candidates!r}")
        self.candidates = candidates
        self.paper_ids = dataset.paper_ids()
        self.position = {p: i for i, p in enumerate(self.paper_ids)}
        self.days = np.array([day_number(dataset.papers[p].date, UNKNOWN_PAPER_DAY) for p in self.paper_ids])
        corpus = [
            word_tokens(f"{dataset.papers[p].title} {dataset.papers[p].abstract}") or ["<empty>"]
            for p in self.paper_ids
        ]
        self.retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        self.retriever.index(corpus, show_progress=False)

    def search(self, text: str, k: int, citing_id: str, citing_date: dt.date | None) -> list[str]:
        matching = self.candidates == MATCHING_CANDIDATES
        words = matching_query_words(text) if matching else query_words(text)
        scores = (
            np.asarray(self.retriever.get_scores(words), dtype=np.float64) if words else np.zeros(len(self.paper_ids))
        )
        if matching:
            scores[scores <= 0] = -np.inf  # no query word: not ranked (RMC's Whoosh search does not return it)
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
        "--candidates",
        choices=CANDIDATE_CONVENTIONS,
        default=ALL_CANDIDATES,
        help="all: rank every candidate (citrec's tables). matching: only those sharing a query word, Whoosh's stop "
        "words aside (RMC's BM25 convention; a cited paper sharing none counts as missed).",
    )
    parser.add_argument(
        "--output", required=True, help="Directory for results_<split>.json and prefetched_<split>.json."
    )
    args = parser.parse_args(argv)
    dataset = load_dataset(args.dataset, args.context_field)
    try:
        split_queries = {split: dataset.split_queries(split, "BM25") for split in args.split}
    except EmptySplitError as error:
        raise SystemExit(f"error: {error}") from error
    prefetcher = BM25Prefetcher(dataset, args.k1, args.b, args.candidates)
    pool = min(args.top_k, len(prefetcher.paper_ids))
    results = {}
    for split, queries in split_queries.items():
        rankings, seconds = prefetcher.search_all(queries, args.top_k)
        metrics = ranking_metrics(rankings, [set(q.cited_ids) for q in queries], recall_ks_up_to(pool))
        metrics.update({"prefetch_seconds_per_query": seconds, "split": split, "papers": len(dataset.papers)})
        metrics["candidates"] = args.candidates
        write_split_metrics(Path(args.output) / f"results_{split}.json", split, metrics)
        write_json(
            Path(args.output) / f"prefetched_{split}.json",
            {q.context_id: r for q, r in zip(queries, rankings, strict=True)},
        )
        results[split] = metrics
    return results


if __name__ == "__main__":
    main()
