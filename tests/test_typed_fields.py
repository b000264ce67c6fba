"""Hand-written hostile records: each wrongly typed field is either coerced to one exact value or dead-lettered
with a reason that names the field (`wrong_type:<field path>`), never a crash."""

from __future__ import annotations

import csv
import datetime as dt
import json

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.documents import fields
from extractors.documents.files import parse_document, parse_metadata_line
from extractors.documents.tei import DocumentError
from extractors.reviews.forms import parse_review_file
from extractors.reviews.records import Review, Submission
from extractors.schemas import PAPERS_SCHEMA, paper_row
from mapping.records import DeadLetter, Paper, ParsedDocument
from tests.support.counters import counter_dict

ARXIV = {
    "id": "0704.0001",
    "title": "A Hand-Written Paper",
    "authors": "A. Smith and B. Lee",
    "categories": "cs.IR cs.CL",
    "doi": "10.1000/ABC",
    "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
}
S2ORC_METADATA = {
    "paper_id": "77490025",
    "title": "A Metadata Record",
    "authors": [{"first": "Ada", "middle": ["B."], "last": "Lovelace", "suffix": ""}],
    "year": 1975,
    "arxiv_id": None,
    "doi": None,
    "mag_field_of_study": ["Medicine"],
}


def metadata(record: dict, **changes) -> Paper | DeadLetter:
    return parse_metadata_line(json.dumps({**record, **changes}).encode(), "meta.jsonl:7")


def assert_dead(result: object, reason: str, detail: str | None = None) -> None:
    assert isinstance(result, DeadLetter), result
    assert result.reason == reason, result
    if detail is not None:
        assert result.detail == detail
    assert result.source in ("meta.jsonl:7", "doc.json", "notes.jsonl:1", "p.json")


# ------------------------------------------------------------------------------------------- arXiv snapshot


def test_integer_created_dead_letters_naming_versions_created():
    result = metadata(ARXIV, versions=[{"version": "v1", "created": 1175541522}])
    assert_dead(result, "wrong_type:versions.created", "versions.created: expected text, got integer")


def test_versions_that_is_not_a_list_dead_letters():
    assert_dead(metadata(ARXIV, versions=5), "wrong_type:versions", "versions: expected list of objects, got integer")
    assert_dead(metadata(ARXIV, versions=["v1"]), "wrong_type:versions")


def test_authors_given_as_a_list_of_names_are_those_names():
    paper = metadata(ARXIV, authors=["A. Smith", " B. Lee ", ""])
    assert paper.authors == ("A. Smith", "B. Lee")
    assert metadata(ARXIV).authors == ("A. Smith", "B. Lee")  # the one-string form, for comparison


def test_authors_that_are_a_number_dead_letter():
    assert_dead(metadata(ARXIV, authors=7), "wrong_type:authors", "authors: expected list of names, got integer")
    assert_dead(metadata(ARXIV, authors=["A. Smith", 7]), "wrong_type:authors")


def test_integer_doi_is_not_a_doi_and_the_paper_is_kept():
    paper = metadata(ARXIV, doi=1234)
    assert isinstance(paper, Paper)
    assert (paper.paper_id, paper.doi, paper.date) == ("0704.0001", None, dt.date(2007, 4, 2))
    assert_dead(metadata(ARXIV, doi=10.1), "wrong_type:doi", "doi: expected identifier text, got number")
    assert_dead(metadata(ARXIV, doi=["10.1000/abc"]), "wrong_type:doi")


def test_arxiv_id_that_is_not_text_dead_letters():
    assert_dead(metadata(ARXIV, id=["0704.0001"]), "wrong_type:id")
    assert_dead(metadata(ARXIV, id=704.0001), "wrong_type:id")  # a float loses trailing zeros
    assert_dead(metadata(ARXIV, id=7040001), "bad_identifier")  # an integer is read as text, and is no arXiv id


def test_numbers_become_text_and_categories_lists_are_read():
    paper = metadata(ARXIV, title=42, categories=["cs.IR", "cs.CL"], abstract=3.5)
    assert (paper.title, paper.abstract, paper.categories) == ("42", "3.5", ("cs.IR", "cs.CL"))
    assert_dead(metadata(ARXIV, title={"text": "x"}), "wrong_type:title", "title: expected text, got object")
    assert_dead(metadata(ARXIV, categories=5), "wrong_type:categories")


