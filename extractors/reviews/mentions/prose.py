"""Mentions in running text: titles written without quotes, identifiers and links, author-year citations and
methods named with their venue. An identifier or author-year right after a quoted title on the same line joins
that title's mention instead of standing alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from extractors.reviews.mentions.config import MentionConfig
from extractors.reviews.mentions.identifiers import find_identifiers, with_identifiers
from extractors.reviews.mentions.references import title_from_reference
from extractors.reviews.mentions.shapes import (
    GENERIC_ACRONYMS,
    NAME,
    NAMED_WORK,
    STOP,
    ReviewText,
    capitalised_share,
    clean_title,
    is_venue,
    looks_like_prose,
    overlaps,
    section_at,
    title_like,
)
from extractors.reviews.records import PaperMention

# The grammar of author-year citations, most specific first; every pattern has the groups `authors` and `year`
# (`year` may be empty). "et al" is also read as the typed "at al".
_ET_AL = r"\s+[ea]t\s*\.?\s*al\b\.?"
_AUTHOR_YEAR = re.compile(
    rf"(?P<authors>{NAME}(?:\s+{NAME})?(?:{_ET_AL}|\s+(?:and|&)\s+{NAME}))\s*[,(\[]?\s*"
    r"(?:(?P<venue>[A-Z][A-Za-z]{1,12}(?:\s+[A-Z][A-Za-z]{1,12})?)[\s,']+)?"
    r"'?(?P<year>(?:19|20)?\d{2})[a-z]?\s*[)\]]?"
)
# A single author's surname in the forms below: "Glasgow", "McDonald", "O'Brien", "Smith-Jones", not "LLaMA" or "GPT".
_SURNAME = r"[A-Z][a-z\u00df-\u017f']+(?:-?[A-Z][a-z\u00df-\u017f']+|-[a-z\u00df-\u017f']+)*(?![A-Za-z])"
_AUTHOR_YEAR_FORMS = (
    _AUTHOR_YEAR,
    # One author inside a parenthetical citation, natbib's \citep: "(Glasgow, 2023)", "(e.g. Smith 2020; Lee, 2021)".
    re.compile(
        rf"(?<=[(;])\s*(?:(?:e\.g\.|see|cf\.)\s*,?\s*)?(?P<authors>{_SURNAME}),?\s+"
        r"(?P<year>(?:19|20)\d{2})[a-z]?(?=\s*[;)])"
    ),
    # One author, the year in brackets after the name, natbib's \citet: "Glasgow (2023)", "Robinson [2025]".
    re.compile(rf"\b(?P<authors>{_SURNAME})\s+[(\[](?P<year>(?:19|20)\d{{2}})[a-z]?[)\]]"),
    # The astronomers' "Robinson+2025", "Smith+21", and the year glued on with an apostrophe: "Mitzenmacher'18".
    re.compile(rf"\b(?P<authors>{_SURNAME})(?:\+|['\u2019])(?P<year>(?:19|20)?\d{{2}})\b"),
    # "et al" without a year: "Wu et al", "Azerbayev at al.".
    re.compile(rf"\b(?P<authors>{NAME}(?:\s+{NAME})?{_ET_AL})(?P<year>)"),
)
_ACRONYM_EXPANSION = re.compile(
    r"\b[A-Z][A-Za-z]*[A-Z][A-Za-z0-9\-]*\s*\((?:[A-Z][A-Za-z0-9\-]*:\s*)?([A-Za-z][^()\n\d]{8,150}?)\)"
)
_AUTHOR_PAREN_TITLE = re.compile(
    rf"\b{NAME}(?:\s+{NAME})?\s+et\s*\.?\s*al\.?\s*\(([A-Za-z][^()\n]{{8,200}}?)\)"
    rf"|\b{NAME}(?:\s+(?:and|&)\s+{NAME}|\s+et\s*\.?\s*al\.?)?\s*\(\s*(?:19|20)\d{{2}}[a-z]?\s*\)\s*[:,]\s*"
    r"([A-Z][^.()\n]{8,200}?)(?=[.(]|\s+and\s+references|$)",
    re.M,
)
_TITLE_BY_AUTHOR = re.compile(
    r"(?:^(?:[ \t]*(?:\d{1,3}[.)]|[-*\u2022]))?|[(:](?:\s*(?:e\.g\.,?|i\.e\.,?|see))?|\be\.g\.,?|\bsuch\s+as|\bsee)"
    rf"\s*([A-Za-z][^()\n]{{8,200}}?)\s+by\s+{NAME}(?:[\s\-]+{NAME})?"
    r"(?:\s+et\s*\.?\s*al\.?|\s+(?:and|&)\s+[A-Z]\w+)",
    re.M,
)
# "(e.g. Multi-Vector Attention Models for Deep Re-ranking)", "such as Deep Residual Learning for Image Recognition":
# four or more Title Case words right after an example cue.
_EXAMPLE_TITLE = re.compile(
    r"(?:\be\.g\.|\bfor\s+(?:example|instance)|\bsuch\s+as)\s*,?\s+"
    r"((?:[A-Z][\w\-]*|(?:of|for|and|the|in|on|with|via|to|a|an|from|by))"
    r"(?:\s+(?:[A-Z][\w\-]*:?|(?:of|for|and|the|in|on|with|via|to|a|an|from|by))){3,20})(?=\s*[,.;)]|\s*$)",
    re.M,
)
# "See Lehmann-Romano: Testing Statistical Hypotheses, Sec 3.2": authors, a colon, then the title.
_AUTHOR_COLON_TITLE = re.compile(
    rf"(?:\b[Ss]ee|\be\.g\.,?|\bcf\.?)\s+{NAME}(?:[\s\-]+{NAME})?(?:\s+et\s*\.?\s*al\.?|\s+(?:and|&)\s+{NAME})?"
    r"\s*:\s*([A-Z][^.\n,;()]{8,200})"
)
_TITLE_VENUE_YEAR = re.compile(
    r"(?:\(|\bsuch\s+as|\be\.g\.,?|\bsee|\blike|\bwork)\s*([A-Z][^()\n,]{8,200}?),\s*"
    r"(?:in\s+)?(?-i:[A-Z][A-Za-z]*[A-Z][A-Za-z]*)\s*'?(?:19|20)\d{2}\b"
)


# "[Wang et al. 2021, Off-Policy Multi-Agent Decomposed Policy Gradients]", "(Smith and Lee, 2020: Title)": an
# author-year citation in brackets followed by the title.
_SURNAME = r"[A-Z][a-z\u00e0-\u017f][\w'\u00c0-\u017f\-]*"  # a name, not a venue's acronym ("ICLR")
_BRACKETED_REFERENCE = re.compile(
    rf"[\[(]\s*{_SURNAME}(?:\s+{_SURNAME})?(?:\s+et\s*\.?\s*al\.?|\s+(?:and|&)\s+{_SURNAME})?\s*,?\s*"
    r"(?:19|20)\d{2}[a-z]?\s*[,:;]\s*([A-Z][^\[\]()\n]{8,250}?)\s*[\])]"
)
# "a recent and highly related paper: Decentralized Training of Foundation Models in Heterogeneous Environments
# (https://arxiv.org/abs/2206.01288)": a Title Case run right before a link or an arXiv id in parentheses.
_TITLE_BEFORE_LINK = re.compile(
    r"(?:^|[:;,.(]\s|\b(?:titled|entitled|paper|work|preprint|see|e\.g\.,?|like|such\s+as)\s)\s*"
    r"([A-Z][^()\n:;,.]{2,60}?(?::\s*[A-Z][^()\n;,.]{2,200}?|[^()\n:;,.]{6,200}?))\s*"
    r"(?=\(\s*(?:https?://|arXiv\s*:?\s*\d|doi\s*:))",
    re.M,
)


def _title_before_link(match: re.Match) -> str | None:
    """The title in the run before a link: the run, or what follows its last colon ("related paper: Title"),
    when that is mostly capitalised words and no clause."""
    run = match.group(1)
    for title in (run, run.rsplit(": ", 1)[-1]):
        share = capitalised_share(title.split())
        if share is not None and share >= 0.75 and not looks_like_prose(title):
            return title
    return None


_CONNECTIVE_START = re.compile(
    r"(?:besides|however|moreover|furthermore|also|additionally|although|though|while|since|because|unlike|"
    r"compared|especially|particularly|namely|instead)\b",
    re.I,
)
_DESCRIPTION_START = frozenset(STOP | {"only", "also", "such", "including", "based", "up", "e.g", "i.e", "which"})


# A reference string written inside a sentence, from its author list (two or more "Surname, I." names, as
# Springer and APA write them) to the year that closes it: "For example Cen, J., Yun, P., Liu, M.: Open-set 3d
# object detection. 3DV, 2021. Or ..."
_SURNAME_INITIALS = r"[A-Z][\w'\-]+,\s(?:[A-Z]\.(?:\s?-?[A-Z]\.)*)"
_INLINE_REFERENCE = re.compile(rf"(?:{_SURNAME_INITIALS},?\s+(?:(?:and|&)\s+)?)+{_SURNAME_INITIALS}[:.,]?\s+(?=\S)")
_REFERENCE_END = re.compile(r"\(?(?:19|20)\d{2}[a-z]?\)?\.(?=\s|$)|\n")


def _inline_references(text: str, config: MentionConfig) -> list[tuple[int, int, str]]:
    """(start, end, title) of each reference string written inside a sentence."""
    found = []
    for match in _INLINE_REFERENCE.finditer(text):
        close = _REFERENCE_END.search(text, match.end(), min(len(text), match.end() + 400))
        end = close.end() if close else min(len(text), match.end() + 300)
        title = title_from_reference(text[match.start() : end].strip(), config)
        if title:
            found.append((match.start(), end, title))
    return found


def _expands(match: re.Match) -> bool:
    """Does the parenthesis after an acronym name a work ("CER (Competitive experience replay)", "CLEVR (CLEVR:
    A Diagnostic Dataset for ...)") rather than describe it ("TD3 (an improved variant of DDPG)", "AnyBurl (the
    single one baseline ...)")? It does when it is in Title Case, or when it starts with a content word and most
    of the acronym's capitals are initials of its words (Schwartz and Hearst's test for abbreviations, in any
    order, since reviewers swap them)."""
    if match.group(0).split("(", 1)[0].strip() in GENERIC_ACRONYMS:
        return False  # "PSNR (Peak Signal-to-Noise Ratio)": a metric, not a work
    expansion = match.group(1)
    words = expansion.split()
    share = capitalised_share(words)
    if share is not None and share >= 0.6 and len(words) >= 3:
        return True
    if not words or words[0].lower().strip(".,") in _DESCRIPTION_START:
        return False
    capitals = [c.lower() for c in match.group(0).split("(", 1)[0] if c.isupper()]
    initials = {w[0].lower() for w in re.split(r"[\s\-/]+", expansion) if w[:1].isalpha()}
    return len(capitals) >= 2 and sum(c in initials for c in capitals) >= 0.75 * len(capitals)


def _prose_titles(text: str, config: MentionConfig) -> list[tuple[int, int, str]]:
    """Titles written in running text without quotes: "CER (Competitive experience replay)", "Mannor et al
    (Online learning with ...)", "Chen and Wu (2019): Testing for ...", "<title> by Pan et al.",
    "(<title>, NeurIPS 2022)"."""
    found = _inline_references(text, config)
    patterns = (
        _BRACKETED_REFERENCE,
        _TITLE_BEFORE_LINK,
        _ACRONYM_EXPANSION,
        _AUTHOR_PAREN_TITLE,
        _TITLE_BY_AUTHOR,
        _AUTHOR_COLON_TITLE,
        _TITLE_VENUE_YEAR,
        _EXAMPLE_TITLE,
    )
    for pattern in patterns:
        for match in pattern.finditer(text):
            if pattern is _ACRONYM_EXPANSION and not _expands(match):
                continue
            group = next((i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)), None)
            if group is None:
                continue
            found_title = _title_before_link(match) if pattern is _TITLE_BEFORE_LINK else match.group(group)
            if found_title is None:
                continue
            title = clean_title(found_title)
            words = title.split()
            if not 3 <= len(words) <= config.max_title_words or looks_like_prose(title):
                continue
            if re.search(r"\b(?:e\.g|i\.e|see|et\s+al|which|that|the\s+authors?|our|this|these)\b", title, re.I):
                continue
            if _CONNECTIVE_START.match(title) or (title[:1].islower() and words[0].lower() in _DESCRIPTION_START):
                continue  # "Besides an comparison to the work by ...", "the cited paper by ..."
            found.append((match.start(), match.end(), title))
    return found


def _full_year(value: str) -> int | None:
    number = int(value)
    if len(value) == 2:
        number += 2000 if number <= 40 else 1900
    return number if 1950 <= number <= 2039 else None


_NOT_AUTHOR = frozenset(
    "Table Figure Fig Section Sec Eq Equation Appendix Theorem Lemma Line Lines Page The In On For And This That "
    "These Our We It Even Also Algorithm Assumption Definition Corollary Proposition Step Example Remark Chapter "
    "Part".split()
)


def _plausible_author_year(match: re.Match) -> bool:
    authors, year = match.group("authors"), match.group("year")
    first = authors.split()[0].rstrip(".")
    if first in _NOT_AUTHOR or (year and _full_year(year) is None) or is_venue(first) or len(first) < 2:
        return False
    if not year:
        return re.search(_ET_AL, authors) is not None
    return match.re is not _AUTHOR_YEAR or re.search(_ET_AL, authors) is not None or len(year) == 4


# ----------------------------------------------------------------------------------- steps of find_mentions
# Each takes the prose mentions found so far and returns them with its own added or joined to them.


def add_prose_titles(found: Sequence[PaperMention], review: ReviewText) -> list[PaperMention]:
    """`found` and a `prose_title` mention for each title in running text that overlaps no earlier mention."""
    found = list(found)
    for start, end, title in _prose_titles(review.text, review.config):
        if not (review.is_claimed(start, end) or overlaps(start, end, _spans(found))):
            found.append(review.mention(start, end, "prose_title", title=title))
    return found


def add_identifiers(found: Sequence[PaperMention], review: ReviewText) -> list[PaperMention]:
    """`found` with each identifier or link in running text joined to the quoted title it follows on the same line
    (within 200 characters), or added as an `identifier` mention of its own."""
    found, text = list(found), review.text
    for hit in find_identifiers(text):
        if review.is_claimed(hit.start, hit.end):
            continue
        host = next(
            (
                m
                for m in found
                if m.source in ("quoted_title", "prose_title")
                and 0 <= hit.start - m.end <= 200
                and "\n" not in text[m.end : hit.start]
            ),
            None,
        )
        if host is not None:
            found[found.index(host)] = with_identifiers(replace(host, end=hit.end), [hit])
        else:
            found.append(replace(hit, section=section_at(review.sections, hit.start)))
    return found


def add_author_years(found: Sequence[PaperMention], review: ReviewText) -> list[PaperMention]:
    """`found` with each author-year citation ("Smith et al. (2021)") given to the quoted title it follows on the
    same line (within 120 characters), or added as an `author_year` mention where it overlaps no other."""
    found, text = list(found), review.text
    read: list[tuple[int, int]] = []  # what a more specific form read already
    for match in (match for pattern in _AUTHOR_YEAR_FORMS for match in pattern.finditer(text)):
        start = match.start("authors")
        end = match.end()
        if review.is_claimed(start, end) or not _plausible_author_year(match) or overlaps(start, end, read):
            continue
        read.append((start, end))
        authors, year = match.group("authors"), _full_year(match.group("year")) if match.group("year") else None
        titles = [m for m in found if m.source == "quoted_title"]
        if any(m.start <= start < m.end + 120 and "\n" not in text[m.end : start] for m in titles):
            host = next(m for m in titles if m.start <= start < m.end + 120)
            if host.authors is None:
                found[found.index(host)] = replace(host, authors=authors, year=year)
        elif not any(m.start <= start < m.end for m in found):
            found.append(review.mention(start, end, "author_year", authors=authors, year=year))
    return found


def add_named_works(found: Sequence[PaperMention], review: ReviewText) -> list[PaperMention]:
    """`found` and a `named_work` mention for each method named with its venue ("MEST (NeurIPS 2021)") that
    overlaps no earlier mention; the title, when the parenthesis gives one."""
    found = list(found)
    for match in NAMED_WORK.finditer(review.text):
        if review.is_claimed(match.start(), match.end()) or overlaps(match.start(), match.end(), _spans(found)):
            continue
        title = clean_title(match.group("title")) if match.group("title") else None
        title = title if title and title_like(title, review.config) else None
        year = _full_year(match.group("year"))
        found.append(review.mention(match.start(), match.end(), "named_work", title=title, year=year))
    return found


def _spans(mentions: Sequence[PaperMention]) -> list[tuple[int, int]]:
    return [(m.start, m.end) for m in mentions]
