"""Context cutting on hand-made documents whose expected windows are computed by hand, and the markers that give no
context (in a heading, nested in another marker) counted on the real TEI as XPath counts them."""

from __future__ import annotations

import datetime as dt

from lxml import etree

from extractors.contexts import ContextConfig, cut_contexts, mask_markers
from extractors.documents.tei import parse_tei
from tests.support.counters import counter_dict
from tests.support.documents import document as _document
from tests.support.documents import paragraph
from tests.support.tei_markers import PLAIN, WITH_MARKERS, heading_markers, markers, nested_markers, with_uncut_markers

BIBS = ("b0", "b1", "b2", "b3")  # a mention citing any other bib id dangles


def document(paragraphs):
    return _document(paragraphs, BIBS)


def test_group_citation_gives_one_context_per_target_with_the_others_othercit():
    par = paragraph("Earlier models [3, 4] failed.", [("[3,", "b0"), ("4]", "b1")])
    contexts = cut_contexts(document([par]), {"b0": "P0", "b1": "P1"})
    assert [c.char_context for c in contexts] == [
        "Earlier models TARGETCIT OTHERCIT failed.",
        "Earlier models OTHERCIT TARGETCIT failed.",
    ]
    assert [c.context_id for c in contexts] == ["2001.00001_P0_0", "2001.00001_P1_0"]


def test_char_window_is_200_characters_each_side_across_paragraphs_and_cuts_words():
    left = "a" * 150 + " word"
    right = "tail " + "b" * 300
    pars = [
        paragraph("x" * 120, []),
        paragraph(f"{left} [1] {right}", [("[1]", "b0")]),
    ]
    [context] = cut_contexts(document(pars), {"b0": "P0"})
    # the spaces beside the marker go into " TARGETCIT ": 200 characters of text are counted each side of it.
    # Before it, 120 x's, the space joining the paragraphs, 150 a's and " word" (276 characters): the first 76
    # x's fall outside. After it, "tail " and 195 of the 300 b's.
    assert context.char_context == "x" * 44 + " " + "a" * 150 + " word TARGETCIT tail " + "b" * 195


def test_other_markers_in_the_window_become_othercit_kept_apart_as_tokens():
    par = paragraph(
        "As in (A, 2019)(B, 2020)(C, 2021) and CoNLL[4] more.",
        [("(A, 2019)", "b0"), ("(B, 2020)", "b1"), ("(C, 2021)", "b2"), ("[4]", "b3")],
    )
    masked, start, end = mask_markers(par.text, par.mentions, par.mentions[0], ContextConfig())
    assert masked == "As in TARGETCIT OTHERCIT OTHERCIT and CoNLL OTHERCIT more."
    assert masked[start:end] == " TARGETCIT "
    contexts = cut_contexts(document([par]), {"b0": "P0", "b1": "P1", "b2": "P2", "b3": "P3"})
    assert contexts[2].char_context == "As in OTHERCIT OTHERCIT TARGETCIT and CoNLL OTHERCIT more."


def test_sentence_context_takes_neighbours_from_the_same_section_only():
    intro = paragraph("Intro one. Intro two.", [], section=0, heading="Intro")
    method_a = paragraph(
        "Method one. We follow Smith et al. [1] closely.", [("[1]", "b0")], section=1, heading="Method"
    )
    method_b = paragraph("Next paragraph sentence. Another.", [], section=1, heading="Method")
    [context] = cut_contexts(document([intro, method_a, method_b]), {"b0": "P0"})
    assert context.sentence_context == "Method one. We follow Smith et al. TARGETCIT closely. Next paragraph sentence."
    assert context.section_heading == "Method"
    # the first sentence of a section has no sentence before it from the previous section
    first = paragraph("See [2] first. Then more.", [("[2]", "b1")], section=2, heading="Results")
    [c2] = cut_contexts(document([intro, first]), {"b1": "P1"})
    assert c2.sentence_context == "See TARGETCIT first. Then more."


