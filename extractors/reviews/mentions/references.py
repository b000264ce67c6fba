"""Reference strings: the bibliography-style entries a reviewer lists, and the title, authors and year of each.

A line is a reference entry when it starts with a citation marker (`[1]`, `[A]`, `[3*]`, `(2)`) and reads as
an entry, or is a numbered, bulleted or plain line shaped like one (authors then a title, with a year, venue,
identifier or quoted title), or follows a "References" heading, or is a title alone or after "Authors et al." in a
list that a line of prose leads into ("A few works leverage CLIP:", "... should at least cite:"). An entry's wrapped
lines are joined to it.
Each entry with a title or an identifier is one `reference_entry` mention.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig
from extractors.reviews.mentions.identifiers import URL, find_identifiers, with_identifiers
from extractors.reviews.mentions.shapes import (
    ET_AL,
    NAMED_WORK,
    QUOTED,
    STOP,
    UPPER,
    VENUE_WORDS,
    YEAR,
    capitalised_share,
    clean_title,
    cut_venue,
    is_venue,
    looks_like_authors,
    looks_like_prose,
    mention_text,
    section_at,
    split_segments,
    title_like,
)
from extractors.reviews.records import PaperMention
from mapping.records import CounterFn
from mapping.titles import normalize_title

MARKER_START = re.compile(
    r"^\s*(?:(?:--?|[*\u2022\u25cf\u2023+\u2013\u2014])\s*)?"
    r"(\[\s*(?:[*\u2020+]{1,3}|(?!(?i:line|l|p|pp|page|sec|eq|fig|table)\s*\d)[A-Za-z]{0,3}\s?\d{1,3}[a-z]?[*\u2020']{0,2}|[A-Z]{1,2}|[a-z]"
    r"|[A-Z][^\[\]\n]{1,30}?(?:19|20)\d{2}[a-z]?)\s*\]|\(\s*[A-Za-z]?\d{1,3}\s*\)"
    r"|\([A-Z][^()\n]{1,30}?\bet\s*\.?\s*al\.?,?\s*(?:19|20)\d{2}[a-z]?\)|\d{1,3}[.)](?=\s)|[A-Z]\d{0,2}[.)](?=\s))"
    r"(?:\s*[-:\u2013]\s+|\s*)"
)
BULLET_START = re.compile(r"^\s*(?:--?|[*\u2022\u25cf\u2023+\u2013\u2014])\s+")
_REFERENCES_HEADING = re.compile(
    r"^\s*(?:\d+[.)]\s*)?(?:missing\s+|additional\s+|suggested\s+|related\s+|relevant\s+)?"
    r"(?:references?|refs?|citations?|bibliography|literature|related\s+works?|relevant\s+works?)\s*[:.\-]*\s*$",
    re.I,
)
_LEADING_LABEL = re.compile(r"^\s*[A-Za-z0-9][\w\-+.$^{}]{0,20}\s*:\s*(?=[\u201c\"])")
_VENUE_TAIL = re.compile(
    r"(?:,\s*|\s+[(\[])(?:in\s*:?\s+)?(?:(?:the\s+)?(?:proc(?:eedings|\.)?|advances\s+in|international|conference|journal|"
    r"transactions|workshop|arxiv|corr)\b[^,]*|(?-i:[A-Z][A-Za-z]*[A-Z][A-Za-z]*)(?:\s+\w+){0,3}['\s,\-]*(?:19|20)?\d{2}[a-z]?)"
    r"(?:[,\s]+(?:19|20)\d{2}[a-z]?)?[)\]]?\s*$",
    re.I,
)
_SURNAME = rf"[{UPPER}][\w'\u00c0-\u017f\-]+(?:\s(?:van|von|de|der|den|da|di|del|la|le)\s[{UPPER}][\w'\-]+)?"
# Author lists whose last initial's full stop also ends the list, so '. ' after an initial cannot split them:
# "Maas, A. L., Hannun, A. Y., & Ng, A. Y. Title" (APA) and "Zhou R, Jiang C, Xu Q. Title" (GB/T 7714).
_INITIALS = rf"(?:[{UPPER}]\.\s?(?:-[{UPPER}]\.\s?)?){{1,3}}"
_LEADING_AUTHORS = re.compile(
    rf"^(?:(?:{_SURNAME},\s{_INITIALS},?\s*(?:(?:&|and)\s+)?)*{_SURNAME},\s(?:{_INITIALS})?[{UPPER}]\.\s+"
    rf"|(?:{_SURNAME}\s[{UPPER}]{{1,3}},\s*)*{_SURNAME}\s[{UPPER}]{{1,3}}(?:,\s*et\s+al)?\.\s+)"
    rf"(?![^.,]{{1,40}},\s[{UPPER}]\.|(?:and|&)\s|\(?(?:19|20)\d{{2}})(?=[{UPPER}\u201c\"])"
)
# GB/T 7714 document-type tags: "Title[J]. Journal", "Title[C]//Proceedings of ...".
_DOCUMENT_TYPE = re.compile(r"\s*\[(?:J|C|M|D|R|S|P|N|A|Z|EB/OL|J/OL|C/OL)\](?:\s*//)?\s*")
_BIBTEX_ENTRY = re.compile(r"@[A-Za-z]+\s*\{\s*[^,\s{}]*\s*,")
_BIBTEX_FIELD = re.compile(
    r"\b(title|author|year|journal|booktitle|eprint|doi)\s*=\s*(?:\{((?:[^{}]|\{[^{}]*\})*)\}|\"([^\"]*)\"|(\d{4}))",
    re.I,
)


def bibtex_fields(entry: str) -> dict[str, str]:
    """The fields of a BibTeX entry written into a review (`@article{key, title={...}, ...}`), braces removed."""
    fields: dict[str, str] = {}
    for match in _BIBTEX_FIELD.finditer(entry):
        value = next(g for g in match.groups()[1:] if g is not None)
        fields.setdefault(match.group(1).lower(), re.sub(r"\s+", " ", re.sub(r"[{}]", "", value)).strip())
    return fields


def title_from_reference(entry: str, config: MentionConfig = DEFAULT_CONFIG) -> str | None:
    """The title of one bibliography-style entry (marker already removed), or None.

    A quoted title wins; otherwise the entry is split into segments and the first one that is neither an
    author list, a year nor a venue is the title.
    """
    entry = _LEADING_LABEL.sub("", entry.lstrip(" .,;:-"))
    if _BIBTEX_ENTRY.search(entry):
        title = clean_title(bibtex_fields(entry).get("title", ""))
        return title if title_like(title, config) else None
    entry = _DOCUMENT_TYPE.sub(". ", entry)
    for match in QUOTED.finditer(entry):
        quoted = cut_venue(clean_title(next(g for g in match.groups() if g)))
        if title_like(quoted, config) and not (_QUOTED_VENUE.match(quoted) or _VENUE_NAME.search(quoted)):
            return quoted
    text = re.sub(r"\(\s*(?:19|20)\d{2}[a-z]?(?:\s*,\s*[A-Z][a-z]+\.?(?:\s+\d{1,2})?)?\s*\)", ". ", entry)
    text = re.sub(r"(?<=[A-Z]\.),\s*(?:19|20)\d{2}[a-z]?(?:,\s*[A-Z][a-z]+)?\s*\.", ". ", text)
    text = URL.sub(" ", text)
    text = re.sub(r"\bet\s*al\.?\s*[:,]\s*", "et al. ", text)
    text = re.sub(r",\s*(?:\.\.\.|\u2026)\s*,?\s*(?=&|and\b)", ", ", text)  # "Uszkoreit, J., ... & Kipf, T."
    leading = _LEADING_AUTHORS.match(text)
    if leading:
        segments = [leading.group(0).strip(" .,"), *split_segments(text[leading.end() :])]
    else:
        segments = split_segments(text)
    for index, segment in enumerate(segments):
        if index == 0 and len(segments) > 1 and looks_like_authors(segment):
            continue
        without_venue = _VENUE_TAIL.sub("", segment)
        if without_venue != segment and len(without_venue.split()) >= 2 and not looks_like_authors(without_venue):
            segment = without_venue
        elif is_venue(segment) or re.fullmatch(r"[\d\s,;:\-()]+", segment):
            continue
        if index > 0 and looks_like_authors(segment) and (ET_AL.search(segment) or re.match(r"(?:&|and)\s", segment)):
            continue
        title = _after_lead_in(clean_title(segment), config)
        if title_like(title, config):
            return title
    return None


_REFERRING = re.compile(
    r"\b(?:papers?|works?|missing|miss(?:es|ed)?|related|relevant|see|discussion|discuss|cite|citing|compare|"
    r"comparison|example|e\.g)\b",
    re.I,
)


def _after_lead_in(title: str, config: MentionConfig) -> str:
    """A title without the prose that leads into it: "Minor: Missing a discussion of a recent and highly related
    paper: Decentralized Training of ..." -> "Decentralized Training of ...". What comes before a colon is a
    lead-in, not the first half of a title, when it is a clause that refers to a work (a paper, a missing
    discussion, "see", "e.g.") in mostly lower-case words."""
    for colon in reversed([m.start() for m in re.finditer(r":\s", title)]):
        head, tail = title[:colon], title[colon + 1 :].strip()
        share = capitalised_share(head.split())
        if title_like(tail, config) and _REFERRING.search(head) and len(head.split()) >= 3 and (share or 0) < 0.5:
            return tail
    return title


# A venue's name anywhere in a span: "Learning and Intelligent Optimization: 5th International Conference".
_VENUE_NAME = re.compile(
    r"\b(?:international\s+conference|conference\s+on|proceedings\s+of|symposium\s+on|workshop\s+on|journal\s+of|"
    r"transactions\s+on)\b|\b\d+(?:st|nd|rd|th)\s+(?:international|annual|conference|workshop)\b",
    re.I,
)
_QUOTED_VENUE = re.compile(
    r"(?:in\s+)?(?:proc(?:eedings|\.)|advances\s+in|international\s+conference|conference|journal|transactions|workshop"
    r"|[A-Z]{3,}\s*'?\d{2}\b)",
    re.I,
)


def _authors_year(entry: str) -> tuple[str | None, int | None]:
    years = YEAR.findall(entry)
    year = int(years[-1]) if years else None
    first = split_segments(QUOTED.sub(". ", entry))
    authors = first[0] if first and looks_like_authors(first[0]) else None
    return authors, year


def looks_like_reference_entry(line: str, after_heading: bool = False) -> bool:
    """A line shaped like a bibliography entry: authors and a title with a year, venue or identifier."""
    if len(line) > 600 or not line.split() or NAMED_WORK.match(line):
        return False  # "RigL (ICML 2020) and GaP (ICLR 2022) show ...": named works in a sentence
    has_id = bool(find_identifiers(line))
    if len(line.split()) < 2:
        return after_heading and has_id
    has_year = bool(YEAR.search(line))
    has_quote = bool(QUOTED.search(line))
    has_venue = bool(VENUE_WORDS.search(line))
    segments = split_segments(line)
    authors_first = bool(segments) and looks_like_authors(segments[0]) and len(segments) > 1
    quote = QUOTED.search(line)
    if quote:
        lead = line[: quote.start()].strip(" ,.:;")
        has_quote = not lead or looks_like_authors(lead) or len(lead.split()) <= 3
    if _BIBTEX_ENTRY.match(line):
        return True
    if after_heading:
        return has_year or has_quote or has_id or has_venue or authors_first
    if authors_first and ET_AL.search(segments[0]) and _title_shaped(segments[1]) and len(segments) <= 3:
        return True
    sentence_like = (
        len(
            re.findall(
                r"\b(?:is|are|was|were|should|could|would|may|might|this|that|we|i|you|they|because|which|also)\b",
                line,
                re.I,
            )
        )
        >= 2
    )
    if sentence_like and not authors_first:
        return False
    if (
        _TITLE_THEN_VENUE.match(line)
        and (has_year or has_id)
        and not re.search(
            r"\b(?:we|you|should|could|would|this\s+paper|the\s+authors|such\s+as|e\.g|prior|works?)\b|^(?:compare|see|cite)",
            line.split(". ")[0],
            re.I,
        )
    ):
        return True
    title_first = bool(segments) and _title_shaped(segments[0]) and len(line.split()) <= 60
    if has_id and has_year and len(segments) > 1 and 3 <= len(segments[0].split()) <= 25 and len(line.split()) <= 60:
        # "Do as i can, not as i say: Grounding language in robotic affordances. arXiv:2204.01691. (2022)"
        title_first = title_first or not re.search(
            r"\b(?:is|are|was|were|we|you|should|could|would|this|that|the\s+authors?|paper)\b", segments[0], re.I
        )
    return (authors_first and (has_year or has_venue or has_id)) or (
        (has_quote or title_first)
        and (has_year or has_id)
        and (has_venue or has_id or len(segments) > 1 or title_first)
    )


_TITLE_THEN_VENUE = re.compile(
    r"^[\u201c\"]?[A-Z][^.?!]{8,250}[.?!]?[\u201d\"]?[.,]\s+(?:in\s*:?\s+|in\s+proc|proceedings|advances\s+in|arxiv|corr\b|"
    r"(?-i:[A-Z]{2,}[a-z]?\b)|international|conference|journal|transactions|workshop)",
    re.I,
)


def _title_shaped(segment: str) -> bool:
    """Title Case, three to 25 words, no sentence verbs: "Towards Dynamic and Scalable Active Learning"."""
    words = segment.split()
    if not 3 <= len(words) <= 25 or re.search(r"\b(?:is|are|was|were|we|I|you|should|could|would|this)\b", segment):
        return False
    share = capitalised_share(words)
    return share is not None and share >= 0.6


@dataclass(frozen=True)
class ReviewLine:
    """One line of a review text: where it is, its text, and the review field it is in."""

    start: int
    end: int
    text: str
    section: str | None


def review_lines(text: str, sections: Sequence[tuple[int, str]] = ()) -> list[ReviewLine]:
    """The lines of a review text, each with its offsets and the review field it starts in."""
    lines, offset = [], 0
    for raw in text.split("\n"):
        lines.append(ReviewLine(offset, offset + len(raw), raw, section_at(sections, offset)))
        offset += len(raw) + 1
    return lines


@dataclass(frozen=True)
class ReferenceEntry:
    """A reference entry's text (lines joined), where it is, and its marker."""

    start: int
    end: int
    text: str
    section: str | None
    marker: str | None


