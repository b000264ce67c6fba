"""Review forms by meaning, not by spelling: field names in any spelling, every free-text field read
unless it is a score, flag, date or annotation column, forms nobody listed read, the text layouts; on fixture
files shaped after the documented forms (`tests/fixtures/reviews/`) and on the real exports under
`../shared/data/reviews` (skipped when absent)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractors.reviews.forms import (
    CSV_DUPLICATE_COLUMNS,
    JSON_DUPLICATE_KEYS,
    NOT_REVIEW_TEXT,
    REVIEW_TEXT_FIELDS,
    ReviewFields,
    disapere_text,
    is_free_text,
    normalize_field_name,
    parse_review_file,
)
from extractors.reviews.mentions import RECOMMENDED, extract_review_mentions
from extractors.reviews.records import Review, Submission
from mapping.records import DeadLetter

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


# ------------------------------------------------------------------ reading files: quotes, encodings, keys


def counted_read(data: bytes, path: str) -> tuple[list, Counter]:
    counts: Counter = Counter()
    items = list(parse_review_file(data, path, count=lambda name, n=1: counts.update({name: n})))
    return items, counts


def letters_of(items: list) -> list[tuple[str, str]]:
    return [(i.source, i.reason) for i in items if isinstance(i, DeadLetter)]


HEADER = "id,forum,summary\n"


def test_an_unterminated_quote_dead_letters_the_rows_it_swallows_never_one_review():
    text = HEADER + 'R1,S1,"fine"\nR2,S1,"a quote never closed\nR3,S1,third\nR4,S1,fourth\n'
    items = list(parse_review_file(text.encode(), "v/e.csv"))
    assert set(reviews_of(items)) == {"R1"}
    assert letters_of(items) == [("v/e.csv:3", "unterminated_quote")]
    assert "line 3" in next(i.detail for i in items if isinstance(i, DeadLetter))


def test_a_stray_quote_closed_rows_later_dead_letters_the_joined_row_and_reads_on():
    """The quote of row 3 closes in row 4 before a comma: one row of three fields whose forum spans lines, not a
    review of submission 'S1,broken\\nR3,S1'; row 5 is read."""
    text = HEADER + 'R1,S1,first\nR2,"S1,broken\nR3,S1",third\nR4,S1,fourth\n'
    items = list(parse_review_file(text.encode(), "v/e.csv"))
    assert set(reviews_of(items)) == {"R1", "R4"}
    assert letters_of(items) == [("v/e.csv:3", "bad_csv_row")]


def test_a_row_with_more_fields_than_the_header_is_a_dead_letter_and_reading_goes_on():
    text = HEADER + 'R1,S1,first\nR2,"S1,broken\nR3",S1,third,extra\nR4,S1,fourth\n'
    items = list(parse_review_file(text.encode(), "v/e.csv"))
    assert set(reviews_of(items)) == {"R1", "R4"}
    assert letters_of(items) == [("v/e.csv:3", "bad_csv_row")]


def test_a_quote_inside_an_unquoted_field_is_text():
    items = list(parse_review_file((HEADER + 'R1,S1,the "Attention" paper is missing\n').encode(), "v/e.csv"))
    assert reviews_of(items)["R1"].text.strip() == 'the "Attention" paper is missing'


@given(
    st.lists(st.text(alphabet='ab ,\n"', max_size=12), min_size=1, max_size=5),
    st.booleans(),
    st.integers(min_value=0),
)
def test_a_deleted_quote_never_joins_two_rows_into_one_review(texts, quote_all, pick):
    """Rows whose text holds commas, quotes and line breaks, written by the csv module, one quote then deleted:
    whatever is read, no review holds the text of two rows."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(["id", "forum", "summary"])
    writer.writerows([f"R{k}", "S1", f"@row{k}@ {text}"] for k, text in enumerate(texts))
    written = buffer.getvalue()
    whole = reviews_of(list(parse_review_file(written.encode(), "v/p.csv")))
    assert sorted(whole) == sorted(f"R{k}" for k in range(len(texts)))
    quotes = [k for k, char in enumerate(written) if char == '"']
    if not quotes:
        return
    cut = quotes[pick % len(quotes)]
    broken = written[:cut] + written[cut + 1 :]
    for review in reviews_of(list(parse_review_file(broken.encode(), "v/p.csv"))).values():
        assert review.text.count("@row") <= 1, review


