"""A learned decision for works a reviewer names ("compare with LoRA", "how does it do on MMLU?"), opt-in
(`MentionConfig.name_model`; `python -m pipelines.citationr --name_model=builtin`).

The name rules (`names.py`, `classify.py`) find a name only in a work slot ("such as", "compare with") and decide it
by cue patterns. Here the *candidates* are wider and the *decision* is learned:

- candidates: every `name` or `named_work` mention the rules found, and every token anywhere outside another mention
  that is shaped as a coined name in the strict sense (inner capitals, letters with digits, or two or more capitals:
  "SinSR", "GPT-2", "BYOL"; not a plain capitalised word, outside a slot mostly a sentence's first word), run over
  the coined or version tokens that follow ("Qwen 2.5 3B"), classified by the rules too (reason `free_...`);
- features (`name_features`): what the rules say of it (kind and reason), the rules' cue patterns before it, after it
  and in the sentence before, whether a lead introduces it, the review field, the words of its sentence and the four
  before and three after it, its shape, and how often the review names it;
- the decision: a logistic regression over those features (`NameModel`, weights by feature), fitted on labelled
  reviews outside the library (the lab's `bench/name_model.py`, which reports its cross-fitted figures against the
  rules); the one shipped is `name_model.json` beside this module (`BUILTIN`). A model file with `"sources"` decides
  those mention sources instead of the names (reason `learned`; a model over every source measured no better).

A candidate scored at or above the model's threshold is `recommended` (reason `learned_name`); below it, a name the
rules found is `discussed` (`learned_name_below`) and a free candidate is dropped; a name the submission's
bibliography cites stays `already_cited`. Titles, reference
entries, links and author-year mentions keep their rules.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from extractors.reviews.mentions import classify as _rules
from extractors.reviews.mentions.classify import NAMED_BY_SUBMISSION, NO_BIBLIOGRAPHY, Bibliography, classify_mention
from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig
from extractors.reviews.mentions.context import context_for
from extractors.reviews.mentions.names import _LEAD, _VERSION, NAME_SOURCE, _coined, _words_at
from extractors.reviews.mentions.shapes import ReviewText, overlaps
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, RECOMMENDED, PaperMention

BUILTIN = "builtin"  # `MentionConfig.name_model`: the model shipped beside this module
MODEL_PATH = Path(__file__).with_name("name_model.json")
LEARNED_SOURCES = (NAME_SOURCE, "named_work")  # the mentions the model decides
ALL_SOURCES = (
    NAME_SOURCE,
    "named_work",
    "reference_entry",
    "quoted_title",
    "prose_title",
    "identifier",
    "author_year",
    "database_title",
    "marker",
)  # every mention source: what a model deciding every mention decides
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
    letters = token.replace("-", "").replace(".", "").replace("+", "")
    # the cheap shape test first: most words of a review fail it, and `_coined` costs a few patterns per word
    shaped = any(c.isupper() for c in letters[1:]) or any(c.isdigit() for c in letters)
    return shaped and _coined(token)


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
            if not (
                (_coined(token) and not token[:1].isupper()) or strictly_coined(token) or _VERSION.fullmatch(token)
            ):
                break
            end = stop
        if end <= match.start() or review.is_claimed(match.start(), end) or overlaps(match.start(), end, taken):
            continue
        spans.append((match.start(), end))
    return spans


def add_free_names(
    text: str,
    sections: Sequence[tuple[int, str]],
    found: Sequence[PaperMention],
    config: MentionConfig = DEFAULT_CONFIG,
    bibliography: Bibliography = NO_BIBLIOGRAPHY,
) -> list[PaperMention]:
    """A review's classified mentions `found` and its free candidates, in text order: what the model decides among.
    Each free candidate is a `name` mention placed in its context and classified by the rules, its reason marked
    `free_` (a feature: found outside a work slot)."""
    claimed = tuple((m.start, m.end) for m in found if m.source == "reference_entry")
    review = ReviewText(text, tuple(sections), config, claimed=claimed)
    free = []
    for start, end in free_name_spans(review, [(m.start, m.end) for m in found]):
        mention = review.mention(start, end, NAME_SOURCE)
        mention = classify_mention(replace(mention, context=context_for(text, mention, config)), bibliography, config)
        free.append(replace(mention, reason=f"{FREE_REASON}_{mention.reason}"))
    return sorted([*found, *free], key=lambda m: (m.start, m.end))


def _shape(text: str) -> str:
    letters = re.sub(r"[^A-Za-z0-9]", "", text)
    if any(c.isdigit() for c in letters):
        return "digit"
    if letters.isupper():
        return "caps" if len(letters) <= 4 else "longcaps"
    if any(c.isupper() for c in letters[1:]):
        return "inner"
    return "title" if letters[:1].isupper() else "lower"


def _length(text: str) -> str:
    n = len(text.split())
    return "1" if n == 1 else "2-3" if n <= 3 else "4-9" if n <= 9 else "10+"


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
        f"section={((mention.section or '').lower().split() or ['none'])[0][:20]}",
        f"shape={_shape(mention.text)}",
        f"count={min(counts[mention.text], 4)}",
        f"length={_length(mention.text)}",
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
    """A logistic regression over `name_features` (feature -> weight), the threshold it decides at, and the mention
    sources it decides (`LEARNED_SOURCES`, the names, unless the model file says otherwise). Its file is one JSON
    object: `{"threshold": t, "weights": {feature: weight}}`, with `"sources": [...]` for other sources."""

    weights: dict[str, float]
    threshold: float
    sources: tuple[str, ...] = LEARNED_SOURCES

    def probability(self, features: Iterable[str]) -> float:
        score = sum(self.weights.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, score))))

    @classmethod
    def from_json(cls, text: str) -> NameModel:
        data = json.loads(text)
        sources = tuple(str(s) for s in data.get("sources", LEARNED_SOURCES))
        return cls({str(f): float(w) for f, w in data["weights"].items()}, float(data["threshold"]), sources)


@lru_cache(maxsize=4)
def load_model(where: str, weights: str = "") -> NameModel:
    """The model of `MentionConfig.name_model`: `BUILTIN` or a JSON file's path; `weights`, when given, is that
    file's text (`MentionConfig.name_model_weights`), and the path is not read."""
    path = MODEL_PATH if where == BUILTIN else Path(where)
    try:
        return NameModel.from_json(weights or path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"name model {where!r}: cannot read {path}: {error}") from error


