"""Database title spotting in reviews (`extractors.reviews.mentions.spotting`): hand-written reviews and a
hand-made database, each case checked by hand."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.reviews.mentions import MentionConfig, extract_review_mentions, find_mentions
from extractors.reviews.mentions.spotting import (
    DATABASE_TITLE,
    DatabaseTitleSpotter,
    locate_normalized,
)
from extractors.reviews.records import RECOMMENDED, Review
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig
from mapping.records import Paper
from pipelines.citationr import MineMentions, run
from tests.support.runs import read_rows, write_jsonl

SPARSE = "Sparse Gated Routers for Multilingual Retrieval"
HOLDOUT = "Calibrated Holdout Sets for Federated Evaluation"
ROBOT = "Do as I can, not as I say: Grounding Language in Robotic Affordances"
GENERIC = "Deep learning"  # two words: never looked for inside a text
PHRASE = "Learning with noisy labels in the wild"  # a database title that also reads as a phrase

DATABASE = [
    Paper(paper_id="p:sparse", title=SPARSE),
    Paper(paper_id="p:holdout", title=HOLDOUT),
    Paper(paper_id="p:robot", title=ROBOT),
    Paper(paper_id="p:generic", title=GENERIC),
    Paper(paper_id="p:phrase", title=PHRASE),
    Paper(paper_id="p:other", title="Unrelated Work on Protein Folding Kinetics"),
]


@pytest.fixture(scope="module")
def spotter() -> DatabaseTitleSpotter:
    return DatabaseTitleSpotter(InMemoryMatcher(DATABASE, MatchConfig()))


def test_spots_every_database_title_in_a_line_at_its_place(spotter):
    text = (
        "Summary: the paper uses deep learning.\n"
        f"Missing comparisons, e.g. {SPARSE.lower()} (Kim 2021), and {HOLDOUT}; both are close.\n"
    )
    spots = spotter.spot(text)
    assert [(s.paper_id, text[s.start : s.end]) for s in spots] == [
        ("p:sparse", SPARSE.lower()),  # case does not matter
        ("p:holdout", HOLDOUT),  # a second title of the same line, after the first is blanked out
    ]


def test_short_titles_and_titles_inside_running_text_are_not_spotted(spotter):
    text = (
        "Deep learning is used throughout.\n"
        "The authors study learning with noisy labels in the wild and report gains on three benchmarks.\n"
    )
    assert spotter.spot(text) == []  # "Deep learning": two words; the phrase has no cut around it


def test_a_misspelled_title_is_spotted_within_the_lcs_threshold(spotter):
    text = 'Please compare with "Calibrated Holdout Set for Federated Evaluations" (ICLR 2022).\n'
    [spot] = spotter.spot(text)
    assert spot.paper_id == "p:holdout" and 0.9 <= spot.score < 1.0
    assert text[spot.start : spot.end] == "Calibrated Holdout Set for Federated Evaluations"


def test_locate_normalized_maps_back_over_accents_hyphens_and_punctuation():
    window = "see Über-große Modelle: eine Studie, 2020"
    start, end = locate_normalized(window, "uber grosse modelle eine studie") or (0, 0)
    assert window[start:end] == "Über-große Modelle: eine Studie"
    assert locate_normalized(window, "kleine modelle") is None


def test_a_line_of_a_list_the_rules_do_not_read_becomes_a_reviewer_reference_entry(spotter):
    text = f"Some related works are missing:\n\n{ROBOT}. arXiv preprint arXiv:2204.01691. (2022)\n"
    without = find_mentions(text)
    assert not any(m.title and "Grounding" in m.title for m in without)  # the rules alone do not cut it
    found = extract_review_mentions(text, spotter=spotter)
    [entry] = [m for m in found if m.title and "Grounding" in m.title]
    assert entry.source == "reference_entry" and entry.kind == RECOMMENDED
    assert entry.title == ROBOT
    assert entry.text.startswith(ROBOT) and entry.text.endswith("(2022)")  # the whole line is the entry


def test_a_title_in_a_sentence_is_classified_by_its_sentence(spotter):
    asks = f"The most related prior work, {SPARSE}, should be discussed.\n"
    describes = f"The authors build on the method of Kim et al., {SPARSE}, and extend it.\n"
    [asked] = [m for m in extract_review_mentions(asks, spotter=spotter) if m.title == SPARSE]
    assert asked.source == DATABASE_TITLE and asked.kind == RECOMMENDED
    [described] = [m for m in extract_review_mentions(describes, spotter=spotter) if m.title == SPARSE]
    assert described.kind != RECOMMENDED


def test_a_reference_entry_whose_cut_does_not_resolve_takes_the_spotted_title(spotter):
    text = f"Missing references:\n[1] Our earlier note. {HOLDOUT}. 2022.\n"
    [entry] = [m for m in find_mentions(text) if m.source == "reference_entry"]
    assert entry.title == "Our earlier note"  # the rules' cut: the first segment
    [spotted] = [m for m in find_mentions(text, spotter=spotter) if m.source == "reference_entry"]
    assert spotted.title == HOLDOUT and spotted.marker == entry.marker == "1"


def test_an_entry_the_rules_drop_is_read_when_its_title_is_in_the_database(spotter):
    text = f"Missing references:\n[2] Kim J, Lee H: {HOLDOUT}, a short workshop version!\n"
    assert find_mentions(text) == []  # no title the rules can cut, no identifier: dropped
    [spotted] = extract_review_mentions(text, spotter=spotter)
    assert (spotted.source, spotted.title, spotted.marker, spotted.kind) == (
        "reference_entry",
        HOLDOUT,
        "2",
        RECOMMENDED,
    )


def test_a_title_alone_on_its_line_is_an_entry_in_a_list_and_not_as_a_heading():
    heading = "Summary of the Discussion"  # a database title that is also a review form's heading
    spotter = DatabaseTitleSpotter(InMemoryMatcher([*DATABASE, Paper(paper_id="p:heading", title=heading)]))
    as_heading = f"The rebuttal answered my questions.\n\n{heading}\nGiven the rebuttal, I suggest accepting it.\n"
    [mention] = extract_review_mentions(as_heading, spotter=spotter)
    assert mention.source == DATABASE_TITLE  # not read as a reviewer's reference list
    listed = f"Two missing works:\n\n{SPARSE}\n{HOLDOUT}\n"
    assert [(m.source, m.kind) for m in extract_review_mentions(listed, spotter=spotter)] == [
        ("reference_entry", RECOMMENDED),
        ("reference_entry", RECOMMENDED),
    ]


@pytest.mark.beam
def test_mine_mentions_spots_the_database_titles_of_its_side_input():
    text = f"WEAKNESSES:\nSome related works are missing:\n\n{ROBOT}. arXiv preprint. (2022)\n"
    review = Review("r1", "s1", text, ((0, "weaknesses"),), "official", 2023, "mem")
    with TestPipeline(runner="FnApiRunner") as p:
        mined = {
            "reviews": p | "Reviews" >> beam.Create([review]),
            "bibliographies": p | "Bibs" >> beam.Create([]),
            "papers": p | "Papers" >> beam.Create(DATABASE),
        } | MineMentions(MentionConfig(), MatchConfig())
        kinds = mined["mentions"] | beam.Map(lambda r: (r.mention.title, r.mention.kind))
        assert_that(kinds, equal_to([(ROBOT, RECOMMENDED)]))


@pytest.mark.e2e
def test_a_run_with_spot_titles_resolves_a_title_the_rules_do_not_cut(tmp_path):
    review = {
        "id": "R1",
        "forum": "S1",
        "replyto": "S1",
        "invitations": ["Venue/2023/Conference/S1/-/Official_Review"],
        "cdate": 1685000000000,
        "content": {"weaknesses": {"value": f"Some related works are missing:\n\n{ROBOT}. arXiv preprint. (2022)"}},
    }
    reviews = write_jsonl(tmp_path / "notes.jsonl", [review])
    metadata = write_jsonl(
        tmp_path / "metadata.jsonl",
        [{"paper_id": "900", "title": ROBOT, "year": 2022, "authors": [], "abstract": None}],
    )
    resolved, recorded = {}, {}
    for spot in (False, True):
        output = tmp_path / f"out-{spot}"
        flags = [
            "--runner=FnApiRunner",
            "--reviews",
            str(reviews),
            "--metadata",
            str(metadata),
            "--output",
            str(output),
        ]
        stats = run(flags + (["--spot_database_titles"] if spot else []))
        recorded[spot] = stats["options"]["spot_database_titles"]
        resolved[spot] = sorted(m["paper_id"] for m in read_rows(output / "mentions") if m["paper_id"])
    assert resolved == {False: [], True: ["900"]}
    assert recorded == {False: False, True: True}
