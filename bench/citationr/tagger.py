"""A learned title tagger: a linear-chain CRF (CRFsuite, through `python-crfsuite`) that marks the spans of a
cleaned review text that are paper titles, beside the hand-written rules: a learned model measured on unread data
rather than more special-case patterns. An experiment of the lab: no pipeline uses it.

- Training data from the hand labels (`bench.citationr.labels`, `bias_titles`): each gold title of a review
  is located in the review's cleaned text by fuzzy alignment (`locate_title`: a window of word tokens whose
  normalised words have LCS similarity >= 0.9 with the normalised title, as the evaluation counts a title found),
  and the tokens are labelled B/I/O (`bio_labels`). Only the `dev` and `dev2` parts are ever read.
- Features (`token_features`) are general: a token's shape and case, the run of title-case words it is in, the
  quotes, brackets, colons and line it sits in, its distance from a citation cue ("e.g.", "see", "such as",
  "cite", "[1]"), years, "et al.", venue words and identifiers near it, and whether the rules already found a
  mention or a title there. No title, venue or review is special-cased.
- Combination (`combine_mentions`): a tagged span that no rule mention overlaps becomes a mention (`source`
  `tagged_title`), given its context and classified by the same rules as a title found in prose
  (`classify_mention`); with `replace_truncated`, a tagged span also gives its title to the rule mention it
  overlaps when that mention has none or its title is a shorter piece of the tagged one.

    python -m bench.citationr.tagger train --out /tmp/title-tagger.crf   # dev + dev2 only

The model file (CRFsuite's own binary, after one JSON line of `TaggerConfig`) stays out of the repository.
`bench/eval_title_tagger.py` measures the combination by cross-fitting (train on one read part, measure on the
other). Measured so, it does not beat the rules on both read parts (dev2: one title more; dev: the same titles and
one wrong title more), so nothing in a pipeline uses it and it was never measured on the unread part.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bench.citationr.labels import TITLE_LABELS, read_reviews
from bench.citationr.samples import READABLE, part
from bench.shared import shared_data_dir
from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography, classify_mention
from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig
from extractors.reviews.mentions.context import context_for
from extractors.reviews.mentions.find import extract_review_mentions
from extractors.reviews.mentions.identifiers import find_identifiers
from extractors.reviews.mentions.references import BULLET_START, MARKER_START, looks_like_reference_entry
from extractors.reviews.mentions.shapes import (
    ET_AL,
    MARKER_IN_TEXT,
    QUOTED,
    STOP,
    VENUE_WORDS,
    YEAR,
    clean_title,
    mention_at,
)
from extractors.reviews.records import PaperMention, Review
from mapping.matcher import lcs_similarity, looks_like_venue
from mapping.titles import normalize_title

TAGGED_TITLE = "tagged_title"  # `PaperMention.source` of a mention only the tagger found
LABELS = ("B", "I", "O")

_TOKEN = re.compile(r"[^\W_]+(?:['\u2019\-][^\W_]+)*|\S")
_CITATION_CUE = re.compile(
    r"\b(?:e\.\s?g\.?|i\.\s?e\.|cf\.?|see(?:\s+also)?|such\s+as|like|including|includ(?:es|ing)|e\.g\.,|"
    r"titled|entitled|called|named|cit(?:e|ed|es|ing)|compar(?:e|ed|ing)\s+(?:with|to|against)|"
    r"(?:paper|work|article|preprint|reference|references|study)s?\s*:?|related\s+works?|for\s+(?:example|instance))"
    r"\s*[:,]?",
    re.I,
)
_URL = re.compile(r"(?:https?://|www\.)\S+")
_OPENING = "([{"
_CLOSING = ")]}"
_QUOTE_CHARS = "\"\u201c\u201d\u2018\u2019'`"


@dataclass(frozen=True)
class TaggerConfig:
    """The tagger's parameters: CRF regularisation, features, which gold titles train it, and how tagged spans
    join the rules' mentions. Defaults are the setting chosen by cross-fitting on dev/dev2."""

    c1: float = 0.1
    c2: float = 0.05
    max_iterations: int = 150
    word_features: bool = True  # the lower-cased word itself (and its neighbours') as features
    min_located_similarity: float = 0.9  # LCS similarity for a gold title to be located in the text
    min_title_words: int = 2  # tagged spans (and gold titles for training) with fewer normalised words are dropped
    min_confidence: float = 0.5  # a tagged span's mean marginal probability of its labels
    replace_truncated: bool = True  # a tagged span gives its title to an overlapping rule mention that lacks one
    use_rule_features: bool = True  # features of the rules' mentions (inside a mention, inside its title)

    def as_metadata(self) -> dict[str, object]:
        return asdict(self)


