"""An experiment: a learned decision for works a reviewer names, against the rules (issue 19). Not adopted: its
cross-fitted figures on the labelled reviews were those of the rules (docs/citationr.md, "A learned name decision").

The name rules (`extractors/reviews/mentions/names.py`, `classify.py`) find a name only in a work slot ("such as",
"compare with") and decide it by cue patterns. Here the *candidates* are wider and the *decision* is learned:

- candidates: every `name` or `named_work` mention the rules found, and every token anywhere outside another mention
  that is shaped as a coined name in the strict sense (inner capitals, letters with digits, or two or more capitals:
  "SinSR", "GPT-2", "BYOL"; not a plain capitalised word, outside a slot mostly a sentence's first word), run over
  the coined or version tokens that follow ("Qwen 2.5 3B"), classified by the rules too (reason `free_...`);
- features (`name_features`): what the rules say of it (kind and reason), the rules' cue patterns before it, after it
  and in the sentence before, whether a lead introduces it, the review field, the words of its sentence and the four
  before and three after it, its shape, and how often the review names it;
- the decision: an L2 logistic regression (full-batch Adam over sparse binary features, `fit`); a review suggests
  literature when a mention the rules keep (titles, reference entries, links, author-year) is recommended or a
  candidate scores at or above the threshold.

Labels: a candidate is a positive when its review suggests literature and it overlaps a place where the review writes
one of its labelled works. Cross-fitting: leave one labelled sample out, train on the others, predict it; pooled
review-level precision and recall against the rules' own on the same reviews, over a grid of L2 strengths and
thresholds (best F1 chosen). `--measure NAME` then fits on every training sample and measures the model and the rules,
once, on a held-out sample.

    python bench/name_model.py                                         # cross-fitted figures (about 30 s)
    python bench/name_model.py --measure test5 --measure test6         # and the held-out samples, once
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from extractors.reviews.labels import (  # noqa: E402
    NEURIPS_LABELS,
    NEURIPS_READ2_LABELS,
    NEURIPS_READ3_LABELS,
    NEURIPS_READ_LABELS,
    NEURIPS_TEST2_LABELS,
    NEURIPS_TEST3_LABELS,
    NEURIPS_TEST4_LABELS,
    NEURIPS_TEST5_LABELS,
    NEURIPS_TEST6_LABELS,
    _occurrences,
    find_labelled_review,
    gold_review_labels,
    read_review_labels,
)
from extractors.reviews.mentions import classify as _rules  # noqa: E402
from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography, classify_mention  # noqa: E402
from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig  # noqa: E402
from extractors.reviews.mentions.context import context_for  # noqa: E402
from extractors.reviews.mentions.find import find_mentions  # noqa: E402
from extractors.reviews.mentions.names import _LEAD, _VERSION, NAME_SOURCE, _coined, _words_at  # noqa: E402
from extractors.reviews.mentions.shapes import ReviewText, overlaps  # noqa: E402
from extractors.reviews.records import RECOMMENDED, PaperMention  # noqa: E402
from extractors.shared_data import shared_data_dir  # noqa: E402

LEARNED_SOURCES = (NAME_SOURCE, "named_work")  # the mentions the model decides
FREE_REASON = "free"  # a candidate found outside a work slot, before it is decided

_STRICT_WORD = re.compile(r"(?<![A-Za-z0-9\-_/.@#])[A-Za-z][A-Za-z0-9]*(?:[-.+][A-Za-z0-9]+)*")
# The rules' cue patterns, each a feature where it matches before the name, after it, or in the sentence before.
_CUES = (
    ("strong", _rules._STRONG_REQUEST),
    ("name_strong", _rules._NAME_STRONG),
    ("asking", _rules._ASKING),
    ("weak", _rules._WEAK_REQUEST),
    ("used", _rules._USED_BY_SUBMISSION),
    ("did", _rules._SUBMISSION_DID),
    ("alternatives", _rules._ALTERNATIVES),
    ("result_over", _rules._RESULT_OVER),
    ("own_works", _rules._OWN_WORKS),
)
_SENTENCE_WORD = re.compile(r"[a-z][a-z0-9]*(?:'[a-z]+)?|[?]")


def strictly_coined(token: str) -> bool:
    """A token shaped as a coined name in the strict sense: inner capitals, letters with digits, or 2+ capitals."""
    if not _coined(token):
        return False
    letters = token.replace("-", "").replace(".", "").replace("+", "")
    return any(c.isupper() for c in letters[1:]) or any(c.isdigit() for c in letters)


def free_name_spans(review: ReviewText, taken: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Names outside every mention in `taken` and every reference entry: a strictly coined token and the coined or
    version tokens right after it."""
    spans = []
    for match in _STRICT_WORD.finditer(review.text):
        if not strictly_coined(match.group()) or (spans and match.start() < spans[-1][1]):
            continue
        words = _words_at(review.text, match.start())
        end = words[0][1] if words else match.end()
        for start, stop in words[1:]:
            token = review.text[start:stop]
            if not (_coined(token) and not token[:1].isupper() or strictly_coined(token) or _VERSION.fullmatch(token)):
                break
            end = stop
        if end <= match.start() or review.is_claimed(match.start(), end) or overlaps(match.start(), end, taken):
            continue
        spans.append((match.start(), end))
    return spans


