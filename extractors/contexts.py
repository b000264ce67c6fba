"""Cut citation contexts out of a resolved document.

Every citation whose bib entry resolves to a database paper other than the citing one gets two views:
`char_context` (ACL-200 / arXiv(HAtten): 200 characters either side of " TARGETCIT ", other markers as
OTHERCIT) and `sentence_context` (ArSyTa: the citing sentence and its neighbours in the same section). Every
mention becomes a context or is counted under one `dropped_<reason>`; overlapping markers are reduced to a
non-overlapping set first. How the text is spaced and cut, and why: docs/design.md.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from itertools import pairwise

from mapping.records import Context, CounterFn, Mention, Paragraph, ParsedDocument, no_count


@dataclass(frozen=True)
class ContextConfig:
    char_window: int = 200
    sentences_before: int = 1
    sentences_after: int = 1
    target_token: str = "TARGETCIT"
    other_token: str = "OTHERCIT"
    paragraph_separator: str = " "

    def as_metadata(self) -> dict[str, object]:
        return asdict(self)


def spans_overlap(a: Mention, b: Mention) -> bool:
    """Whether two mentions claim a common character: half-open spans that each start before the other ends.

    A zero-length mention therefore overlaps only a span that strictly contains its position.
    """
    return a.start < b.end and b.start < a.end


def non_overlapping_mentions(mentions: Sequence[Mention]) -> tuple[tuple[Mention, ...], tuple[Mention, ...]]:
    """`(kept, dropped)`: a set of the paragraph's mentions whose spans do not overlap, and the others.

    Linked mentions (with a bib id) first, as many as interval scheduling keeps (by end, start, then order); then
    unlinked ones where they overlap nothing kept. So a group span gives way to its members, an unlinked span never
    costs a linked one a context, and of identical spans the first is kept. Both keep the paragraph's order;
    O(n log n) (docs/design.md).
    """
    if len(mentions) < 2:  # most paragraphs: nothing to overlap
        return tuple(mentions), ()
    order = sorted(range(len(mentions)), key=lambda k: (mentions[k].bib_id is None, mentions[k].end, mentions[k].start))
    first_unlinked = next((p for p, k in enumerate(order) if mentions[k].bib_id is None), len(order))
    keep: set[int] = set()
    linked: list[Mention] = []
    reach = -1  # the largest end kept so far in the group being read
    for k in order[:first_unlinked]:
        m = mentions[k]
        if not m.start < reach:
            keep.add(k)
            linked.append(m)
            reach = max(reach, m.end)
    linked.sort(key=lambda m: (m.start, m.end))
    starts = [m.start for m in linked]
    ends = [m.end for m in linked]
    reach = -1
    for k in order[first_unlinked:]:
        m = mentions[k]
        last = bisect_left(starts, m.end) - 1  # the kept linked span that starts last before this one ends
        if (last >= 0 and ends[last] > m.start) or m.start < reach:
            continue
        keep.add(k)
        reach = max(reach, m.end)
    kept = tuple(m for k, m in enumerate(mentions) if k in keep)
    dropped = tuple(m for k, m in enumerate(mentions) if k not in keep)
    return kept, dropped


_WHITESPACE_RUN = re.compile(r"\s+")


def squeeze_whitespace(text: str) -> str:
    """`text` with every run of whitespace (newlines and no-break spaces included) as one space."""
    return _WHITESPACE_RUN.sub(" ", text)


def mask_markers(
    text: str, mentions: Sequence[Mention], target: Mention | None, config: ContextConfig
) -> tuple[str, int, int]:
    """`text` with markers replaced, `target` by " TARGETCIT ", the others by "OTHERCIT", and runs of whitespace
    squeezed to one space.

    Returns the masked text and the span the target's " TARGETCIT " occupies in it ((-1, -1) without one): the
    whitespace that stood beside the marker goes into that span, so no two spaces follow each other. A mention
    overlapping an earlier one is skipped; `target` (matched by identity) must not be such a mention and must be
    one of `mentions`, else ValueError: pass `non_overlapping_mentions(...)[0]`.
    """
    pieces: list[str] = []
    cursor = 0
    target_at = -1
    token = f" {config.target_token} "
    for mention in sorted(mentions, key=lambda m: (m.start, m.end)):
        if mention.start < cursor:  # overlapping spans: keep the first
            continue
        pieces.append(text[cursor : mention.start])
        if mention is target:
            target_at = len(pieces)
            pieces.append(token)
        else:
            before = next((piece[-1] for piece in reversed(pieces) if piece), "")
            after = text[mention.end : mention.end + 1]
            pad_left = " " if before.isalnum() else ""
            pad_right = " " if after.isalnum() else ""
            pieces.append(f"{pad_left}{config.other_token}{pad_right}")
        cursor = mention.end
    pieces.append(text[cursor:])
    if target is None:
        return squeeze_whitespace("".join(pieces)), -1, -1
    if target_at < 0:
        raise ValueError(
            f"target mention {target!r} overlaps an earlier mention or is not one of the mentions given; "
            "keep only non_overlapping_mentions() before masking"
        )
    left = squeeze_whitespace("".join(pieces[:target_at])).rstrip()
    right = squeeze_whitespace("".join(pieces[target_at + 1 :])).lstrip()
    return f"{left}{token}{right}", len(left), len(left) + len(token)


# Paragraph kinds whose markers are counted as mentions and dropped, never cut: their text is no running text, so
# it is neither a window nor a neighbour sentence (a marker in a section heading; markers nested in another).
UNCUT_KINDS = {"heading": "dropped_marker_in_heading", "marker": "dropped_nested_marker"}


@dataclass(frozen=True)
class _MaskedParagraph:
    """A paragraph whose mentions do not overlap as `mask_markers(text, mentions, None)` gives it (`text`: every
    marker OTHERCIT, whitespace runs squeezed), with where each marker's OTHERCIT begins and ends in it (by the
    paragraph's mention order; `starts_in_order`, `ends_in_order`: by (start, end) order, as `_MentionIndex` sorts
    them).

    Masking with a target gives the same text on each side of it: the markers before the target are padded alike,
    and the only one that can differ after it (the next, when nothing stands between) differs by a leading space
    that the stripping beside " TARGETCIT " takes off. So one masking serves every target of the paragraph.

    `plain`: the paragraph's text has no whitespace to squeeze (single spaces only, as the TEI parser writes it)
    and the OTHERCIT token none either, so the text between markers stands in `text` character for character and
    a sentence's masking is a slice of it (`_ContextCutter._sentence_text`).
    """

    text: str
    other_start: tuple[int, ...]
    other_end: tuple[int, ...]
    starts_in_order: tuple[int, ...]
    ends_in_order: tuple[int, ...]
    plain: bool

    @classmethod
    def of(cls, paragraph: Paragraph, config: ContextConfig) -> _MaskedParagraph:
        text, mentions = paragraph.text, paragraph.mentions
        token = config.other_token
        plain = bool(token) and token.isprintable() and " " not in token and _needs_no_squeezing(text)
        parts: list[str] = []
        length = 0
        starts = [0] * len(mentions)
        ends = [0] * len(mentions)
        squeeze = _as_it_is if plain else squeeze_whitespace

        def add(raw: str) -> None:
            # squeezed piece by piece: a run of whitespace across pieces is one space (squeeze_whitespace of
            # the joined text)
            nonlocal length
            squeezed = squeeze(raw)
            if squeezed[:1] == " " and parts and parts[-1][-1:] == " ":
                squeezed = squeezed[1:]
            if squeezed:
                parts.append(squeezed)
                length += len(squeezed)

        cursor = 0
        order = sorted(range(len(mentions)), key=lambda k: (mentions[k].start, mentions[k].end))
        for k in order:
            mention = mentions[k]
            add(text[cursor : mention.start])
            before = parts[-1][-1] if parts else ""  # squeezed or not, a space is no letter or digit
            after = text[mention.end : mention.end + 1]
            starts[k] = length
            add(f"{' ' if before.isalnum() else ''}{token}{' ' if after.isalnum() else ''}")
            ends[k] = length
            cursor = mention.end
        add(text[cursor:])
        in_order = (tuple(starts[k] for k in order), tuple(ends[k] for k in order))
        return cls("".join(parts), tuple(starts), tuple(ends), *in_order, plain)


def _needs_no_squeezing(text: str) -> bool:
    """Whether `squeeze_whitespace(text)` is `text`: no double space, and no whitespace but the space (every other
    whitespace character is unprintable)."""
    return text.isprintable() and "  " not in text


def _as_it_is(text: str) -> str:
    return text


@dataclass(frozen=True)
class _MentionIndex:
    """A paragraph's kept mentions sorted by (start, end), the paragraph's order among equals (as `mask_markers`
    sorts them), with `rank`, each mention's place in that order by the paragraph's order. Kept mentions do not
    overlap, so in that order their ends rise too."""

    sorted_mentions: tuple[Mention, ...]
    starts: tuple[int, ...]
    rank: tuple[int, ...]

    @classmethod
    def of(cls, paragraph: Paragraph) -> _MentionIndex:
        mentions = paragraph.mentions
        order = sorted(range(len(mentions)), key=lambda k: (mentions[k].start, mentions[k].end))
        rank = [0] * len(mentions)
        for position, k in enumerate(order):
            rank[k] = position
        in_order = tuple(mentions[k] for k in order)
        return cls(in_order, tuple(m.start for m in in_order), tuple(rank))


def _in_order(sentences: Sequence[tuple[int, int]]) -> bool:
    """Whether sentences are as the parsers give them: each non-empty, in order, none overlapping the next."""
    return all(s < e for s, e in sentences) and all(a[1] <= b[0] for a, b in pairwise(sentences))


def _sentence_of(sentences: Sequence[tuple[int, int]], position: int, in_order: bool) -> int:
    """Index of the first sentence holding `position`, else of the nearest one (the first of equals); -1 without
    sentences. Sentences `_in_order` are searched by bisection (the nearest is then the one just before or just
    after), any others one by one."""
    if in_order:
        k = bisect_right(sentences, (position, float("inf"))) - 1
        if k >= 0 and position < sentences[k][1]:
            return k
        near = [j for j in (k, k + 1) if 0 <= j < len(sentences)]
    else:
        for k, (start, end) in enumerate(sentences):
            if start <= position < end:
                return k
        near = list(range(len(sentences)))
    distances = [(min(abs(position - sentences[j][0]), abs(position - sentences[j][1])), j) for j in near]
    return min(distances)[1] if distances else -1


class _ContextCutter:
    """Both views of any target of one document, each in time proportional to what it shows.

    Every paragraph is masked once, on first need (`_MaskedParagraph`): a target's window is then read off its
    paragraph's masked text, and neighbours add at most a window's worth each. A section's sentences are listed
    once, when a target in it first needs them (`section_units`); a sentence finds its markers by bisection
    (`_MentionIndex`). `paragraphs` carry only kept mentions.
    """

    def __init__(self, paragraphs: Sequence[Paragraph], config: ContextConfig) -> None:
        self.paragraphs = paragraphs
        self.config = config
        self._masked: dict[int, _MaskedParagraph] = {}
        self._stripped: dict[int, tuple[str, str]] = {}
        self._indexes: dict[int, _MentionIndex] = {}
        self._in_order: dict[int, bool] = {}
        self._sections: dict[int, list[int]] = {}  # each section's paragraphs, in document order
        for p_idx, paragraph in enumerate(paragraphs):
            self._sections.setdefault(paragraph.section_index, []).append(p_idx)
        # each listed section's sentences in document order, as (paragraph index, span), and where each of its
        # paragraphs' begin
        self._units: dict[int, list[tuple[int, tuple[int, int]]]] = {}
        self._first_unit: dict[int, int] = {}

    def section_units(self, section: int) -> list[tuple[int, tuple[int, int]]]:
        """The section's sentences in document order, as (paragraph index, span); a paragraph without sentences
        is one."""
        if section not in self._units:
            units: list[tuple[int, tuple[int, int]]] = []
            for p_idx in self._sections[section]:
                paragraph = self.paragraphs[p_idx]
                self._first_unit[p_idx] = len(units)
                units.extend((p_idx, span) for span in paragraph.sentences or ((0, len(paragraph.text)),))
            self._units[section] = units
        return self._units[section]

    def masked(self, p_idx: int) -> _MaskedParagraph:
        if p_idx not in self._masked:
            self._masked[p_idx] = _MaskedParagraph.of(self.paragraphs[p_idx], self.config)
        return self._masked[p_idx]

    def sentence_of(self, p_idx: int, position: int) -> int:
        sentences = self.paragraphs[p_idx].sentences
        if p_idx not in self._in_order:
            self._in_order[p_idx] = _in_order(sentences)
        return _sentence_of(sentences, position, self._in_order[p_idx])

    def index(self, p_idx: int) -> _MentionIndex:
        if p_idx not in self._indexes:
            self._indexes[p_idx] = _MentionIndex.of(self.paragraphs[p_idx])
        return self._indexes[p_idx]

    def _ends(self, p_idx: int) -> tuple[str, str]:
        """The first and the last `char_window` characters of the masked paragraph, stripped: what it gives a
        window it neighbours (a window never reads further into it)."""
        if p_idx not in self._stripped:
            whole = self.masked(p_idx).text.strip()
            window = max(self.config.char_window, 0)
            self._stripped[p_idx] = (whole[:window], whole[max(0, len(whole) - window) :] if window else "")
        return self._stripped[p_idx]

    def char_context(self, p_idx: int, m_idx: int) -> str:
        """Up to `char_window` characters each side of " TARGETCIT " in the document's masked running text.

        Counted on the text with single spaces and cut mid-word where the count ends, as ACL-200 is (see the module
        docstring); paragraphs are joined by `paragraph_separator` and read only as far as the window needs.
        """
        sep, window = self.config.paragraph_separator, self.config.char_window
        masked = self.masked(p_idx)
        text = masked.text
        # the paragraph's own text before the marker, both ends stripped (squeezed: one space at most each end)
        first = 1 if text[:1] == " " else 0
        stop = masked.other_start[m_idx]
        stop -= 1 if stop and text[stop - 1] == " " else 0
        left = text[max(first, stop - window) : stop] if window > 0 else ""
        i = p_idx - 1
        while len(left) < window and i >= 0:
            part = self._ends(i)[1]
            left = f"{part}{sep}{left}" if part and left else part or left
            i -= 1
        # and after it
        begin = masked.other_end[m_idx]
        begin += 1 if text[begin : begin + 1] == " " else 0
        last = len(text) - (1 if text[-1:] == " " else 0)
        right = text[begin : last if window < 0 else min(last, begin + window)]
        j = p_idx + 1
        while len(right) < window and j < len(self.paragraphs):
            part = self._ends(j)[0]
            right = f"{right}{sep}{part}" if part and right else right or part
            j += 1
        left = left[max(0, len(left) - window) :]
        return f"{left} {self.config.target_token} {right[:window]}"

    def sentence_context(self, p_idx: int, m_idx: int) -> str:
        """The citing sentence with its neighbours from the same section, markers replaced.

        A marker belongs to the sentence it starts in: a sentence's text runs to the end of its last marker and
        starts after a marker begun in the sentence before. The citing sentence always holds the target, also
        when the target starts between sentences or at a sentence's end (it is then stretched to cover it, and
        the markers that start where the target does).
        """
        paragraph = self.paragraphs[p_idx]
        target = paragraph.mentions[m_idx]
        units = self.section_units(paragraph.section_index)
        here = self._first_unit[p_idx] + max(self.sentence_of(p_idx, target.start), 0)
        first = max(0, here - self.config.sentences_before)
        texts = []
        for u_idx, (q_idx, (start, end)) in enumerate(
            units[first : here + self.config.sentences_after + 1], start=first
        ):
            index = self.index(q_idx)
            starts = index.starts
            is_here = u_idx == here
            if is_here:
                start, end = min(start, target.start), max(end, target.end)
            before = bisect_left(starts, start) - 1  # the marker begun last before the sentence: it may run into it
            if before >= 0 and index.sorted_mentions[before].end > start:
                start = index.sorted_mentions[before].end
            lo = bisect_left(starts, start)
            hi = bisect_left(starts, end)
            if is_here and target.start >= end:  # a target at the sentence's very end, with markers beside it
                hi = bisect_right(starts, target.start)
            if hi > lo:
                end = max(end, index.sorted_mentions[hi - 1].end)
            position = None
            if is_here:
                position = index.rank[m_idx]
                if not lo <= position < hi:
                    raise ValueError(f"target {target!r} falls outside its own sentence {(start, end)}")
            texts.append(self._sentence_text(q_idx, index, start, end, lo, hi, position))
        return " ".join(t for t in texts if t)

    def _sentence_text(
        self, q_idx: int, index: _MentionIndex, start: int, end: int, lo: int, hi: int, target: int | None
    ) -> str:
        """`text[start:end]` of paragraph `q_idx` masked, stripped: the markers `lo:hi` (in `index`'s order) as
        OTHERCIT, the one at `target` (None: none) as " TARGETCIT ".

        A plain paragraph's (`_MaskedParagraph.plain`) is a slice of its masked text: the text between markers
        stands there as it is, so an offset between markers moves by what the markers before it became. The slice
        and `mask_markers` of the sentence differ only in the padding of a marker at either end, and of the one
        right after the target, which the stripping takes off. Any other paragraph is masked anew."""
        masked = self.masked(q_idx)
        if masked.plain:
            ends = masked.ends_in_order
            mentions = index.sorted_mentions

            def moved(offset: int, k: int) -> int:  # `offset` lies after the first k markers, before the others
                return offset if k == 0 else ends[k - 1] + offset - mentions[k - 1].end

            if target is None:
                return masked.text[moved(start, lo) : moved(end, hi)].strip() if start < end else ""
            before = masked.text[moved(start, lo) : masked.starts_in_order[target]].strip()
            after = masked.text[ends[target] : moved(end, hi)].strip()
            return f"{before} {self.config.target_token} {after}".strip()
        paragraph = self.paragraphs[q_idx]
        inside = index.sorted_mentions[lo:hi]
        local = [Mention(m.start - start, m.end - start, m.text, m.bib_id) for m in inside]
        local_target = local[target - lo] if target is not None else None
        text, _, _ = mask_markers(paragraph.text[start:end], local, local_target, self.config)
        return text.strip()


def cut_contexts(
    document: ParsedDocument,
    resolved: Mapping[str, str | None],
    config: ContextConfig = ContextConfig(),
    count: CounterFn = no_count,
    citing_fields: Mapping[str, object] | None = None,
) -> list[Context]:
    """Every context of `document`. `resolved` maps bib ids to database paper ids (None: unresolved);
    `citing_fields`, further fields of every `Context` (the citing paper's taxonomy), given as it is made.

    Counts `mentions`, `mentions_linked` and one `dropped_<reason>` per mention that gives no context. The
    markers of a heading or nested in another marker (`UNCUT_KINDS`) are dropped first, and their paragraphs
    left out of both views; a mention overlapping another (see `non_overlapping_mentions`) is
    `dropped_overlapping_span` before it is looked at further, so `mentions_linked` counts the kept mentions
    with a bib id; both views are cut from paragraphs that carry only the kept mentions.
    """
    extra = dict(citing_fields or {})
    bib_ids = {entry.bib_id for entry in document.bib_entries}
    per_pair: Counter[str] = Counter()
    contexts: list[Context] = []
    paragraphs: list[Paragraph] = []
    for paragraph in document.paragraphs:
        if paragraph.kind in UNCUT_KINDS:
            if paragraph.mentions:
                count("mentions", len(paragraph.mentions))
                count(UNCUT_KINDS[paragraph.kind], len(paragraph.mentions))
            continue
        kept, dropped = non_overlapping_mentions(paragraph.mentions)
        if dropped:
            count("mentions", len(dropped))
            count("dropped_overlapping_span", len(dropped))
            paragraph = replace(paragraph, mentions=kept)
        paragraphs.append(paragraph)
    cutter = _ContextCutter(paragraphs, config)
    for p_idx, paragraph in enumerate(paragraphs):
        for m_idx, mention in enumerate(paragraph.mentions):
            count("mentions", 1)
            if mention.bib_id is None:
                count("dropped_unlinked_mention", 1)
                continue
            count("mentions_linked", 1)
            if mention.bib_id not in bib_ids:
                count("dropped_dangling_link", 1)
                continue
            cited = resolved.get(mention.bib_id)
            if cited is None:
                count("dropped_unresolved_reference", 1)
                continue
            if cited == document.paper_id:
                count("dropped_self_citation", 1)
                continue
            k = per_pair[cited]
            per_pair[cited] += 1
            contexts.append(
                Context(
                    context_id=f"{document.paper_id}_{cited}_{k}",
                    citing_id=document.paper_id,
                    cited_id=cited,
                    bib_id=mention.bib_id,
                    char_context=cutter.char_context(p_idx, m_idx),
                    sentence_context=cutter.sentence_context(p_idx, m_idx),
                    section_heading=paragraph.section_heading,
                    marker=mention.text,
                    citing_date=document.date,
                    citing_year=document.year,
                    **extra,
                )
            )
    return contexts
