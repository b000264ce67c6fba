"""The context cutter gives, byte for byte, what the cutter by its definition gives (tests/support/
contexts_reference.py: the whole paragraph masked anew for each marker, every sentence of the section walked), with
the same counts: on every real document, and on generated paragraphs with many, overlapping, adjacent and empty
markers, odd whitespace, any sentence spans and any window. Which mentions are kept: tests/test_context_overlaps.py."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import extractors.contexts
from extractors.contexts import ContextConfig, cut_contexts
from extractors.documents.files import parse_document_file
from extractors.documents.sentences import split_sentences
from mapping.records import BibEntry, Mention, Paragraph, ParsedDocument
from tests.support import contexts_reference as reference
from tests.support.counters import count_squeezed, counter_dict
from tests.support.documents import CITING, document

BIB_IDS = (None, "b0", "b1", "b2", "b3", "b9")  # b9 dangles
RESOLVED = {"b0": "P0", "b1": "P1", "b2": None, "b3": CITING}  # b2 unresolved, b3 a self-citation
# letters, digits, brackets and punctuation beside markers, and whitespace of every kind the squeeze meets
ALPHABET = "ab1é.,;()[] \n\t\u00a0\u2009\u3000"


def both(doc: ParsedDocument, resolved: dict, config: ContextConfig | None = None) -> tuple[tuple, tuple]:
    """(contexts, counts) of the cutter and of the reference, each context as the tuple the reference gives."""
    config = config or ContextConfig()
    count, counts = counter_dict()
    ours = [
        (c.context_id, c.cited_id, c.bib_id, c.marker, c.section_heading, c.char_context, c.sentence_context)
        for c in cut_contexts(doc, resolved, config, count)
    ]
    return (ours, counts), reference.contexts_by_marker(doc, resolved, config)


# ------------------------------------------------------------------------------------------ real documents


def test_every_context_of_the_real_documents_equals_the_reference(shared):
    files = [(p, "tei") for p in sorted((shared / "grobid").rglob("*.tei.xml"))]
    files += [(p, "s2orc") for p in sorted((shared / "s2orc").rglob("*.json"))]
    documents = [d for p, kind in files for d in parse_document_file(p.read_bytes(), str(p), kind)]
    documents = [d for d in documents if isinstance(d, ParsedDocument)]
    assert len(documents) >= 45, "the TEI and S2ORC papers of ../shared/data"
    total = 0
    for doc in documents:
        resolved = {entry.bib_id: f"P{k % 7}" for k, entry in enumerate(doc.bib_entries)}  # repeated cited ids
        for config in (ContextConfig(), ContextConfig(char_window=40, sentences_before=2, sentences_after=0)):
            ours, theirs = both(doc, resolved, config)
            assert ours == theirs, doc.source
            total += len(ours[0])
    assert total > 4000, "every linked mention of the real papers gives a context, twice"


# ------------------------------------------------------------------------------------------ generated


def _apart(cuts: set[int]) -> tuple[tuple[int, int], ...]:
    """Sentences in order with gaps between them: every other pair of the sorted cut points."""
    points = sorted(cuts)
    return tuple(zip(points[::2], points[1::2], strict=False))


@st.composite
def paragraph(draw, section: int) -> Paragraph:
    text = draw(st.text(alphabet=ALPHABET, max_size=draw(st.sampled_from((0, 12, 60, 200)))))
    mentions = []
    for _ in range(draw(st.integers(0, 30))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + draw(st.sampled_from((0, 3, 12))))))
        mentions.append(Mention(start, end, text[start:end], draw(st.sampled_from(BIB_IDS))))
    if draw(st.booleans()):  # adjacent markers: runs of glued spans, as "[1][2][3]" gives them
        cursor = draw(st.integers(0, len(text)))
        while cursor < len(text) and draw(st.booleans()):
            width = draw(st.integers(0, 3))
            mentions.append(Mention(cursor, min(len(text), cursor + width), text[cursor : cursor + width], "b0"))
            cursor += width
    mentions = draw(st.permutations(mentions))
    span = st.integers(0, len(text))
    sentences = draw(
        st.one_of(
            st.just(split_sentences(text, [(m.start, m.end) for m in mentions])),
            st.just(()),
            st.lists(st.tuples(span, span), max_size=6).map(tuple),  # out of order, overlapping, empty, reversed
            st.sets(span, max_size=8).map(_apart),  # in order, with gaps where a marker can fall between two
        )
    )
    kind = draw(st.sampled_from(("body",) * 6 + ("caption", "heading", "marker")))
    return Paragraph(text, section, f"S{section}", sentences, tuple(mentions), kind)


@st.composite
def documents(draw) -> ParsedDocument:
    paragraphs, section = [], 0
    for _ in range(draw(st.integers(1, 5))):
        section = draw(st.sampled_from((section, section + 1, 0)))  # a section may come back after another
        paragraphs.append(draw(paragraph(section)))
    return document(paragraphs, BIB_IDS[1:-1], source_format="s2orc")


configs = st.builds(
    ContextConfig,
    char_window=st.sampled_from((-3, 0, 1, 7, 25, 200)),
    sentences_before=st.integers(-1, 3),
    sentences_after=st.integers(-1, 3),
    target_token=st.sampled_from(("TARGETCIT", "", "T x")),
    other_token=st.sampled_from(("OTHERCIT", "", " o ", "é")),
    paragraph_separator=st.sampled_from((" ", "", "\n|")),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), configs)
def test_generated_documents_give_what_the_reference_gives(doc, config):
    ours, theirs = both(doc, RESOLVED, config)
    assert ours == theirs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_a_paragraph_dense_with_markers_gives_what_the_reference_gives(data):
    """One paragraph with a marker every few characters (where the cutter's bookkeeping does the most), between
    paragraphs shorter than a window."""
    words = data.draw(st.lists(st.sampled_from(("ab", "1", ".", " ", "  ", "\n", "x.", "(", ")")), max_size=120))
    text, mentions = "", []
    for word in words:
        if data.draw(st.booleans()):
            marker = data.draw(st.sampled_from(("[1]", "(Lee 2020)", "", "2")))
            mentions.append(Mention(len(text), len(text) + len(marker), marker, data.draw(st.sampled_from(BIB_IDS))))
            text += marker
        text += word
    dense = Paragraph(text, 1, "S1", split_sentences(text, [(m.start, m.end) for m in mentions]), tuple(mentions))
    short = [Paragraph(t, s, "S", split_sentences(t), ()) for t, s in (("Short one.", 0), ("  ", 1), ("End.", 1))]
    window = data.draw(st.sampled_from((5, 25, 200)))
    ours, theirs = both(document([short[0], dense, *short[1:]], BIB_IDS[1:-1]), RESOLVED, ContextConfig(window))
    assert ours == theirs


# ------------------------------------------------------------------------------------------ the work per marker


def dense_document(markers: int) -> ParsedDocument:
    """One paragraph of `markers` markers, two to a sentence, between two short paragraphs; each its own bib id."""
    text, mentions = "", []
    for k in range(markers):
        text += f"Work on topic {k} " if k % 2 == 0 else " and "
        mentions.append(Mention(len(text), len(text) + len(f"[{k}]"), f"[{k}]", f"b{k}"))
        text += f"[{k}]" + (f" shows result {k}. " if k % 2 else "")
    text = text.rstrip()
    spans = [(m.start, m.end) for m in mentions]
    short = "A short paragraph, shorter than a window. It has two sentences."
    paragraphs = [
        Paragraph(short, 0, "A", split_sentences(short), ()),
        Paragraph(text, 0, "A", split_sentences(text, spans), tuple(mentions)),
        Paragraph(short, 1, "B", split_sentences(short), ()),
    ]
    return document(paragraphs, [BibEntry(f"b{k}") for k in range(markers)])


def work_per_marker(markers: int, monkeypatch: pytest.MonkeyPatch) -> tuple[float, float]:
    """(lines of extractors/contexts.py run, characters whose whitespace was squeezed) per marker, cutting the
    contexts of `dense_document(markers)`: counts of the work done, the same on every machine and every run."""
    doc = dense_document(markers)
    resolved = {f"b{k}": f"P{k}" for k in range(markers)}
    squeezed = count_squeezed(monkeypatch)
    lines = 0
    module = extractors.contexts.__file__

    def count_lines(frame, event, arg):
        nonlocal lines
        lines += event == "line"
        return count_lines

    def trace(frame, event, arg):
        return count_lines if frame.f_code.co_filename == module else None

    sys.settrace(trace)
    try:
        contexts = cut_contexts(doc, resolved)
    finally:
        sys.settrace(None)
    assert len(contexts) == markers
    return lines / markers, squeezed() / markers


def test_the_work_per_marker_is_flat_as_one_paragraph_grows(monkeypatch):
    """Eight times the markers in one paragraph: no more work per marker (a cut per marker that masked the whole
    paragraph, or walked every sentence of the section, did eight times as much). Work is counted, not timed:
    bench/contexts.py times it."""
    if sys.gettrace() is not None:
        pytest.skip("a tracer (coverage, a debugger) is already running: the lines run cannot be counted")
    small_lines, small_chars = work_per_marker(25, monkeypatch)
    large_lines, large_chars = work_per_marker(200, monkeypatch)
    assert large_lines <= 1.2 * small_lines, (small_lines, large_lines)
    assert large_chars <= 1.2 * small_chars, (small_chars, large_chars)