def _fourteen_reviews() -> str:
    rows = [f"R{k},S{k % 5},The paper misses related work number {k}." for k in range(14)]
    return HEADER + "\n".join(rows) + "\n"


@pytest.mark.parametrize(
    ("codec", "counted"),
    [
        ("utf-16-le", "utf-16-le-without-bom"),
        ("utf-16-be", "utf-16-be-without-bom"),
        ("utf-16", "utf-16-bom"),
        ("utf-32", "utf-32-bom"),
    ],
)
def test_a_utf16_csv_is_read_as_its_utf8_self_and_its_encoding_counted(codec, counted):
    text = _fourteen_reviews()
    items, counts = counted_read(text.encode(codec), "v/e.csv")
    assert not letters_of(items)  # not 14 `missing_id` letters
    assert reviews_of(items) == reviews_of(list(parse_review_file(text.encode(), "v/e.csv")))
    assert len(reviews_of(items)) == 14 and counts == {f"reading:encoding:{counted}": 1}


def test_utf32_without_a_mark_is_a_dead_letter_that_says_so():
    items = list(parse_review_file(_fourteen_reviews().encode("utf-32-le"), "v/e.csv"))
    assert letters_of(items) == [("v/e.csv", "undecodable_bytes")]
    assert "UTF-32" in items[0].detail


def test_a_real_csv_export_in_utf16_without_a_mark_reads_the_same_reviews(shared):
    path = shared / "reviews" / "review-citation-bias" / "annotated_data_for_reviews" / "ICLRwithLabels.csv"
    text = path.read_bytes().decode("utf-8-sig")
    assert "\x00" not in text and any(ord(c) > 127 for c in text)  # so UTF-8 cannot read it in UTF-16
    wide = reviews_of(list(parse_review_file(text.encode("utf-16-le"), str(path))))
    assert wide == reviews_of(read(path)) and len(wide) == 34


def test_a_real_csv_export_with_a_closing_quote_deleted_reads_the_rows_before_and_dead_letters_the_rest(shared):
    path = shared / "reviews" / "review-citation-bias" / "annotated_data_for_reviews" / "ICLRwithLabels.csv"
    text = path.read_bytes().decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    tenth = rows[9]["summary_of_the_paper"]  # the tenth row's first text field, quoted as it holds line breaks
    quoted = '"' + tenth.replace('"', '""') + '"'
    assert "\n" in tenth and text.count(quoted) == 1
    broken = text.replace(quoted, quoted[:-1])
    items = list(parse_review_file(broken.encode(), "v/ICLRwithLabels.csv"))
    assert set(reviews_of(items)) == {row["id"] for row in rows[:9]}
    assert [(source, reason in ("bad_csv", "unterminated_quote")) for source, reason in letters_of(items)] == [
        ("v/ICLRwithLabels.csv:11", True)
    ]


def test_duplicate_json_keys_keep_the_last_value_and_are_counted():
    record = (
        '{"id": "S1", "title": "First title", "title": "Last title", "abstract": "A.", "reviews": ['
        '{"comments": "An early draft.", "comments": "The final review text."}]}'
    )
    items, counts = counted_read(record.encode(), "v/S1.json")
    submission = next(i for i in items if isinstance(i, Submission))
    assert submission.title == "Last title" and reviews_of(items)["S1/r0"].text.strip() == "The final review text."
    assert counts == {JSON_DUPLICATE_KEYS: 2}
    lines = '{"id": "R1", "forum": "S1", "content": {"summary": "x", "summary": "The kept one."}}\n' * 2
    items, counts = counted_read(lines.encode(), "v/notes.jsonl")
    assert counts == {JSON_DUPLICATE_KEYS: 2} and reviews_of(items)["R1"].text.strip() == "The kept one."


def test_duplicate_csv_columns_keep_the_last_and_are_counted():
    items, counts = counted_read(b"id,forum,summary,summary\nR1,S1,early,The kept one.\n", "v/e.csv")
    assert reviews_of(items)["R1"].text.strip() == "The kept one." and counts == {CSV_DUPLICATE_COLUMNS: 1}


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
