"""The text a mention is judged by: its sentence and the one before it, and for a reference entry the sentences
that cite its marker and the sentence that introduces the list."""

from __future__ import annotations

import re

from extractors.reviews.mentions.config import MentionConfig
from extractors.reviews.mentions.references import BULLET_START, MARKER_START, looks_like_reference_entry
from extractors.reviews.mentions.shapes import MARKER_IN_TEXT
from extractors.reviews.records import PaperMention

_SENTENCE_SPLIT = re.compile(r"(?<=[.?!])\s+(?=[A-Z\u201c\"(\[])")
# A full stop after these is not a sentence end: "e.g. Title", "Vandegar et. al "Title"", "A. L. Maas".
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|al|et|cf|vs|viz|etc|resp|approx|incl|fig|figs|eq|eqs|sec|secs|no|nos|ref|refs|proc|conf|"
    r"vol|pp|eds?|dr|mr|ms|prof|jr|int|trans|assoc|univ)|(?<![\w.])[A-Za-z])$",
    re.I,
)


def _is_sentence_end(text: str, index: int) -> bool:
    """Does the '.', '?' or '!' at text[index] end a sentence (not an abbreviation or an initial)?"""
    return text[index] != "." or not _ABBREVIATION.search(text[max(0, index - 12) : index])


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph, split after '.', '?', '!' followed by a space and a capital, quote or
    bracket, except after abbreviations and initials."""
    pieces, begin = [], 0
    for match in _SENTENCE_SPLIT.finditer(text):
        if _is_sentence_end(text, match.start() - 1):
            pieces.append(text[begin : match.start()])
            begin = match.end()
    pieces.append(text[begin:])
    return [p for p in pieces if p.strip()]


# A line that stands alone in a list: a link, or a quote and nothing else.
_STANDALONE = re.compile(r"(?:https?://|www\.)\S+|[\"\u201c][^\n]*[\"\u201d][.,;]?")


def _wraps(text: str, newline: int) -> bool:
    """Is the line break at `newline` a hard wrap inside a sentence (the line before it does not end one, the
    line after it is not empty and not a list item), not the end of a line of its own?"""
    before = text[text.rfind("\n", 0, newline) + 1 : newline].rstrip()
    after_end = text.find("\n", newline + 1)
    after = text[newline + 1 : len(text) if after_end < 0 else after_end]
    return (
        bool(before)
        and bool(after.strip())
        and before[-1] not in ".?!:"
        and not _is_list_item(after)
        and not any(_STANDALONE.fullmatch(line.strip()) for line in (before, after))
    )


def _line_start(text: str, offset: int, limit: int) -> int:
    """Where the line holding `offset` starts, hard-wrapped lines joined, at most `limit` characters back: the
    index of the line break before it (-1 at the start of the text)."""
    left = text.rfind("\n", 0, offset)
    while left > 0 and offset - left < limit and _wraps(text, left):
        left = text.rfind("\n", 0, left)
    return left


def _line_end(text: str, offset: int, limit: int) -> int:
    """Where the line holding `offset` ends, hard-wrapped lines joined, at most `limit` characters on."""
    right = text.find("\n", offset)
    while right >= 0 and right - offset < limit and _wraps(text, right):
        right = text.find("\n", right + 1)
    return len(text) if right < 0 else right


def _sentence_around(text: str, start: int, end: int, limit: int) -> str:
    """The sentence holding text[start:end], cut to `limit` characters each side, on one paragraph (a sentence
    hard-wrapped over several lines is read whole)."""
    return _sentence_span(text, start, end, limit)[2]


def _sentence_span(text: str, start: int, end: int, limit: int) -> tuple[int, int, str]:
    """(left, right, sentence) of `_sentence_around`."""
    left = _line_start(text, start, limit)
    base = max(left + 1, start - limit)
    for match in re.finditer(r"[.?!]\s", text[base:start]):
        if _is_sentence_end(text, base + match.start()):
            left = base + match.start()
    left = max(left + 1, start - limit, 0)
    right = _line_end(text, end, limit)
    for match in re.finditer(r"[.?!](?:\s|$)", text[end : min(right, end + limit)]):
        if _is_sentence_end(text, end + match.start()):
            right = end + match.start()
            break
    right = min(right + 1, end + limit, len(text))
    return left, right, re.sub(r"\s*\n\s*", " ", text[left:right].strip())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_list_item(line: str) -> bool:
    return bool(MARKER_START.match(line) or BULLET_START.match(line))


def _previous_sentence(text: str, start: int, limit: int) -> str:
    """The last sentence before `start` that is not itself a reference entry (the list's introduction).

    A mention on a list item ("- Brehmer et al, "Title"", "2. Title by Pan et al.") is introduced by the line that
    leads into the list, not by the item before it: the items at the mention's own indentation (or deeper) and
    the reference entries before it are passed over."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    own_line = text[line_start : len(text) if line_end < 0 else line_end]
    on_item = _is_list_item(own_line)
    before = text[max(0, (line_start if on_item else start) - 3 * limit) : line_start if on_item else start]
    lines = [ln for ln in before.split("\n") if ln.strip()]
    depth = _indent(own_line)
    while lines and (
        MARKER_START.match(lines[-1])
        or looks_like_reference_entry(lines[-1].strip())
        or (on_item and _is_list_item(lines[-1]) and _indent(lines[-1]) >= depth)
    ):
        lines.pop()
    if not lines:
        return ""
    sentences = split_sentences(lines[-1])
    return sentences[-1][-limit:] if sentences else ""


def context_for(text: str, mention: PaperMention, config: MentionConfig) -> str:
    """What the decision reads: the mention's sentence, and for a reference entry the sentences citing its
    marker and the sentence introducing the list."""
    if mention.source != "reference_entry":
        left, _, sentence = _sentence_span(text, mention.start, mention.end, config.context_chars)
        return sentence + " || " + _previous_sentence(text, left, config.context_chars)
    uses = []
    if mention.marker:
        for match in MARKER_IN_TEXT.finditer(text):
            if match.start() >= mention.start - 2 and match.start() <= mention.end:
                continue
            if mention.marker in expand_markers(match.group(1)):
                uses.append(_sentence_around(text, match.start(), match.end(), config.context_chars))
    intro = _previous_sentence(text, mention.start, config.context_chars)
    return " | ".join(uses) + " || " + intro


def expand_markers(group: str) -> set[str]:
    """The markers a bracket's contents cite: "3, 5" -> {3, 5}; "2-4" -> {2, 3, 4}; "a-c" -> {a, b, c}."""
    found = set()
    for part in re.split(r"\s*[,;]\s*", group):
        bounds = re.split(r"\s*[\-\u2013]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit() and int(bounds[1]) - int(bounds[0]) < 50:
            found.update(str(i) for i in range(int(bounds[0]), int(bounds[1]) + 1))
        elif len(bounds) == 2 and re.fullmatch(r"[a-z]", bounds[0]) and re.fullmatch(r"[a-z]", bounds[1]):
            found.update(chr(i) for i in range(ord(bounds[0]), ord(bounds[1]) + 1))
        else:
            found.add(part.strip())
    return found