DEFAULT_TAGGER_CONFIG = TaggerConfig()


@dataclass(frozen=True)
class Token:
    """A word or a punctuation character of a cleaned review text, with its character offsets."""

    start: int
    end: int
    text: str


def tokenize(text: str) -> list[Token]:
    """Words (letters and digits, joined by inner hyphens and apostrophes) and single punctuation characters."""
    return [Token(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]


# ------------------------------------------------------------------------------------------ training data


def _word_forms(tokens: Sequence[Token]) -> list[tuple[int, str]]:
    """(token index, normalised form) of the tokens that are words once normalised."""
    forms = []
    for index, token in enumerate(tokens):
        normalized = normalize_title(token.text)
        if normalized:
            forms.append((index, normalized))
    return forms


def locate_title(
    tokens: Sequence[Token], title: str, min_similarity: float = 0.9, forms: Sequence[tuple[int, str]] | None = None
) -> list[tuple[int, int]]:
    """Every place of `title` in a tokenised text: (first, last + 1) token index pairs of the non-overlapping
    windows of words whose normalised text has LCS similarity >= `min_similarity` with the normalised title, best
    first. A window starts at a word that begins with the letter of one of the title's first three words and
    is 70-130% of its length in words."""
    wanted = normalize_title(title)
    words = wanted.split()
    if not words:
        return []
    forms = list(_word_forms(tokens)) if forms is None else list(forms)
    n = len(words)
    heads = {w[:1] for w in words[:3]}
    lengths = range(max(1, int(n * 0.7)), int(n * 1.3) + 2)
    scored: list[tuple[float, int, int]] = []
    for i, (_, form) in enumerate(forms):
        if form[:1] not in heads:
            continue
        best: tuple[float, int] | None = None
        joined: list[str] = []
        for j in range(i, min(len(forms), i + lengths[-1])):
            joined.append(forms[j][1])
            count = sum(len(f.split()) for f in joined)
            if count < lengths[0]:
                continue
            if count > lengths[-1]:
                break
            score = lcs_similarity(" ".join(joined), wanted)
            if score >= min_similarity and (best is None or score > best[0]):
                best = (score, j)
        if best is not None:
            scored.append((best[0], i, best[1]))
    found: list[tuple[int, int]] = []
    taken: set[int] = set()
    for _, i, j in sorted(scored, key=lambda s: (-s[0], s[1])):
        if taken.isdisjoint(range(i, j + 1)):
            taken.update(range(i, j + 1))
            found.append((forms[i][0], forms[j][0] + 1))
    return found


def bio_labels(n_tokens: int, spans: Iterable[tuple[int, int]]) -> list[str]:
    """B/I/O labels of `n_tokens` tokens, `spans` (first, last + 1) token index pairs marked."""
    labels = ["O"] * n_tokens
    for first, stop in spans:
        labels[first] = "B"
        for index in range(first + 1, stop):
            labels[index] = "I"
    return labels


@dataclass(frozen=True)
class LabelledText:
    """One training sequence: a review's text, its sections and gold titles, and what alignment found."""

    review: Review
    titles: tuple[str, ...]
    located: tuple[tuple[int, int], ...]  # token spans
    missing: tuple[str, ...]  # gold titles not found in the text


def label_review(review: Review, titles: Sequence[str], config: TaggerConfig = DEFAULT_TAGGER_CONFIG) -> LabelledText:
    """A review's gold titles located in its cleaned text (`locate_title`); every occurrence is labelled."""
    tokens = tokenize(review.text)
    forms = _word_forms(tokens)
    located: list[tuple[int, int]] = []
    missing = []
    for title in dict.fromkeys(titles):
        spans = [
            s
            for s in locate_title(tokens, title, config.min_located_similarity, forms)
            if all(s[1] <= a or b <= s[0] for a, b in located)
        ]
        if spans:
            located.extend(spans)
        else:
            missing.append(title)
    return LabelledText(review, tuple(dict.fromkeys(titles)), tuple(sorted(located)), tuple(missing))


# ------------------------------------------------------------------------------------------------ features


def _shape(word: str) -> str:
    shape = re.sub(r"[A-Z\u00c0-\u00de]", "X", word)
    shape = re.sub(r"[a-z\u00df-\u00ff]", "x", shape)
    shape = re.sub(r"\d", "d", shape)
    return re.sub(r"(.)\1+", r"\1\1", shape)[:6]


def _bucket(value: int) -> str:
    for limit in (0, 1, 2, 4, 8, 16):
        if value <= limit:
            return str(limit)
    return "far"


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (word[:1].isdigit() and any(c.isalpha() for c in word))


def _mark_spans(tokens: Sequence[Token], spans: Iterable[tuple[int, int]]) -> list[bool]:
    """For each token: does it lie inside one of the character spans?"""
    inside = [False] * len(tokens)
    starts = [t.start for t in tokens]
    for start, end in spans:
        index = bisect.bisect_left(starts, start)
        while index < len(tokens) and tokens[index].start < end:
            if tokens[index].end <= end:
                inside[index] = True
            index += 1
    return inside


def _title_runs(tokens: Sequence[Token]) -> list[int]:
    """For each token, the number of capitalised words in the run of capitalised words, stop words, hyphens and
    colons it belongs to (0 outside any run)."""
    runs = [0] * len(tokens)
    index = 0
    while index < len(tokens):
        if not _is_capitalised(tokens[index].text):
            index += 1
            continue
        stop = index
        capitals = 0
        while stop < len(tokens):
            word = tokens[stop].text
            if _is_capitalised(word):
                capitals += 1
            elif not (word.lower() in STOP or word in ":-\u2013"):
                break
            if stop > index and tokens[stop].start > tokens[stop - 1].end + 1:
                break
            stop += 1
        for k in range(index, stop):
            runs[k] = capitals
        index = stop
    return runs


def _quote_features(text: str, tokens: Sequence[Token], quotes: Sequence[tuple[int, int]]) -> list[list[str]]:
    """For each token inside a quoted span: the span's length in words, the share of its content words that are
    capitalised, the word before the opening quote and what follows the closing one."""
    found: list[list[str]] = [[] for _ in tokens]
    starts = [t.start for t in tokens]
    for start, end in quotes:
        words = text[start:end].split()
        content = [w for w in words if w.lower() not in STOP and w[:1].isalpha()]
        share = sum(1 for w in content if w[:1].isupper()) / len(content) if content else 0.0
        before = re.findall(r"[^\W_]+|[^\w\s]", text[max(0, start - 30) : start - 1])
        after = text[end + 1 : end + 12].lstrip()
        features = [
            f"q_words={_bucket(len(words))}",
            f"q_caps={'hi' if share >= 0.75 else 'mid' if share >= 0.3 else 'lo'}",
            f"q_before={before[-1].lower() if before else 'none'}",
            f"q_after={'year' if YEAR.match(after) else 'word' if not after or after[:1].isalnum() else after[:1]}",
        ]
        index = bisect.bisect_left(starts, start)
        while index < len(tokens) and tokens[index].start < end:
            found[index] = features
            index += 1
    return found


def _rule_title_spans(text: str, mentions: Sequence[PaperMention]) -> list[tuple[int, int]]:
    """Character spans of the rules' titles, found inside their mentions' text."""
    spans = []
    for mention in mentions:
        if not mention.title:
            continue
        at = text.find(mention.title, mention.start, max(mention.end, mention.start + len(mention.title)))
        if at >= 0:
            spans.append((at, at + len(mention.title)))
    return spans


def token_features(
    text: str,
    tokens: Sequence[Token],
    mentions: Sequence[PaperMention] = (),
    config: TaggerConfig = DEFAULT_TAGGER_CONFIG,
) -> list[list[str]]:
    """Each token's features (CRFsuite attribute names): its own, and a few of its neighbours' prefixed with
    their offset."""
    n = len(tokens)
    quotes = [(m.start() + 1, m.end() - 1) for m in QUOTED.finditer(text)]
    in_quote = _mark_spans(tokens, quotes)
    quote_features = _quote_features(text, tokens, quotes)
    in_marker = _mark_spans(tokens, [m.span() for m in MARKER_IN_TEXT.finditer(text)])
    in_url = _mark_spans(tokens, [m.span() for m in _URL.finditer(text)])
    et_al = _mark_spans(tokens, [m.span() for m in ET_AL.finditer(text)])
    venue = _mark_spans(tokens, [m.span() for m in VENUE_WORDS.finditer(text)])
    identifier = _mark_spans(tokens, [(i.start, i.end) for i in find_identifiers(text)])
    cue_end = [m.end() for m in _CITATION_CUE.finditer(text)]
    in_mention = [""] * n
    if config.use_rule_features:
        for mention in mentions:
            for index, inside in enumerate(_mark_spans(tokens, [(mention.start, mention.end)])):
                if inside and not in_mention[index]:
                    in_mention[index] = mention.source
    in_rule_title = _mark_spans(tokens, _rule_title_spans(text, mentions)) if config.use_rule_features else [False] * n
    runs = _title_runs(tokens)

    own: list[list[str]] = []
    depth = 0
    line_index = 0
    line_is_item = line_is_entry = False
    cue_pointer = 0
    last_cue_token = -100
    last_cue_line = -1
    line_number = 0
    for index, token in enumerate(tokens):
        line_start = index == 0 or "\n" in text[tokens[index - 1].end : token.start]
        if line_start:
            line_number += 1
            line_index = 0
            line_begin = text.rfind("\n", 0, token.start) + 1
            line_stop = text.find("\n", token.start)
            line = text[line_begin : len(text) if line_stop < 0 else line_stop]
            line_is_item = bool(MARKER_START.match(line) or BULLET_START.match(line))
            line_is_entry = looks_like_reference_entry(line.strip())
            line_features = [
                name
                for pattern, name in ((YEAR, "line_year"), (ET_AL, "line_et_al"), (VENUE_WORDS, "line_venue"))
                if pattern.search(line)
            ]
            if _URL.search(line):
                line_features.append("line_url")
        else:
            line_index += 1
        while cue_pointer < len(cue_end) and cue_end[cue_pointer] <= token.start:
            last_cue_token = index
            last_cue_line = line_number
            cue_pointer += 1
        word = token.text
        lower = word.lower()
        is_word = bool(re.match(r"[^\W_]", word))
        features = [f"shape={_shape(word)}" if is_word else f"punct={word}"]
        if is_word:
            if word[:1].isupper():
                features.append("cap")
            if word.isupper() and len(word) > 1:
                features.append("upper")
            if word.islower():
                features.append("lower")
            if any(c.isdigit() for c in word):
                features.append("digit")
            if YEAR.fullmatch(word):
                features.append("year")
            if lower in STOP:
                features.append(f"stop={lower}")
            if len(word) <= 2:
                features.append("short")
            if config.word_features:
                features.append(f"w={lower}")
                features.append(f"suf={lower[-3:]}")
        if word in _QUOTE_CHARS:
            features.append("quote_char")
        if word in _OPENING:
            depth += 1
        features.append(f"depth={min(depth, 2)}")
        if word in _CLOSING:
            depth = max(0, depth - 1)
        features.append(f"line_pos={_bucket(line_index)}")
        if line_start:
            features.append("line_start")
        if line_is_item:
            features.append("line_item")
        if line_is_entry:
            features.append("line_entry")
        features.extend(line_features)
        features.extend(quote_features[index])
        if last_cue_line == line_number:
            features.append(f"cue_dist={_bucket(index - last_cue_token)}")
        for flag, name in (
            (in_quote[index], "in_quote"),
            (in_marker[index], "marker"),
            (in_url[index], "url"),
            (et_al[index], "et_al"),
            (venue[index], "venue"),
            (identifier[index], "identifier"),
            (in_rule_title[index], "rule_title"),
        ):
            if flag:
                features.append(name)
        if in_mention[index]:
            features.append(f"rule={in_mention[index]}")
        features.append(f"run={_bucket(runs[index])}")
        if runs[index] and (index == 0 or runs[index - 1] == 0):
            features.append("run_start")
        own.append(features)

    def near(lo: int, hi: int, flags: Sequence[bool]) -> bool:
        return any(flags[max(0, lo) : max(0, min(n, hi))])

    years = [bool(YEAR.fullmatch(t.text)) for t in tokens]
    result = []
    for index in range(n):
        features = ["bias", *own[index]]
        for offset in (-2, -1, 1, 2):
            other = index + offset
            if 0 <= other < n:
                for feature in own[other]:
                    if feature.startswith(("shape=", "punct=", "stop=", "cap", "in_quote", "rule_title", "year")) or (
                        offset in (-1, 1) and feature.startswith(("w=", "line_start", "marker", "et_al", "venue"))
                    ):
                        features.append(f"{offset}:{feature}")
            else:
                features.append(f"{offset}:none")
        if near(index - 8, index, et_al):
            features.append("et_al_before")
        if near(index + 1, index + 9, et_al):
            features.append("et_al_after")
        if near(index + 1, index + 16, years):
            features.append("year_after")
        if near(index + 1, index + 12, venue):
            features.append("venue_after")
        if near(index - 3, index, in_marker):
            features.append("marker_before")
        result.append(features)
    return result


# ------------------------------------------------------------------------------------------ the model


@dataclass(frozen=True)
class TaggedSpan:
    """A span the tagger marks as a title: character offsets, the cleaned title and the tagger's confidence."""

    start: int
    end: int
    title: str
    confidence: float


def _spans_from_labels(labels: Sequence[str]) -> list[tuple[int, int]]:
    spans, first = [], None
    for index, label in enumerate([*labels, "O"]):
        if label != "I" and first is not None:
            spans.append((first, index))
            first = None
        if label == "B" or (label == "I" and first is None):
            first = index
    return spans


def _split_at_line_ends(text: str, tokens: Sequence[Token], spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token spans cut where a line ends, unless the line is hard-wrapped (long, not ending a sentence, the next
    line going on in lower case): a title runs on over a wrapped line, never into the next line of a list."""
    cut = []
    for first, stop in spans:
        begin = first
        for k in range(first + 1, stop):
            gap = text[tokens[k - 1].end : tokens[k].start]
            if "\n" in gap:
                line = text[text.rfind("\n", 0, tokens[k - 1].end) + 1 : tokens[k - 1].end]
                wraps = len(line) >= 60 and line.rstrip()[-1:] not in ".?!:" and tokens[k].text[:1].islower()
                if gap.count("\n") > 1 or not wraps:
                    cut.append((begin, k))
                    begin = k
        cut.append((begin, stop))
    return cut


class TitleTagger:
    """A trained CRF over review tokens (`train`, `load`) that marks title spans (`tag`)."""

    def __init__(self, model: bytes, config: TaggerConfig = DEFAULT_TAGGER_CONFIG) -> None:
        import pycrfsuite

        self.model = model
        self.config = config
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open_inmemory(model)

    @classmethod
    def train(
        cls,
        examples: Sequence[LabelledText],
        config: TaggerConfig = DEFAULT_TAGGER_CONFIG,
        rule_mentions: Mapping[str, Sequence[PaperMention]] | None = None,
    ) -> TitleTagger:
        """A CRF trained on labelled reviews (`label_review`); the rules' mentions of each review are computed
        (`extract_review_mentions`) unless `rule_mentions` maps review ids to them."""
        import pycrfsuite

        trainer = pycrfsuite.Trainer(verbose=False)
        for example in examples:
            review = example.review
            tokens = tokenize(review.text)
            mentions = (rule_mentions or {}).get(review.review_id)
            if mentions is None:
                mentions = extract_review_mentions(review.text, review.sections)
            trainer.append(
                token_features(review.text, tokens, mentions, config), bio_labels(len(tokens), example.located)
            )
        trainer.set_params(
            {
                "c1": config.c1,
                "c2": config.c2,
                "max_iterations": config.max_iterations,
                "feature.possible_transitions": True,
            }
        )
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "model.crfsuite"
            trainer.train(str(path))
            return cls(path.read_bytes(), config)

    def save(self, path: Path) -> None:
        """One JSON line of the config, then CRFsuite's model."""
        path.write_bytes(json.dumps(self.config.as_metadata()).encode() + b"\n" + self.model)

    @classmethod
    def load(cls, path: Path | str) -> TitleTagger:
        header, _, model = Path(path).read_bytes().partition(b"\n")
        return cls(model, TaggerConfig(**json.loads(header)))

    def tag_tokens(self, text: str, tokens: Sequence[Token], mentions: Sequence[PaperMention] = ()) -> list[str]:
        """The B/I/O label of each token."""
        if not tokens:
            return []
        return list(self._tagger.tag(token_features(text, tokens, mentions, self.config)))

    def tag(self, text: str, mentions: Sequence[PaperMention] = ()) -> list[TaggedSpan]:
        """The title spans of a cleaned review text (given the rules' mentions of it, which are features),
        with at least `min_title_words` words and `min_confidence`, and not a venue's name
        (`mapping.matcher.looks_like_venue`)."""
        tokens = tokenize(text)
        labels = self.tag_tokens(text, tokens, mentions)
        found = []
        for first, stop in _split_at_line_ends(text, tokens, _spans_from_labels(labels)):
            confidence = sum(self._tagger.marginal(labels[k], k) for k in range(first, stop)) / (stop - first)
            start, end = tokens[first].start, tokens[stop - 1].end
            title = clean_title(text[start:end])
            normalized = normalize_title(title)
            if (
                confidence < self.config.min_confidence
                or len(normalized.split()) < max(1, self.config.min_title_words)
                or looks_like_venue(normalized)
            ):
                continue
            at = text.find(title, start, end)
            if at >= 0:
                start, end = at, at + len(title)
            found.append(TaggedSpan(start, end, title, confidence))
        return found


# ------------------------------------------------------------------------------------------ combination


def _truncated(rule_title: str | None, tagged_title: str) -> bool:
    """Does the rule mention lack a title, or is its title a shorter piece of the tagged one?"""
    if not rule_title:
        return True
    rule, tagged = normalize_title(rule_title), normalize_title(tagged_title)
    return bool(rule) and len(rule) < len(tagged) and f" {rule} " in f" {tagged} "


def _same_title(rule_title: str | None, tagged_title: str) -> bool:
    return bool(rule_title) and lcs_similarity(normalize_title(rule_title), normalize_title(tagged_title)) >= 0.9


def _overlaps_title(text: str, mention: PaperMention, span: TaggedSpan) -> bool:
    """Does the tagged span overlap the mention's own title (the whole mention when its title is not in it)?"""
    spans = _rule_title_spans(text, [mention]) or [(mention.start, mention.end)]
    return any(start < span.end and span.start < end for start, end in spans)


def _classified(
    text: str, sections: Sequence[tuple[int, str]], span: TaggedSpan, bibliography: Bibliography, config: MentionConfig
) -> PaperMention:
    """A new mention of a tagged span, classified by the rules as what its line makes it: an entry of a reference
    list when the line starts with a bracketed marker or is shaped like one, else a title found in prose."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    marker = MARKER_START.match(line)
    bracketed = marker is not None and marker.group(1).startswith("[")
    as_entry = bracketed or looks_like_reference_entry(line.strip())
    found = {"marker": re.sub(r"[\s\[\]()]", "", marker.group(1)).rstrip(".)")} if bracketed else {}
    source = "reference_entry" if as_entry else "prose_title"
    mention = mention_at(text, span.start, span.end, source, sections, title=span.title, **found)
    mention = replace(mention, context=context_for(text, mention, config))
    return replace(classify_mention(mention, bibliography, config), source=TAGGED_TITLE)


def combine_mentions(
    text: str,
    sections: Sequence[tuple[int, str]],
    mentions: Sequence[PaperMention],
    tagger: TitleTagger,
    bibliography: Bibliography = NO_BIBLIOGRAPHY,
    config: MentionConfig = DEFAULT_CONFIG,
) -> list[PaperMention]:
    """The rules' classified mentions (`extract_review_mentions`) with what the tagger adds: a mention for each
    tagged span that no mention overlaps, classified as a title found in prose is; with `replace_truncated`, the
    tagged title for an overlapping mention whose title is missing or truncated (its kind is kept)."""
    combined = list(mentions)
    added = []
    for span in tagger.tag(text, mentions):
        around = [i for i, m in enumerate(combined) if m.start < span.end and span.start < m.end]
        if not around:
            added.append(_classified(text, sections, span, bibliography, config))
            continue
        if any(_same_title(combined[i].title, span.title) for i in around):
            continue
        truncated = [i for i in around if _truncated(combined[i].title, span.title)]
        if truncated and tagger.config.replace_truncated:
            combined[truncated[0]] = replace(combined[truncated[0]], title=span.title)
        elif not any(_overlaps_title(text, combined[i], span) for i in around):
            # another paper inside a mention whose own title is elsewhere ("[1] A, B. [2] C" read as one entry)
            first = combined[around[0]]
            added.append(
                replace(first, start=span.start, end=span.end, text=text[span.start : span.end], title=span.title)
            )
    return sorted([*combined, *added], key=lambda m: (m.start, m.end))


def tagged_extract(tagger: TitleTagger) -> Callable[[Review], list[PaperMention]]:
    """A `labels.Extract`: the rules' mentions of a review with the tagger's (`combine_mentions`)."""

    def extract(review: Review) -> list[PaperMention]:
        mentions = extract_review_mentions(review.text, review.sections)
        return combine_mentions(review.text, review.sections, mentions, tagger)

    return extract


# ------------------------------------------------------------------------------------------ labels and CLI


def labelled_reviews(
    shared: Path, parts: Sequence[str], config: TaggerConfig = DEFAULT_TAGGER_CONFIG
) -> list[LabelledText]:
    """The `bias_titles` reviews of the submissions in `parts` (never `test`), their gold titles located."""
    if not set(parts) <= set(READABLE):
        raise ValueError(f"the tagger trains on {READABLE} only, not {parts}")
    examples = []
    for relative in TITLE_LABELS:
        path = shared / relative
        gold: dict[str, list[str]] = {}
        forum_of: dict[str, str] = {}
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if part(row["forum"]) in parts:
                    gold.setdefault(row["id"], []).append(row["paper_info"])
                    forum_of[row["id"]] = row["forum"]
        reviews = read_reviews(path)
        for review_id, titles in gold.items():
            if review_id in reviews:
                wanted = [t for t in titles if len(normalize_title(t).split()) >= config.min_title_words]
                examples.append(label_review(reviews[review_id], wanted, config))
    return examples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.citationr.tagger",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train on the dev and dev2 parts of the hand labels, save the model")
    train.add_argument("--out", type=Path, required=True, help="where to write the model (not in the repository)")
    train.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    args = parser.parse_args(argv)
    examples = labelled_reviews(args.shared, ("dev", "dev2"))
    tagger = TitleTagger.train(examples)
    tagger.save(args.out)
    located = sum(len(e.titles) - len(e.missing) for e in examples)
    total = sum(len(e.titles) for e in examples)
    print(
        f"trained on {len(examples)} reviews of dev + dev2, {located}/{total} gold titles located; "
        f"model written to {args.out}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