def free_name_mentions(
    text: str,
    sections: Sequence[tuple[int, str]],
    mentions: Sequence[PaperMention],
    config: MentionConfig = DEFAULT_CONFIG,
    bibliography: Bibliography = NO_BIBLIOGRAPHY,
) -> list[PaperMention]:
    """The free candidates of a review whose `mentions` are found and classified: each a `name` mention placed in its
    context and classified by the rules, its reason marked `free_` (a feature: found outside a work slot)."""
    claimed = tuple((m.start, m.end) for m in mentions if m.source == "reference_entry")
    review = ReviewText(text, tuple(sections), config, claimed=claimed)
    found = []
    for start, end in free_name_spans(review, [(m.start, m.end) for m in mentions]):
        mention = review.mention(start, end, NAME_SOURCE)
        mention = classify_mention(replace(mention, context=context_for(text, mention, config)), bibliography, config)
        found.append(replace(mention, reason=f"{FREE_REASON}_{mention.reason}"))
    return found


def _shape(text: str) -> str:
    letters = re.sub(r"[^A-Za-z0-9]", "", text)
    if any(c.isdigit() for c in letters):
        return "digit"
    if letters.isupper():
        return "caps" if len(letters) <= 4 else "longcaps"
    if any(c.isupper() for c in letters[1:]):
        return "inner"
    return "title" if letters[:1].isupper() else "lower"


def _words(text: str) -> list[str]:
    return _SENTENCE_WORD.findall(text.lower())


def name_features(text: str, mention: PaperMention, counts: Counter[str], summary_names: set[str]) -> list[str]:
    """The features of one candidate (module docstring). `counts`: how often each candidate text occurs among the
    review's candidates; `summary_names`: the candidate texts found in the review's summary field."""
    own, _, intro = mention.context.partition(" || ")
    features = [
        "bias",
        f"source={mention.source}",
        f"rule={mention.kind}:{mention.reason}",
        f"section={(mention.section or 'none').lower().split()[0][:20]}",
        f"shape={_shape(mention.text)}",
        f"count={min(counts[mention.text], 4)}",
    ]
    if mention.text in summary_names and (mention.section or "").lower() not in ("summary",):
        features.append("also_in_summary")
    before = _words(text[max(0, mention.start - 80) : mention.start])[-4:]
    after = _words(text[mention.end : mention.end + 60])[:3]
    features += [f"b{len(before) - i}={w}" for i, w in enumerate(before)]
    features += [f"a{i + 1}={w}" for i, w in enumerate(after)]
    if len(before) >= 2:
        features.append(f"bb={before[-2]}_{before[-1]}")
    sentence = _words(own)
    features += sorted({f"w={w}" for w in sentence})
    features += sorted({f"p={w}" for w in _words(intro)[-12:]})
    if "?" in own:
        features.append("question")
    start = max(own.find(mention.text), 0)
    for where, part in (("before", own[:start]), ("after", own[start + len(mention.text) :]), ("intro", intro)):
        features += [f"cue_{where}={name}" for name, pattern in _CUES if pattern.search(part)]
    lead = _LEAD.search(text, max(0, mention.start - 60), mention.start)
    if lead and not text[lead.end() : mention.start].strip(" ,/"):
        features.append("in_slot")
    return features