def test_a_lone_surrogate_becomes_a_replacement_character_parquet_can_write():
    paper = metadata(ARXIV, title="caf\ud800 au lait")
    assert paper.title == "caf\ufffd au lait"
    table = pa.Table.from_pylist([paper_row(paper)], schema=PAPERS_SCHEMA)
    assert table.column("title").to_pylist() == ["caf\ufffd au lait"]


# ------------------------------------------------------------------------------------------ S2ORC metadata


def test_s2orc_metadata_year_paper_id_and_fields():
    paper = metadata(S2ORC_METADATA, year="1975", paper_id=77490025, mag_field_of_study="Medicine")
    assert (paper.year, paper.paper_id, paper.s2_paper_id, paper.categories) == (
        1975,
        "77490025",
        "77490025",
        ("Medicine",),
    )
    assert paper.authors == ("Ada B. Lovelace",)
    assert metadata(S2ORC_METADATA, year=1975.0).year == 1975
    assert metadata(S2ORC_METADATA, year="not a year").year is None
    assert_dead(metadata(S2ORC_METADATA, year=[1975]), "wrong_type:year", "year: expected integer, got list")
    assert_dead(metadata(S2ORC_METADATA, paper_id=["77490025"]), "wrong_type:paper_id")
    assert_dead(metadata(S2ORC_METADATA, paper_id=None), "bad_identifier")
    assert_dead(metadata(S2ORC_METADATA, authors=[{"first": ["Ada"]}]), "wrong_type:authors.first")
    assert_dead(metadata(S2ORC_METADATA, mag_field_of_study=[{"x": 1}]), "wrong_type:mag_field_of_study")


@pytest.mark.parametrize("year", [float("nan"), float("inf"), float("-inf")])
def test_a_metadata_year_that_is_not_finite_is_dropped_counted_and_the_paper_kept(year):
    count, counts = counter_dict()
    line = json.dumps({**S2ORC_METADATA, "year": year}).encode()  # Python writes NaN / Infinity, and reads them
    assert b"NaN" in line or b"Infinity" in line
    paper = parse_metadata_line(line, "meta.jsonl:7")
    assert isinstance(paper, Paper), paper
    assert (paper.paper_id, paper.title, paper.year) == ("77490025", "A Metadata Record", None)
    assert parse_metadata_line(line, "meta.jsonl:7", count) == paper
    assert counts == {"field_dropped:year_not_finite": 1}


def test_a_repeated_key_in_a_metadata_line_keeps_the_last_value_and_is_counted():
    count, counts = counter_dict()
    line = b'{"paper_id": "77490025", "title": "First", "year": 1975, "title": "Second", "authors": []}'
    paper = parse_metadata_line(line, "meta.jsonl:7", count)
    assert (paper.title, paper.year) == ("Second", 1975)
    assert counts == {"json_duplicate_key:title": 1}
    arxiv = b'{"id": "0704.0001", "versions": [{"created": "Mon, 2 Apr 2007 19:18:42 GMT", "version": "v1"}],'
    arxiv += b' "categories": "cs.IR", "categories": "cs.CL cs.IR", "title": "T", "id": "0704.0002"}'
    count, counts = counter_dict()
    paper = parse_metadata_line(arxiv, "meta.jsonl:8", count)
    assert (paper.paper_id, paper.categories) == ("0704.0002", ("cs.CL", "cs.IR"))
    assert counts == {"json_duplicate_key:categories": 1, "json_duplicate_key:id": 1}
    count, counts = counter_dict()
    assert isinstance(parse_metadata_line(b'{"title": "x", "title": "y"}', "meta.jsonl:9", count), DeadLetter)
    assert counts == {}  # a dead letter counts nothing else, as a document's does


def test_paper_from_metadata_turns_any_other_error_into_a_parser_error_dead_letter(monkeypatch):
    def broken(value):
        raise TypeError("boom")

    monkeypatch.setattr("extractors.documents.metadata.normalize_doi", broken)
    assert_dead(metadata(ARXIV), "parser_error", "TypeError: boom")


# ------------------------------------------------------------------------------------------------ S2ORC

TEXT = "As shown in [1] and [2], it works."


