"""Raw-string matching (`mapping/raw_strings.py`) on the gold set built from real bibliographies
(`bench/gold/raw_strings.py` says how it is built and split): precision and recall per bibliography style, the
parsers and the window ablation beside it, and the speed against the title path.

    python bench/raw_gold.py [--shared DIR] [--json OUT]            # dev and test figures, per style
    python bench/raw_gold.py --show-errors                          # every dev error (never the test part's)
    python bench/raw_gold.py --parsers [--parser-path DIR]          # refextract / refparse titles, same gold
    python bench/raw_gold.py --ablation                             # window LCS / title length, no cuts
    python bench/raw_gold.py --speed 100000 [--queries 5000]        # refs/s, raw vs title, one process
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import numpy as np  # noqa: E402

from bench.gold.raw_strings import (  # noqa: E402
    STYLES,
    Author,
    RawGoldSet,
    Reference,
    build_gold_set,
    format_reference,
    resolve_raw,
    table,
)
from bench.shared import shared_data_dir  # noqa: E402
from mapping.in_memory import InMemoryMatcher  # noqa: E402
from mapping.matcher import MatchConfig  # noqa: E402
from mapping.raw_strings import checked_raw, window_similarity  # noqa: E402
from mapping.records import BibEntry, no_count  # noqa: E402

default_shared_dir = shared_data_dir


def print_table(rows: list[dict], title: str) -> None:
    print(f"\n{title}")
    print(
        f"{'split':<5} {'style':<10} {'n':>5} {'in_db':>5} {'elig':>5} {'neg':>5} {'res':>5} {'correct':>7} "
        f"{'wrong':>5} {'neg_fp':>6} {'precision':>9} {'recall':>7} {'rec_all':>7}"
    )
    for r in rows:
        print(
            f"{r['split']:<5} {r['style']:<10} {r['n']:>5} {r['in_db']:>5} {r['eligible']:>5} {r['negative']:>5} "
            f"{r['resolved']:>5} {r['correct']:>7} {r['wrong_paper']:>5} {r['negatives_resolved']:>6} "
            f"{r['precision']:>9.4f} {r['recall']:>7.4f} {r['recall_all']:>7.4f}"
        )


def show_dev_errors(gold: RawGoldSet, resolved: list[str | None]) -> None:
    """Every error of the dev part (the test part is never listed)."""
    titles = {p.paper_id: p.title for p in gold.papers}
    spelled = {w: titles[p] for p, w in sorted(gold.work_of.items())}
    for query, paper_id in zip(gold.queries, resolved, strict=True):
        right = gold.correct(query, paper_id)
        if query.split != "dev" or right or (paper_id is None and not query.eligible):
            continue
        kind = "fn" if paper_id is None else ("fp_negative" if query.answer is None else "fp_wrong_paper")
        print(f"[{kind}] {query.style} {query.source}\n   raw:   {query.entry.raw!r}")
        if paper_id:
            print(f"   got:   {titles[paper_id]!r}")
        if query.answer:
            print(f"   gold:  {spelled[query.answer]!r}")


# --- comparisons -------------------------------------------------------------------------------------------


def parser_titles(gold: RawGoldSet, parser: str) -> list[str | None]:
    """The title a reference-string parser from PyPI cuts from each string (None where it finds none)."""
    if parser == "refextract":
        from refextract import extract_references_from_string

        def cut(raw: str) -> str | None:
            found = extract_references_from_string(raw)
            return next((t for r in found for t in r.get("title", ())), None)
    else:
        import refparse

        def cut(raw: str) -> str | None:
            try:
                parsed = refparse.parse(raw, "scopus")
            except Exception:  # noqa: BLE001 -- a third-party parser's failure is a miss, counted
                return None
            return (parsed or {}).get("title")

    return [cut(q.entry.raw) for q in gold.queries]


def resolve_parser(gold: RawGoldSet, parser: str) -> list[str | None]:
    """A parser's title through the production title path (`resolve_title`)."""
    titles = parser_titles(gold, parser)
    matcher = InMemoryMatcher(gold.papers, MatchConfig())
    entries = [BibEntry(q.entry.bib_id, title=t) for q, t in zip(gold.queries, titles, strict=True)]
    return [r.paper_id for r in matcher.resolve_titles_of(entries)]