@dataclass(frozen=True)
class NameModel:
    """A logistic regression over `name_features` (feature -> weight), and the threshold it decides at."""

    weights: dict[str, float]
    threshold: float

    def probability(self, features: Iterable[str]) -> float:
        score = sum(self.weights.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, score))))


def candidates_with_features(text: str, mentions: Sequence[PaperMention]) -> list[tuple[PaperMention, list[str]]]:
    """The mentions the model decides (`LEARNED_SOURCES`, classified by the rules, free ones included), each with its
    features."""
    chosen = [m for m in mentions if m.source in LEARNED_SOURCES]
    counts = Counter(m.text for m in chosen)
    summary = {m.text for m in chosen if (m.section or "").lower().startswith("summary")}
    return [(m, name_features(text, m, counts, summary)) for m in chosen]


SAMPLES = {
    "read": NEURIPS_READ_LABELS,
    "read2": NEURIPS_READ2_LABELS,
    "read3": NEURIPS_READ3_LABELS,
    "test": NEURIPS_LABELS,
    "test2": NEURIPS_TEST2_LABELS,
    "test3": NEURIPS_TEST3_LABELS,
    "test4": NEURIPS_TEST4_LABELS,
}
HELD_OUT = {"test5": NEURIPS_TEST5_LABELS, "test6": NEURIPS_TEST6_LABELS}


def review_rows(shared: Path, path: Path) -> list[dict]:
    """Per labelled review: gold, the rules' decisions, and each candidate's features and label."""
    rows = []
    for label in gold_review_labels(read_review_labels(path)).values():
        review = find_labelled_review(shared, label)
        mentions = [classify_mention(m) for m in find_mentions(review.text, review.sections)]
        mentions = sorted(
            [*mentions, *free_name_mentions(review.text, review.sections, mentions)], key=lambda m: (m.start, m.end)
        )
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


def decisions(rows: list[dict], model: NameModel) -> list[bool]:
    return [r["kept"] or any(model.probability(f) >= model.threshold for f in r["features"]) for r in rows]


def rates(predicted: list[bool], gold: list[bool]) -> tuple[int, int, int]:
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    return tp, sum(predicted), sum(gold)


def crossfit(data: dict[str, list[dict]], l2: float) -> dict[str, dict[str, float]]:
    """Per sample, the weights fitted on every other sample."""
    models = {}
    for held in data:
        train = [r for n in data if n != held for r in data[n]]
        models[held] = fit([f for r in train for f in r["features"]], [y for r in train for y in r["labels"]], l2)
    return models


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
            if best is None or 2 * tp / (pred + pos) > best[0]:
                best = (2 * tp / (pred + pos), l2, threshold)
    _, l2, threshold = best
    print(f"chosen (best F1): l2 {l2:g}, threshold {threshold:g}")
    if args.measure:
        rows = [r for n in names for r in data[n]]
        model = NameModel(
            fit([f for r in rows for f in r["features"]], [y for r in rows for y in r["labels"]], l2), threshold
        )
        measured = [r for name in args.measure for r in review_rows(args.shared, HELD_OUT[name])]
        held_gold = [r["gold"] for r in measured]
        print(show(f"{'+'.join(args.measure)}, rules:", rates([r["rules"] for r in measured], held_gold)))
        print(show(f"{'+'.join(args.measure)}, model:", rates(decisions(measured, model), held_gold)))


if __name__ == "__main__":
    main()