def s2orc(**block_changes) -> dict:
    return {
        "paper_id": "1",
        "title": "A Document",
        "body_text": [
            {
                "text": TEXT,
                "section": "Intro",
                "sec_num": "1",
                "cite_spans": [{"start": 12, "end": 15, "ref_id": "BIBREF0"}],
                **block_changes,
            }
        ],
        "bib_entries": {"BIBREF0": {"title": "Cited", "year": 2019, "other_ids": {"DOI": ["10.1/x"]}}},
    }


def document(record: dict) -> ParsedDocument | DeadLetter:
    return parse_document(json.dumps(record).encode(), "doc.json", "s2orc")


def test_integer_section_becomes_its_text():
    paragraph = document(s2orc(section=3, sec_num=2)).paragraphs[0]
    assert paragraph.section_heading == "3"
    assert document(s2orc(section=2.0)).paragraphs[0].section_heading == "2"
    assert_dead(document(s2orc(section=["Intro"])), "wrong_type:body_text.section")
    assert_dead(
        document(s2orc(section=True)), "wrong_type:body_text.section", "body_text.section: expected text, got boolean"
    )


def test_reversed_or_overlong_cite_spans_drop_only_that_mention():
    spans = [
        {"start": 24, "end": 20, "ref_id": "BIBREF1"},  # start after end
        {"start": 20, "end": len(TEXT) + 5, "ref_id": "BIBREF1"},  # past the text
        {"start": -1, "end": 3, "ref_id": "BIBREF1"},
        {"start": 12, "end": 15, "ref_id": "BIBREF0"},
        {"start": "20", "end": 23.0, "ref_id": 7},  # integer text, an integral float, an integer id
    ]
    paragraph = document(s2orc(cite_spans=spans)).paragraphs[0]
    assert [(m.start, m.end, m.text, m.bib_id) for m in paragraph.mentions] == [
        (12, 15, "[1]", "BIBREF0"),
        (20, 23, "[2]", "7"),
    ]


def test_a_cite_offset_or_year_that_is_not_finite_drops_that_field_and_keeps_the_document():
    spans = [
        {"start": float("nan"), "end": 15, "ref_id": "BIBREF0"},
        {"start": 20, "end": float("inf"), "ref_id": "BIBREF1"},
        {"start": float("-inf"), "end": float("nan")},
        {"start": 12, "end": 15, "ref_id": "BIBREF0"},
    ]
    record = {**s2orc(cite_spans=spans), "year": float("nan")}
    record["bib_entries"]["BIBREF0"]["year"] = float("inf")
    count, counts = counter_dict()
    parsed = parse_document(json.dumps(record).encode(), "doc.json", "s2orc", count)
    assert isinstance(parsed, ParsedDocument), parsed
    assert [(m.start, m.end, m.bib_id) for m in parsed.paragraphs[0].mentions] == [(12, 15, "BIBREF0")]
    assert parsed.year is None and parsed.bib_entries[0].year is None and parsed.bib_entries[0].title == "Cited"
    assert counts == {
        "cite_spans_dropped:offset_not_finite": 3,
        "field_dropped:year_not_finite": 1,
        "field_dropped:bib_entries.year_not_finite": 1,
    }


def test_cite_span_offsets_and_ids_of_the_wrong_type_dead_letter():
    bad_start = [{"start": "twelve", "end": 15}]
    assert_dead(
        document(s2orc(cite_spans=bad_start)),
        "wrong_type:body_text.cite_spans.start",
        "body_text.cite_spans.start: expected integer, got text",
    )
    assert_dead(document(s2orc(cite_spans=[{"start": 12.5, "end": 15}])), "wrong_type:body_text.cite_spans.start")
    assert_dead(
        document(s2orc(cite_spans=[{"start": 12, "end": 15, "ref_id": ["B"]}])),
        "wrong_type:body_text.cite_spans.ref_id",
    )
    assert_dead(document(s2orc(cite_spans=5)), "wrong_type:body_text.cite_spans")


