"""Paragraphs whose text has single spaces only (as the TEI parser writes every paragraph): the cutter reads each
sentence context off the paragraph's one masking, squeezing nothing, and gives what the cutter by its definition
gives (tests/support/contexts_reference.py), byte for byte, with the same counts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.contexts import ContextConfig, cut_contexts
from extractors.documents.sentences import split_sentences
from mapping.records import Mention, Paragraph, ParsedDocument
from tests.support import contexts_reference as reference
from tests.support.counters import count_squeezed, counter_dict
from tests.support.documents import CITING, document

BIB_IDS = (None, "b0", "b1", "b2", "b3", "b9")  # b9 dangles
RESOLVED = {"b0": "P0", "b1": "P1", "b2": None, "b3": CITING}  # b2 unresolved, b3 a self-citation
WORDS = ("ab", "Lee", "2020", "é", ".", ",", ";", "(", ")", "[", "]", "x.", "e.g.", "Fig.")


def single_spaced(words: list[str], spaces: list[bool]) -> str:
    """Words joined by one space or none: text with no whitespace run and no whitespace but the space."""
    return "".join(w + (" " if s else "") for w, s in zip(words, spaces, strict=True)).strip()


@st.composite
def paragraph(draw, section: int) -> Paragraph:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=draw(st.sampled_from((0, 5, 40)))))
    text = single_spaced(words, draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words))))
    mentions = []
    for _ in range(draw(st.integers(0, 12))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + draw(st.sampled_from((0, 3, 12))))))
        mentions.append(Mention(start, end, text[start:end], draw(st.sampled_from(BIB_IDS))))
    span = st.integers(0, len(text))
    sentences = draw(
        st.one_of(
            st.just(split_sentences(text, [(m.start, m.end) for m in mentions])),
            st.just(()),
            st.lists(st.tuples(span, span), max_size=6).map(tuple),  # out of order, overlapping, empty, reversed
        )
    )
    return Paragraph(text, section, f"S{section}", sentences, tuple(draw(st.permutations(mentions))))


@st.composite
def documents(draw) -> ParsedDocument:
    paragraphs, section = [], 0
    for _ in range(draw(st.integers(1, 5))):
        section = draw(st.sampled_from((section, section + 1, 0)))
        paragraphs.append(draw(paragraph(section)))
    return document(paragraphs, BIB_IDS[1:-1])


configs = st.builds(
    ContextConfig,
    char_window=st.sampled_from((0, 7, 25, 200)),
    sentences_before=st.integers(0, 2),
    sentences_after=st.integers(0, 2),
    target_token=st.sampled_from(("TARGETCIT", "", "T x")),
    other_token=st.sampled_from(("OTHERCIT", "", " o ", "é")),
)


def both(doc: ParsedDocument, config: ContextConfig) -> tuple[tuple, tuple]:
    count, counts = counter_dict()
    ours = [
        (c.context_id, c.cited_id, c.bib_id, c.marker, c.section_heading, c.char_context, c.sentence_context)
        for c in cut_contexts(doc, RESOLVED, config, count)
    ]
    return (ours, counts), reference.contexts_by_marker(doc, RESOLVED, config)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), configs)
def test_single_spaced_documents_give_what_the_reference_gives(doc, config):
    ours, theirs = both(doc, config)
    assert ours == theirs


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # a marker first and last in its sentence, one glued to a word, one after the target with nothing between
        (
            "Intro line. [1] starts it and ends it [2]. Then Smith[3][4] said so. Last one.",
            [
                "Intro line. TARGETCIT starts it and ends it OTHERCIT. Then Smith OTHERCIT OTHERCIT said so.",
                "Intro line. OTHERCIT starts it and ends it TARGETCIT . Then Smith OTHERCIT OTHERCIT said so.",
                "OTHERCIT starts it and ends it OTHERCIT. Then Smith TARGETCIT OTHERCIT said so. Last one.",
                "OTHERCIT starts it and ends it OTHERCIT. Then Smith OTHERCIT TARGETCIT said so. Last one.",
            ],
        ),
    ],
)
def test_sentence_contexts_by_hand(text, want):
    markers = ("[1]", "[2]", "[3]", "[4]")
    starts = [text.index(m) for m in markers]
    mentions = tuple(Mention(s, s + len(m), m, f"b{k}") for k, (s, m) in enumerate(zip(starts, markers, strict=True)))
    paragraph = Paragraph(text, 0, "S", split_sentences(text, [(m.start, m.end) for m in mentions]), mentions)
    resolved = {f"b{k}": f"P{k}" for k in range(4)}
    doc = document([paragraph], [f"b{k}" for k in range(4)])
    assert [c.sentence_context for c in cut_contexts(doc, resolved)] == want


def test_single_spaced_text_is_never_squeezed(monkeypatch):
    """Cutting a document of single-spaced paragraphs squeezes no character: the paragraph's masking is its text
    with markers replaced, and every sentence context a slice of that (a sentence masked anew squeezed its text)."""
    squeezed = count_squeezed(monkeypatch)
    text = "Work on parsing [1] shows much. Later work [2] and [3] agrees. It is all."
    cites = [(m, f"b{k}") for k, m in enumerate(("[1]", "[2]", "[3]"))]
    starts = [text.index(m) for m, _ in cites]
    mentions = tuple(Mention(s, s + len(m), m, b) for s, (m, b) in zip(starts, cites, strict=True))
    paragraphs = [
        Paragraph("A short one. Two sentences.", 0, "S", split_sentences("A short one. Two sentences."), ()),
        Paragraph(text, 0, "S", split_sentences(text, [(m.start, m.end) for m in mentions]), mentions),
    ]
    contexts = cut_contexts(document(paragraphs, ["b0", "b1", "b2"]), {"b0": "P0", "b1": "P1", "b2": "P2"})
    assert [c.sentence_context for c in contexts] == [
        "Two sentences. Work on parsing TARGETCIT shows much. Later work OTHERCIT and OTHERCIT agrees.",
        "Work on parsing OTHERCIT shows much. Later work TARGETCIT and OTHERCIT agrees. It is all.",
        "Work on parsing OTHERCIT shows much. Later work OTHERCIT and TARGETCIT agrees. It is all.",
    ]
    assert squeezed() == 0
