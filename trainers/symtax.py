"""SymTax's Enricher (Goyal et al., ACL 2024): the prefetched candidates widened by the papers they cite.

    python -m trainers.symtax enrich --dataset out/ --prefetched runs/hatten --split test --output runs/symtax
    python -m trainers.symtax enrich ... --graph all          # the published code's graph (a leak)

A query's top `--top_n` prefetched papers keep their order; the `--extra` papers they cite most often follow. The
graph is the training split's by default, and an appended paper is new, in the pool, and not later than the
citing paper (docs/design.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from trainers.data import SPLITS, CitationDataset, ContextQuery, EmptySplitError, load_dataset, load_prefetched
from trainers.metrics import RECALL_KS, ranking_metrics, recall_ks_up_to
from trainers.prefetch import UNKNOWN_PAPER_DAY, UNKNOWN_QUERY_DAY, day_number
from trainers.runtime import add_dataset_flags, command_parser, dataset_versions, write_json, write_split_metrics

GRAPHS = {"train": ("train",), "train+validation": ("train", "validation"), "all": SPLITS}


def citation_graph(dataset: CitationDataset, splits: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """citing paper -> the papers it cites, in first-seen order, from the contexts of `splits` only."""
    cited: dict[str, dict[str, None]] = {}
    for split in splits:
        for query in dataset.queries.get(split) or []:
            targets = cited.setdefault(query.citing_id, {})
            for paper_id in query.cited_ids:
                if paper_id != query.citing_id:
                    targets.setdefault(paper_id, None)
    return {citing: tuple(targets) for citing, targets in cited.items()}


def by_frequency(items: Iterable[str]) -> list[str]:
    """Distinct items, most frequent first, ties by first appearance (`unique_sort_by_frequency_with_tiebreaker`)."""
    counts = Counter()
    first: dict[str, int] = {}
    for position, item in enumerate(items):
        counts[item] += 1
        first.setdefault(item, position)
    return sorted(counts, key=lambda item: (-counts[item], first[item]))


def enrich(
    candidates: Sequence[str],
    graph: dict[str, tuple[str, ...]],
    *,
    top_n: int = 100,
    extra: int = 200,
    allowed=lambda paper_id: True,
) -> list[str]:
    """The first `top_n` candidates, then up to `extra` papers they cite, most often cited by them first; an
    appended paper is not already listed and passes `allowed`."""
    kept = list(candidates[:top_n])
    listed = set(kept)
    cited = (paper for paper_id in kept for paper in graph.get(paper_id, ()))
    appended = [p for p in by_frequency(cited) if p not in listed and allowed(p)][:extra]
    return kept + appended


def admissible(dataset: CitationDataset, query: ContextQuery):
    """The prefetchers' exclusions for one query: in the pool, not the citing paper, not published after it."""
    query_day = day_number(query.citing_date, UNKNOWN_QUERY_DAY)
    pool = dataset.pool

    def allowed(paper_id: str) -> bool:
        paper = dataset.papers.get(paper_id)
        if paper is None or paper_id == query.citing_id or (pool is not None and paper_id not in pool):
            return False
        return day_number(paper.date, UNKNOWN_PAPER_DAY) <= query_day

    return allowed


def enrich_split(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    prefetched: dict[str, list[str]],
    graph: dict[str, tuple[str, ...]],
    top_n: int,
    extra: int,
) -> tuple[dict[str, list[str]], dict[str, float]]:
    """Enriched lists and the metrics of both lists (`enriched_*`, `prefetched_*` at the same budget)."""
    missing = [q.context_id for q in queries if q.context_id not in prefetched]
    if missing:
        raise SystemExit(f"error: {len(missing)} contexts have no prefetched list (first: {missing[0]})")
    budget = top_n + extra
    enriched = {
        q.context_id: enrich(prefetched[q.context_id], graph, top_n=top_n, extra=extra, allowed=admissible(dataset, q))
        for q in queries
    }
    relevant = [set(q.cited_ids) for q in queries]
    ks = recall_ks_up_to(budget, tuple(sorted({*RECALL_KS, budget})))
    metrics: dict[str, float] = {}
    for name, rankings in (
        ("enriched", [enriched[q.context_id] for q in queries]),
        ("prefetched", [prefetched[q.context_id][:budget] for q in queries]),
    ):
        for key, value in ranking_metrics(rankings, relevant, ks).items():
            metrics[key if key == "num_queries" else f"{name}_{key}"] = value
    metrics["enriched_mean_length"] = sum(len(r) for r in enriched.values()) / max(1, len(enriched))
    return enriched, metrics


def main(argv: list[str] | None = None) -> dict:
    parser, commands = command_parser("python -m trainers.symtax", __doc__)
    run = commands.add_parser("enrich", help="Widen prefetched lists with the candidates' citations.")
    add_dataset_flags(run)
    run.add_argument("--prefetched", required=True, help="Directory with prefetched_<split>.json.")
    run.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    run.add_argument("--output", required=True, help="Directory for the enriched prefetched_<split>.json.")
    run.add_argument("--top_n", type=int, default=100, help="Prefetched papers kept (100).")
    run.add_argument("--extra", type=int, default=200, help="Cited papers appended at most (200).")
    run.add_argument(
        "--graph",
        choices=tuple(GRAPHS),
        default="train",
        help="Contexts the citation graph is built from: train (default), train+validation, or all (the published "
        "code's graph, which holds the test citations: a leak, for comparison only).",
    )
    args = parser.parse_args(argv)
    dataset = load_dataset(args.dataset, args.context_field)
    graph = citation_graph(dataset, GRAPHS[args.graph])
    output = Path(args.output)
    results = {}
    for split in args.split:
        try:
            queries = dataset.split_queries(split, "the Enricher")
        except EmptySplitError as error:
            raise SystemExit(f"error: {error}") from error
        prefetched = load_prefetched(args.prefetched, split)
        enriched, metrics = enrich_split(dataset, queries, prefetched, graph, args.top_n, args.extra)
        metrics.update({"split": split, "graph": args.graph, "top_n": args.top_n, "extra": args.extra})
        metrics["dataset_versions"] = dataset_versions(args.dataset)
        write_json(output / f"prefetched_{split}.json", enriched)
        write_split_metrics(output / f"results_enrich_{split}.json", split, metrics)
        results[split] = metrics
    return results


if __name__ == "__main__":
    main()