def test_wrongly_typed_structure_dead_letters():
    record = s2orc()
    assert_dead(document(s2orc(text=["a", "b"])), "wrong_type:body_text.text")
    assert_dead(document({**record, "body_text": 5}), "wrong_type:body_text")
    assert_dead(
        document({**record, "body_text": ["text"]}),
        "wrong_type:body_text",
        "body_text: expected list of objects, got list containing text",
    )
    assert_dead(document({**record, "metadata": "x"}), "wrong_type:metadata")
    assert_dead(document({**record, "paper_id": [1]}), "wrong_type:paper_id")
    assert_dead(document({**record, "bib_entries": {"BIBREF0": "Cited"}}), "wrong_type:bib_entries")
    assert_dead(
        document({**record, "bib_entries": {"BIBREF0": {"other_ids": {"DOI": [{"id": "10.1/x"}]}}}}),
        "wrong_type:bib_entries.other_ids.DOI",
    )


def test_s2orc_coercions_of_ids_titles_and_bib_entries():
    record = {**s2orc(), "paper_id": 123, "title": 7}
    record["bib_entries"] = {
        "BIBREF0": {"title": 1984, "year": "2019", "authors": "A. Smith and B. Lee", "venue": None}
    }
    result = document(record)
    assert (result.paper_id, result.s2_paper_id, result.title) == ("123", "123", "7")
    assert result.bib_entries[0].title == "1984"
    assert (result.bib_entries[0].year, result.bib_entries[0].authors) == (2019, ("A. Smith", "B. Lee"))


def test_unarxive_bib_entry_ids_accept_plain_strings_and_reject_other_types():
    record = {
        "paper_id": "2105.05862",
        "_source_hash": "b7d5",
        "metadata": {"id": "2105.05862", "title": "T"},
        "body_text": [{"text": TEXT, "cite_spans": [{"start": 12, "end": 15, "ref_id": "aa"}]}],
        "bib_entries": {"aa": {"bib_entry_raw": "Some title.", "contained_arXiv_ids": ["1905.00003"], "ids": {}}},
    }
    assert document(record).bib_entries[0].arxiv_id == "1905.00003"
    record["bib_entries"]["aa"]["contained_links"] = 5
    assert_dead(document(record), "wrong_type:bib_entries.contained_links")


def test_parse_s2orc_record_turns_any_other_error_into_a_parser_error(monkeypatch):
    from extractors.documents.s2orc import parse_s2orc_record

    def broken(text, spans):
        raise IndexError("boom")

    monkeypatch.setattr("extractors.documents.sentences.split_sentences", broken)
    with pytest.raises(DocumentError) as caught:
        parse_s2orc_record(s2orc(), "doc.json", "doc")
    assert (caught.value.reason, caught.value.detail) == ("parser_error", "IndexError: boom")


# ---------------------------------------------------------------------------------------------- reviews

NOTE = {
    "id": "R1",
    "forum": "S1",
    "invitations": ["NeurIPS.cc/2024/Conference/Submission1/-/Official_Review"],
    "content": {"summary": {"value": "A fine paper."}},
}


def notes(*records: dict) -> list:
    return list(parse_review_file("\n".join(json.dumps(r) for r in records).encode(), "notes.jsonl"))


def test_review_note_with_a_numeric_or_list_valued_text_field_is_read_as_text():
    content = {"weaknesses": {"value": 5}, "questions": {"value": ["Why?", "How?"]}}
    items = notes({**NOTE, "content": content})
    review = next(i for i in items if isinstance(i, Review))
    assert review.text == "WEAKNESSES:\n5\n\nQUESTIONS:\nWhy?, How?\n\n"
    assert review.sections == ((12, "weaknesses"), (26, "questions"))
    assert (review.text[12:13], review.text[26:30]) == ("5", "Why?")


def test_review_note_with_an_object_or_nested_list_text_field_dead_letters_that_note_only():
    bad = {**NOTE, "id": "R2", "content": {"weaknesses": {"value": {"a": 1}}}}
    nested = {**NOTE, "id": "R3", "content": {"weaknesses": [["a"]]}}
    items = notes(bad, nested, NOTE)
    letters = [i for i in items if isinstance(i, DeadLetter)]
    assert [(d.source, d.reason, d.detail) for d in letters] == [
        ("notes.jsonl:1", "wrong_type:content.weaknesses", "content.weaknesses: expected text, got object"),
        (
            "notes.jsonl:2",
            "wrong_type:content.weaknesses",
            "content.weaknesses: expected list of text, got list containing list",
        ),
    ]
    assert [i.review_id for i in items if isinstance(i, Review)] == ["R1"]


