"""Overlapping, nested and duplicated citation spans (as real S2ORC / unarXive records have them): every
context holds TARGETCIT exactly once, where its marker was, and every mention is still accounted for."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.contexts import ContextConfig, cut_contexts, mask_markers, non_overlapping_mentions
from extractors.documents.sentences import split_sentences
from mapping.records import Mention, Paragraph
from tests.support import contexts_reference as reference
from tests.support.counters import counter_dict
from tests.support.documents import CITING, document

BIBS = ("b0", "b1", "b2", "b3")  # b9 below dangles


def cut(paragraphs, resolved, config=None):
    count, counts = counter_dict()
    contexts = cut_contexts(
        document(paragraphs, BIBS, source_format="s2orc"), resolved, config or ContextConfig(), count
    )
    for c in contexts:
        assert c.char_context.count("TARGETCIT") == 1, c.char_context
        assert c.sentence_context.count("TARGETCIT") == 1, c.sentence_context
        assert not re.search(r"\s\s", c.char_context + "|" + c.sentence_context), c
    return contexts, counts


def only_context(paragraphs, resolved):
    """((cited id, marker, char context), sentence context, counts) of a cut that gives one context."""
    [context], counts = cut(paragraphs, resolved)
    return (context.cited_id, context.marker, context.char_context), context.sentence_context, counts


INTRO = Paragraph("Intro text.", 0, "Intro", ((0, 11),), ())
# "Graph models [12] scale." is 0..24, "They are fast." 25..39; "[12]" is 13..17
GRAPH = "Graph models [12] scale. They are fast."


def test_overlapping_spans_keep_the_linked_second_one_as_target():
    unlinked = Mention(13, 16, "[12", None)
    target = Mention(14, 17, "12]", "b1")
    par = Paragraph(GRAPH, 1, "Method", ((0, 24), (25, 39)), (unlinked, target))
    assert only_context([INTRO, par], {"b1": "P1"}) == (
        ("P1", "12]", "Intro text. Graph models [ TARGETCIT scale. They are fast."),
        "Graph models [ TARGETCIT scale. They are fast.",
        {"mentions": 2, "dropped_overlapping_span": 1, "mentions_linked": 1},
    )


def test_overlapping_linked_spans_keep_the_one_that_ends_first():
    first = Mention(13, 15, "[1", "b0")
    second = Mention(14, 17, "12]", "b1")
    par = Paragraph(GRAPH, 1, "Method", ((0, 24), (25, 39)), (first, second))
    assert only_context([INTRO, par], {"b0": "P0", "b1": "P1"}) == (
        ("P0", "[1", "Intro text. Graph models TARGETCIT 2] scale. They are fast."),
        "Graph models TARGETCIT 2] scale. They are fast.",
        {"mentions": 2, "dropped_overlapping_span": 1, "mentions_linked": 1},
    )


def test_a_group_span_gives_way_to_the_member_spans_nested_in_it():
    # "We follow " 0..10, "(" 10, "Lee, 2019" 11..20, "; " 20..22, "Kim, 2020" 22..31, ")" 31, " here." 32..38
    text = "We follow (Lee, 2019; Kim, 2020) here."
    group = Mention(10, 32, "(Lee, 2019; Kim, 2020)", "b0")
    lee = Mention(11, 20, "Lee, 2019", "b1")
    kim = Mention(22, 31, "Kim, 2020", "b2")
    par = Paragraph(text, 0, "Intro", ((0, 38),), (group, lee, kim))
    contexts, counts = cut([par], {"b0": "P0", "b1": "P1", "b2": "P2"})
    assert [c.cited_id for c in contexts] == ["P1", "P2"]
    assert [c.char_context for c in contexts] == [
        "We follow ( TARGETCIT ; OTHERCIT) here.",
        "We follow (OTHERCIT; TARGETCIT ) here.",
    ]
    assert [c.sentence_context for c in contexts] == [c.char_context for c in contexts]
    assert counts == {"mentions": 3, "dropped_overlapping_span": 1, "mentions_linked": 2}


def test_identical_spans_give_one_context_from_the_first_linked_one():
    # "Transformers " 0..13, "[7]" 13..16, " dominate." 16..26
    text = "Transformers [7] dominate."
    unlinked = Mention(13, 16, "[7]", None)
    linked = Mention(13, 16, "[7]", "b0")
    duplicate = Mention(13, 16, "[7]", "b0")
    par = Paragraph(text, 0, "Intro", ((0, 26),), (unlinked, linked, duplicate))
    assert only_context([par], {"b0": "P0"}) == (
        ("P0", "[7]", "Transformers TARGETCIT dominate."),
        "Transformers TARGETCIT dominate.",
        {"mentions": 3, "dropped_overlapping_span": 2, "mentions_linked": 1},
    )
    [context], _ = cut([par], {"b0": "P0"})
    assert context.context_id == f"{CITING}_P0_0"


def test_zero_length_mentions_overlap_only_a_span_strictly_around_them():
    at_five = Mention(5, 5, "", "b0")
    again_at_five = Mention(5, 5, "", "b1")
    inside = Mention(7, 7, "", None)
    around = Mention(5, 9, "[12]", "b2")
    kept, dropped = non_overlapping_mentions((around, at_five, inside, again_at_five))
    assert kept == (around, at_five, again_at_five)
    assert dropped == (inside,)


def test_mask_markers_refuses_a_target_it_would_skip():
    first = Mention(13, 16, "[12", None)
    second = Mention(14, 17, "12]", "b1")
    with pytest.raises(ValueError, match="overlaps an earlier mention"):
        mask_markers(GRAPH, (first, second), second, ContextConfig())
    with pytest.raises(ValueError, match="not one of the mentions"):
        mask_markers(GRAPH, (first,), Mention(14, 17, "12]", "b1"), ContextConfig())


# ------------------------------------------------------------------------------------------ properties

BIB_IDS = (None, "b0", "b1", "b2", "b3", "b9")  # b9: dangling
RESOLVED = {"b0": "P0", "b1": "P1", "b2": None, "b3": CITING}  # b2 unresolved, b3 a self-citation
WINDOW = 25


@st.composite
def paragraphs(draw):
    pars = []
    section = 0
    for _ in range(draw(st.integers(1, 4))):
        text = draw(st.text(alphabet="ab cd.,;()[]1", max_size=60))
        mentions = []
        for _ in range(draw(st.integers(0, 5))):
            start = draw(st.integers(0, len(text)))
            end = draw(st.integers(start, min(len(text), start + 12)))
            mentions.append(Mention(start, end, text[start:end], draw(st.sampled_from(BIB_IDS))))
        section += draw(st.integers(0, 1))
        sentences = split_sentences(text, [(m.start, m.end) for m in mentions])
        pars.append(Paragraph(text, section, f"S{section}", sentences, tuple(mentions)))
    return pars


def _reference_masked(text: str, kept, target) -> tuple[str, str]:
    """The paragraph's text before and after `target`, other kept markers as OTHERCIT, with no padding."""
    out, cursor = [], 0
    for m in sorted(kept, key=lambda m: (m.start, m.end)):
        out.append(text[cursor : m.start])
        out.append("\0" if m is target else "OTHERCIT")
        cursor = m.end
    out.append(text[cursor:])
    left, _, right = "".join(out).partition("\0")
    return left, right


