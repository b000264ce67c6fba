"""Sentence spans for paragraphs that do not come with GROBID's `<s>` segmentation.

BlingFire (`text_to_sentences_and_offsets`) keeps "et al.", "Fig.", "e.g." and initials inside a sentence where
pysbd and syntok break (tests/test_sentences.py pins those cases). A citation marker must never be split from its
sentence, so a boundary inside a marker is removed, and a "sentence" of only markers and punctuation ("[5].")
joins the previous one.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Sequence

import blingfire

from mapping.records import Mention, Paragraph

_ONLY_MARKERS_AND_PUNCT = re.compile(r"^[\s\W\d]*$")
_NO_WORD = re.compile(r"[\s\W\d]*")  # `_ONLY_MARKERS_AND_PUNCT` as a fullmatch (newlines are in the class)
_ANCHOR = 24  # characters of a sentence used to find it back in the paragraph
_LIBRARY = blingfire.blingfire  # the library `blingfire.text_to_sentences` calls through ctypes
_BUFFERS = threading.local()  # one output buffer per thread, grown as needed (Beam runs DoFns in threads)


def text_to_sentences(text: str) -> str:
    """`blingfire.text_to_sentences(text)`, without allocating a new zeroed output buffer per call (a third
    of the library call's cost on short paragraphs). The library is given the same input and the same output
    limit (twice the UTF-8 length); its answer is read up to the first NUL, as the library's wrapper reads it
    (tests/test_sentences.py compares the two), by slicing the buffer (`ctypes.string_at` cost as much as the
    library call on a table cell)."""
    data = text.encode("utf-8")
    limit = len(data) * 2
    buffer = getattr(_BUFFERS, "buffer", None)
    if buffer is None or len(buffer) < limit:
        buffer = _BUFFERS.buffer = ctypes.create_string_buffer(max(limit, 1 << 16))
    written = _LIBRARY.TextToSentences(data, len(data), buffer, limit)
    if written < 0 or written > limit:
        return ""
    return buffer[:written].split(b"\0", 1)[0].decode("utf-8")


def blingfire_spans(text: str) -> list[tuple[int, int]]:
    """BlingFire's sentence spans of `text`, as `text_to_sentences_and_offsets` gives them, but fast.

    The library's offset function maps UTF-8 offsets back to characters in a Python loop over every byte,
    which was 70% of parsing time. We take its sentences (C speed) and find each one in the text, which
    gives the same spans (tests/test_sentences.py checks this against the library on real papers); where a
    sentence cannot be found verbatim, we fall back to the library's offsets.
    """
    sentences = text_to_sentences(text)
    if "\n" not in sentences:  # one sentence (a table cell, a heading): found, and cut before trailing whitespace
        sentence = sentences.strip()
        start = text.find(sentence[:_ANCHOR]) if sentence else -1
        if start >= 0:
            return [(start, len(text.rstrip()))]
        if not sentence:
            return []
    starts: list[int] = []
    cursor = 0
    for sentence in sentences.split("\n"):
        sentence = sentence.strip()
        if not sentence:
            continue
        start = text.find(sentence[:_ANCHOR], cursor)
        if start < 0:
            _, offsets = blingfire.text_to_sentences_and_offsets(text)
            return [(int(a), int(b)) for a, b in offsets if b > a]
        starts.append(start)
        cursor = start + 1
    # a sentence ends where the next begins (less whitespace): robust to whitespace the library normalised
    result = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        while end > start and text[end - 1].isspace():
            end -= 1
        result.append((start, end))
    return result


def split_sentences(text: str, marker_spans: Sequence[tuple[int, int]] = ()) -> tuple[tuple[int, int], ...]:
    """Character spans `(start, end)` of the sentences of `text`, in order, covering its non-blank text."""
    if not text or text.isspace():
        return ()
    spans = blingfire_spans(text)
    if not spans:
        return ((0, len(text)),)
    if len(spans) == 1:
        return (spans[0],)
    merged: list[tuple[int, int]] = [spans[0]]
    for start, end in spans[1:]:
        prev_start, prev_end = merged[-1]
        if marker_spans:
            inside_marker = any(ms < start < me or ms < prev_end < me for ms, me in marker_spans)
            only_markers = _ONLY_MARKERS_AND_PUNCT.match(_strip_markers(text, start, end, marker_spans))
        else:  # the sentence as it stands, read in place
            inside_marker = False
            only_markers = _NO_WORD.fullmatch(text, start, end)
        if inside_marker or only_markers:
            merged[-1] = (prev_start, end)
        else:
            merged.append((start, end))
    return tuple(merged)


def paragraph_with_sentences(
    text: str, mentions: Sequence[Mention], section_index: int, heading: str | None, kind: str
) -> Paragraph:
    """A paragraph of a source that gives no sentence spans (S2ORC, S2AG): `split_sentences` around its markers."""
    return Paragraph(
        text=text,
        section_index=section_index,
        section_heading=heading,
        sentences=split_sentences(text, [(m.start, m.end) for m in mentions]),
        mentions=tuple(mentions),
        kind=kind,
    )


def _strip_markers(text: str, start: int, end: int, marker_spans: Sequence[tuple[int, int]]) -> str:
    """The sentence's text with citation markers blanked, to tell whether anything but markers is left."""
    if not any(ms < end and me > start for ms, me in marker_spans):
        return text[start:end]
    chars = list(text[start:end])
    for ms, me in marker_spans:
        for i in range(max(ms, start), min(me, end)):
            chars[i - start] = " "
    return "".join(chars)
