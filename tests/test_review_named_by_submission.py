"""A work named by a name the submission's own title or abstract writes is `discussed` (`named_by_submission`;
docs/citationr.md), in the rules, under the learned decision and in a pipeline run that reads the submission's
abstract from its review file. Every expected decision is worked out by hand."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.reviews.bibliographies import with_own_text
from extractors.reviews.mentions import MentionConfig, extract_review_mentions
from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography
from extractors.reviews.records import DISCUSSED, RECOMMENDED, Review, Submission
from pipelines.citationr import MineMentions
from tests.support.labelled_reviews import reviews_with_own_text

WEAKNESSES = ((0, "weaknesses"),)
ASKS = "The authors should compare with VampNet and MusicGen."
ABSTRACT = "WhAM is built by finetuning VampNet, a masked acoustic token model, on 10k coda recordings."


def _decided(text: str, bibliography: Bibliography) -> list[tuple[str, str, str]]:
    return [(m.text, m.kind, m.reason) for m in extract_review_mentions(text, WEAKNESSES, bibliography)]


def test_a_name_the_abstract_writes_is_not_recommended_the_others_are():
    # without the abstract both names are asked for; with it, only the one the submission does not write
    assert [kind for _, kind, _ in _decided(ASKS, NO_BIBLIOGRAPHY)] == [RECOMMENDED, RECOMMENDED]
    own = Bibliography(own_text=f"WhAM: towards a translation model for sperm whales\n{ABSTRACT}")
    assert _decided(ASKS, own) == [
        ("VampNet", DISCUSSED, "named_by_submission"),
        ("MusicGen", RECOMMENDED, "request_cue"),
    ]
    # the abstract is not a bibliography: a run that has only it is still undecided about `already_cited`
    assert not own.known


def test_only_a_whole_token_with_its_case_counts():
    text = "Why not compare to LOCO and CLIP in this evaluation?"
    assert [kind for _, kind, _ in _decided(text, NO_BIBLIOGRAPHY)] == [RECOMMENDED, RECOMMENDED]
    for abstract in (
        "We propose R-LOCO, which bridges local and global explanations.",  # part of a hyphenated token
        "We propose LOCOMOTION and a clip-level loss.",  # part of a longer word; another case
        "Our CLIP-based encoder ...",  # a longer token again
    ):
        kinds = [kind for _, kind, _ in _decided(text, Bibliography(own_text=abstract))]
        assert kinds == [RECOMMENDED, RECOMMENDED], abstract
    kinds = _decided(text, Bibliography(own_text="Unlike LOCO (Lei et al.), our method ..."))
    assert kinds[0] == ("LOCO", DISCUSSED, "named_by_submission") and kinds[1][1] == RECOMMENDED


def test_titles_and_author_years_are_not_decided_by_a_word_of_the_abstract():
    text = "The authors should cite \u201cGraph Rewiring for Long-Range Message Passing\u201d.\nThe idea was already proposed by Smith et al. (2020)."
    own = Bibliography(own_text="Graph Rewiring for Long-Range Message Passing; Smith et al. (2020) did it first.")
    assert [kind for _, kind, _ in _decided(text, own)] == [RECOMMENDED, RECOMMENDED]


def test_with_own_text_joins_title_and_abstract_and_keeps_the_references():
    cited = Bibliography(titles=("Attention is all you need",), source="own_paper")
    submission = Submission("s1", "VampNet for whales", ABSTRACT, 2024, "NeurIPS", "mem")
    joined = with_own_text(cited, submission)
    assert joined.titles == cited.titles and joined.source == "own_paper"
    assert joined.own_text == f"VampNet for whales\n{ABSTRACT}"
    assert with_own_text(cited, None) is cited
    assert with_own_text(cited, Submission("s1", None, None, None, None, "mem")) is cited


def test_the_learned_decision_leaves_a_name_the_submission_writes_discussed():
    config = MentionConfig(name_model="builtin")
    own = Bibliography(own_text=ABSTRACT)
    decided = {m.text: (m.kind, m.reason) for m in extract_review_mentions(ASKS, WEAKNESSES, own, config)}
    assert decided["VampNet"] == (DISCUSSED, "named_by_submission")
    assert extract_review_mentions(ASKS, WEAKNESSES, NO_BIBLIOGRAPHY, config)[0].kind == RECOMMENDED


@pytest.mark.beam
def test_a_run_reads_the_abstract_of_the_review_file():
    review = Review("s1/r1", "s1", ASKS, WEAKNESSES, "official", 2024, "mem")
    other = Review("s2/r1", "s2", ASKS, WEAKNESSES, "official", 2024, "mem")  # its submission writes neither
    with TestPipeline(runner="FnApiRunner") as p:
        mined = {
            "reviews": p | "Reviews" >> beam.Create([review, other]),
            "submissions": p
            | "Submissions"
            >> beam.Create(
                [
                    Submission("s1", "WhAM", ABSTRACT, 2024, "NeurIPS", "mem"),
                    Submission("s2", "Another paper", "About something else.", 2024, "NeurIPS", "mem"),
                ]
            ),
            "bibliographies": p | "Bibs" >> beam.Create([]),
        } | MineMentions(MentionConfig())
        kinds = mined["mentions"] | beam.Map(lambda r: (r.review_id, r.mention.text, r.mention.kind))
        assert_that(
            kinds,
            equal_to(
                [
                    ("s1/r1", "VampNet", DISCUSSED),
                    ("s1/r1", "MusicGen", RECOMMENDED),
                    ("s2/r1", "VampNet", RECOMMENDED),
                    ("s2/r1", "MusicGen", RECOMMENDED),
                ]
            ),
        )


def test_a_real_review_whose_submission_names_the_work(shared):
    """NeurIPS review IL1wvzOgqD/r0 (a false positive of a spent test sample): "These modules are borrowed from
    previous work, VampNet" of a submission whose abstract says "WhAM is built by finetuning VampNet"; labelled as
    suggesting nothing."""
    path = shared / "reviews" / "neurips-openreview-2023-2025"
    (file,) = sorted(path.glob("*/IL1wvzOgqD.json"))
    review, own = reviews_with_own_text(file)["IL1wvzOgqD/r0"]
    assert "built by finetuning VampNet" in own.own_text and not own.known
    before = [m for m in extract_review_mentions(review.text, review.sections) if m.text == "VampNet"]
    after = [m for m in extract_review_mentions(review.text, review.sections, own) if m.text == "VampNet"]
    assert [m.kind for m in before] == [RECOMMENDED] and [(m.kind, m.reason) for m in after] == [
        (DISCUSSED, "named_by_submission")
    ]