_FIELD_HEADING = re.compile(r"^[A-Z][A-Z _/&,\-]{2,60}:$")
_CONNECTOR_END = re.compile(r"(?:\b(?:in|of|the|and|for|on|with|to|a|an|via|from|by|at)|[,\-:&(])\s*$", re.I)


def _continues(entry_text: str, line: str) -> bool:
    """Does `line` continue a reference entry (a wrapped title, the authors or venue on the next line)?"""
    line = line.strip()
    if (
        not line
        or len(line) > 200
        or _FIELD_HEADING.match(line)
        or MARKER_START.match(line)
        or BULLET_START.match(line)
    ):
        return False
    if re.match(r"(?:The|This|These|We|I|It|In|However|Also|Moreover|Furthermore|Please|Overall)\b", line):
        return False
    if line[0].islower() or _CONNECTOR_END.search(entry_text):
        return True
    complete = YEAR.search(entry_text) or find_identifiers(entry_text)
    return not complete and bool(YEAR.search(line) or find_identifiers(line) or looks_like_authors(line.strip(" .")))


def _join(parts: Sequence[str]) -> str:
    joined = parts[0].strip()
    for part in parts[1:]:
        part = part.strip()
        glue = " " if part[:1].islower() or _CONNECTOR_END.search(joined) or joined.endswith(".") else ". "
        joined = joined + glue + part
    return joined


