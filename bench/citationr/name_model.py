"""Fit the learned name decision (`extractors/reviews/mentions/learned.py`) on labelled reviews and measure it against
the rules (`python bench/name_model.py`).

Labels: the samples of `bench/labels/samples.csv` whose role is `training` (`TRAINING_SAMPLES`), or with `--sample`
any labelled samples. A candidate of a labelled review (`learned.candidates_with_features`: the names, free ones
included, or with `--sources all` every mention the rules find) is a positive when the review suggests literature and
the candidate overlaps a place where the review writes one of its labelled works. Review-level decision: a review
suggests literature when a mention the model does not decide is recommended by the rules, or a candidate scores at
or above the threshold.

Cross-fitting: leave one sample out, train on the others, predict it; pooled review-level precision and recall
against the rules' own on the same reviews, over a grid of L2 strengths and thresholds. The setting chosen: the best
F1 among those whose cross-fitted precision is at least 0.9, else the best F1. `--measure NAME` fits on every
training sample with the chosen setting and measures the model and the rules on a held-out sample
(`HELD_OUT_SAMPLES`); `--write` writes that model to `learned.MODEL_PATH` (the `builtin` one), `--out PATH`
elsewhere (`model_json`: the file `NameModel.from_json` reads).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench.citationr.labels import (
    find_labelled_review,
    gold_review_labels,
    occurrences,
    own_text_of,
    read_review_labels,
)
from bench.citationr.samples import HELD_OUT_SAMPLES, LABELLED_SAMPLES, TRAINING_SAMPLES
from bench.shared import shared_data_dir
from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.learned import (
    ALL_SOURCES,
    FREE_REASON,
    LEARNED_SOURCES,
    MODEL_PATH,
    NameModel,
    add_free_names,
    candidates_with_features,
)
from extractors.reviews.mentions.shapes import overlaps
from extractors.reviews.records import RECOMMENDED

SOURCES = {"names": LEARNED_SOURCES, "all": ALL_SOURCES}
PRECISION_TARGET = 0.9


def review_rows(shared: Path, path: Path) -> list[dict]:
    """Per labelled review: gold, and each mention (free candidates included) with its source, the rules'
    decision, its features and its label."""
    rows = []
    for label in gold_review_labels(read_review_labels(path)).values():
        review = find_labelled_review(shared, label)
        own = own_text_of(review)
        found = extract_review_mentions(review.text, review.sections, own)
        mentions = add_free_names(review.text, review.sections, found, bibliography=own)
        places = [span for work, _ in label.works for span in occurrences(review.text, work)]
        candidates = candidates_with_features(review.text, mentions, ALL_SOURCES)
        rows.append(
            {
                "gold": label.suggests,
                "candidates": [
                    {
                        "source": m.source,
                        "free": m.reason.startswith(FREE_REASON),
                        "rules": m.kind == RECOMMENDED,
                        "features": features,
                        "label": label.suggests and overlaps(m.start, m.end, places),
                    }
                    for m, features in candidates
                ],
            }
        )
    return rows


def model_json(model: NameModel) -> str:
    """The model's file (`NameModel.from_json` reads it): weights rounded to 4 places, those under 1e-3 left out, and
    `sources` only where they are not the names."""
    kept = {f: round(w, 4) for f, w in sorted(model.weights.items()) if abs(w) >= 1e-3}
    data: dict[str, object] = {"threshold": model.threshold, "weights": kept}
    if model.sources != LEARNED_SOURCES:
        data["sources"] = list(model.sources)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def decided(row: dict, sources: tuple[str, ...]) -> list[dict]:
    return [c for c in row["candidates"] if c["source"] in sources]


def rules_say(row: dict) -> bool:
    return any(c["rules"] and not c["free"] for c in row["candidates"])


def fit(features: list[list[str]], labels: list[bool], l2: float, steps: int = 400) -> dict[str, float]:
    """L2-regularised logistic regression by full-batch Adam over sparse binary features."""
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, fs in enumerate(features):
        for f in set(fs):
            rows.append(i)
            cols.append(vocabulary.setdefault(f, len(vocabulary)))
    rows_a, cols_a = np.array(rows), np.array(cols)
    y = np.array(labels, float)
    w = np.zeros(len(vocabulary))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    bias = vocabulary["bias"]
    for step in range(1, steps + 1):
        score = np.bincount(rows_a, weights=w[cols_a], minlength=len(y))
        p = 1 / (1 + np.exp(-np.clip(score, -30, 30)))
        grad = np.bincount(cols_a, weights=(p - y)[rows_a], minlength=len(w)) + l2 * w
        grad[bias] -= l2 * w[bias]
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return {f: float(w[i]) for f, i in vocabulary.items()}


def fit_rows(rows: list[dict], l2: float, sources: tuple[str, ...]) -> dict[str, float]:
    """`fit` over every candidate of `sources` of the `review_rows`."""
    candidates = [c for r in rows for c in decided(r, sources)]
    return fit([c["features"] for c in candidates], [c["label"] for c in candidates], l2)


def decisions(rows: list[dict], model: NameModel) -> list[bool]:
    return [
        any(c["rules"] and not c["free"] and c["source"] not in model.sources for c in r["candidates"])
        or any(model.probability(c["features"]) >= model.threshold for c in decided(r, model.sources))
        for r in rows
    ]


def rates(predicted: list[bool], gold: list[bool]) -> tuple[int, int, int]:
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    return tp, sum(predicted), sum(gold)


def crossfit(data: dict[str, list[dict]], l2: float, sources: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Per sample, the weights fitted on every other sample."""
    return {held: fit_rows([r for n in data if n != held for r in data[n]], l2, sources) for held in data}


