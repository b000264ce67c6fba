"""The context cutter by its definition, one marker at a time: what the linear cutter (`extractors/contexts.py`)
must give byte for byte.

Overlaps are settled by the greedy rule over plain character sets; every target masks its whole paragraph anew
with `extractors.contexts.mask_markers` (the masking rule itself, checked on hand-made text in
tests/test_context_text.py), and every sentence context walks every sentence of the section. It costs the cube
of a paragraph's markers: use it on small inputs (tests/test_contexts_linear.py, tests/test_context_overlaps.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from extractors.contexts import ContextConfig, mask_markers
from mapping.records import Mention, Paragraph, ParsedDocument

# The paragraph kinds whose markers are counted and dropped, never read, and the reason each is dropped for.
UNCUT_KINDS = {"heading": "dropped_marker_in_heading", "marker": "dropped_nested_marker"}


def overlap(a: Mention, b: Mention) -> bool:
    """A character both spans hold, or a zero-length mention strictly inside the other's span."""
    if set(range(a.start, a.end)) & set(range(b.start, b.end)):
        return True
    return (a.start == a.end and b.start < a.start < b.end) or (b.start == b.end and a.start < b.start < a.end)


def non_overlapping_mentions(mentions: Sequence[Mention]) -> tuple[tuple[Mention, ...], tuple[Mention, ...]]:
    """`(kept, dropped)`, both in the paragraph's order: linked mentions before unlinked ones, each by end, then
    start, then the paragraph's order, kept where they overlap none kept before them."""
    order = sorted(range(len(mentions)), key=lambda k: (mentions[k].bib_id is None, mentions[k].end, mentions[k].start))
    kept_at: list[int] = []
    for k in order:
        if all(not overlap(mentions[k], mentions[j]) for j in kept_at):
            kept_at.append(k)
    return (
        tuple(mentions[k] for k in sorted(kept_at)),
        tuple(m for k, m in enumerate(mentions) if k not in kept_at),
    )


def char_window(paragraphs: Sequence[Paragraph], p_idx: int, target: Mention, config: ContextConfig) -> str:
    """`char_window` characters each side of " TARGETCIT " in the running text: the target's paragraph masked
    around it, then whole masked neighbours joined by `paragraph_separator` until the window is full."""
    masked, t_start, t_end = mask_markers(paragraphs[p_idx].text, paragraphs[p_idx].mentions, target, config)

    def neighbour(k: int) -> str:
        return mask_markers(paragraphs[k].text, paragraphs[k].mentions, None, config)[0].strip()

    before, after = [masked[:t_start].lstrip()], [masked[t_end:].rstrip()]
    k = p_idx
    while len(config.paragraph_separator.join(p for p in before if p)) < config.char_window and k > 0:
        k -= 1
        before.insert(0, neighbour(k))
    k = p_idx
    while len(config.paragraph_separator.join(p for p in after if p)) < config.char_window and k < len(paragraphs) - 1:
        k += 1
        after.append(neighbour(k))
    left = config.paragraph_separator.join(p for p in before if p)
    right = config.paragraph_separator.join(p for p in after if p)
    return f"{left[max(0, len(left) - config.char_window) :]} {config.target_token} {right[: config.char_window]}"


def _sentence_of(paragraph: Paragraph, mention: Mention) -> int:
    """Index of the sentence holding the mention's start (the nearest one when it falls between sentences)."""
    for k, (start, end) in enumerate(paragraph.sentences):
        if start <= mention.start < end:
            return k
    distances = [
        (min(abs(mention.start - s), abs(mention.start - e)), k) for k, (s, e) in enumerate(paragraph.sentences)
    ]
    return min(distances)[1] if distances else -1


def sentence_context(paragraphs: Sequence[Paragraph], p_idx: int, target: Mention, config: ContextConfig) -> str:
    """The citing sentence and its neighbours in the section, markers masked. A marker belongs to the sentence it
    starts in; the citing sentence is stretched to hold the target and the markers starting where it does."""
    section = paragraphs[p_idx].section_index
    units = [
        (q_idx, k, span)
        for q_idx, par in enumerate(paragraphs)
        if par.section_index == section
        for k, span in enumerate(par.sentences or ((0, len(par.text)),))
    ]
    citing = max(_sentence_of(paragraphs[p_idx], target), 0)
    here = next(u_idx for u_idx, (q_idx, k, _) in enumerate(units) if (q_idx, k) == (p_idx, citing))
    texts = []
    for u_idx in range(max(0, here - config.sentences_before), min(len(units), here + config.sentences_after + 1)):
        q_idx, _, (start, end) = units[u_idx]
        par = paragraphs[q_idx]
        if u_idx == here:
            start, end = min(start, target.start), max(end, target.end)
        start = max([start] + [m.end for m in par.mentions if m.start < start < m.end])
        inside = [m for m in par.mentions if start <= m.start < end or (u_idx == here and m.start == target.start)]
        end = max([end] + [m.end for m in inside])
        moved = [Mention(m.start - start, m.end - start, m.text, m.bib_id) for m in inside]
        local_target = next(new for new, m in zip(moved, inside, strict=True) if m is target) if u_idx == here else None
        text, _, _ = mask_markers(par.text[start:end], moved, local_target, config)
        texts.append(text.strip())
    return " ".join(t for t in texts if t)


def contexts_by_marker(
    document: ParsedDocument, resolved: Mapping[str, str | None], config: ContextConfig
) -> tuple[list[tuple], dict[str, int]]:
    """`((context id, cited id, bib id, marker, section heading, char context, sentence context) per context,
    counts)`, the counts named as `extractors.contexts.cut_contexts` names them."""
    bib_ids = {entry.bib_id for entry in document.bib_entries}
    counts: Counter[str] = Counter()
    paragraphs = []
    for par in document.paragraphs:
        if par.kind in UNCUT_KINDS:
            counts.update({"mentions": len(par.mentions), UNCUT_KINDS[par.kind]: len(par.mentions)})
            continue
        kept, dropped = non_overlapping_mentions(par.mentions)
        counts.update({"mentions": len(dropped), "dropped_overlapping_span": len(dropped)})
        paragraphs.append(replace(par, mentions=kept))

    def fate(mention: Mention) -> str | None:
        """The drop reason of a kept mention, None for one that gives a context."""
        if mention.bib_id is None:
            return "dropped_unlinked_mention"
        if mention.bib_id not in bib_ids:
            return "dropped_dangling_link"
        if resolved.get(mention.bib_id) is None:
            return "dropped_unresolved_reference"
        return "dropped_self_citation" if resolved[mention.bib_id] == document.paper_id else None

    contexts = []
    for p_idx, par in enumerate(paragraphs):
        for mention in par.mentions:
            reason = fate(mention)
            counts.update(["mentions"] + (["mentions_linked"] if mention.bib_id is not None else []))
            if reason is not None:
                counts[reason] += 1
                continue
            cited = resolved[mention.bib_id]
            contexts.append(
                (
                    f"{document.paper_id}_{cited}_{sum(c[1] == cited for c in contexts)}",
                    cited,
                    mention.bib_id,
                    mention.text,
                    par.section_heading,
                    char_window(paragraphs, p_idx, mention, config),
                    sentence_context(paragraphs, p_idx, mention, config),
                )
            )
    return contexts, {name: n for name, n in counts.items() if n}
