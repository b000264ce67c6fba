"""Train the learned name decision (`extractors/reviews/mentions/learned.py`) and measure it against the rules.

Labels: the labelled NeurIPS samples spent on earlier rounds (`SAMPLES`). A candidate name of a labelled review
(`learned.candidates_with_features`, free ones included) is a positive when the review suggests literature and the
candidate overlaps a place where the review writes one of its labelled works. Review-level decision: a review
suggests literature when a mention the rules keep (titles, reference entries, links, author-year) is recommended,
or a candidate scores at or above the threshold.

Cross-fitting: leave one sample out, train on the others, predict it; pooled review-level precision and recall
against the rules' own on the same reviews, over a grid of L2 strengths and thresholds (the best F1 is chosen).
`--measure NAME` fits on every training sample with the chosen settings and measures the model and the rules on a
held-out sample (`HELD_OUT`); `--write` writes that model to `learned.MODEL_PATH` (the `builtin` one).

    python bench/name_model.py                                         # cross-fitted figures (about 30 s)
    python bench/name_model.py --measure test5 --measure test6         # and the held-out samples
    python bench/name_model.py --write                                 # refit on every sample, write the model
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from extractors.reviews.labels import (  # noqa: E402
    NEURIPS_SAMPLES,
    _occurrences,
    find_labelled_review,
    gold_review_labels,
    read_review_labels,
)
from extractors.reviews.mentions import extract_review_mentions  # noqa: E402
from extractors.reviews.mentions.learned import (  # noqa: E402
    FREE_REASON,
    LEARNED_SOURCES,
    MODEL_PATH,
    NameModel,
    add_free_names,
    candidates_with_features,
)
from extractors.reviews.mentions.shapes import overlaps  # noqa: E402
from extractors.reviews.records import RECOMMENDED  # noqa: E402
from extractors.shared_data import shared_data_dir  # noqa: E402

HELD_OUT = {name: NEURIPS_SAMPLES[name] for name in ("test5", "test6")}  # never read while the model was written
SAMPLES = {name: path for name, path in NEURIPS_SAMPLES.items() if name not in HELD_OUT}  # the spent ones


def review_rows(shared: Path, path: Path) -> list[dict]:
    """Per labelled review: gold, the rules' decisions, and each candidate's features and label."""
    rows = []
    for label in gold_review_labels(read_review_labels(path)).values():
        review = find_labelled_review(shared, label)
        found = extract_review_mentions(review.text, review.sections)
        mentions = add_free_names(review.text, review.sections, found)
        places = [span for work, _ in label.works for span in _occurrences(review.text, work)]
        candidates = candidates_with_features(review.text, mentions)
        rows.append(
            {
                "gold": label.suggests,
                "kept": any(m.kind == RECOMMENDED and m.source not in LEARNED_SOURCES for m in mentions),
                "rules": any(m.kind == RECOMMENDED and not m.reason.startswith(FREE_REASON) for m in mentions),
                "features": [f for _, f in candidates],
                "labels": [label.suggests and overlaps(m.start, m.end, places) for m, _ in candidates],
            }
        )
    return rows


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


def fit_rows(rows: list[dict], l2: float) -> dict[str, float]:
    """`fit` over every candidate of the `review_rows`."""
    return fit([f for r in rows for f in r["features"]], [y for r in rows for y in r["labels"]], l2)


def decisions(rows: list[dict], model: NameModel) -> list[bool]:
    return [r["kept"] or any(model.probability(f) >= model.threshold for f in r["features"]) for r in rows]


def rates(predicted: list[bool], gold: list[bool]) -> tuple[int, int, int]:
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    return tp, sum(predicted), sum(gold)


def crossfit(data: dict[str, list[dict]], l2: float) -> dict[str, dict[str, float]]:
    """Per sample, the weights fitted on every other sample."""
    return {held: fit_rows([r for n in data if n != held for r in data[n]], l2) for held in data}


def show(label: str, counts: tuple[int, int, int]) -> str:
    tp, predicted, positive = counts
    return (
        f"{label} precision {tp / max(predicted, 1):.3f} ({tp}/{predicted}) recall {tp / max(positive, 1):.3f} "
        f"({tp}/{positive})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--sample", action="append", choices=sorted(SAMPLES), help="train on these (default: all)")
    parser.add_argument("--l2", type=float, action="append", help="L2 strengths to try (default: 3, 10)")
    parser.add_argument("--threshold", type=float, action="append", help="thresholds (default: 0.25 .. 0.4)")
    parser.add_argument("--measure", action="append", choices=sorted(HELD_OUT), help="a held-out sample to measure")
    parser.add_argument("--write", action="store_true", help=f"write the model fitted on every sample to {MODEL_PATH}")
    args = parser.parse_args(argv)
    names = args.sample or sorted(SAMPLES)
    data = {}
    for name in names:
        data[name] = review_rows(args.shared, SAMPLES[name])
        print(f"{name}: {len(data[name])} reviews, {sum(len(r['labels']) for r in data[name])} candidates", flush=True)
    gold = [r["gold"] for n in names for r in data[n]]
    print(show("rules (pooled):", rates([r["rules"] for n in names for r in data[n]], gold)))
    best = None
    for l2 in args.l2 or [3.0, 10.0]:
        models = crossfit(data, l2)
        for threshold in args.threshold or [0.25, 0.3, 0.35, 0.4]:
            predicted = [p for n in names for p in decisions(data[n], NameModel(models[n], threshold))]
            tp, pred, pos = rates(predicted, gold)
            print(show(f"model, cross-fitted, l2 {l2:g} threshold {threshold:g}:", (tp, pred, pos)), flush=True)
            f1 = 2 * tp / (pred + pos)
            if best is None or f1 > best[0]:
                best = (f1, l2, threshold)
    _, l2, threshold = best
    print(f"chosen (best F1): l2 {l2:g}, threshold {threshold:g}")
    if args.measure or args.write:
        model = NameModel(fit_rows([r for n in names for r in data[n]], l2), threshold)
    if args.write:
        MODEL_PATH.write_text(model.to_json() + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH} ({len(NameModel.from_json(model.to_json()).weights)} weights)")
    if args.measure:
        measured = [r for name in args.measure for r in review_rows(args.shared, HELD_OUT[name])]
        held_gold = [r["gold"] for r in measured]
        print(show(f"{'+'.join(args.measure)}, rules:", rates([r["rules"] for r in measured], held_gold)))
        print(show(f"{'+'.join(args.measure)}, model:", rates(decisions(measured, model), held_gold)))


if __name__ == "__main__":
    main()
