"""The context cutter as it was written first, kept as the reference the fast one must equal byte for byte.

It masks the whole paragraph for every marker and walks every sentence of the section for every sentence
context, so it costs the cube of a paragraph's markers: use it on small inputs (tests/test_contexts_linear.py,
bench/contexts.py's `--against`). It knows nothing of the paragraph kinds that carry uncut markers ("heading",
"marker"): give it documents without them, or compare contexts only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from extractors.contexts import ContextConfig
from extractors.records import Context, CounterFn, Mention, Paragraph, ParsedDocument, no_count


def spans_overlap(a: Mention, b: Mention) -> bool:
    """Whether two mentions claim a common character: half-open spans that each start before the other ends.

    A zero-length mention therefore overlaps only a span that strictly contains its position.
    """
    return a.start < b.end and b.start < a.end


def non_overlapping_mentions(mentions: Sequence[Mention]) -> tuple[tuple[Mention, ...], tuple[Mention, ...]]:
    """`(kept, dropped)`: a set of the paragraph's mentions whose spans do not overlap, and the others.

    Rule: linked mentions (with a bib id) first, as many of them as can be kept (interval scheduling: by
    earliest end, then earliest start, then the paragraph's order, keep a mention that overlaps none kept);
    then unlinked mentions, in the same order, where they overlap no kept mention. So a group span that
    holds its members' spans gives way to the members, an unlinked span never costs a linked one a context,
    and of identical spans the first in the paragraph is kept. Both tuples keep the paragraph's order.
    """
    order = sorted(range(len(mentions)), key=lambda k: (mentions[k].bib_id is None, mentions[k].end, mentions[k].start))
    kept_at: list[int] = []
    for k in order:
        if not any(spans_overlap(mentions[k], mentions[j]) for j in kept_at):
            kept_at.append(k)
    keep = set(kept_at)
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


def cut_char_window(
    paragraphs: Sequence[Paragraph], paragraph_index: int, target: Mention, config: ContextConfig
) -> str:
    """Up to `char_window` characters each side of " TARGETCIT " in the document's masked running text.

    Counted on the text with single spaces and cut mid-word where the count ends, as ACL-200 is (see the module
    docstring); paragraphs are joined by `paragraph_separator` and read only as far as the window needs.
    """
    sep = config.paragraph_separator
    window = config.char_window
    masked, t_start, t_end = mask_markers(
        paragraphs[paragraph_index].text, paragraphs[paragraph_index].mentions, target, config
    )

    def masked_paragraph(index: int) -> str:
        return mask_markers(paragraphs[index].text, paragraphs[index].mentions, None, config)[0].strip()

    left = masked[:t_start].lstrip()
    i = paragraph_index - 1
    while len(left) < window and i >= 0:
        part = masked_paragraph(i)
        left = f"{part}{sep}{left}" if part and left else part or left
        i -= 1
    right = masked[t_end:].rstrip()
    j = paragraph_index + 1
    while len(right) < window and j < len(paragraphs):
        part = masked_paragraph(j)
        right = f"{right}{sep}{part}" if part and right else right or part
        j += 1
    left = left[max(0, len(left) - window) :]
    return f"{left} {config.target_token} {right[:window]}"


def _sentence_of(paragraph: Paragraph, mention: Mention) -> int:
    """Index of the sentence holding the mention (the nearest one when it falls between sentences)."""
    for k, (start, end) in enumerate(paragraph.sentences):
        if start <= mention.start < end:
            return k
    distances = [
        (min(abs(mention.start - s), abs(mention.start - e)), k) for k, (s, e) in enumerate(paragraph.sentences)
    ]
    return min(distances)[1] if distances else -1


def cut_sentence_context(
    paragraphs: Sequence[Paragraph], paragraph_index: int, target: Mention, config: ContextConfig
) -> str:
    """The citing sentence with its neighbours from the same section, markers replaced.

    A marker belongs to the sentence it starts in: a sentence's text runs to the end of its last marker and
    starts after a marker begun in the sentence before. The citing sentence always holds the target, also
    when the target starts between sentences or at a sentence's end (it is then stretched to cover it, and
    the markers that start where the target does).
    """
    paragraph = paragraphs[paragraph_index]
    section = paragraph.section_index
    # the section's sentences, as (paragraph index, sentence span), in order
    units: list[tuple[int, tuple[int, int]]] = []
    here = -1
    for p_idx, par in enumerate(paragraphs):
        if par.section_index != section:
            continue
        spans = par.sentences or ((0, len(par.text)),)
        for k, span in enumerate(spans):
            if p_idx == paragraph_index and k == max(_sentence_of(par, target), 0):
                here = len(units)
            units.append((p_idx, span))
    if here < 0:
        return ""
    first = max(0, here - config.sentences_before)
    texts = []
    for u_idx, (p_idx, (start, end)) in enumerate(units[first : here + config.sentences_after + 1], start=first):
        par = paragraphs[p_idx]
        is_here = u_idx == here
        if is_here:
            start, end = min(start, target.start), max(end, target.end)
        start = max([start] + [m.end for m in par.mentions if m.start < start < m.end])
        inside = [m for m in par.mentions if start <= m.start < end or (is_here and m.start == target.start)]
        end = max([end] + [m.end for m in inside])
        local = [Mention(m.start - start, m.end - start, m.text, m.bib_id) for m in inside]
        local_target = None
        if is_here:
            local_target = next(loc for loc, m in zip(local, inside, strict=True) if m is target)
        masked, _, _ = mask_markers(par.text[start:end], local, local_target, config)
        texts.append(masked.strip())
    return " ".join(t for t in texts if t)


def cut_contexts(
    document: ParsedDocument,
    resolved: Mapping[str, str | None],
    config: ContextConfig = ContextConfig(),  # noqa: B008 (frozen, as the library's default)
    count: CounterFn = no_count,
) -> list[Context]:
    """Every context of `document`. `resolved` maps bib ids to database paper ids (None: unresolved).

    Counts `mentions`, `mentions_linked` and one `dropped_<reason>` per mention that gives no context. A
    mention overlapping another (see `non_overlapping_mentions`) is `dropped_overlapping_span` before it is
    looked at further, so `mentions_linked` counts the kept mentions with a bib id; both views are cut from
    paragraphs that carry only the kept mentions.
    """
    bib_ids = {entry.bib_id for entry in document.bib_entries}
    per_pair: Counter[str] = Counter()
    contexts: list[Context] = []
    paragraphs: list[Paragraph] = []
    for paragraph in document.paragraphs:
        kept, dropped = non_overlapping_mentions(paragraph.mentions)
        if dropped:
            count("mentions", len(dropped))
            count("dropped_overlapping_span", len(dropped))
            paragraph = replace(paragraph, mentions=kept)
        paragraphs.append(paragraph)
    for p_idx, paragraph in enumerate(paragraphs):
        for mention in paragraph.mentions:
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
                    char_context=cut_char_window(paragraphs, p_idx, mention, config),
                    sentence_context=cut_sentence_context(paragraphs, p_idx, mention, config),
                    section_heading=paragraph.section_heading,
                    marker=mention.text,
                    citing_date=document.date,
                    citing_year=document.year,
                )
            )
    return contexts