def test_review_ids_and_dates_of_the_wrong_type():
    letters = [i for i in notes({**NOTE, "forum": {"id": "S1"}}) if isinstance(i, DeadLetter)]
    assert [d.reason for d in letters] == ["wrong_type:forum"]
    review = next(i for i in notes({**NOTE, "id": 17, "cdate": 1e30, "invitations": []}) if isinstance(i, Review))
    assert (review.review_id, review.year) == ("17", None)  # epoch milliseconds past the calendar: no year


def test_peerread_review_with_a_wrongly_typed_comment_dead_letters_that_review_only():
    record = {
        "id": "P1",
        "title": "T",
        "conference": "ICLR 2017",
        "authors": ["A. Smith", "B. Lee"],
        "reviews": [{"comments": {"text": "?"}}, {"comments": 1234}],
    }
    items = list(parse_review_file(json.dumps(record).encode(), "p.json"))
    assert isinstance(items[0], Submission) and items[0].authors == ("A. Smith", "B. Lee")
    assert (items[1].source, items[1].reason) == ("p.json#P1/r0", "wrong_type:reviews.comments")
    assert isinstance(items[2], Review) and items[2].text == "1234\n"
    whole = list(parse_review_file(json.dumps({**record, "authors": 7}).encode(), "p.json"))
    assert [(type(i).__name__, getattr(i, "reason", None)) for i in whole] == [("DeadLetter", "wrong_type:authors")]


def test_replies_that_are_not_a_list_dead_letter_after_their_submission():
    submission = {"id": "S1", "forum": "S1", "content": {"title": "T", "abstract": "A"}, "details": {"replies": 5}}
    items = notes(submission)
    assert [type(i).__name__ for i in items] == ["Submission", "DeadLetter"]
    assert (items[1].reason, items[1].detail) == (
        "wrong_type:details.replies",
        "details.replies: expected list of notes, got integer",
    )


def test_submission_replies_that_cannot_be_read_are_dead_letters_of_their_own():
    submission = {
        "id": "S1",
        "forum": "S1",
        "content": {"title": {"value": "T"}, "abstract": {"value": "A"}},
        "details": {"directReplies": ["not a note", {"id": "R9", "content": ["x"]}, {**NOTE, "id": "R1"}]},
    }
    items = notes(submission)
    assert [(type(i).__name__, getattr(i, "reason", None)) for i in items] == [
        ("Submission", None),
        ("DeadLetter", "unreadable_review"),
        ("DeadLetter", "wrong_type:details.directReplies.content"),
        ("Submission", None),
        ("Review", None),
    ]


def test_a_bare_carriage_return_in_a_csv_ends_a_row_instead_of_crashing_the_reader():
    items = list(parse_review_file(b"id,forum,review\nR0,S0,fine\nR1,S1,a\rb\n", "export.csv"))
    assert [i.review_id for i in items if isinstance(i, Review)] == ["R0", "R1"]
    # the piece after the carriage return is a row of one field where the header has three
    assert [(d.source, d.reason) for d in items if isinstance(d, DeadLetter)] == [("export.csv:4", "bad_csv_row")]


def test_a_csv_the_csv_module_cannot_read_further_is_a_dead_letter(monkeypatch):
    limit = csv.field_size_limit
    previous = limit()
    monkeypatch.setattr(csv, "field_size_limit", lambda *args: limit(20))  # the reader's own limit, made tiny
    try:
        items = list(parse_review_file(b"id,forum,review\nR0,S0,fine\nR1,S1," + b"x" * 50 + b"\n", "export.csv"))
    finally:
        limit(previous)
    assert [type(i).__name__ for i in items] == ["Submission", "Review", "DeadLetter"]
    assert (items[2].source, items[2].reason) == ("export.csv:3", "bad_csv")


# ------------------------------------------------------------------------------------------ the readers


def test_readers_coerce_what_is_unambiguous():
    assert fields.as_text(3, "f") == "3" and fields.as_text(2.0, "f") == "2" and fields.as_text(2.5, "f") == "2.5"
    assert fields.as_text(float("nan"), "f") is None
    assert fields.as_int("12", "f") == 12 and fields.as_int(12.0, "f") == 12
    assert fields.as_year("2019-05-01", "f") == 2019 and fields.as_year(99, "f") is None
    assert fields.as_identifier(123, "f") == "123"
    assert fields.as_author_names([{"first": "A", "middle": "B.", "last": "C"}], "f") == ("A B. C",)


