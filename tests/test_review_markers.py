"""Bare citation markers in review text (`extractors/reviews/mentions/markers.py`) and the cues written with them
(obligation modals before "cite", "see" right before an author-year), on hand-written sentences whose expected
mentions and decisions are worked out by hand."""

from __future__ import annotations

from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.records import RECOMMENDED


def _found(text: str) -> list[tuple[str, str, str, str | None]]:
    return [(m.source, m.text, m.kind, m.marker) for m in extract_review_mentions(text)]


def test_bare_markers_with_a_request_are_recommended_works():
    text = "The authors have to cite, for example, the universal transformer[1], entnet[2] and relational nets [3]."
    assert _found(text) == [
        ("marker", "[1]", RECOMMENDED, "1"),
        ("marker", "[2]", RECOMMENDED, "2"),
        ("marker", "[3]", RECOMMENDED, "3"),
    ]
    assert _found("The results of LongVILA [3, 4] are missing from Table 2.") == [
        ("marker", "[3, 4]", RECOMMENDED, "3,4")
    ]


def test_a_marker_pointing_into_the_papers_own_references_is_not_a_request():
    """ "previous work", "prior work" (a request cue for a title) do not make a bare marker recommended: such
    markers are mostly the submission's own references."""
    for text in (
        "The method should be evaluated on the full data following the previous works [9, 14].",
        "It cannot achieve the error guarantee of the prior work of [12].",
        "The authors use the sampler of [7] in all experiments.",
    ):
        (found,) = extract_review_mentions(text)
        assert found.source == "marker" and found.kind != RECOMMENDED, text


def test_what_is_not_a_bare_marker():
    # an index ("x[1]", "h_t[3]", "a[i][2]"), a line's first token, a marker whose entry the review gives
    assert _found("The update x[1] = 2 and h_t[3] and a[i][2] are wrong; see Eq. (3).") == []
    text = "We miss [1] and [2].\n[1] Smith, J. A Great Title About Many Things. NeurIPS 2020."
    assert [(source, marker) for source, _, _, marker in _found(text)] == [
        ("marker", "2"),
        ("reference_entry", "1"),
    ]
    assert _found("[4] is not a word here.") == []


def test_a_marker_right_after_a_mention_is_its_marker():
    """ "GeoCLIP [11]": the name mention carries marker 11, no second mention; "[15]" after "method in" is its own."""
    found = _found("Methods like GeoCLIP [11] or the diffusion-based method in [15] should be compared.")
    assert [(s, t, marker) for s, t, _, marker in found] == [("name", "GeoCLIP", "11"), ("marker", "[15]", "15")]


def test_obligation_modals_before_cite_and_see_before_an_author_year():
    """ "have to / must / needs to cite" count as "should cite" always did; "(see Ba et al)" points at a work."""
    for modal in ("should", "must", "have to", "needs to", "ought to"):
        (found,) = extract_review_mentions(f'The authors {modal} cite "Deep Residual Learning for Image Recognition".')
        assert found.kind == RECOMMENDED and found.reason == "request_cue", modal
    found = {m.text: m for m in extract_review_mentions("Hebbian synapses relate to attention (see Ba et al).")}
    assert found["Ba et al"].kind == RECOMMENDED and found["Ba et al"].reason == "see_cue"
    plain = {m.text: m for m in extract_review_mentions("Hebbian synapses relate to attention (Ba et al).")}
    assert plain["Ba et al"].kind != RECOMMENDED
