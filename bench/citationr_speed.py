"""What CitationR's review decision costs: reviews per CPU-second, the rules against the learned decision.

    python bench/citationr_speed.py                         # the 3,068 NeurIPS reviews, rules then model
    python bench/citationr_speed.py --every 5 --decision model --json /tmp/speed.json   # every 5th review (614)

Every review of `../shared/data/reviews/neurips-openreview-2023-2025` is read once (`parse_review_file`, not
timed), then mined by `extract_review_mentions` with `MentionConfig(decision="rules")` and with `decision="model"`
(the encoder and head loaded before the clock starts; their load is reported apart). CPU seconds are the process's
(`time.process_time`: every thread, BLAS's included), so the figure does not depend on how many cores were free; the
wall time is reported beside it. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.shared import shared_data_dir  # noqa: E402
from extractors.reviews.forms import Review, parse_review_file  # noqa: E402
from extractors.reviews.mentions import MentionConfig, extract_review_mentions  # noqa: E402
from extractors.reviews.mentions.decision import decision_status, load_decision  # noqa: E402
from extractors.reviews.records import RECOMMENDED  # noqa: E402

NEURIPS = Path("reviews") / "neurips-openreview-2023-2025"


def read_neurips_reviews(shared: Path) -> list[Review]:
    reviews = []
    for path in sorted((shared / NEURIPS).glob("*/*.json")):
        try:
            items = parse_review_file(path.read_bytes(), str(path))
        except ValueError:
            continue  # the folders' manifest.json files are no review files
        reviews += [item for item in items if isinstance(item, Review)]
    return reviews


def mine(reviews: list[Review], decision: str) -> dict[str, float]:
    config = MentionConfig(decision=decision)
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    cpu, wall = time.process_time(), time.perf_counter()
    recommending = 0
    for review in reviews:
        found = extract_review_mentions(review.text, review.sections, config=config, count=count)
        recommending += any(m.kind == RECOMMENDED for m in found)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "reviews": len(reviews),
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "reviews_per_cpu_s": round(len(reviews) / cpu, 2) if cpu else 0.0,
        "reviews_recommending": recommending,
        "decided_by_model": counts.get("decided_by:model", 0),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=1, help="every Nth review only, in path order (default: all)")
    parser.add_argument("--decision", choices=("both", "rules", "model"), default="both", help="which to time")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    reviews = read_neurips_reviews(shared_data_dir())
    reviews = reviews[:: max(1, args.every)]
    result: dict[str, object] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if args.decision in ("both", "rules"):
        result["rules"] = mine(reviews, "rules")
    why = decision_status()
    if args.decision != "rules" and why:
        result["model"] = {"skipped": why}
    elif args.decision != "rules":
        cpu, wall = time.process_time(), time.perf_counter()
        load_decision()
        result["model_load"] = {
            "cpu_s": round(time.process_time() - cpu, 2),
            "wall_s": round(time.perf_counter() - wall, 2),
        }
        result["model"] = mine(reviews, "model")
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