def _squeeze(s: str) -> str:
    return re.sub(r"\s+", "", s)


def _around_target(context: str) -> tuple[str, str]:
    i = context.index("TARGETCIT")
    return context[:i], context[i + len("TARGETCIT") :]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paragraphs())
def test_every_context_has_one_targetcit_where_its_marker_was(pars):
    config = ContextConfig(char_window=WINDOW)
    contexts, counts = cut(pars, RESOLVED, config)
    only_the_sentence, _ = cut(pars, RESOLVED, ContextConfig(char_window=WINDOW, sentences_before=0, sentences_after=0))

    mentions = sum(len(p.mentions) for p in pars)
    dropped = sum(v for k, v in counts.items() if k.startswith("dropped_"))
    assert counts.get("mentions", 0) == mentions == len(contexts) + dropped
    assert counts.get("mentions_linked", 0) == (
        mentions - counts.get("dropped_unlinked_mention", 0) - counts.get("dropped_overlapping_span", 0)
    )

    kept = [non_overlapping_mentions(p.mentions)[0] for p in pars]
    targets = [
        (p_idx, m)
        for p_idx, ms in enumerate(kept)
        for m in ms
        if m.bib_id in RESOLVED and RESOLVED[m.bib_id] not in (None, CITING)
    ]
    assert [(c.bib_id, c.marker) for c in contexts] == [(m.bib_id, m.text) for _, m in targets]
    for context, narrow, (p_idx, target) in zip(contexts, only_the_sentence, targets, strict=True):
        masked = [_reference_masked(p.text, ms, None)[0] for p, ms in zip(pars, kept, strict=True)]
        par_left, par_right = _reference_masked(pars[p_idx].text, kept[p_idx], target)
        running_left = _squeeze("".join(masked[:p_idx]) + par_left)
        running_right = _squeeze(par_right + "".join(masked[p_idx + 1 :]))

        left, right = _around_target(context.char_context)
        assert left.endswith(" ") and right.startswith(" ")
        left, right = left[:-1], right[1:]
        assert running_left.endswith(_squeeze(left))
        assert len(left) == WINDOW or _squeeze(left) == running_left
        assert running_right.startswith(_squeeze(right))
        assert len(right) == WINDOW or _squeeze(right) == running_right

        left, right = _around_target(narrow.sentence_context)
        assert _squeeze(par_left).endswith(_squeeze(left))
        assert _squeeze(par_right).startswith(_squeeze(right))


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 5), st.sampled_from((None, "b0", "b1"))),
        max_size=7,
    )
)
def test_kept_mentions_never_overlap_keep_as_many_linked_as_possible_and_follow_the_rule(spans):
    mentions = tuple(Mention(s, s + n, "x" * n, b) for s, n, b in spans)
    kept, dropped = non_overlapping_mentions(mentions)
    assert sorted(map(id, kept + dropped)) == sorted(map(id, mentions))
    assert [m for m in mentions if any(m is k for k in kept)] == list(kept)  # the paragraph's order
    assert not any(reference.overlap(a, b) for a, b in itertools.combinations(kept, 2))
    assert all(any(reference.overlap(d, k) for k in kept) for d in dropped)
    linked = [m for m in mentions if m.bib_id is not None]
    most = max(
        (
            len(subset)
            for r in range(len(linked) + 1)
            for subset in itertools.combinations(linked, r)
            if not any(reference.overlap(a, b) for a, b in itertools.combinations(subset, 2))
        ),
        default=0,
    )
    assert sum(1 for m in kept if m.bib_id is not None) == most
    # which ones: the greedy rule, one mention at a time (by identity: equal spans are told apart by order)
    want_kept, want_dropped = reference.non_overlapping_mentions(mentions)
    assert (list(map(id, kept)), list(map(id, dropped))) == (list(map(id, want_kept)), list(map(id, want_dropped)))