def _by_venue(names: list[str]) -> dict[str, list[str]]:
    """The samples by venue: DISAPERE's (ICLR 2019-2020) and the NeurIPS ones."""
    venues: dict[str, list[str]] = {}
    for name in names:
        venues.setdefault("ICLR (DISAPERE)" if name.startswith("disapere") else "NeurIPS", []).append(name)
    return venues


def show(label: str, counts: tuple[int, int, int]) -> str:
    tp, predicted, positive = counts
    return (
        f"{label} precision {tp / max(predicted, 1):.3f} ({tp}/{predicted}) recall {tp / max(positive, 1):.3f} "
        f"({tp}/{positive})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument(
        "--sample",
        action="append",
        choices=sorted(LABELLED_SAMPLES),
        help="train (cross-fit) on these labelled samples (default: those whose role is `training`)",
    )
    parser.add_argument("--sources", choices=sorted(SOURCES), default="names", help="what the model decides")
    parser.add_argument("--l2", type=float, action="append", help="L2 strengths to try (default: 3, 10)")
    parser.add_argument("--threshold", type=float, action="append", help="thresholds (default: 0.25 .. 0.5)")
    parser.add_argument(
        "--measure", action="append", choices=sorted(HELD_OUT_SAMPLES), help="a held-out sample to measure"
    )
    parser.add_argument("--write", action="store_true", help=f"write the model fitted on every sample to {MODEL_PATH}")
    parser.add_argument("--out", type=Path, help="write the model fitted on every sample here")
    args = parser.parse_args(argv)
    names = args.sample or list(TRAINING_SAMPLES)
    if set(args.measure or ()) & set(names):
        parser.error(f"a sample cannot be both trained on and measured: {sorted(set(args.measure) & set(names))}")
    sources = SOURCES[args.sources]
    data = {}
    for name in names:
        data[name] = review_rows(args.shared, LABELLED_SAMPLES[name])
        count = sum(len(decided(r, sources)) for r in data[name])
        print(f"{name}: {len(data[name])} reviews, {count} candidates", flush=True)
    gold = [r["gold"] for n in names for r in data[n]]
    print(show("rules (pooled):", rates([rules_say(r) for n in names for r in data[n]], gold)))
    best = None
    fitted = {}
    for l2 in args.l2 or [3.0, 10.0]:
        models = fitted[l2] = crossfit(data, l2, sources)
        for threshold in args.threshold or [0.25, 0.3, 0.35, 0.4, 0.45, 0.5]:
            predicted = [p for n in names for p in decisions(data[n], NameModel(models[n], threshold, sources))]
            tp, pred, pos = rates(predicted, gold)
            print(show(f"model, cross-fitted, l2 {l2:g} threshold {threshold:g}:", (tp, pred, pos)), flush=True)
            key = (tp >= PRECISION_TARGET * pred, 2 * tp / (pred + pos))
            if best is None or key > best[0]:
                best = (key, l2, threshold)
    _, l2, threshold = best
    models = fitted[l2]
    for venue, members in _by_venue(names).items():  # the chosen setting's cross-fitted figures, venue by venue
        venue_gold = [r["gold"] for n in members for r in data[n]]
        print(show(f"{venue}, rules:", rates([rules_say(r) for n in members for r in data[n]], venue_gold)))
        predicted = [p for n in members for p in decisions(data[n], NameModel(models[n], threshold, sources))]
        print(show(f"{venue}, model cross-fitted:", rates(predicted, venue_gold)))
    print(
        f"chosen (best F1 at cross-fitted precision >= {PRECISION_TARGET}, if any): l2 {l2:g}, threshold {threshold:g}"
    )
    if args.measure or args.write or args.out:
        model = NameModel(fit_rows([r for n in names for r in data[n]], l2, sources), threshold, sources)
    for path in [MODEL_PATH] * args.write + [args.out] * bool(args.out):
        path.write_text(model_json(model) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(NameModel.from_json(model_json(model)).weights)} weights)")
    if args.measure:
        measured = [r for name in args.measure for r in review_rows(args.shared, HELD_OUT_SAMPLES[name])]
        held_gold = [r["gold"] for r in measured]
        print(show(f"{'+'.join(args.measure)}, rules:", rates([rules_say(r) for r in measured], held_gold)))
        print(show(f"{'+'.join(args.measure)}, model:", rates(decisions(measured, model), held_gold)))
