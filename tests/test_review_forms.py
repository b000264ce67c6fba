"""Review forms by meaning, not by spelling (issue 19): field names in any spelling, every free-text field read
unless it is a score, flag, date or annotation column, forms nobody listed read, the text layouts; on fixture
files shaped after the documented forms (`tests/fixtures/reviews/`) and on the real exports under
`../shared/data/reviews` (skipped when absent)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from extractors.records import DeadLetter
from extractors.reviews.forms import (
    NOT_REVIEW_TEXT,
    REVIEW_TEXT_FIELDS,
    ReviewFields,
    disapere_text,
    is_free_text,
    normalize_field_name,
    parse_review_file,
)
from extractors.reviews.labels import Rate, wilson
from extractors.reviews.mentions import RECOMMENDED, extract_review_mentions
from extractors.reviews.records import Review, Submission

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reviews"


def read(path: Path, fields: ReviewFields | None = None) -> list:
    return list(parse_review_file(path.read_bytes(), str(path), fields))


def reviews_of(items: list) -> dict[str, Review]:
    return {i.review_id: i for i in items if isinstance(i, Review)}


def recommended_titles(review: Review) -> list[str]:
    return [m.title for m in extract_review_mentions(review.text, review.sections) if m.kind == RECOMMENDED]


# ------------------------------------------------------------------------------------------- field names


def test_field_names_are_one_spelling_whatever_the_case_spaces_and_punctuation():
    spellings = ("Reasons_to_reject", "reasons to reject", "REASONS-TO-REJECT", " reasons__to  reject ")
    assert {normalize_field_name(s) for s in spellings} == {"reasons_to_reject"}
    assert normalize_field_name("Clarity, Quality, Novelty And Reproducibility") == (
        "clarity_quality_novelty_and_reproducibility"
    )
    assert normalize_field_name("TL;DR") == "tl_dr"
    assert all(normalize_field_name(name) == name for name in (*REVIEW_TEXT_FIELDS, *NOT_REVIEW_TEXT))
    assert not set(REVIEW_TEXT_FIELDS) & NOT_REVIEW_TEXT


@pytest.mark.parametrize(
    ("value", "name", "free"),
    [
        ("3: The contributions are significant and somewhat new.", "", False),
        ("4 excellent", "", False),
        ("8: accept, good paper", "", False),
        ("4 = Strong: This study provides sufficient support for all of its claims.", "", False),
        ("Yes", "", False),
        ("['No ethics review needed.']", "", False),
        ("2024-07-05", "", False),
        ("/attachment/0123abcd.pdf", "", False),
        ("Confident but not absolutely certain", "confidence_level", False),
        ("1. The related work misses Smith et al. (2020).", "", True),
        ("The comparison with earlier work is missing.", "", True),
        ("No comparison with prior work on sparse attention is given; see Smith (2020).", "", True),
        (
            "A long justification of the recommendation, citing prior work. " * 6,
            "justification_of_recommendation",
            True,
        ),
    ],
)
def test_free_text_is_told_from_scores_flags_dates_and_links(value, name, free):
    assert is_free_text(value, name) is free


def test_review_fields_only_and_skip_take_any_spelling():
    row = b"id,forum,Reasons_To_Reject,Questions_for_the_Authors,Secret_Notes\nR1,S1,Weak.,Why?,Internal remark.\n"
    everything = reviews_of(list(parse_review_file(row, "e.csv")))["R1"]
    assert [name for _, name in everything.sections] == [
        "reasons_to_reject",
        "questions_for_the_authors",
        "secret_notes",
    ]
    only = reviews_of(list(parse_review_file(row, "e.csv", ReviewFields(only=("reasons to reject",)))))["R1"]
    assert only.text.strip() == "Weak."
    skipped = reviews_of(list(parse_review_file(row, "e.csv", ReviewFields(skip=("Secret Notes",)))))["R1"]
    assert "Internal remark" not in skipped.text and "Why?" in skipped.text


# ---------------------------------------------------------------------------- fixture forms (documented)


def test_acl_rolling_review_csv_with_capitalised_fields_is_read():
    """The form of issue 19's report: `Reasons_to_reject`, `Missing_References`, `Questions_for_the_Authors`
    (EMNLP 2023's export), which the old reader dead-lettered as empty reviews."""
    items = read(FIXTURES / "arr-emnlp-2023-export.csv")
    reviews = reviews_of(items)
    assert set(reviews) == {"ArrR1"}
    review = reviews["ArrR1"]
    assert [name for _, name in review.sections] == [
        "paper_topic_and_main_contributions",
        "reasons_to_accept",
        "reasons_to_reject",
        "missing_references",
        "questions_for_the_authors",
        "typos_grammar_style_and_presentation_improvements",
    ]
    assert "Strong: This study" not in review.text and "Pretty sure" not in review.text  # scores are not text
    assert (review.year, review.review_kind) == (2023, "official")
    assert recommended_titles(review) == ["Cross-Lingual Transfer for Sequence Tagging with Shared Encoders"]
    letters = {i.source.rsplit("#", 1)[-1]: i.reason for i in items if isinstance(i, DeadLetter)}
    assert letters == {"ArrR2": "empty_review", "ArrC3": "not_a_review"}  # scores only; the authors' reply


def test_icml_submission_with_replies_reads_the_review_and_passes_over_rebuttal_and_decision():
    items = read(FIXTURES / "icml-2025-v2.json")
    submission = next(i for i in items if isinstance(i, Submission) and i.title)
    assert (submission.submission_id, submission.year, submission.authors) == (
        "IcmlS1",
        2025,
        ("A. Author", "B. Author"),
    )
    reviews = reviews_of(items)
    assert set(reviews) == {"IcmlR1"}  # the authors' rebuttal and the decision are no reviews
    review = reviews["IcmlR1"]
    assert "essential_references_not_discussed" in [name for _, name in review.sections]
    assert "Weak accept" not in review.text and "Affirmed" not in review.text and "None." not in review.text
    assert recommended_titles(review) == ["Gated Controllers for Partially Observed Systems"]
    assert not any(isinstance(i, DeadLetter) for i in items)


def test_tmlr_and_a_form_nobody_listed_are_read_not_dropped():
    reviews = reviews_of(read(FIXTURES / "tmlr-colm-v2.jsonl"))
    tmlr, colm = reviews["TmlrR1"], reviews["ColmR1"]
    assert [name for _, name in tmlr.sections] == [
        "summary_of_contributions",
        "strengths_and_weaknesses",
        "requested_changes",
    ]
    assert recommended_titles(tmlr) == ["Revisiting the Calibration of Modern Neural Networks"]
    # `limitations_the_authors_should_address` is in no list: read because it is free text
    assert "limitations_the_authors_should_address" in [name for _, name in colm.sections]
    assert "Good paper, accept" not in colm.text and "reviewer is confident" not in colm.text
    assert recommended_titles(colm) == ["Lost in the Middle: How Language Models Use Long Contexts"]


def test_cvf_style_text_export_gives_one_review_per_reviewer_without_scores():
    items = read(FIXTURES / "CVPR2024_1234.txt")
    submission = next(i for i in items if isinstance(i, Submission))
    assert (submission.submission_id, submission.title, submission.year) == ("1234", "Depth from Sparse Events", 2024)
    reviews = reviews_of(items)
    assert sorted(reviews) == ["1234/r0", "1234/r1"]
    first = reviews["1234/r0"]
    assert [name for _, name in first.sections] == ["summary_of_the_paper", "strengths", "weaknesses"]
    assert "Borderline" not in first.text and "Confident" not in first.text
    assert recommended_titles(first) == ["Learning Stereo from Sparse Event Cameras"]
    assert recommended_titles(reviews["1234/r1"]) == []


def test_a_review_note_with_scores_only_is_a_dead_letter_and_a_flag_is_no_text():
    note = {
        "id": "R9",
        "forum": "S9",
        "content": {"rating": {"value": "6: accept"}, "missing_references": {"value": "No"}},
    }
    items = list(parse_review_file(json.dumps(note).encode(), "n.json"))
    assert [(type(i).__name__, getattr(i, "reason", None)) for i in items] == [("DeadLetter", "empty_review")]


# -------------------------------------------------------------------------------------- real exports


def test_real_iclr_v1_csv_export_reads_its_four_text_fields_and_no_annotation(shared):
    path = shared / "reviews" / "review-citation-bias" / "annotated_data_for_reviews" / "ICLRwithLabels.csv"
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    reviews = reviews_of(read(path))
    assert len(reviews) == len(rows) == 34
    names = {name for review in reviews.values() for _, name in review.sections}
    assert names == {
        "summary_of_the_paper",
        "strength_and_weaknesses",
        "clarity_quality_novelty_and_reproducibility",
        "summary_of_the_review",
    }  # `confidence`, `correctness`, `recommendation`, `citation_suggestions` are not text
    recommendations = {row["id"]: row["recommendation"] for row in rows}
    assert not any(recommendations[i] in review.text for i, review in reviews.items())


def test_real_neurips_v2_csv_export_with_a_capitalised_column(shared):
    path = (
        shared
        / "reviews"
        / "review-citation-bias"
        / "annotated_data_for_suggested_papers"
        / "NeurIPS2023_extra_annoatated_pur.csv"
    )
    with path.open(newline="") as handle:
        ids = {row["id"] for row in csv.DictReader(handle)}
        handle.seek(0)
        header = next(csv.reader(handle))
    assert "Reviewer_Confidence" in header  # a capitalised column of the export
    reviews = reviews_of(read(path))
    assert set(reviews) == ids
    names = {name for review in reviews.values() for _, name in review.sections}
    assert names == {"summary", "strengths", "weaknesses", "questions", "limitations"}
    assert not any("Yes, this peer review" in r.text for r in reviews.values())  # the LLM's `response` column


def test_real_peerread_layouts_keep_capitalised_score_fields_out(shared):
    folder = shared / "reviews" / "neurips-openreview-2023-2025"
    path = sorted(folder.glob("neurips_2024/*.json"))[0]
    record = json.loads(path.read_text())
    reviews = [i for i in read(path) if isinstance(i, Review)]
    assert len(reviews) == len(record["reviews"])
    for review, raw in zip(reviews, record["reviews"], strict=True):
        assert review.text.strip() == raw["comments"].strip().replace("\r\n", "\n") or review.text.startswith("SUMMARY")
        assert raw["TITLE"] not in review.text.split("\n")[0]  # TITLE, RECOMMENDATION, DATE are no text
    iclr = shared / "reviews" / "peerread-iclr2017-sample" / "304.json"
    items = read(iclr)
    empty = [i for i in items if isinstance(i, DeadLetter) and i.reason == "empty_review"]
    assert len(reviews_of(items)) + len(empty) == len(json.loads(iclr.read_text())["reviews"])
    assert len(empty) == sum(not r["comments"].strip() for r in json.loads(iclr.read_text())["reviews"])


def test_real_disapere_review_is_its_sentences_joined(shared):
    path = sorted((shared / "reviews" / "disapere-iclr-2019-2020" / "final_dataset").glob("*/*.json"))[0]
    record = json.loads(path.read_text())
    (review,) = [i for i in read(path) if isinstance(i, Review)]
    submission = next(i for i in read(path) if isinstance(i, Submission))
    assert (review.review_id, review.submission_id) == (record["metadata"]["review_id"], record["metadata"]["forum_id"])
    assert submission.year == int(record["metadata"]["conference"][-4:])
    assert review.text.split() == disapere_text(record["review_sentences"]).split()


# ------------------------------------------------------------------------------------------ the figures


def test_wilson_interval_matches_the_closed_form_and_its_edges():
    low, high = wilson(16, 17)
    assert round(low, 3) == 0.730 and round(high, 3) == 0.990
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(5, 5)[1] == pytest.approx(1.0) and wilson(0, 5)[0] == pytest.approx(0.0)
    assert Rate(3, 4).as_dict() == {"value": 0.75, "hits": 3, "of": 4, "ci95": [0.301, 0.954]}