def model_weights(where: str) -> str:
    """The text of the model file `where` names ("" for `BUILTIN`, which ships inside the package), checked: what a
    pipeline puts into `MentionConfig.name_model_weights` before its workers start."""
    if where in ("", BUILTIN):
        load_model(where or BUILTIN)
        return ""
    try:
        text = Path(where).read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"name model {where!r}: cannot read {where}: {error}") from error
    load_model(where, text)
    return text


def candidates_with_features(
    text: str, mentions: Sequence[PaperMention], sources: Sequence[str] = LEARNED_SOURCES
) -> list[tuple[PaperMention, list[str]]]:
    """The mentions the model decides (of `sources`, classified by the rules, free ones included), each with its
    features."""
    chosen = [m for m in mentions if m.source in sources]
    counts = Counter(m.text for m in chosen)
    summary = {m.text for m in chosen if (m.section or "").lower().startswith("summary")}
    return [(m, name_features(text, m, counts, summary)) for m in chosen]


def decide_names(text: str, mentions: Sequence[PaperMention], model: NameModel) -> list[PaperMention]:
    """`mentions` with each name's kind decided by the model (a name already cited, or one the submission's title or
    abstract writes, stays as the rules decided it); a free candidate the model does not recommend is dropped (it
    is a coined token, not a mention the rules found)."""
    decided: dict[int, PaperMention | None] = {}
    for mention, features in candidates_with_features(text, mentions, model.sources):
        free = mention.reason.startswith(FREE_REASON)
        if mention.kind == ALREADY_CITED:
            continue
        if mention.reason.endswith(NAMED_BY_SUBMISSION):  # the submission names it itself: not the model's to decide
            if free:
                decided[id(mention)] = None
            continue
        wanted = model.probability(features) >= model.threshold
        if free and not wanted:
            decided[id(mention)] = None
            continue
        reason = "learned_name" if mention.source in LEARNED_SOURCES else "learned"
        decided[id(mention)] = replace(
            mention,
            kind=RECOMMENDED if wanted else DISCUSSED,
            reason=reason if wanted else f"{reason}_below",
        )
    return [m for m in (decided.get(id(m), m) for m in mentions) if m is not None]
