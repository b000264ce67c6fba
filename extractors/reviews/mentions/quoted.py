"""Quoted titles: a span in quotes is a paper's title when it is title-shaped or sits among citation cues, and
does not name a part of the review form ("Missing related work")."""

from __future__ import annotations

import re

from extractors.reviews.mentions.config import MentionConfig
from extractors.reviews.mentions.identifiers import find_identifiers
from extractors.reviews.mentions.shapes import (
    ET_AL,
    MARKER_IN_TEXT,
    QUOTED,
    STOP,
    YEAR,
    ReviewText,
    capitalised_share,
    clean_title,
    cut_venue,
)
from extractors.reviews.records import PaperMention
from mapping.titles import normalize_title

# Words of review-form headings and of requests: a quote made only of these ("Clarity, Quality, Novelty And
# Reproducibility", "Missing related work") names a part of the review, not a paper.
_FORM_WORDS = frozenset(
    "summary summaries strength strengths weakness weaknesses question questions limitation limitations "
    "clarity quality novelty reproducibility originality significance soundness presentation contribution "
    "contributions review "
    "reviews paper rating confidence ethics comments suggestions missing related relevant prior previous additional "
    "work works reference references literature citation citations comparison comparisons experiments baselines "
    "section appendix discussion".split()
)


def _names_review_part(title: str) -> bool:
    words = [w for w in normalize_title(title).split() if w not in STOP]
    return bool(words) and all(w in _FORM_WORDS for w in words)


# A quote that is a term or a wording, not a work: right after a noun for one ("the new problem "Cloud Object
# Detector Adaptation"", "the term "..."") or one side of a correction (""HE scheme" should be "the HE scheme"").
_TERM_BEFORE = re.compile(
    r"\b(?:problems?|tasks?|settings?|terms?|notions?|concepts?|phrases?|words?|wording|expressions?|sentences?|"
    r"statements?|claims?|modules?|components?|captions?|headings?|referred\s+to\s+as|termed|dubbed)\s*[:,]?\s*$",
    re.I,
)
# What leads from a wrong wording to its correction: "should be", an arrow, a LaTeX arrow ("$\\rightarrow$").
_TO_CORRECTED = r"(?:should\s+(?:be|read)|->|\u2192|=>|\$?\\(?:rightarrow|Rightarrow|to)\b\$?)"
_CORRECTION = re.compile(
    rf"(?:[\"\u201c\u201d\u2018\u2019]\s*(?:{_TO_CORRECTED}|instead\s+of|rather\s+than)|"
    r"should\s+(?:be\s+)?(?:corrected|changed|replaced|rewritten|renamed)\s+(?:to|with|by|as|into))\s*$",
    re.I,
)
_CORRECTED = re.compile(rf"\s*{_TO_CORRECTED}\s*[\"\u201c\u2018]", re.I)
# A part of the submission named by its heading: "the “Two-Stage Training” section", a reviewer's own heading
# ("“Clarity of Theorem 1:” The statement ...", a colon inside the quotes, which no title ends with).
_PART_AFTER = re.compile(r"\s*(?:(?:sub)?sections?|paragraphs?|parts?|steps?|stages?|blocks?)\b", re.I)


