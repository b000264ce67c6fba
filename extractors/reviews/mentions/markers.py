"""Bare citation markers: "the authors have to cite, for example, the universal transformer[1], entnet[2]" in a
review that never gives entries [1] and [2] (the reviewer's list was cut, or the markers are the submission's own
references). Each is a work the reviewer points at; without its entry it has no title, so it is a `marker` mention
(the guideline's form `marker`), decided by its sentence (`classify.classify_mention`), and it stays unresolved: it
counts for the review and the submission, not as a candidate paper. (Reading its entry from the submission's own
bibliography, when `--tei`/`--pdfs` give it, would resolve it; not done.)

A marker is `shapes.MARKER_IN_TEXT` with a number in it ("[3]", "[3, 5]", "[2-4]", "[A1]"), in running text:
- not where a line starts (that is a reference entry, or a list item "[1] ..."), not inside a reference entry;
- not an index: right after a one- or two-letter word or a closing bracket with no space ("x[1]", "h_t[2]", "a[i][1]");
- not a marker whose entry the review gives (the entry's mention reads the sentences using its marker);
- right after another mention ("GeoCLIP [11]", "Smith et al. [4]"), it is that mention's marker, not a new mention.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from extractors.reviews.mentions.context import expand_markers
from extractors.reviews.mentions.shapes import MARKER_IN_TEXT, ReviewText, overlaps
from extractors.reviews.records import PaperMention

MARKER_SOURCE = "marker"
# right before "[": a one- or two-character word, a word with an underscore, a closing bracket ("x", "h_t", "a[i]")
_INDEXED = re.compile(r"(?:(?<![A-Za-z0-9_])(?:[A-Za-z][A-Za-z0-9]?|[A-Za-z0-9]*_[A-Za-z0-9_]*)|[\]\)}^$])$")


def add_markers(
    prose: Sequence[PaperMention], review: ReviewText, entries: Sequence[PaperMention]
) -> list[PaperMention]:
    """`prose` with the review's bare markers: a marker right after a prose mention becomes its `marker`; any other
    becomes a `marker` mention."""
    given = {marker for entry in entries if entry.marker for marker in expand_markers(entry.marker)}
    text = review.text
    mentions = sorted(prose, key=lambda m: (m.start, m.end))
    spans = [(m.start, m.end) for m in mentions]  # a marker given to a mention leaves its span as it is
    added: list[PaperMention] = []
    for match in MARKER_IN_TEXT.finditer(text):
        start, end = match.start(), match.end()
        group = match.group(1)
        if not any(c.isdigit() for c in group) or review.is_claimed(start, end):
            continue
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip(" \t-*\u2022>"):
            continue  # a line's first token: an entry or a list item
        if _INDEXED.search(text[max(0, start - 12) : start]):
            continue
        if expand_markers(group) & given or overlaps(start, end, spans):
            continue
        marker = re.sub(r"\s+", "", group)
        before = [i for i, m in enumerate(mentions) if m.end <= start and not text[m.end : start].strip(" ,(")]
        if before and mentions[before[-1]].marker is None:
            mentions[before[-1]] = replace(mentions[before[-1]], marker=marker)
            continue
        added.append(review.mention(start, end, MARKER_SOURCE, marker=marker))
    return sorted([*mentions, *added], key=lambda m: (m.start, m.end))