def _titled_marked_line(body: str, config: MentionConfig) -> bool:
    """A `[n]` line not shaped like a reference is still an entry when it yields a title that does not open with
    a bracket and is capitalised (or the line names its authors), and the line is not prose."""
    title = title_from_reference(body, config) or ""
    return (
        title[:1] not in ("", "(")
        and (not title[:1].islower() or bool(ET_AL.search(body) or re.search(r"\sby\s", body)))
        and not looks_like_prose(body)
    )


def _is_entry(body: str, marker: str | None, after_heading: bool, config: MentionConfig) -> bool:
    """Is a line (with its continuation lines joined into `body`) a reference entry? One behind a `[n]` marker
    needs less to be one, unless it reads as a sentence about `[n]`."""
    if len(body) > config.max_reference_chars:
        return False
    if not (marker and marker.startswith("[")):
        return looks_like_reference_entry(body, after_heading)
    if re.match(r"\s*[a-z]", body) and not (QUOTED.search(body) or ET_AL.search(body) or URL.match(body.strip())):
        return False  # "[5] also links local miscalibration to ...": a sentence about [5], not the entry
    return looks_like_reference_entry(body, after_heading=True) or _titled_marked_line(body, config)


# A line of prose that leads into a list of works: a quantified or qualified plural of works ("A few works leverage
# CLIP for VLN:", "some recent papers", "the following works"), or a colon after works, papers, literature or
# examples ("Just name a few:", "e.g.:").
_LEADS_INTO_WORKS = re.compile(
    r"\b(?:a\s+few|few|some|several|other|many|more|recent|following|related|relevant|prior|previous|existing|"
    r"these|two|three|missing)\s+(?:\w+\s+){0,2}(?:works|papers|references|studies|approaches|methods|articles)\b"
    r"|\b(?:works?|papers?|literature|references?|studies|examples?|e\.g\.?|such\s+as|for\s+(?:example|instance)|"
    r"(?:to\s+)?name\s+a\s+few|cite|discuss|compare\s+(?:with|to|against))\b[^\n]{0,20}:\s*$",
    re.I,
)
_FORM_WORDS = frozenset(
    "summary strengths strength weaknesses weakness questions limitations clarity quality novelty "
    "reproducibility originality significance soundness presentation contribution minor major comments "
    "typos suggestions other additional related work works references".split()
)
_CLAUSE_WORDS = re.compile(
    r"\b(?:is|are|was|were|be|been|we|i|you|they|it|this|these|those|our|their|its|can|may|will|has|have|had|should|"
    r"could|would|does|do|did|not|seems?|looks?|provides?|shows?|uses?|performs?|results?\s+in)\b",
    re.I,
)