def test_as_year_drops_and_counts_what_is_not_finite():
    count, counts = counter_dict()
    assert [fields.as_year(v, "metadata.year", count) for v in (float("nan"), float("-inf"), 2019.0)] == [
        None,
        None,
        2019,
    ]
    assert counts == {"field_dropped:metadata.year_not_finite": 2}
    assert fields.not_finite(float("nan")) and not fields.not_finite(1e308) and not fields.not_finite("NaN")


def test_decode_json_keeps_the_last_of_a_repeated_key_and_counts_each_repeat():
    count, counts = counter_dict()
    text = '{"title": "A", "year": 2019, "title": "B", "metadata": {"year": 1, "year": 2, "year": 3}, "title": "C"}'
    assert fields.decode_json(text, count) == {"title": "C", "year": 2019, "metadata": {"year": 3}}
    assert counts == {"json_duplicate_key:title": 2, "json_duplicate_key:(nested)": 2}
    count, counts = counter_dict()
    assert fields.decode_json('{"a key?": 1, "a key?": 2, "x": [{"k": 1, "k": 1}]}', count) == {
        "a key?": 2,
        "x": [{"k": 1}],
    }
    assert counts == {"json_duplicate_key:(other)": 1, "json_duplicate_key:(nested)": 1}
    count, counts = counter_dict()
    assert fields.decode_json('[{"k": 1, "k": 2}, {"title": 1, "title": 2}]', count) == [{"k": 2}, {"title": 2}]
    assert counts == {"json_duplicate_key:(nested)": 2}  # no object of the record's own: all nested


_JSON_KEYS = st.sampled_from(["title", "year", "paper_id", "a b", "k"])
_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)


@st.composite
def json_with_repeats(draw, depth: int = 0) -> tuple[str, object, int, int]:
    """(JSON text whose objects may repeat keys, the value json.loads gives, top-level repeats, nested repeats),
    the repeats counted here from the pairs written."""
    if depth >= 3 or draw(st.booleans()):
        value = draw(_JSON_SCALARS)
        return json.dumps(value), value, 0, 0
    if draw(st.booleans()):
        items = [draw(json_with_repeats(depth + 1)) for _ in range(draw(st.integers(0, 3)))]
        return "[" + ", ".join(i[0] for i in items) + "]", [i[1] for i in items], 0, sum(i[2] + i[3] for i in items)
    keys = draw(st.lists(_JSON_KEYS, max_size=6))
    items = [draw(json_with_repeats(depth + 1)) for _ in keys]
    text = "{" + ", ".join(f"{json.dumps(k)}: {i[0]}" for k, i in zip(keys, items, strict=True)) + "}"
    value = {k: i[1] for k, i in zip(keys, items, strict=True)}
    return text, value, len(keys) - len(set(keys)), sum(i[2] + i[3] for i in items)


@given(json_with_repeats())
@settings(max_examples=300, deadline=None)
def test_decode_json_gives_json_loads_value_and_counts_every_repeat(case):
    text, value, top, nested = case
    count, counts = counter_dict()
    assert fields.decode_json(text, count) == json.loads(text) == value
    top_counted = sum(n for name, n in counts.items() if name not in ("json_duplicate_key:(nested)",))
    assert (top_counted, counts.get("json_duplicate_key:(nested)", 0)) == (top, nested)


@pytest.mark.parametrize(
    ("read", "value", "detail"),
    [
        (fields.as_text, True, "f: expected text, got boolean"),
        (fields.as_text, float("inf"), "f: expected text, got number"),
        (fields.as_identifier, 1.5, "f: expected identifier text, got number"),
        (fields.as_int, "1e3", "f: expected integer, got text"),
        (fields.as_year, 2019.5, "f: expected integer, got number"),
        (fields.as_mapping, [], "f: expected object, got list"),
        (fields.as_texts, {"a": 1}, "f: expected list of text, got object"),
    ],
)
def test_readers_name_the_field_in_what_they_raise(read, value, detail):
    with pytest.raises(DocumentError) as caught:
        read(value, "f")
    assert (caught.value.reason, caught.value.detail) == ("wrong_type:f", detail)
