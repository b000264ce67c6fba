"""Title matching at 10k / 100k / 1M database titles: ours (in memory and the Beam join) against datasketch.

    python bench/matching.py                                  # 10k, 100k and 1M titles, 10k references
    python bench/matching.py --sizes 10000 100000 --queries 2000
    python bench/matching.py --sweep --sizes 100000           # shingle size and banding, by measurement
    python bench/matching.py --sizes 1000000 --methods baseline memory --before /tmp/old --repeat 3

Titles are real-shaped: a word-bigram model of the real titles under ../shared/data (bib-entry titles of
the GROBID TEI and S2ORC files, S2ORC and arXiv metadata titles), with their length distribution. The
references are citation-style variants of database titles with the truth known (case and punctuation,
a misspelled word, a dropped word, a truncated tail, LaTeX and an "arXiv preprint" tail) plus titles of
papers that are not in the database (any resolution of those is wrong).

Each method runs in its own process (peak resident memory is that process's `ru_maxrss`; "index memory"
is the peak minus the resident size after the inputs were loaded):
- `baseline`: datasketch as a user would write it: `MinHash.generator` over the shingles, `MinHashLSH`
  (threshold 0.5, 128 permutations), a dict of the MinHashes to rank candidates by `jaccard`, the top 100
  checked one pair at a time with rapidfuzz LCS >= 0.9.
- `memory`: `mapping.in_memory.InMemoryMatcher`.
- `join`: `pipelines.matching.MatchTitles` (the Beam join) on FnApiRunner, reading the same files.
- `memory@before` (with `--before DIR`): the `memory` method of another checkout (`git archive OLD | tar -x
  -C DIR`), on the same inputs, run between the others.

With `--repeat N` every method runs N times, alternating; the table shows medians, and each ratio against
the baseline is taken within one repetition (median, min-max), so that load from other work on the machine
falls on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.shared import shared_data_dir  # noqa: E402
from extractors.documents.files import parse_document_file  # noqa: E402
from mapping.matcher import MatchConfig, usable_title  # noqa: E402
from mapping.records import BibEntry, Paper, ParsedDocument  # noqa: E402
from mapping.titles import normalize_title  # noqa: E402

VARIANTS = ("case_punct", "misspelled", "dropped_word", "truncated", "latex_tail", "exact", "not_in_db")


def real_titles(shared: Path) -> list[str]:
    """Every distinct real title we can read under the shared data."""
    titles: list[str] = []
    for kind, pattern in (("tei", "grobid/**/*.xml"), ("s2orc", "s2orc/**/*.json")):
        for path in sorted(shared.glob(pattern)):
            if path.name.endswith(".tei.xml") or kind == "s2orc":
                for document in parse_document_file(path.read_bytes(), str(path), kind):
                    if isinstance(document, ParsedDocument):
                        titles.extend(e.title for e in document.bib_entries if e.title)
    for path in (
        shared / "arxiv/arxiv-browse_abs_derived.jsonl",
        shared / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl",
    ):
        for line in path.read_text().splitlines():
            title = json.loads(line).get("title")
            if title:
                titles.append(" ".join(title.split()))
    return sorted({t for t in titles if len(normalize_title(t)) >= 8})


class TitleModel:
    """A first-order word Markov chain over normalised real titles, with their word-count distribution."""

    def __init__(self, titles: list[str]) -> None:
        self.lengths: list[int] = []
        self.next: dict[str, list[str]] = defaultdict(list)
        for title in titles:
            words = normalize_title(title).split()
            self.lengths.append(len(words))
            for a, b in zip(["<s>", *words], [*words, "</s>"], strict=True):
                self.next[a].append(b)
        self.vocabulary = sorted({w for ws in self.next.values() for w in ws} - {"</s>"})
        self.followers = {w: [f for f in ws if f != "</s>"] for w, ws in self.next.items()}

    def title(self, rng: random.Random) -> str:
        target = rng.choice(self.lengths)
        words, word = [], "<s>"
        while len(words) < target:
            followers = self.followers.get(word)
            word = rng.choice(followers) if followers and rng.random() < 0.9 else rng.choice(self.vocabulary)
            words.append(word)
        return " ".join(w.capitalize() if len(w) > 3 else w for w in words)


def generate(
    model: TitleModel, size: int, queries: int, seed: int
) -> tuple[list[Paper], list[tuple[BibEntry, str | None, str]]]:
    """`size` database papers with distinct normalised titles, and `queries` references with their truth."""
    rng = random.Random(seed)
    seen: set[str] = set()
    titles: list[str] = []
    missing = queries // 10
    while len(titles) < size + missing:
        title = model.title(rng)
        key = normalize_title(title)
        if len(key) >= 8 and key not in seen:
            seen.add(key)
            titles.append(title)
    papers = [Paper(f"p{i:07d}", t, year=1990 + rng.randrange(36)) for i, t in enumerate(titles[:size])]
    absent = titles[size:]
    refs = []
    for q in range(queries):
        kind = VARIANTS[q % len(VARIANTS)]
        if kind == "not_in_db":
            refs.append((BibEntry(f"r{q}", title=absent[q % len(absent)], year=2000), None, kind))
            continue
        paper = papers[rng.randrange(size)]
        refs.append((BibEntry(f"r{q}", title=variant(paper.title, kind, rng), year=paper.year), paper.paper_id, kind))
    return papers, refs


def variant(title: str, kind: str, rng: random.Random) -> str:
    """A citation-style spelling of `title`."""
    words = title.split()
    if kind == "case_punct":
        return (title.upper() if rng.random() < 0.5 else title.lower()).replace(
            " ", rng.choice([" ", " - ", ": ", ", "]), 1
        ) + "."
    if kind == "misspelled":
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 3:
            j = rng.randrange(1, len(w) - 1)
            words[i] = w[:j] + w[j + 1 :] if rng.random() < 0.5 else w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        return " ".join(words)
    if kind == "dropped_word" and len(words) > 4:
        del words[rng.randrange(1, len(words))]
        return " ".join(words)
    if kind == "truncated" and len(title) > 40:
        return title[: int(len(title) * 0.93)]
    if kind == "latex_tail":
        return "{" + title + "}. arXiv preprint arXiv:2101.00001"
    return title


def write_inputs(directory: Path, papers: list[Paper], refs: list[tuple[BibEntry, str | None, str]]) -> None:
    with open(directory / "papers.jsonl", "w") as out:
        for p in papers:
            out.write(json.dumps({"paper_id": p.paper_id, "title": p.title, "year": p.year}) + "\n")
    with open(directory / "refs.jsonl", "w") as out:
        for entry, truth, kind in refs:
            out.write(
                json.dumps(
                    {"bib_id": entry.bib_id, "title": entry.title, "year": entry.year, "truth": truth, "kind": kind}
                )
                + "\n"
            )


def read_inputs(directory: Path) -> tuple[list[Paper], list[BibEntry], dict[str, tuple[str | None, str]]]:
    papers = [
        Paper(r["paper_id"], r["title"], year=r["year"]) for r in map(json.loads, open(directory / "papers.jsonl"))
    ]
    refs, truth = [], {}
    for r in map(json.loads, open(directory / "refs.jsonl")):
        refs.append(BibEntry(r["bib_id"], title=r["title"], year=r["year"]))
        truth[r["bib_id"]] = (r["truth"], r["kind"])
    return papers, refs, truth


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- the three methods --------------------------------------------------------------------------------


def run_baseline(
    papers: list[Paper], refs: list[BibEntry], config: MatchConfig
) -> tuple[dict[str, str | None], float, float]:
    from datasketch import MinHash, MinHashLSH
    from rapidfuzz.distance import LCSseq

    def shingle_lists(titles):
        for t in titles:
            yield [t[i : i + config.shingle_size].encode() for i in range(len(t) - config.shingle_size + 1)]

    start = time.perf_counter()
    ids, titles = [], []
    for p in papers:
        t = normalize_title(p.title)
        if len(t) >= config.min_title_chars:
            ids.append(p.paper_id)
            titles.append(t)
    lsh = MinHashLSH(threshold=0.5, num_perm=config.num_perm)
    minhashes = {}
    title_of = dict(zip(ids, titles, strict=True))
    for pid, m in zip(
        ids, MinHash.generator(shingle_lists(titles), num_perm=config.num_perm, seed=config.seed), strict=True
    ):
        lsh.insert(pid, m)
        minhashes[pid] = m
    built = time.perf_counter()
    found: dict[str, str | None] = {}
    query_titles = [normalize_title(r.title) for r in refs]
    for ref, t, m in zip(
        refs,
        query_titles,
        MinHash.generator(shingle_lists(query_titles), num_perm=config.num_perm, seed=config.seed),
        strict=False,
    ):
        candidates = sorted(lsh.query(m), key=lambda c: -m.jaccard(minhashes[c]))[: config.max_candidates]
        best, best_score = None, config.min_similarity
        for c in candidates:
            score = LCSseq.normalized_similarity(t, title_of[c])
            if score >= best_score and (best is None or score > best_score):
                best, best_score = c, score
        found[ref.bib_id] = best
    return found, built - start, time.perf_counter() - built


def run_memory(
    papers: list[Paper], refs: list[BibEntry], config: MatchConfig
) -> tuple[dict[str, str | None], float, float]:
    from mapping.in_memory import InMemoryMatcher

    start = time.perf_counter()
    matcher = InMemoryMatcher(papers, config)
    built = time.perf_counter()
    found = {}
    for batch in range(0, len(refs), 4096):
        for r in matcher.resolve_many(refs[batch : batch + 4096]):
            found[r.bib_id] = r.paper_id
    return found, built - start, time.perf_counter() - built


def run_join(
    papers: list[Paper], refs: list[BibEntry], config: MatchConfig, directory: Path
) -> tuple[dict[str, str | None], float, float]:
    from pipelines.matching import run_title_join_files

    start = time.perf_counter()
    found = run_title_join_files(
        str(directory / "papers.jsonl"), str(directory / "refs.jsonl"), config, str(directory / "join-out")
    )
    return found, 0.0, time.perf_counter() - start


def time_signatures(method: str, papers: list[Paper], config: MatchConfig) -> float:
    """Seconds to compute the MinHash signature of every database title (normalisation excluded)."""
    from datasketch import MinHash

    from mapping.minhash import minhash_signatures

    titles = [normalize_title(p.title) for p in papers]
    start = time.perf_counter()
    if method == "baseline":
        size = config.shingle_size
        shingled = ([t[i : i + size].encode() for i in range(len(t) - size + 1)] for t in titles)
        for _ in MinHash.generator(shingled, num_perm=config.num_perm, seed=config.seed):
            pass
    else:
        for first in range(0, len(titles), 65536):
            minhash_signatures(titles[first : first + 65536], config.num_perm, config.seed, config.shingle_size)
    return time.perf_counter() - start


def worker(method: str, directory: Path, config: MatchConfig) -> dict:
    papers, refs, truth = read_inputs(directory)
    loaded = rss_bytes()
    sign_s = time_signatures(method, papers, config)
    if method == "baseline":
        found, build_s, resolve_s = run_baseline(papers, refs, config)
    elif method == "memory":
        found, build_s, resolve_s = run_memory(papers, refs, config)
    else:
        found, build_s, resolve_s = run_join(papers, refs, config, directory)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "method": method,
        "sign_s": sign_s,
        "build_s": build_s,
        "resolve_s": resolve_s,
        "peak_rss": peak,
        "index_rss": peak - loaded,
        **quality(refs, found, truth),
    }


def quality(refs: list[BibEntry], found: dict[str, str | None], truth: dict[str, tuple[str | None, str]]) -> dict:
    resolved = [r.bib_id for r in refs if found.get(r.bib_id)]
    correct = sum(found[b] == truth[b][0] for b in resolved)
    in_db = [r.bib_id for r in refs if truth[r.bib_id][0] is not None]
    per_kind = Counter(truth[b][1] for b in in_db if found.get(b) == truth[b][0])
    totals = Counter(truth[b][1] for b in in_db)
    return {
        "resolved": len(resolved),
        "precision": correct / len(resolved) if resolved else 1.0,
        "recall": sum(found.get(b) == truth[b][0] for b in in_db) / len(in_db),
        "recall_by_variant": {k: round(per_kind[k] / totals[k], 4) for k in sorted(totals)},
    }


# -- the sweep -------------------------------------------------------------------------------------------


def sweep(directory: Path, settings: list[tuple[int, int, int, int]]) -> list[dict]:
    """For each (shingle size, num_perm, bands, rows): share of references whose true paper is a candidate,
    among those whose true title passes LCS >= 0.9 (what the verification could accept), and candidates
    per reference before the top-100 cut."""
    import numpy as np
    from rapidfuzz.distance import LCSseq

    from mapping.matcher import TitleIndex, signatures_and_keys

    papers, refs, truth = read_inputs(directory)
    title_of = {p.paper_id: normalize_title(p.title) for p in papers}
    position = {p.paper_id: i for i, p in enumerate(papers)}
    rows = []
    for shingle_size, num_perm, bands, band_rows in settings:
        config = MatchConfig(num_perm=num_perm, shingle_size=shingle_size, bands=bands, rows=band_rows)
        start = time.perf_counter()
        index = TitleIndex(
            [p.paper_id for p in papers], [title_of[p.paper_id] for p in papers], [p.year for p in papers], config
        )
        built = time.perf_counter() - start
        queries = [(r, usable_title(r.title, config)) for r in refs if truth[r.bib_id][0] is not None]
        queries = [
            (r, t) for r, t in queries if t and LCSseq.normalized_similarity(t, title_of[truth[r.bib_id][0]]) >= 0.9
        ]
        start = time.perf_counter()
        _, keys = signatures_and_keys([t for _, t in queries], config)
        q, p = index.candidate_pairs(keys)
        elapsed = time.perf_counter() - start
        hits = set(zip(q.tolist(), p.tolist(), strict=True))
        found = sum((i, position[truth[r.bib_id][0]]) in hits for i, (r, _) in enumerate(queries))
        rows.append(
            {
                "shingle": shingle_size,
                "num_perm": num_perm,
                "bands": bands,
                "rows": band_rows,
                "candidate_recall": found / len(queries),
                "candidates_per_ref": len(q) / len(queries),
                "max_candidates_per_ref": int(np.bincount(q, minlength=len(queries)).max()) if len(q) else 0,
                "index_s": round(built, 2),
                "candidates_s": round(elapsed, 2),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


# (shingle size, permutations) -> the (bands, rows per band) tried with them
SWEEP_BANDINGS = {
    (3, 128): ((16, 8), (32, 4), (25, 5), (21, 6), (18, 7), (12, 10)),
    (4, 128): ((21, 6), (25, 5)),
    (5, 128): ((25, 5),),
    (3, 64): ((16, 4), (12, 5), (10, 6)),
}
SWEEP = [
    (shingle, perms, bands, rows) for (shingle, perms), banding in SWEEP_BANDINGS.items() for bands, rows in banding
]
SWEEP_LARGE = [(3, 128, 25, 5), (3, 128, 21, 6), (3, 64, 12, 5), (3, 64, 10, 6)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data directory")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--methods", nargs="+", default=["baseline", "memory", "join"])
    parser.add_argument("--join-max-size", type=int, default=1_000_000, help="skip the Beam join above this size")
    parser.add_argument("--sweep", action="store_true", help="measure shingle sizes and bandings instead")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--repeat", type=int, default=1, help="run every method this many times, alternating")
    parser.add_argument("--before", type=Path, help="another checkout whose `memory` method runs as memory@before")
    parser.add_argument("--json", type=Path, help="write all rows here")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]), MatchConfig())))
        return
    if not args.shared.is_dir():
        sys.exit(f"no shared data at {args.shared}: pass --shared DIR (the real titles shape the generated ones)")
    model = TitleModel(real_titles(args.shared))
    print(f"title model: {len(model.lengths)} real titles, {len(model.vocabulary)} words", flush=True)
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="citrec-match-") as tmp:
            directory = Path(tmp)
            papers, refs = generate(model, size, args.queries, args.seed)
            write_inputs(directory, papers, refs)
            del papers, refs
            if args.sweep:
                results.extend(
                    {"size": size, **row} for row in sweep(directory, SWEEP if size <= 200_000 else SWEEP_LARGE)
                )
                continue
            runs = [(m, Path(__file__), m) for m in args.methods if m != "join" or size <= args.join_max_size]
            if args.before:
                runs.insert(1, ("memory@before", args.before / "bench" / "matching.py", "memory"))
            for repetition in range(args.repeat):
                for label, script, method in runs:
                    command = [sys.executable, str(script), "--worker", method, str(directory)]
                    out = subprocess.run(command, capture_output=True, text=True)
                    if out.returncode:
                        print(out.stderr[-3000:], file=sys.stderr)
                        raise SystemExit(f"{label} at {size} failed")
                    row = {"size": size, "queries": args.queries, **json.loads(out.stdout.strip().splitlines()[-1])}
                    row.update(method=label, repetition=repetition)
                    results.append(row)
                    print_row(row)
    if not args.sweep:
        print_table(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def print_row(row: dict) -> None:
    print(
        f"{row['size']:>9,} {row['method']:<9} build {row['build_s']:8.1f}s resolve {row['resolve_s']:8.1f}s "
        f"peak {row['peak_rss'] / 2**20:8.0f} MiB index {row['index_rss'] / 2**20:8.0f} MiB "
        f"P {row['precision']:.4f} R {row['recall']:.4f}",
        flush=True,
    )


def medians(results: list[dict]) -> list[dict]:
    """One row per (size, method): the median of each timing and memory figure over the repetitions."""
    groups: dict[tuple[int, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["size"], r["method"]), []).append(r)
    rows = []
    for runs in groups.values():
        row = dict(runs[0])
        for field in ("sign_s", "build_s", "resolve_s", "peak_rss", "index_rss"):
            row[field] = statistics.median(r[field] for r in runs)
        rows.append(row)
    return rows


def ratio_range(results: list[dict], size: int, method: str, ratio) -> str:
    """`ratio(row, baseline row)` per repetition: median (min-max) when there are several."""
    base = {r["repetition"]: r for r in results if r["size"] == size and r["method"] == "baseline"}
    values = [ratio(r, base[r["repetition"]]) for r in results if (r["size"], r["method"]) == (size, method)]
    if len(values) == 1:
        return f"x{values[0]:.2f}"
    return f"x{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def print_table(results: list[dict]) -> None:
    every = results
    results = medians(results)
    print(
        "\n| titles | method | signatures/s | titles indexed/s | refs resolved/s | peak RSS MiB | index MiB | P | R |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        index_rate = f"{r['size'] / r['build_s']:,.0f}" if r["build_s"] else "(in the join)"
        print(
            f"| {r['size']:,} | {r['method']} | {r['size'] / r['sign_s']:,.0f} | {index_rate} | "
            f"{r['queries'] / r['resolve_s']:,.0f} | {r['peak_rss'] / 2**20:,.0f} | {r['index_rss'] / 2**20:,.0f} | "
            f"{r['precision']:.4f} | {r['recall']:.4f} |"
        )
    by = {(r["size"], r["method"]): r for r in results}
    print("\nratios against the baseline measured in the same run (per repetition: median, min-max):")
    for (size, method), r in sorted(by.items()):
        base = by.get((size, "baseline"))
        if base and method != "baseline":
            print(
                f"  {size:>9,} {method:<13} refs/s {ratio_range(every, size, method, _speed)}  "
                f"signatures/s {ratio_range(every, size, method, lambda a, b: b['sign_s'] / a['sign_s'])}  "
                f"peak RSS {ratio_range(every, size, method, lambda a, b: a['peak_rss'] / b['peak_rss'])}  "
                f"index memory {ratio_range(every, size, method, lambda a, b: a['index_rss'] / b['index_rss'])}  "
                f"recall {r['recall'] - base['recall']:+.4f}"
            )
    sizes = sorted({r["size"] for r in results})
    for small, large in zip(sizes, sizes[1:], strict=False):
        for method in ("baseline", "memory", "memory@before", "join"):
            a, b = by.get((small, method)), by.get((large, method))
            if a and b:
                cost = (b["build_s"] + b["resolve_s"]) / (a["build_s"] + a["resolve_s"])
                print(f"  {method:<13} whole cost {small:,} -> {large:,} titles: x{cost:.1f}")


def _speed(row: dict, base: dict) -> float:
    return (row["queries"] / row["resolve_s"]) / (base["queries"] / base["resolve_s"])


if __name__ == "__main__":
    main()
