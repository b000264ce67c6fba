"""Precision and recall of title matching on the gold set built from the real documents (`bench.gold.titles`
says how the set is made): every similarity, path and threshold, and the errors at 0.90.

    python bench/matching_gold.py [--shared DIR] [--json OUT] [--show-errors]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gold.titles import (  # noqa: E402
    REPORT_THRESHOLD,
    SIMILARITIES,
    build_gold_set,
    errors,
    paths_for,
    resolve,
    run_all,
)
from bench.shared import shared_data_dir  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data directory")
    parser.add_argument("--json", type=Path, help="write composition, table and errors at 0.90 here")
    parser.add_argument("--show-errors", action="store_true", help="list every FP and FN at 0.90")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if not (args.shared / "MANIFEST.md").is_file():
        raise SystemExit(f"no shared data at {args.shared} (set --shared or $CITREC_SHARED_DATA)")

    start = time.perf_counter()
    gold = build_gold_set(args.shared)
    built = time.perf_counter() - start
    print("Gold set composition:")
    for name, value in gold.composition.items():
        print(f"  {name:<60} {value}")

    start = time.perf_counter()
    rows = run_all(gold)
    evaluated = time.perf_counter() - start
    header = (
        f"{'similarity':<12} {'path':<11} {'thr':>5} {'precision':>9} {'rec_resolv':>10} {'rec_all':>8} "
        f"{'n':>5} {'in_db':>5} {'resolv':>6} {'neg':>5} {'correct':>7} {'wrong':>5} {'neg_fp':>6} {'same_t':>6}"
    )
    print("\n" + header)
    for r in rows:
        print(
            f"{r['similarity']:<12} {r['path']:<11} {r['threshold']:>5.2f} {r['precision']:>9.4f} "
            f"{r['recall_resolvable']:>10.4f} {r['recall_all']:>8.4f} {r['n']:>5} {r['n_in_db']:>5} "
            f"{r['n_resolvable']:>6} {r['n_negative']:>5} {r['correct']:>7} {r['wrong_paper']:>5} "
            f"{r['negatives_resolved']:>6} {r['fp_same_title']:>6}"
        )
    listed: dict[str, list[dict]] = {}
    for similarity in SIMILARITIES:
        for path in paths_for(similarity):
            resolved = resolve(gold, similarity, REPORT_THRESHOLD, path)
            listed[f"{similarity}/{path}"] = list(errors(gold, resolved, similarity))
    if args.show_errors:
        for name, found in listed.items():
            print(f"\nErrors at {REPORT_THRESHOLD:.2f}, {name}: {len(found)}")
            for e in found:
                other = e.get("matched", e.get("record"))
                print(f"  [{e['kind']}] {e['identity']} score={e['score']} ({e['query_origin']})")
                print(f"      query: {e['query']!r}\n      {'match' if 'matched' in e else 'gold '}: {other!r}")
    print(f"\nbuilt the gold set in {built:.1f} s; evaluated {len(rows)} runs in {evaluated:.1f} s")
    if args.json:
        payload = {"composition": gold.composition, "table": rows, "errors_at_0.90": listed}
        args.json.write_text(json.dumps(payload, indent=1, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
