"""Property tests of every reader: random JSON, real records with fields replaced by wrongly typed values,
truncated and random bytes, and structurally mangled TEI. No exception escapes but the documented one; what
parses is typed the way the Parquet writer needs it (text is UTF-8 encodable, offsets lie inside their text).

Real records come from ../shared/data; the tests that mutate them skip when it is absent.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from lxml import etree

from extractors.documents.files import paper_from_document, parse_document, parse_metadata_line
from extractors.reviews.forms import ReviewInputError, parse_review_file, parse_review_record
from extractors.reviews.records import Review, Submission
from extractors.schemas import PAPERS_SCHEMA, paper_row
from mapping.records import DeadLetter, Paper, PaperAbstract, ParsedDocument
from tests.support.paths import real_documents_dir

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the working tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Field names of every layout read here, so random objects often look like a record of one.
FIELD_NAMES = (
    "id paper_id title abstract authors doi arxiv_id categories versions created year metadata body_text "
    "back_matter bib_entries cite_spans start end ref_id text section sec_num sec_number other_ids DOI arXiv "
    "grobid_parse pdf_parse latex_parse bib_entry_raw contained_arXiv_ids contained_links ids url first middle "
    "last venue raw_text _source_hash discipline update_date mag_field_of_study fieldsOfStudy acm-class reviews "
    "comments content forum replyto invitation invitations details directReplies replies notes value cdate "
    "weaknesses summary review TITLE DATE IS_META_REVIEW conference corpusid link links PMID PMCID pubmed_id "
    "pmc_id open_alex_id mag_id acl_id s2_url externalids"
).split()

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()  # NaN and the infinities included: Python's json reads and writes them
    | st.text(max_size=24)
    | st.sampled_from(
        ["", " ", "\ud800", "caf\udfff", "12", "2019", "2019-05-01", "1e5", "NaN", "{{cite:x}}", "arXiv:1905.00003"]
        + ["10.1000/XYZ", "Mon, 2 Apr 2007 19:18:42 GMT", "A. Smith and B. Lee", "[1]", "BIBREF0", "[", "\x00"]
        + ["PMC1950857", "https://openalex.org/W2741809807", "https://arxiv.org/abs/hep-th/9901001v2"]
    )
)
JSON_VALUES = st.recursive(
    LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


def dumps(value: Any) -> bytes:
    """JSON as the wild writes it: NaN allowed, lone surrogates escaped."""
    return json.dumps(value, allow_nan=True).encode()


# ------------------------------------------------------------------------------------------ real records


def _shared() -> Path:
    path = real_documents_dir()
    if path is None:
        pytest.skip("real documents not available: ../shared/data (or $CITREC_SHARED_DATA) is absent")
    return path


@functools.cache
def _s2orc_files() -> tuple[tuple[str, Any], ...]:
    base = _shared() / "s2orc"
    paths = sorted(base.glob("s2orc-doc2json/*/*.json")) + [base / "allenai-s2orc/example_paper.json"]
    return tuple((p.name, json.loads(p.read_bytes())) for p in paths)


@functools.cache
def _tei_files() -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted((_shared() / "grobid").glob("*/*.tei.xml")))


@functools.cache
def _metadata_lines() -> tuple[bytes, ...]:
    lines = []
    for name in ("arxiv/arxiv-browse_abs_derived.jsonl", "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl"):
        lines += [line for line in (_shared() / name).read_bytes().splitlines() if line.strip()]
    return tuple(lines)


@functools.cache
def _peerread() -> Any:
    return json.loads((_shared() / "reviews/peerread-iclr2017-sample/304.json").read_bytes())


# Hand-written OpenReview notes (no real note is stored in shared/): a v2 submission with its replies, a v1 review.
OPENREVIEW_NOTES = (
    {
        "id": "S1",
        "forum": "S1",
        "invitations": ["NeurIPS.cc/2024/Conference/-/Submission"],
        "cdate": 1715000000000,
        "content": {
            "title": {"value": "A Submission"},
            "abstract": {"value": "We submit."},
            "authors": {"value": ["A. Smith", "B. Lee"]},
            "venue": {"value": "NeurIPS 2024 poster"},
        },
        "details": {
            "directReplies": [
                {
                    "id": "R1",
                    "forum": "S1",
                    "replyto": "S1",
                    "invitations": ["NeurIPS.cc/2024/Conference/Submission1/-/Official_Review"],
                    "content": {
                        "summary": {"value": "SUMMARY: fine."},
                        "weaknesses": {
                            "value": 'Cite "Deep Sets for Point Clouds" [1].\n[1] A. B. Title. arXiv:1905.00003'
                        },
                        "rating": {"value": 6},
                    },
                },
                {"id": "D1", "forum": "S1", "content": {"decision": {"value": "Accept"}}},
            ]
        },
    },
    {
        "id": "R2",
        "forum": "S2",
        "invitation": "ICLR.cc/2019/Conference/-/Paper1/Official_Review",
        "tcdate": 1540000000000,
        "content": {"review": "Missing related work: Smith et al. (2018).", "rating": "6: accept"},
    },
)


def _paths(value: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    """Every (key or index) path into a decoded JSON value, to the given depth."""
    found = [prefix]
    if depth >= 7:
        return found
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key), depth + 1)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index), depth + 1)
    return found


@functools.cache
def _paths_by_field(record_json: str) -> dict[str, tuple[tuple, ...]]:
    """Paths grouped by the field they end in (`cite_spans.start`, `authors[]`), so that a field with one
    occurrence is mutated as often as one with thousands."""
    groups: dict[str, list[tuple]] = {}
    for path in _paths(json.loads(record_json)):
        if path:
            groups.setdefault(_field_of(path), []).append(path)
    return {name: tuple(paths) for name, paths in sorted(groups.items())}


def _field_of(path: tuple) -> str:
    """("body_text", 3, "cite_spans", 0, "start") -> "cite_spans.start"; ("bib_entries", "BIBREF7") -> "bib_entries.*"."""
    names = []
    for index, step in enumerate(path):
        if isinstance(step, int):
            names.append("[]")
        else:
            names.append("*" if index and path[index - 1] in ("bib_entries", "ref_entries") else step)
    named = [n for n in names if n != "[]"]
    return ".".join(named[-2:]) + ("[]" if names[-1] == "[]" else "")


def mutate(data: st.DataObject, record: Any) -> Any:
    """`record` with one to three fields replaced by random JSON values, deleted, or joined by a new one."""
    record = copy.deepcopy(record)
    groups = _paths_by_field(json.dumps(record))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(groups[data.draw(st.sampled_from(sorted(groups)))]))
        parent = record
        try:
            for step in path[:-1]:
                parent = parent[step]
            op = data.draw(st.sampled_from(["replace", "replace", "delete", "add"]))
            if op == "delete" and isinstance(parent, dict):
                del parent[path[-1]]
            elif op == "add" and isinstance(parent, dict):
                parent[data.draw(st.sampled_from(FIELD_NAMES))] = data.draw(JSON_VALUES)
            else:
                parent[path[-1]] = data.draw(JSON_VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or replaced this path
    return record


# -------------------------------------------------------------------------------------- what "typed" is


def assert_text(value: Any, nullable: bool = True) -> None:
    if value is None and nullable:
        return
    assert isinstance(value, str), value
    value.encode("utf-8")  # a lone surrogate would make the Parquet writer raise


def assert_texts(values: Any) -> None:
    assert isinstance(values, tuple), values
    for value in values:
        assert_text(value, nullable=False)


def assert_year(value: Any) -> None:
    assert value is None or (isinstance(value, int) and not isinstance(value, bool)), value


def assert_typed_paper(paper: Paper) -> None:
    assert_text(paper.paper_id, nullable=False)
    assert paper.paper_id
    for name in ("title", "abstract", "doi", "arxiv_id", "s2_paper_id", "primary_category"):
        assert_text(getattr(paper, name))
    for name in ("authors", "categories", "acm_classes", "acm_classes_author"):
        assert_texts(getattr(paper, name))
    assert paper.date is None or type(paper.date) is dt.date, paper.date
    assert_year(paper.year)
    pa.Table.from_pylist([paper_row(paper)], schema=PAPERS_SCHEMA)  # what the writer does with it


def assert_typed_document(document: ParsedDocument) -> None:
    assert_typed_paper(paper_from_document(document))
    assert_text(document.source, nullable=False)
    for paragraph in document.paragraphs:
        assert_text(paragraph.text, nullable=False)
        assert_text(paragraph.section_heading)
        assert_text(paragraph.kind, nullable=False)
        assert isinstance(paragraph.section_index, int) and not isinstance(paragraph.section_index, bool)
        for mention in paragraph.mentions:
            assert type(mention.start) is int and type(mention.end) is int, mention
            assert 0 <= mention.start <= mention.end <= len(paragraph.text), mention
            assert paragraph.text[mention.start : mention.end] == mention.text
            assert_text(mention.bib_id)
        for start, end in paragraph.sentences:
            assert type(start) is int and type(end) is int
            assert 0 <= start <= end <= len(paragraph.text), (start, end, len(paragraph.text))
    pa.array([p.section_heading for p in document.paragraphs], pa.string())
    for entry in document.bib_entries:
        assert_text(entry.bib_id, nullable=False)
        for name in ("title", "venue", "doi", "arxiv_id", "raw"):
            assert_text(getattr(entry, name))
        assert_texts(entry.authors)
        assert_year(entry.year)


def assert_parse_result(result: Any) -> None:
    assert isinstance(result, ParsedDocument | DeadLetter), result
    event(type(result).__name__ if isinstance(result, ParsedDocument) else f"dead letter {result.reason}")
    if isinstance(result, ParsedDocument):
        assert_typed_document(result)
    else:
        assert_dead_letter(result)


def assert_dead_letter(letter: DeadLetter) -> None:
    for name in ("source", "stage", "reason", "detail"):
        assert_text(getattr(letter, name), nullable=False)
    assert letter.reason
    # `parser_error` is the safety net for what no reader foresaw: here, every failure has a reason of its own.
    assert letter.reason != "parser_error", letter


def assert_metadata_result(result: Any) -> None:
    assert isinstance(result, Paper | PaperAbstract | DeadLetter), result
    event(type(result).__name__ if not isinstance(result, DeadLetter) else f"dead letter {result.reason}")
    if isinstance(result, Paper):
        assert_typed_paper(result)
    elif isinstance(result, PaperAbstract):
        assert_text(result.corpus_id, nullable=False)
        assert_text(result.abstract)
    else:
        assert_dead_letter(result)


def assert_review_items(items: list) -> None:
    for item in items:
        assert isinstance(item, Submission | Review | DeadLetter), item
        if isinstance(item, Submission):
            assert_text(item.submission_id, nullable=False)
            assert item.submission_id
            for name in ("title", "abstract", "venue", "source"):
                assert_text(getattr(item, name))
            assert_texts(item.authors)
            assert_year(item.year)
        elif isinstance(item, Review):
            for name in ("review_id", "submission_id", "text", "review_kind", "source"):
                assert_text(getattr(item, name), nullable=False)
            assert item.text.strip() and item.review_kind in ("official", "meta", "comment")
            assert_year(item.year)
            for offset, name in item.sections:
                assert type(offset) is int and 0 <= offset <= len(item.text)
                assert_text(name, nullable=False)
        else:
            assert_dead_letter(item)


# ------------------------------------------------------------------------------------------------ S2ORC


@PROPERTY
@given(value=JSON_VALUES)
def test_s2orc_reader_on_random_json(value):
    assert_parse_result(parse_document(dumps(value), "random.json", "s2orc"))


@PROPERTY
@given(data=st.data())
def test_s2orc_reader_on_real_records_with_wrongly_typed_fields(data):
    name, record = data.draw(st.sampled_from(_s2orc_files()))
    assert_parse_result(parse_document(dumps(mutate(data, record)), name, "s2orc"))


@PROPERTY
@given(data=st.data())
def test_s2orc_reader_on_truncated_and_random_bytes(data):
    name, record = data.draw(st.sampled_from(_s2orc_files()))
    raw = json.dumps(record).encode()
    cut = raw[: data.draw(st.integers(0, len(raw)))]
    assert_parse_result(parse_document(cut, name, "s2orc"))
    assert_parse_result(parse_document(data.draw(st.binary(max_size=200)), "random.json", "s2orc"))


# -------------------------------------------------------------------------------------------------- TEI


def mangle_tei(data: st.DataObject, raw: bytes) -> bytes:
    """A real TEI with a few elements deleted, wrapped in deep inline markup, re-texted, re-targeted, or given
    a comment or processing instruction."""
    root = etree.fromstring(raw)
    elements = [e for e in root.iter() if isinstance(e.tag, str) and e is not root]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(data.draw(st.integers(1, 4))):
        elem = rng.choice(elements)
        op = data.draw(st.sampled_from(["delete", "wrap", "text", "attribute", "comment"]))
        parent = elem.getparent()
        if op == "delete" and parent is not None:
            parent.remove(elem)
            elements = [e for e in root.iter() if isinstance(e.tag, str) and e is not root]
        elif op == "wrap" and parent is not None:
            depth = data.draw(st.sampled_from([1, 5, 50, 1200]))
            outer = inner = etree.Element("{http://www.tei-c.org/ns/1.0}hi")
            for _ in range(depth - 1):
                inner = etree.SubElement(inner, "{http://www.tei-c.org/ns/1.0}hi")
            parent.replace(elem, outer)
            inner.append(elem)
        elif op == "text":
            elem.text = data.draw(st.text(max_size=30).map(lambda t: "".join(c for c in t if _xml_char(c))))
        elif op == "attribute":
            key = data.draw(st.sampled_from(["type", "target", "when", "{http://www.w3.org/XML/1998/namespace}id"]))
            elem.set(key, data.draw(st.sampled_from(["bibr", "#b0", "#", "", "2019-13-45", "doi", "arXiv", "b99"])))
        elif op == "comment":
            elem.insert(0, etree.Comment("a comment") if rng.random() < 0.5 else etree.ProcessingInstruction("pi"))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _xml_char(c: str) -> bool:
    code = ord(c)
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


@PROPERTY
@given(data=st.data())
def test_tei_reader_on_mangled_real_tei(data):
    name, raw = data.draw(st.sampled_from(_tei_files()))
    assert_parse_result(parse_document(mangle_tei(data, raw), name, "tei"))


@PROPERTY
@given(data=st.data())
def test_tei_reader_on_truncated_and_random_bytes(data):
    name, raw = data.draw(st.sampled_from(_tei_files()))
    assert_parse_result(parse_document(raw[: data.draw(st.integers(0, len(raw)))], name, "tei"))
    head = data.draw(st.sampled_from([b"", b'<?xml version="1.0" encoding="latin-1"?>', b"<?xml encoding='bogus'?>"]))
    assert_parse_result(parse_document(head + data.draw(st.binary(max_size=200)), "random.tei.xml", "tei"))


def _cite_spans(record: Any) -> list[dict]:
    """Every cite span of an S2ORC record, read straight from the JSON (its abstract, body and back matter)."""
    parse = record.get("grobid_parse") or record.get("pdf_parse") or record
    blocks = [*(parse.get("body_text") or []), *(parse.get("back_matter") or record.get("back_matter") or [])]
    if isinstance(parse.get("abstract"), list):
        blocks += parse["abstract"]
    return [span for block in blocks for span in block.get("cite_spans") or []]


NOT_FINITE = st.sampled_from([float("nan"), float("inf"), float("-inf")])


@PROPERTY
@given(data=st.data())
def test_years_and_cite_offsets_not_finite_drop_only_themselves(data):
    """A real record with some cite offsets and years made NaN or infinite still parses; every cite span is a
    mention or a counted drop, the spans made not finite under their own counter, each year under its path."""
    name, record = data.draw(st.sampled_from(_s2orc_files()))
    record = copy.deepcopy(record)
    spans = _cite_spans(record)
    chosen = data.draw(st.sets(st.integers(0, len(spans) - 1), max_size=5)) if spans else set()
    for i in chosen:
        for end in data.draw(st.sampled_from([("start",), ("end",), ("start", "end")])):
            spans[i][end] = data.draw(NOT_FINITE)
    years = {"year": record, "metadata.year": record.get("metadata")}
    years = {path: holder for path, holder in years.items() if isinstance(holder, dict) and "year" in holder}
    dropped_years = data.draw(st.sets(st.sampled_from(sorted(years)))) if years else set()
    for path in dropped_years:
        years[path]["year"] = data.draw(NOT_FINITE)
    counts: dict[str, int] = {}
    result = parse_document(dumps(record), name, "s2orc", lambda n, k=1: counts.update({n: counts.get(n, 0) + k}))
    assert isinstance(result, ParsedDocument), result
    assert_typed_document(result)
    mentions = sum(len(p.mentions) for p in result.paragraphs)
    assert counts.get("cite_spans_dropped:offset_not_finite", 0) == len(chosen)
    assert mentions + counts.get("cite_spans_dropped:out_of_range", 0) + len(chosen) == len(spans)
    assert {n for n in counts if n.startswith("field_dropped:")} == {
        f"field_dropped:{p}_not_finite" for p in dropped_years
    }


# ------------------------------------------------------------------------------------------------ metadata


@PROPERTY
@given(value=JSON_VALUES)
def test_metadata_reader_on_random_json(value):
    assert_metadata_result(parse_metadata_line(dumps(value), "random.jsonl:1"))


@PROPERTY
@given(data=st.data())
def test_metadata_reader_on_real_lines_with_wrongly_typed_fields(data):
    line = data.draw(st.sampled_from(_metadata_lines()))
    record = json.loads(line)
    assert_metadata_result(parse_metadata_line(dumps(mutate(data, record)), "meta.jsonl:1"))


@PROPERTY
@given(data=st.data())
def test_metadata_reader_on_truncated_and_random_bytes(data):
    line = data.draw(st.sampled_from(_metadata_lines()))
    assert_metadata_result(parse_metadata_line(line[: data.draw(st.integers(0, len(line)))], "meta.jsonl:1"))
    assert_metadata_result(parse_metadata_line(data.draw(st.binary(max_size=120)), "meta.jsonl:2"))


# ------------------------------------------------------------------------------------------------- reviews


def read_record(value: Any, source: str) -> list:
    """`parse_review_record` consumed; `ReviewInputError` is its one documented exception."""
    try:
        return list(parse_review_record(value, source))
    except ReviewInputError as err:
        assert err.reason and isinstance(err.detail, str)
        return []


@PROPERTY
@given(value=JSON_VALUES, suffix=st.sampled_from([".json", ".jsonl"]))
def test_review_readers_on_random_json(value, suffix):
    assert_review_items(read_record(value, "random"))
    assert_review_items(list(parse_review_file(dumps(value), f"random{suffix}")))


@PROPERTY
@given(data=st.data())
def test_review_readers_on_real_and_hand_written_notes_with_wrongly_typed_fields(data):
    name, record = data.draw(st.sampled_from([("peerread", _peerread()), *(("note", n) for n in OPENREVIEW_NOTES)]))
    mutated = mutate(data, record)
    assert_review_items(read_record(mutated, "mutated"))
    assert_review_items(list(parse_review_file(dumps(mutated), "mutated.json")))
    assert_review_items(list(parse_review_file(dumps(mutated) + b"\n" + dumps(record), "mutated.jsonl")))


@PROPERTY
@given(data=st.data())
def test_review_readers_on_truncated_and_random_bytes_and_csv(data):
    raw = json.dumps(_peerread()).encode()
    path = data.draw(st.sampled_from(["cut.json", "cut.jsonl", "cut.csv"]))
    assert_review_items(list(parse_review_file(raw[: data.draw(st.integers(0, len(raw)))], path)))
    assert_review_items(list(parse_review_file(data.draw(st.binary(max_size=200)), path)))
    header = data.draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, max_size=6))
    cells = st.text(max_size=20) | st.sampled_from(['"', '""', "\r", "\n", ",", "\x00", "R1", "S1", "[1, 2]", "['a'"])
    rows = data.draw(st.lists(st.lists(cells, max_size=8), max_size=5))
    text = "\n".join([",".join(header), *(",".join(row) for row in rows)])
    assert_review_items(list(parse_review_file(text.encode("utf-8", "surrogatepass"), "export.csv")))


# ------------------------------------------------------------------------------------------ deep nesting


def deep_tei(depth: int) -> bytes:
    inner = b'Deep text cites <ref type="bibr" target="#b0">[1]</ref> here.'
    paragraph = b"<p>Start " + b"<hi>" * depth + inner + b"</hi>" * depth + b" end.</p>"
    return (
        b'<?xml version="1.0" encoding="UTF-8"?><TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc>'
        b'<titleStmt><title type="main">Deep</title></titleStmt></fileDesc></teiHeader><text><body><div>'
        b"<head>Intro</head>" + paragraph + b'</div></body><back><div><listBibl><biblStruct xml:id="b0">'
        b"<analytic><title>Cited</title></analytic></biblStruct></listBibl></div></back></text></TEI>"
    )


@pytest.mark.parametrize("depth", [1500, 3000])
def test_a_tei_with_thousands_of_nested_inline_elements_parses_with_its_mention_in_place(depth):
    document = parse_document(deep_tei(depth), "deep.tei.xml", "tei")
    assert isinstance(document, ParsedDocument), document
    (paragraph,) = document.paragraphs
    assert paragraph.text == "Start Deep text cites [1] here. end."
    assert paragraph.section_heading == "Intro"
    (mention,) = paragraph.mentions
    assert (mention.start, mention.end, mention.text, mention.bib_id) == (22, 25, "[1]", "b0")
    assert paragraph.text[22:25] == "[1]"
    assert document.bib_entries[0].title == "Cited"


def test_the_deep_tei_gives_what_the_same_tei_without_nesting_gives():
    flat = parse_document(deep_tei(0), "deep.tei.xml", "tei")
    assert parse_document(deep_tei(3000), "deep.tei.xml", "tei") == flat


def test_json_nested_past_the_recursion_limit_is_a_too_deep_dead_letter():
    deep = b'{"paper_id": "1", "body_text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert parse_document(deep, "deep.json", "s2orc").reason == "too_deep"
    assert parse_metadata_line(deep, "deep.jsonl:1").reason == "too_deep"
    (letter,) = parse_review_file(deep, "deep.json")
    assert (letter.reason, letter.source) == ("too_deep", "deep.json")


def test_review_notes_nested_in_lists_are_too_deep_past_a_few_levels():
    note = OPENREVIEW_NOTES[1]
    assert [type(i).__name__ for i in read_record([[note]], "x")] == ["Submission", "Review"]
    nested: Any = note
    for _ in range(50):
        nested = {"notes": [nested]}
    (letter,) = read_record(nested, "x")
    assert letter.reason == "too_deep"