def _quoted_is_title(text: str, start: int, end: int, title: str, config: MentionConfig) -> bool:
    """A quoted span is a paper title when it is title-shaped or sits among citation cues."""
    if _names_review_part(title):
        return False
    before = text[max(0, start - 40) : start]
    letters = sum(c.isalpha() for c in title)
    if letters < 0.6 * len(title.replace(" ", "")):
        return False  # a formula ("i, j \u2208 {1, . . . , N}"), not a title
    if _TERM_BEFORE.search(before) or _CORRECTION.search(before) or _CORRECTED.match(text, end):
        return False
    if text[start + 1 : end - 1].rstrip().endswith(":") or _PART_AFTER.match(text, end):
        return False
    words = title.split()
    if not (config.min_title_words <= len(words) <= config.max_title_words) or title.endswith(("...", "\u2026")):
        return False
    capitalised = capitalised_share(words)
    if capitalised is None:
        return False
    window = text[max(0, start - 120) : min(len(text), end + 160)]
    cue = bool(
        ET_AL.search(window)
        or MARKER_IN_TEXT.search(window)
        or YEAR.search(text[end : end + 160])
        or find_identifiers(text[end : end + 200])
        or re.search(r"\b(?:titled|entitled|paper|work)\s*[:,]?\s*$", text[max(0, start - 40) : start], re.I)
    )
    if len(words) <= 2:
        return capitalised == 1.0 and cue
    # A bibliographic quote: an author list or "et al." just before, or a year, venue or "by Author" just after.
    bibliographic = bool(
        ET_AL.search(text[max(0, start - 40) : start])
        or re.search(
            r"\b[A-Z][a-z]+,\s+(?:(?:[A-Z]\.\s*){1,3}(?:,|\band|&)?|[A-Z][a-z]+[.,])\s*$"
            r"|\b[A-Z][\w\-]+(?:\s+(?:and|&)\s+[A-Z][\w\-]+|\s+et\s*\.?\s*al\.?)?['\u2019]s?\s*$",
            text[max(0, start - 60) : start],
        )
        or re.match(
            r"[\s.,]*(?:\(?(?:19|20)\d{2}|by\s+[A-Z]|\(?[A-Z][a-z]+\s+et\s*al|[Ii]n:?\s+[A-Z]|[A-Z]{3,}\b|arXiv|"
            r"Proc|International|Advances|Conference|Journal|Transactions)",
            text[end : end + 40],
        )
    )
    return capitalised >= 0.75 or (cue and capitalised >= 0.3) or bibliographic or _named_as_work(text, start, title)


# What leads into a quote that names a work: a word for a work or a request about one, then at most a few
# words and a preposition, "like", "as", "titled" or a colon right before the quote ("compare their methods with
# the idea in "...", "related works like '...'", "a discussion (e.g. in related work) with ''...''").
_WORK_LEAD_IN = re.compile(
    r"\b(?:papers?|works?|ideas?|articles?|preprints?|stud(?:y|ies)|methods?|approach(?:es)?)\s+"
    r"(?:in|like|such\s+as|titled|entitled|called|named|on)\s*[:,]?\s*$"
    r"|\b(?:compar(?:e|ed|ing|ison)|discuss(?:ion)?|cit(?:e|ing)|refer(?:ring)?\s+to|see|point(?:ing)?\s+to)\b"
    r"[^.?!;\n]{0,40}?\b(?:with|to|in|like|e\.g\.)\s*[:,]?\s*$"
    r"|\b(?:papers?|works?|preprint|article|titled|entitled)\s*:\s*$",
    re.I,
)
_NOT_A_NOUN_PHRASE = re.compile(
    r"\b(?:is|are|was|were|be|been|we|our|us|you|your|i|it|this|these|those|can|cannot|could|should|would|"
    r"will|does|do|did|not|has|have|had|than)\b",
    re.I,
)


def _named_as_work(text: str, start: int, title: str) -> bool:
    """A quote in any case that names a work: four words or more, shaped as a noun phrase (no verb of a clause,
    no pronoun), right after words that lead into a work ("compare their methods with the idea in "Low latency
    end-to-end streaming speech recognition with a scout network"")."""
    if len(title.split()) < 4 or _NOT_A_NOUN_PHRASE.search(title) or re.search(r"[.?!;]\s", title):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_WORK_LEAD_IN.search(text[max(line_start, start - 80) : start]))


def quoted_title_mentions(review: ReviewText) -> list[PaperMention]:
    """A `quoted_title` mention for each quoted span outside the reference entries that is a title."""
    found = []
    for match in QUOTED.finditer(review.text):
        if review.is_claimed(match.start(), match.end()):
            continue
        title = cut_venue(clean_title(next(g for g in match.groups() if g)))
        if _quoted_is_title(review.text, match.start(), match.end(), title, review.config):
            found.append(review.mention(match.start(), match.end(), "quoted_title", title=title))
    return found
