"""A scale simulation on paper: the cost and wall time of a corpus of N papers on W Dataflow workers, from what
`bench/pipeline.py` measured per paper (Beam CPU seconds and shuffle bytes) on this machine and, for a database
matched by joins, what `bench/join_scale.py` measured the title join to move at the corpus's database size.

    python bench/pipeline.py --papers 100,1000,5000 --modes beam --matcher join --json /tmp/join.json
    python bench/join_scale.py --json /tmp/join_scale.json
    python bench/scale.py --json /tmp/join.json --join_scale /tmp/join_scale.json     # arXiv and S2ORC
    python bench/scale.py --json /tmp/pipeline.json --corpora papers=500000:0 --workers 20,100   # in memory

The model, each term a flag: CPU = papers x (Beam CPU seconds per extra paper, between two measured sizes) /
`--efficiency` (the share of a worker's vCPUs kept busy); wall = `--startup_min` + CPU / (workers x vCPUs per
worker); cost = vCPU hours x `--vcpu_hour` + memory GB hours x `--gb_hour` + shuffled GB x `--shuffle_gb`
(Dataflow Shuffle, batch). Two per-paper rates are given, the 100 -> 1,000 papers slope (`low`) and the 1,000 ->
5,000 one (`high`: it holds the benchmark corpus's worst case for the triangle count, see bench/RESULTS.md).
Shuffle bytes per paper are those of the largest and of the middle run.

The title join (with `--join_scale`, for a corpus whose `--corpora` entry names a database size): the benchmark
matched against a database of its own size (its papers and 1,663 bibliography titles), where a reference has about
one LSH candidate. Its title join's bytes (the GroupByKeys under `ByTitle`) are taken out of the per-paper rate and
put back as they are at the corpus's database: references a paper x bytes a reference + database papers a citing
paper x bytes a database paper (`join_bytes`; `bench/join_scale.py`'s model, interpolated linearly in the database
size between measured sizes, and along the last slope beyond the largest). The CPU of checking the extra
candidates the buckets propose is added (`--check_us` each). A report, not a test; defaults are Google's
us-central1 list prices for batch Dataflow as read on 2026-11-23 (check them: they change).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TITLE_JOIN_STEP = "ByTitle"
"""What names the title join's GroupByKeys in `bench/pipeline.py`'s shuffle counts."""
BENCH_BIB_TITLES = 1_663
"""Database papers of the benchmark corpus besides its own papers: one per distinct bibliography title."""


def rates(measured: dict) -> dict[str, dict[str, float]]:
    """Per-paper Beam CPU seconds, shuffle bytes and the title join's share of them, `low` and `high`, from a
    bench/pipeline.py JSON; `papers` is the size whose shuffle the rate takes."""
    sizes = sorted(measured["sizes"], key=int)
    if len(sizes) < 3:
        raise SystemExit("need bench/pipeline.py results at three sizes (e.g. --papers 100,1000,5000)")
    small, middle, large = (int(s) for s in sizes[-3:])

    def cpu(n: int) -> float:
        return measured["sizes"][str(n)]["beam"]["cpu_s"]

    def shuffled(n: int, only: str = "") -> float:
        steps = measured["sizes"][str(n)]["beam"]["shuffle_bytes"]
        return sum(b for step, b in steps.items() if only in step) / n

    def rate(cpu_s: float, n: int) -> dict[str, float]:
        return {
            "cpu_s": cpu_s,
            "shuffle_bytes": shuffled(n),
            "title_join_bytes": shuffled(n, TITLE_JOIN_STEP),
            "papers": n,
        }

    return {
        "low": rate((cpu(middle) - cpu(small)) / (middle - small), middle),
        "high": rate((cpu(large) - cpu(middle)) / (large - middle), large),
    }


def join_bytes(join_scale: dict, database: int, design: str = "after") -> dict[str, float]:
    """Bytes a reference, bytes a database paper and candidates a reference of the title join at a database of
    `database` titles, from a bench/join_scale.py JSON (its synthetic rows): linear in the size between the
    measured sizes around it (candidates grow with the database), along the last two's slope beyond the largest,
    the smallest's below it."""
    rows = sorted((r for r in join_scale["rows"] if r.get("titles") != "real"), key=lambda r: r["size"])
    if len(rows) < 2:
        raise SystemExit("need bench/join_scale.py results at two database sizes at least")
    points = [
        (
            r["size"],
            r[f"bytes_{design}"]["reference_total"],
            r[f"bytes_{design}"]["database_paper_total"],
            r["per_reference"]["candidates"]["mean"],
        )
        for r in rows
    ]
    if database <= points[0][0]:
        _, ref, paper, candidates = points[0]
        return {"bytes_per_ref": ref, "bytes_per_database_paper": paper, "candidates_per_ref": candidates}
    i = next((i for i, p in enumerate(points) if p[0] >= database), len(points) - 1)
    (x0, *low), (x1, *high) = points[i - 1], points[i]
    t = (database - x0) / (x1 - x0)
    ref, paper, candidates = (a + t * (b - a) for a, b in zip(low, high, strict=True))
    return {"bytes_per_ref": ref, "bytes_per_database_paper": paper, "candidates_per_ref": candidates}