def test_every_mention_is_a_context_or_a_counted_drop():
    par = paragraph(
        "Self [1], unresolved [2], unlinked [3], dangling [4], fine [5] and fine again [6].",
        [("[1]", "b0"), ("[2]", "b1"), ("[3]", None), ("[4]", "b9"), ("[5]", "b2"), ("[6]", "b2")],
    )
    count, counts = counter_dict()
    contexts = cut_contexts(document([par]), {"b0": "2001.00001", "b1": None, "b2": "P2"}, count=count)
    assert counts == {
        "mentions": 6,
        "mentions_linked": 5,
        "dropped_self_citation": 1,
        "dropped_unresolved_reference": 1,
        "dropped_unlinked_mention": 1,
        "dropped_dangling_link": 1,
    }
    assert [c.context_id for c in contexts] == ["2001.00001_P2_0", "2001.00001_P2_1"]
    assert contexts[0].citing_date == dt.date(2020, 1, 5)


# ------------------------------------------------------------------------------------------ uncut markers


def test_a_marker_in_a_heading_and_a_nested_marker_are_counted_dropped_and_never_read():
    resolved = {"b0": "P0", "b1": "P1", "b2": "P2", "b3": "P3"}
    count, counts = counter_dict()
    contexts = cut_contexts(parse_tei(WITH_MARKERS, "mem://markers.tei.xml"), resolved, count=count)
    assert counts == {
        "mentions": 5,  # [1], (Kim, 2019) and [2] in the text; Lee [2] in the heading; 2019 inside (Kim, 2019)
        "mentions_linked": 3,
        "dropped_marker_in_heading": 1,
        "dropped_nested_marker": 1,
    }
    assert counts["mentions"] == len(contexts) + sum(v for k, v in counts.items() if k.startswith("dropped_"))
    # by hand: the heading's text is in neither view, nor is the nested marker a marker of its own
    kim = contexts[1]
    assert (kim.cited_id, kim.marker, kim.section_heading) == ("P2", "(Kim, 2019)", "Following Lee [2]")
    assert (
        kim.char_context == "We build on prior work OTHERCIT. It scales. As in TARGETCIT we train. Then OTHERCIT helps."
    )
    assert kim.sentence_context == "As in TARGETCIT we train. Then OTHERCIT helps."
    # and every context is what the same document without the two markers gives
    plain_count, plain_counts = counter_dict()
    assert contexts == cut_contexts(parse_tei(PLAIN, "mem://markers.tei.xml"), resolved, count=plain_count)
    assert plain_counts == {"mentions": 3, "mentions_linked": 3}


def test_the_uncut_markers_of_the_real_tei_are_counted_as_xpath_counts_them(shared):
    """On every real TEI, and on each with markers put in its headings and inside its markers (same text): the
    drop counters equal XPath's counts of markers in headings and nested markers, the balance holds, and the
    contexts are those of the file as it is."""
    files = sorted((shared / "grobid").glob("*/*.tei.xml"))
    assert len(files) >= 37
    seen = {"dropped_marker_in_heading": 0, "dropped_nested_marker": 0}
    for path in files:
        original = path.read_bytes()
        document = parse_tei(original, str(path))
        resolved = {entry.bib_id: f"P{k}" for k, entry in enumerate(document.bib_entries)}
        want = cut_contexts(document, resolved)
        for data in (original, with_uncut_markers(original)):
            tree = etree.fromstring(data)
            count, counts = counter_dict()
            contexts = cut_contexts(parse_tei(data, str(path)), resolved, count=count)
            assert counts.get("dropped_marker_in_heading", 0) == heading_markers(tree), path.name
            assert counts.get("dropped_nested_marker", 0) == nested_markers(tree), path.name
            assert counts["mentions"] == markers(tree), path.name
            dropped = sum(v for k, v in counts.items() if k.startswith("dropped_"))
            assert counts["mentions"] == len(contexts) + dropped, path.name
            assert contexts == want, path.name
            if data is not original:
                for name in seen:
                    seen[name] += counts.get(name, 0)
    assert seen["dropped_marker_in_heading"] > 100 and seen["dropped_nested_marker"] > 500, seen
