"""Measure the learned title tagger (`bench/citationr/tagger.py`) with the rules, by cross-fitting.

Train on `dev`, measure on `dev2`; train on `dev2`, measure on `dev`; each beside the rules alone on the same part,
with the same measures as `bench/eval_citationr.py` (`bench.citationr.labels.evaluate`): title precision and
recall, review-level recall of the title files, review-level precision and recall of ICLRwithLabels and of
DISAPERE. While cross-fitting, the reviews of the `test` part are never extracted (the measured callable returns
no mention for them) and no row of theirs is printed.

    python bench/eval_title_tagger.py                     # the cross-fit table
    python bench/eval_title_tagger.py --min-confidence 0.7 --no-replace   # another setting, the same way
    python bench/eval_title_tagger.py --unread            # ONCE, at the end: train on dev + dev2, measure unread
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.citationr.labels import LABEL_MEASURES, default_extract, evaluate  # noqa: E402
from bench.citationr.samples import part  # noqa: E402
from bench.citationr.tagger import (  # noqa: E402
    DEFAULT_TAGGER_CONFIG,
    TaggerConfig,
    TitleTagger,
    labelled_reviews,
    tagged_extract,
)
from bench.shared import shared_data_dir  # noqa: E402
from extractors.reviews.records import PaperMention, Review  # noqa: E402

SOURCES = ("bias_reviews", "bias_titles", "disapere")
MEASURES = LABEL_MEASURES


def only_part(extract: Callable[[Review], list[PaperMention]], wanted: str) -> Callable[[Review], list[PaperMention]]:
    """`extract` on the reviews of one part; nothing for the others (so the `test` part is never read)."""

    def guarded(review: Review) -> list[PaperMention]:
        return extract(review) if part(review.submission_id) == wanted else []

    return guarded


def _rate(cell: dict) -> str:
    if not cell or cell.get("value") is None:
        return "n/a"
    low, high = cell["ci95"]
    return f"{cell['value']:.2f} [{low:.2f}, {high:.2f}] ({cell['hits']}/{cell['of']})"


def _rows(result: dict, group: str) -> dict[str, dict]:
    return {label: result.get(source, {}).get(group, {}).get(key, {}) for source, key, label in MEASURES}


def cross_fit(shared: Path, config: TaggerConfig) -> dict[str, dict]:
    """For each read part: the rules' figures and the rules with a tagger trained on the other read part."""
    out: dict[str, dict] = {}
    for train_part, measured in (("dev", "dev2"), ("dev2", "dev")):
        began = time.time()
        examples = labelled_reviews(shared, (train_part,), config)
        tagger = TitleTagger.train(examples, config)
        rules = evaluate(shared, extract=only_part(default_extract, measured), sources=SOURCES)
        combined = evaluate(shared, extract=only_part(tagged_extract(tagger), measured), sources=SOURCES)
        located = sum(len(e.titles) - len(e.missing) for e in examples)
        out[measured] = {
            "trained_on": train_part,
            "training_reviews": len(examples),
            "gold_titles_located": [located, sum(len(e.titles) for e in examples)],
            "rules": _rows(rules, measured),
            "combined": _rows(combined, measured),
            "seconds": round(time.time() - began, 1),
        }
    return out


def unread(shared: Path, config: TaggerConfig) -> dict[str, dict]:
    """The single final measure: a tagger trained on dev + dev2, the rules with it on the unread part (aggregate
    figures only)."""
    examples = labelled_reviews(shared, ("dev", "dev2"), config)
    tagger = TitleTagger.train(examples, config)
    rules = evaluate(shared, extract=only_part(default_extract, "test"), sources=SOURCES)
    combined = evaluate(shared, extract=only_part(tagged_extract(tagger), "test"), sources=SOURCES)
    located = sum(len(e.titles) - len(e.missing) for e in examples)
    return {
        "unread": {
            "trained_on": "dev+dev2",
            "training_reviews": len(examples),
            "gold_titles_located": [located, sum(len(e.titles) for e in examples)],
            "rules": _rows(rules, "unread"),
            "combined": _rows(combined, "unread"),
        }
    }


def table(result: dict[str, dict]) -> str:
    lines = []
    for measured, row in result.items():
        located, total = row["gold_titles_located"]
        lines.append(
            f"\n### measured on {measured} (tagger trained on {row['trained_on']}: {row['training_reviews']} reviews, "
            f"{located}/{total} gold titles located)\n"
        )
        lines.append("| measure | rules | rules + tagger |")
        lines.append("|---|---|---|")
        for label in row["rules"]:
            lines.append(f"| {label} | {_rate(row['rules'][label])} | {_rate(row['combined'][label])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--unread", action="store_true", help="the single final measure on the unread part")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a TaggerConfig field")
    args = parser.parse_args(argv)
    config = DEFAULT_TAGGER_CONFIG
    types = {f.name: type(getattr(DEFAULT_TAGGER_CONFIG, f.name)) for f in fields(TaggerConfig)}
    for setting in args.set:
        name, _, value = setting.partition("=")
        kind = types[name]
        config = replace(config, **{name: value.lower() in ("1", "true", "yes") if kind is bool else kind(value)})
    result = unread(args.shared, config) if args.unread else cross_fit(args.shared, config)
    print(f"config: {json.dumps(config.as_metadata())}")
    print(json.dumps(result, indent=2) if args.json else table(result))


if __name__ == "__main__":
    main()