def with_title_join(rate: dict[str, float], papers: int, database: int, join_scale: dict, args) -> dict[str, float]:
    """`rate` with the title join's bytes (and extra candidate checks) as they are at a database of `database`
    papers for a corpus of `papers`, instead of the benchmark's own (the module docstring)."""
    refs = args.refs_per_paper or join_scale["refs_per_paper"]
    at_corpus = join_bytes(join_scale, database)
    at_bench = join_bytes(join_scale, rate["papers"] + BENCH_BIB_TITLES)
    title_join = refs * at_corpus["bytes_per_ref"] + database / papers * at_corpus["bytes_per_database_paper"]
    extra_candidates = max(at_corpus["candidates_per_ref"] - at_bench["candidates_per_ref"], 0.0)
    return {
        **rate,
        "cpu_s": rate["cpu_s"] + refs * extra_candidates * args.check_us / 1e6,
        "shuffle_bytes": rate["shuffle_bytes"] - rate["title_join_bytes"] + title_join,
        "title_join_bytes": title_join,
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


def corpora(spec: str) -> list[tuple[str, int, int]]:
    """`name=papers:database,...` (database 0: matched in memory, the rate as measured)."""
    found = []
    for item in spec.split(","):
        name, sizes = item.split("=")
        papers, database = sizes.split(":")
        found.append((name, int(papers), int(database)))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True, help="bench/pipeline.py's results file")
    parser.add_argument("--join_scale", help="bench/join_scale.py's results file: the title join at the database size")
    parser.add_argument(
        "--corpora",
        default="arXiv=1700000:2400000,S2ORC=12000000:12000000,S2ORC-all-metadata=12000000:81100000",
        help="name=papers:database papers, comma-separated (database 0: no title join term)",
    )
    parser.add_argument("--workers", default="10,50,200", help="worker counts, comma-separated")
    parser.add_argument("--refs_per_paper", type=float, help="references a paper (default: bench/join_scale.py's)")
    parser.add_argument("--check_us", type=float, default=1.0, help="CPU microseconds a proposed candidate")
    parser.add_argument("--vcpus", type=int, default=4, help="vCPUs per worker (n1-standard-4: 4)")
    parser.add_argument("--memory_gb", type=float, default=15.0, help="memory per worker (n1-standard-4: 15)")
    parser.add_argument("--efficiency", type=float, default=0.8, help="share of the vCPUs kept busy")
    parser.add_argument("--startup_min", type=float, default=5.0, help="job start-up and tear-down, minutes")
    parser.add_argument("--vcpu_hour", type=float, default=0.056, help="USD per vCPU hour (batch)")
    parser.add_argument("--gb_hour", type=float, default=0.003557, help="USD per GB hour of memory (batch)")
    parser.add_argument("--shuffle_gb", type=float, default=0.011, help="USD per GB of Dataflow Shuffle")
    args = parser.parse_args(argv)

    measured = json.loads(Path(args.json).read_text())
    join_scale = json.loads(Path(args.join_scale).read_text()) if args.join_scale else None
    per_paper = rates(measured)
    for name, rate in per_paper.items():
        cpu_ms, shuffled_kb = rate["cpu_s"] * 1000, rate["shuffle_bytes"] / 1000
        print(
            f"{name:>4}: {cpu_ms:.1f} ms Beam CPU and {shuffled_kb:.0f} kB shuffled a paper, of which the title join "
            f"{rate['title_join_bytes'] / 1000:.0f} kB (at {rate['papers']:,} papers)"
        )
    header = f"{'corpus':>20} {'papers':>10} {'database':>10} {'workers':>7} {'rate':>4} {'kB/paper':>8}"
    print(f"{header} {'wall h':>7} {'vCPU h':>8} {'shuffle GB':>10} {'USD':>8}")
    for corpus, papers, database in corpora(args.corpora):
        for workers in (int(w) for w in args.workers.split(",")):
            for name, rate in per_paper.items():
                if database and join_scale:
                    rate = with_title_join(rate, papers, database, join_scale, args)
                r = simulate(papers, workers, rate, args)
                print(
                    f"{corpus:>20} {papers:>10,} {database:>10,} {workers:>7} {name:>4} "
                    f"{rate['shuffle_bytes'] / 1000:>8.0f} {r['wall_hours']:>7.2f} {r['vcpu_hours']:>8.0f} "
                    f"{r['shuffle_gb']:>10.0f} {r['usd']:>8.0f}"
                )


if __name__ == "__main__":
    main()