def authored_title_line(body: str) -> bool:
    """A line that is authors with "et al." and a title, in any case, as a list of works under a lead-in writes one
    ("Vít Škvára et al. Are generative deep models for novelty detection truly better?")."""
    segments = split_segments(body)
    return (
        len(segments) == 2
        and ET_AL.search(segments[0]) is not None
        and looks_like_authors(segments[0])
        and 3 <= len(segments[1].split()) <= 25
        and not looks_like_prose(segments[1])
    )


def title_line(body: str) -> bool:
    """A line that is a title and nothing else, as a list of works under a lead-in writes one: three to 25
    words in Title Case, no verb of a clause or pronoun, no "Page 4: ..." label, not a heading of the form."""
    words = body.split()
    if not 3 <= len(words) <= 25 or not words[0][:1].isupper() or body.rstrip().endswith(("?", "!", ":")):
        return False
    if _CLAUSE_WORDS.search(body) or re.match(r"[^:]{1,25}:\s*\S", body) and not re.match(r"[A-Z][\w\-]*:", body):
        return False
    share = capitalised_share(words)
    content = [w for w in normalize_title(body).split() if w not in STOP]
    return share is not None and share >= 0.6 and not all(w in _FORM_WORDS for w in content)


def reference_entries(lines: Sequence[ReviewLine], config: MentionConfig = DEFAULT_CONFIG) -> list[ReferenceEntry]:
    """The review's bibliography-style entries: marked lines (`[1] ...`) with their continuation lines,
    unmarked lines or short line blocks shaped like references, and anything under a "References" heading."""
    entries: list[ReferenceEntry] = []
    after_heading = False
    lead_in = False  # the last line of prose leads into a list of works ("A few works leverage CLIP for VLN:")
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.text.strip()
        index += 1
        if not stripped:
            continue
        if _FIELD_HEADING.match(stripped):
            lead_in = False
            continue
        if _REFERENCES_HEADING.match(stripped) or re.search(r"\b(?:references?|refs)\s*:\s*$", stripped, re.I):
            after_heading = True
            continue
        marker_match = MARKER_START.match(line.text)
        offset = marker_match.end() if marker_match else len(line.text) - len(BULLET_START.sub("", line.text))
        parts, end = [line.text[offset:]], line.end
        while (
            index < len(lines)
            and _continues(_join(parts), lines[index].text)
            and len(_join(parts)) < config.max_reference_chars
        ):
            parts.append(lines[index].text)
            end = lines[index].end
            index += 1
        body = _join(parts)
        marker = marker_match.group(1).strip() if marker_match else None
        listed = lead_in and (title_line(body) or authored_title_line(body))
        if not (_is_entry(body, marker, after_heading, config) or listed):
            index -= len(parts) - 1  # continuation lines get their own chance
            end = line.end
            if not marker_match and not BULLET_START.match(line.text) and len(stripped.split()) > 25:
                after_heading = False
            lead_in = bool(_LEADS_INTO_WORKS.search(stripped)) and len(stripped.split()) <= 60
            continue
        entries.append(
            ReferenceEntry(line.start + offset, end, body, line.section, _normalize_marker(marker) if marker else None)
        )
    return entries


def _normalize_marker(marker: str) -> str:
    return re.sub(r"[\s\[\]()]", "", marker).rstrip(".)")


def reference_mentions(
    text: str, sections: Sequence[tuple[int, str]], config: MentionConfig, count: CounterFn
) -> list[PaperMention]:
    """One `reference_entry` mention per entry that has a title or an identifier, with its authors and year; an
    entry with neither is counted (`reference_entry_without_title`) and dropped."""
    mentions = []
    for entry in reference_entries(review_lines(text, sections), config):
        title = title_from_reference(entry.text.strip(), config)
        ids = find_identifiers(entry.text)
        authors, year = _authors_year(entry.text)
        if title is None and not ids:
            count("reference_entry_without_title", 1)
            continue
        mentions.append(
            with_identifiers(
                PaperMention(
                    start=entry.start,
                    end=entry.end,
                    text=mention_text(entry.text),
                    source="reference_entry",
                    title=title,
                    authors=authors,
                    year=year,
                    marker=entry.marker,
                    section=entry.section,
                ),
                ids,
            )
        )
    return mentions
