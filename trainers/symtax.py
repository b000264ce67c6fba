"""SymTax's Enricher (Goyal et al., ACL 2024): the prefetched candidates widened by the papers they cite.

    python -m trainers.symtax enrich --dataset out/ --prefetched runs/hatten --split test --output runs/symtax
    python -m trainers.symtax enrich --dataset out/ --prefetched runs/hatten --split test --output runs/symtax-leak \\
        --graph all                                                    # the published code's graph (a leak)

What it does, read off goyalkaraniit/SymTax @ e3de5b2c (`per.py`: `enrich_300`,
`unique_sort_by_frequency_with_tiebreaker`): a query's top `--top_n` (100) prefetched papers are kept in their order;
the papers each of them cites (its out-edges in a citation graph) are pooled, counted, and the `--extra` (200) most
frequent are appended, ties broken by first appearance: 300 candidates for the reranker.

Where this differs from the published code, each on purpose:
- **The graph.** `per.py` builds its graph from every context id of `contexts_new_head.json`, the test contexts
  included, so a candidate's citations that exist only in test contexts widen the test queries' lists: the ground
  truth leaks into the candidates. Here the graph is the training split's citations (`--graph train`, the
  default); `--graph train+validation` adds the validation split's, and `--graph all` rebuilds the published,
  leaking graph so that the difference can be measured (`results_enrich_<split>.json` holds both lists' recall).
- **Duplicates and exclusions.** `enrich_300` appends the frequent cited papers without removing those already
  among the top 100 (a paper can take two slots) and never checks dates; here an appended paper is one not
  already listed, in the pool (`in_pool`), not the citing paper, and not published after it (the prefetchers'
  exclusions), so the list holds at most `top_n + extra` distinct candidates.
- `per.py` also adds each context id as a node (`G.add_node(context)`); those nodes have no edges and change
  nothing here.

`enrich` writes `prefetched_<split>.json` ({context_id: enriched list}) for `trainers.rerank` and
`results_enrich_<split>.json`: Recall@K (K up to top_n + extra) and MRR of the enriched list beside the
prefetcher's own top `top_n + extra` (the same budget), so the Enricher's gain is measured against simply taking
more prefetched papers.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from trainers.data import SPLITS, CitationDataset, ContextQuery, EmptySplitError, load_dataset
from trainers.metrics import RECALL_KS, ranking_metrics, recall_ks_up_to
from trainers.prefetch import UNKNOWN_PAPER_DAY, UNKNOWN_QUERY_DAY, day_number
from trainers.runtime import add_dataset_flags, dataset_versions, read_json, write_json, write_split_metrics

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
    parser = argparse.ArgumentParser(
        prog="python -m trainers.symtax", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
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
        path = Path(args.prefetched) / f"prefetched_{split}.json"
        if not path.is_file():
            hint = f"run `python -m trainers.hatten prefetch --split {split}` first"
            raise SystemExit(f"error: {path} is missing: {hint}")
        enriched, metrics = enrich_split(dataset, queries, read_json(path), graph, args.top_n, args.extra)
        metrics.update({"split": split, "graph": args.graph, "top_n": args.top_n, "extra": args.extra})
        metrics["dataset_versions"] = dataset_versions(args.dataset)
        write_json(output / f"prefetched_{split}.json", enriched)
        write_split_metrics(output / f"results_enrich_{split}.json", split, metrics)
        results[split] = metrics
    return results


if __name__ == "__main__":
    main()