def resolve_window_ablation(gold: RawGoldSet) -> list[str | None]:
    """The production candidates verified by `window_similarity` instead (a window of the title's length
    anywhere in the string, over the title's length: no cuts, no spans), best score, ties by year: what the
    span rule of the production path is measured against."""
    config = MatchConfig()
    matcher = InMemoryMatcher(gold.papers, config)
    resolver, index = matcher.raw_resolver, matcher.index
    resolver.eligible  # noqa: B018 -- builds the resolver's tables
    out: list[str | None] = []
    for query in gold.queries:
        reference, segments, _ = checked_raw(query.entry.raw, config.raw)
        if reference is None:
            out.append(None)
            continue
        owners = np.zeros(len(segments), dtype=np.int64)
        _, papers = resolver._candidates([reference], segments, owners, no_count)
        scored = [
            (window_similarity(index.titles[j], reference.text), index.paper_ids[j], index.years[j]) for j in papers
        ]
        scored = [s for s in scored if s[0] >= config.min_similarity]
        if not scored:
            out.append(None)
            continue
        best = max(s for s, _, _ in scored)
        tied = sorted({(p, y) for s, p, y in scored if s == best})
        same_year = [t for t in tied if t[1] in reference.years]
        tied = same_year if len(same_year) == 1 else tied
        out.append(tied[0][0] if len(tied) == 1 else None)
    return out


# --- speed -------------------------------------------------------------------------------------------------


def _load_bench_matching():
    spec = importlib.util.spec_from_file_location("bench_matching", REPO / "bench" / "matching.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_matching"] = module
    spec.loader.exec_module(module)
    return module


_FORENAMES = ("Ashish", "Maria", "Wei", "John", "Aditi", "Lukas", "Yuki", "Fatima", "Pierre", "Olga", "Chen", "Sara")
_SURNAMES = ("Smith", "Wang", "Garcia", "Müller", "Kumar", "Tanaka", "Rossi", "Ivanova", "Okafor", "Nguyen", "Brown")
_VENUES = (
    ("Proceedings of the International Conference on Machine Learning", False),
    ("Advances in Neural Information Processing Systems", False),
    ("Journal of Machine Learning Research", True),
    ("IEEE Transactions on Pattern Analysis and Machine Intelligence", True),
    ("Proceedings of the Annual Meeting of the Association for Computational Linguistics", False),
    ("Physical Review Letters", True),
)


def synthetic_reference(title: str, year: int | None, rng: random.Random) -> Reference:
    """A made-up but well-formed reference around a generated title, for the speed run."""
    authors = tuple(
        Author((rng.choice(_FORENAMES),), rng.choice(_SURNAMES)) for _ in range(rng.choice((1, 2, 3, 3, 4, 6, 8)))
    )
    venue, journal = rng.choice(_VENUES)
    volume = str(rng.randint(1, 60)) if journal else None
    pages = f"{(p := rng.randint(1, 900))}–{p + rng.randint(5, 20)}"
    return Reference(title, authors, venue, journal, year, volume, None, pages)


