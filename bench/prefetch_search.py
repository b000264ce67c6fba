"""The exact search alone (`trainers.prefetch.PaperIndex.search`), one query at a time against its share of a
batch, on random unit vectors: what a single query costs beyond the batched search, encoding left out.

    python -m bench.prefetch_search --papers 100000 --queries 1000 --single_queries 50

Prints milliseconds per query batched and alone, and their ratio (CPU or whatever device `--device` names).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time

import torch

from trainers.prefetch import PaperIndex


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.prefetch_search", description=__doc__)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000, help="Queries searched as one batch.")
    parser.add_argument("--single_queries", type=int, default=50, help="Queries searched one at a time.")
    parser.add_argument("--dim", type=int, default=200)
    parser.add_argument("--top_k", type=int, default=2000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    generator = torch.Generator().manual_seed(args.seed)
    device = torch.device(args.device)

    def unit(n: int) -> torch.Tensor:
        return torch.nn.functional.normalize(torch.randn(n, args.dim, generator=generator), dim=1).to(device)

    ids = [f"p{i}" for i in range(args.papers)]
    dates = [dt.date(2000 + i % 25, 1 + i % 12, 1) for i in range(args.papers)]
    index = PaperIndex.build(ids, unit(args.papers), dates)
    queries = unit(args.queries)
    citing = [ids[i * 7 % args.papers] for i in range(args.queries)]
    when = [dt.date(2024, 1, 1)] * args.queries
    index.search(queries[:2], args.top_k, citing[:2], when[:2])  # warm-up
    start = time.perf_counter()
    index.search(queries, args.top_k, citing, when)
    batched_ms = 1000 * (time.perf_counter() - start) / args.queries
    start = time.perf_counter()
    for q in range(args.single_queries):
        index.search(queries[q : q + 1], args.top_k, citing[q : q + 1], when[q : q + 1])
    single_ms = 1000 * (time.perf_counter() - start) / args.single_queries
    result = {
        "papers": args.papers,
        "batched_ms_a_query": round(batched_ms, 3),
        "single_ms_a_query": round(single_ms, 3),
        "single_over_batched": round(single_ms / batched_ms, 2),
        "threads": torch.get_num_threads(),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
