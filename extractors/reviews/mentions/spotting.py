"""Database title spotting: the papers of the database whose titles a review's text contains, however the
reviewer typed or framed them (dictionary-based entity linking).

A recommended paper has to resolve against the paper database anyway, so the database's own titles are looked
for in the text instead of cutting a title out of it first. Each line of the cleaned review (a long line: each
sentence) is a *window*, resolved as a bibliography's raw reference string is (`mapping.raw_strings`, through
`InMemoryMatcher`): MinHash-LSH over title-sized segments proposes database titles, and a title is found when a
span of the window that begins and ends at a cut (punctuation, a quote, a bracket, a year) has LCS similarity
>= `MatchConfig.min_similarity` (0.9) with it, divided by the longer of the two. A found span is blanked out
and the window resolved again, so that one line can give several papers ("e.g. A, B and C").

Precision comes from the raw-string path's own guards: a database title shorter than
`RawStringConfig.min_title_words` words (3) or `min_title_chars` (20) is never looked for inside a string
("Deep learning" or "Mixture of experts" occur as ordinary phrases), and a span must begin and end at cuts,
so a title-like phrase inside running text without punctuation around it is not taken.

What a spotted span becomes (`merge_spotted`): a span inside a mention the rules found, whose own title or
identifiers do not resolve, gives that mention its title (the reviewer's words, not the database's); a span
inside a mention that resolves to another paper is a second paper of it; a span outside every mention is a new
mention (`source` `database_title`). All are then classified by the same rules (`classify`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from extractors.reviews.mentions.context import split_sentences
from extractors.reviews.mentions.references import BULLET_START, MARKER_START, _normalize_marker
from extractors.reviews.mentions.shapes import section_at
from extractors.reviews.records import PaperMention
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import lcs_similarity
from mapping.raw_strings import best_span_similarity, parse_raw_reference
from mapping.records import BibEntry
from mapping.titles import normalize_title

DATABASE_TITLE = "database_title"  # `PaperMention.source` of a mention only the database found


@dataclass(frozen=True)
class SpotConfig:
    """Spotting parameters (the similarity threshold and the title-length floor are the matcher's)."""

    max_window_chars: int = 1000  # a longer line is read sentence by sentence
    max_titles_per_window: int = 8  # rounds of blank-out-and-resolve-again per window


@dataclass(frozen=True)
class SpottedTitle:
    """A span of the text (`start`, `end`) whose words are a database paper's title (`paper_id`, `title` as the
    database normalises it), at LCS similarity `score`."""

    start: int
    end: int
    paper_id: str
    title: str
    score: float


def _windows(text: str, config: SpotConfig) -> list[tuple[int, str]]:
    """(offset, text) of every non-empty line; a line longer than `max_window_chars`, of each sentence."""
    windows: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        if line.strip():
            if len(line) <= config.max_window_chars:
                windows.append((offset, line))
            else:
                at = 0
                for sentence in split_sentences(line):
                    at = line.find(sentence, at)
                    windows.append((offset + at, sentence))
                    at += len(sentence)
        offset += len(line) + 1
    return windows


def _fold(character: str) -> str:
    """One character as `normalize_title` folds it ("ß" "ss", "é" "e"), a character it drops a space."""
    if character.isascii():
        return character.lower() if character.isalnum() else " "
    return normalize_title(character) or " "


def locate_normalized(window: str, normalized: str) -> tuple[int, int] | None:
    """Where in `window` the words of `normalized` (a normalised title or span) are written, as character
    offsets of `window`; None when they are not there in that form (a LaTeX remnant, a cut-off tail)."""
    folded, owner = [], []
    for index, character in enumerate(window):
        for c in _fold(character):
            if c == " " and folded and folded[-1] == " ":
                continue
            folded.append(c)
            owner.append(index)
    found = re.search(rf"(?<![0-9a-z]){re.escape(normalized)}(?![0-9a-z])", "".join(folded))
    if not found:
        return None
    return owner[found.start()], owner[found.end() - 1] + 1


# Where a title may begin or end in a review besides the raw-string cuts: after a colon ("Kim J, Lee H: Title"), at
# a dash between spaces ("Title - a short version"), at round brackets ("Title (Kim 2021)"). A span may still reach
# across any of them (a title with a colon), so more cuts only add spans to verify.
_MORE_CUTS = re.compile(r":(?=\s)|(?<=\s)[-\u2013\u2014](?=\s)|[()]")


class DatabaseTitleSpotter:
    """Finds the database's titles in review texts (module docstring); `matcher` holds the database."""

    def __init__(self, matcher: InMemoryMatcher, config: SpotConfig = SpotConfig()) -> None:
        self.matcher = matcher
        self.config = config
        self._titles = dict(zip(matcher.index.paper_ids, matcher.index.titles, strict=True))

    def spot(self, text: str) -> list[SpottedTitle]:
        """Every database title in `text`, in text order, spans not overlapping."""
        windows = _windows(_MORE_CUTS.sub(";", text), self.config)  # the same length: offsets hold
        pending = {i: (offset, window) for i, (offset, window) in enumerate(windows)}
        found: list[SpottedTitle] = []
        for _ in range(self.config.max_titles_per_window):
            if not pending:
                break
            keys = list(pending)
            entries = [BibEntry(bib_id=str(i), raw=pending[i][1]) for i in keys]
            again: dict[int, tuple[int, str]] = {}
            for i, resolution in zip(keys, self.matcher.resolve_many(entries), strict=True):
                if resolution.paper_id is None:
                    continue
                offset, window = pending[i]
                title = self._titles[resolution.paper_id]
                span = self._span_of(title, window)
                if span is None:
                    continue
                start, end = span
                found.append(SpottedTitle(offset + start, offset + end, resolution.paper_id, title, resolution.score))
                again[i] = (offset, window[:start] + ";" + " " * (end - start - 1) + window[end:])
            pending = again
        return sorted(found, key=lambda s: (s.start, s.end))

    def _span_of(self, title: str, window: str) -> tuple[int, int] | None:
        """The characters of `window` that the database title was verified on: its best cut-delimited span."""
        reference = parse_raw_reference(window)
        score, (start, end) = best_span_similarity(title, reference, self.matcher.config.min_similarity)
        if score < self.matcher.config.min_similarity:
            return None
        return locate_normalized(window, trimmed_span(title, reference.text[start:end]))


def trimmed_span(title: str, span: str, most: int = 3) -> str:
    """`span` (normalised) less the words at either end that only lower its LCS similarity with `title`: a span
    ends at a cut, and round brackets are none ("Title (Kim" before a year), so a few words beside the title may
    ride along. Up to `most` words a side; the longest span among the best is kept."""
    words = span.split()
    best, kept = lcs_similarity(title, span), span
    for left in range(min(most, len(words) - 1) + 1):
        for right in range(min(most, len(words) - 1 - left) + 1):
            candidate = " ".join(words[left : len(words) - right])
            similarity = lcs_similarity(title, candidate)
            if similarity > best:
                best, kept = similarity, candidate
    return kept


def _overlaps(mention: PaperMention, spot: SpottedTitle) -> bool:
    return mention.start < spot.end and spot.start < mention.end


def merge_spotted(
    text: str,
    mentions: Sequence[PaperMention],
    spots: Sequence[SpottedTitle],
    sections: Sequence[tuple[int, str]],
    matcher: InMemoryMatcher,
) -> list[PaperMention]:
    """The rules' mentions with what the spotted titles add (module docstring), in text order, unclassified
    (contexts are the caller's: `find.find_mentions` cuts them after this)."""
    merged = list(mentions)
    own = [matcher.resolve(_entry(m)).paper_id if _entry(m) else None for m in merged]
    titled_by_spot: set[int] = set()
    added: list[PaperMention] = []
    for spot in spots:
        span_text = text[spot.start : spot.end].strip()
        around = [i for i, m in enumerate(merged) if _overlaps(m, spot)]
        if any(own[i] == spot.paper_id or _same_title(merged[i].title, span_text) for i in around):
            continue
        unresolved = [i for i in around if own[i] is None and i not in titled_by_spot]
        if unresolved:
            i = unresolved[0]
            merged[i] = replace(merged[i], title=span_text)
            titled_by_spot.add(i)
        elif around:
            added.append(replace(merged[around[0]], start=spot.start, end=spot.end, text=span_text, title=span_text))
        else:
            added.append(_new_mention(text, spot, span_text, sections))
    return sorted([*merged, *added], key=lambda m: (m.start, m.end))


# What may stand before a title on a line of a reference list: a marker (removed first), an author list ("Saharia
# et al.,", "Choi, Jungwook, et al."), a year; no word in lower case but the connectors of a list of names.
_NAME_CONNECTORS = frozenset("et al and by in von van de der den da di del la le".split())
_WORD = re.compile(r"[^\W\d_]+")


def _names_only(before: str) -> bool:
    return all(w[0].isupper() or w in _NAME_CONNECTORS for w in _WORD.findall(before))


def _new_mention(
    text: str, spot: SpottedTitle, span_text: str, sections: Sequence[tuple[int, str]], max_tail_chars: int = 200
) -> PaperMention:
    """A spotted title outside every mention. On a line that is a reference in all but the rules' shape (a marker
    and authors at most before the title, a venue or note after it: "3. Title [2022, CVPR]", "Do as I can, not as
    I say: Title. arXiv preprint ..."), a `reference_entry` of that line, read as the rules read a reviewer's
    reference list; elsewhere, and for a title alone on its line that no lead-in ending in a colon introduces (as
    likely a heading: "Summary of the discussion"), a `database_title` mention of the span."""
    line_start = text.rfind("\n", 0, spot.start) + 1
    line_end = text.find("\n", spot.end)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    marker = MARKER_START.match(line)
    body_start = line_start + (marker.end() if marker else 0)
    before, after = text[body_start : spot.start], text[spot.end : line_end]
    section = section_at(sections, spot.start)
    bare = not marker and not BULLET_START.match(line) and not before.strip() and not after.strip(" .,;")
    listed = not bare or _in_a_list(text, line_start)
    if listed and _names_only(before) and len(before.strip()) <= 60 and len(after.strip()) <= max_tail_chars:
        return PaperMention(
            line_start,
            line_end,
            line.strip(),
            "reference_entry",
            title=span_text,
            marker=_normalize_marker(marker.group(1)) if marker and marker.group(1) else None,
            section=section,
        )
    return PaperMention(spot.start, spot.end, span_text, DATABASE_TITLE, title=span_text, section=section)


def _in_a_list(text: str, line_start: int) -> bool:
    """Is the line at `line_start` an item of a list: under a lead-in ending in a colon (blank lines between), or
    right below a short line that is no sentence (the item before it)?"""
    above = text[: max(line_start - 1, 0)]
    if above.rstrip().endswith(":"):
        return True
    previous = above[above.rfind("\n") + 1 :].strip()
    return bool(previous) and len(previous.split()) <= 25 and not previous.endswith((".", "?", "!"))


def _entry(mention: PaperMention) -> BibEntry | None:
    """What the matcher resolves a mention by, as the pipeline (and the lab's scoring) do; None when the mention
    has nothing to resolve."""
    raw = mention.text if mention.source == "reference_entry" else None
    if not (mention.title or mention.arxiv_id or mention.doi or raw):
        return None
    return BibEntry("m", title=mention.title, year=mention.year, doi=mention.doi, arxiv_id=mention.arxiv_id, raw=raw)


def _same_title(title: str | None, span_text: str) -> bool:
    a, b = normalize_title(title), normalize_title(span_text)
    return bool(a and b) and lcs_similarity(a, b) >= 0.9
