"""A scale simulation on paper: the cost and wall time of a corpus of N papers on W Dataflow workers, from what
`bench/pipeline.py` measured per paper (Beam CPU seconds and shuffle bytes) on this machine.

    python bench/pipeline.py --papers 100,1000,5000 --json /tmp/pipeline.json
    python bench/scale.py --json /tmp/pipeline.json                       # 1.7M arXiv and 12M S2ORC papers
    python bench/scale.py --json /tmp/pipeline.json --papers 500000 --workers 20,100 --vcpu_hour 0.056

The model, each term a flag: CPU = papers x (Beam CPU seconds per extra paper, between two measured sizes) /
`--efficiency` (the share of a worker's vCPUs kept busy); wall = `--startup_min` + CPU / (workers x vCPUs per
worker); cost = vCPU hours x `--vcpu_hour` + memory GB hours x `--gb_hour` + shuffled GB x `--shuffle_gb`
(Dataflow Shuffle, batch). Two per-paper rates are given, the 100 -> 1,000 papers slope (`low`) and the 1,000 ->
5,000 one (`high`: it holds the benchmark corpus's worst case for the triangle count, see bench/RESULTS.md).
Shuffle bytes per paper are those of the largest and of the middle run. A report, not a test; defaults are
Google's us-central1 list prices for batch Dataflow as read on 2026-11-23 (check them: they change).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rates(measured: dict) -> dict[str, dict[str, float]]:
    """Per-paper Beam CPU seconds and shuffle bytes, `low` and `high`, from a bench/pipeline.py JSON."""
    sizes = sorted(measured["sizes"], key=int)
    if len(sizes) < 3:
        raise SystemExit("need bench/pipeline.py results at three sizes (e.g. --papers 100,1000,5000)")
    small, middle, large = (int(s) for s in sizes[-3:])

    def cpu(n: int) -> float:
        return measured["sizes"][str(n)]["beam"]["cpu_s"]

    def shuffled(n: int) -> float:
        return sum(measured["sizes"][str(n)]["beam"]["shuffle_bytes"].values()) / n

    return {
        "low": {"cpu_s": (cpu(middle) - cpu(small)) / (middle - small), "shuffle_bytes": shuffled(middle)},
        "high": {"cpu_s": (cpu(large) - cpu(middle)) / (large - middle), "shuffle_bytes": shuffled(large)},
    }


def simulate(papers: int, workers: int, rate: dict[str, float], args: argparse.Namespace) -> dict[str, float]:
    cpu_hours = papers * rate["cpu_s"] / args.efficiency / 3600
    wall_hours = args.startup_min / 60 + cpu_hours / (workers * args.vcpus)
    billed_vcpu_hours = wall_hours * workers * args.vcpus  # workers are billed while the job runs
    shuffle_gb = papers * rate["shuffle_bytes"] / 1e9
    cost = (
        billed_vcpu_hours * args.vcpu_hour
        + wall_hours * workers * args.memory_gb * args.gb_hour
        + shuffle_gb * args.shuffle_gb
    )
    return {"wall_hours": wall_hours, "vcpu_hours": billed_vcpu_hours, "shuffle_gb": shuffle_gb, "usd": cost}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True, help="bench/pipeline.py's results file")
    parser.add_argument("--papers", default="1700000,12000000", help="corpus sizes, comma-separated")
    parser.add_argument("--workers", default="10,50,200", help="worker counts, comma-separated")
    parser.add_argument("--vcpus", type=int, default=4, help="vCPUs per worker (n1-standard-4: 4)")
    parser.add_argument("--memory_gb", type=float, default=15.0, help="memory per worker (n1-standard-4: 15)")
    parser.add_argument("--efficiency", type=float, default=0.8, help="share of the vCPUs kept busy")
    parser.add_argument("--startup_min", type=float, default=5.0, help="job start-up and tear-down, minutes")
    parser.add_argument("--vcpu_hour", type=float, default=0.056, help="USD per vCPU hour (batch)")
    parser.add_argument("--gb_hour", type=float, default=0.003557, help="USD per GB hour of memory (batch)")
    parser.add_argument("--shuffle_gb", type=float, default=0.011, help="USD per GB of Dataflow Shuffle")
    args = parser.parse_args(argv)

    measured = json.loads(Path(args.json).read_text())
    per_paper = rates(measured)
    for name, rate in per_paper.items():
        cpu_ms, shuffled_kb = rate["cpu_s"] * 1000, rate["shuffle_bytes"] / 1000
        print(f"{name:>4}: {cpu_ms:.1f} ms Beam CPU and {shuffled_kb:.0f} kB shuffled a paper")
    print(f"{'papers':>10} {'workers':>7} {'rate':>4} {'wall h':>7} {'vCPU h':>8} {'shuffle GB':>10} {'USD':>8}")
    for papers in (int(p) for p in args.papers.split(",")):
        for workers in (int(w) for w in args.workers.split(",")):
            for name, rate in per_paper.items():
                r = simulate(papers, workers, rate, args)
                print(
                    f"{papers:>10,} {workers:>7} {name:>4} {r['wall_hours']:>7.2f} {r['vcpu_hours']:>8.0f} "
                    f"{r['shuffle_gb']:>10.0f} {r['usd']:>8.0f}"
                )


if __name__ == "__main__":
    main()