def speed(shared: Path, size: int, queries: int, seed: int, repeat: int) -> dict:
    """Raw-string and title resolution of the same references against one index of `size` generated titles,
    in this process, alternating title and raw `repeat` times: references per second of each (the median
    run), the median of the per-pair cost ratios, and precision/recall of each."""
    bench = _load_bench_matching()
    model = bench.TitleModel(bench.real_titles(shared))
    papers, refs = bench.generate(model, size, queries, seed)
    rng = random.Random(seed)
    raw_entries, title_entries, truth = [], [], {}
    for i, (entry, answer, _kind) in enumerate(refs):
        style = STYLES[i % len(STYLES)]
        raw = format_reference(synthetic_reference(entry.title, entry.year, rng), style)
        raw_entries.append(BibEntry(entry.bib_id, raw=raw))
        title_entries.append(BibEntry(entry.bib_id, title=entry.title, year=entry.year))
        truth[entry.bib_id] = answer
    start = time.perf_counter()
    matcher = InMemoryMatcher(papers, MatchConfig())
    built = time.perf_counter() - start
    matcher.resolve_many(raw_entries[:100])  # the raw path's per-index tables are built on first use

    def timed(entries: list[BibEntry]) -> tuple[float, list]:
        start = time.perf_counter()
        found = []
        for first in range(0, len(entries), 4096):
            found += matcher.resolve_many(entries[first : first + 4096])
        return time.perf_counter() - start, found

    result: dict = {"size": size, "queries": queries, "build_s": round(built, 2), "repeat": repeat}
    seconds: dict[str, list[float]] = {"title": [], "raw": []}
    for _ in range(repeat):
        for name, entries in (("title", title_entries), ("raw", raw_entries)):
            elapsed, found = timed(entries)
            seconds[name].append(elapsed)
            resolved = [r for r in found if r.paper_id]
            correct = sum(truth[r.bib_id] == r.paper_id for r in resolved)
            result[f"{name}_precision"] = round(correct / max(len(resolved), 1), 4)
            result[f"{name}_recall"] = round(correct / sum(a is not None for a in truth.values()), 4)
    for name, runs in seconds.items():
        result[f"{name}_refs_per_s"] = round(queries / sorted(runs)[len(runs) // 2])
        result[f"{name}_us_per_ref"] = round(sorted(runs)[len(runs) // 2] / queries * 1e6, 1)
    ratios = sorted(r / t for r, t in zip(seconds["raw"], seconds["title"], strict=True))
    result["raw_cost_over_title_median"] = round(ratios[len(ratios) // 2], 2)
    result["raw_cost_over_title_range"] = [round(ratios[0], 2), round(ratios[-1], 2)]
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=default_shared_dir(), help="the shared data directory")
    parser.add_argument("--json", type=Path, help="write the composition and the tables here")
    parser.add_argument("--show-errors", action="store_true", help="list every error of the dev part")
    parser.add_argument("--parsers", action="store_true", help="also score refextract's and refparse's titles")
    parser.add_argument("--parser-path", help="a site-packages folder holding the parsers (appended to sys.path)")
    parser.add_argument("--ablation", action="store_true", help="also score the window similarity without cuts")
    parser.add_argument("--speed", type=int, metavar="TITLES", help="time raw vs title resolution instead")
    parser.add_argument("--queries", type=int, default=5000, help="references for --speed")
    parser.add_argument("--repeat", type=int, default=7, help="alternating runs of each path for --speed")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    if not (args.shared / "MANIFEST.md").is_file():
        raise SystemExit(f"no shared data at {args.shared} (set --shared or $CITREC_SHARED_DATA)")
    if args.speed:
        result = speed(args.shared, args.speed, args.queries, args.seed, args.repeat)
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
        return

    start = time.perf_counter()
    gold = build_gold_set(args.shared)
    print("Gold set composition:")
    for name, value in gold.composition.items():
        print(f"  {name:<50} {value}")
    built = time.perf_counter() - start
    start = time.perf_counter()
    resolved, counts = resolve_raw(gold)
    elapsed = time.perf_counter() - start
    rows = table(gold, resolved)
    print_table(rows, "raw-string path (mapping/raw_strings.py via InMemoryMatcher.resolve_many)")
    print("\ncounters: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    payload: dict = {"composition": gold.composition, "raw": rows}
    if args.parsers:
        if args.parser_path:
            sys.path.append(args.parser_path)
        for name in ("refextract", "refparse"):
            payload[name] = table(gold, resolve_parser(gold, name))
            print_table(payload[name], f"{name}'s title through the title path")
    if args.ablation:
        payload["window"] = table(gold, resolve_window_ablation(gold))
        print_table(payload["window"], "ablation: window LCS / title length, no cuts, same candidates")
    if args.show_errors:
        show_dev_errors(gold, resolved)
    print(f"\nbuilt the gold set in {built:.1f} s; resolved {len(gold.queries)} strings in {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
