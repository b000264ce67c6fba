"""S2ORC (2019/2020/2021) and unarXive JSON parsing, on every real S2ORC file and on hand-made records."""

from __future__ import annotations

import json

from extractors.documents.files import parse_document
from extractors.documents.s2orc import parse_s2orc_record
from mapping.records import DeadLetter, ParsedDocument
from tests.support.counters import counter_dict


def real_s2orc_files(shared):
    files = sorted((shared / "s2orc").glob("s2orc-doc2json/*/*.json")) + [
        shared / "s2orc/allenai-s2orc/example_paper.json"
    ]
    assert len(files) == 9
    return files


def independent_counts(record: dict) -> tuple[int, int, int]:
    """(bib entries, cite spans, cite spans with a ref_id) read straight from the JSON."""
    parse = record.get("grobid_parse") or record.get("pdf_parse") or record
    blocks = list(parse.get("body_text") or []) + list(parse.get("back_matter") or record.get("back_matter") or [])
    abstract = parse.get("abstract")
    if isinstance(abstract, list):
        blocks += abstract
    spans = [s for b in blocks for s in b.get("cite_spans") or []]
    return len(parse.get("bib_entries") or {}), len(spans), sum(1 for s in spans if s.get("ref_id"))


def test_every_real_s2orc_json_parses_with_counts_matching_the_json(shared):
    layouts = set()
    for path in real_s2orc_files(shared):
        data = path.read_bytes()
        document = parse_document(data, str(path), "s2orc")
        assert isinstance(document, ParsedDocument), f"{path}: {document}"
        layouts.add(document.source_format)
        bib, spans, linked = independent_counts(json.loads(data))
        mentions = [m for p in document.paragraphs for m in p.mentions]
        assert len(document.bib_entries) == bib, path.name
        assert len(mentions) == spans, path.name
        assert sum(1 for m in mentions if m.bib_id) == linked, path.name
        for paragraph in document.paragraphs:
            for mention in paragraph.mentions:
                assert paragraph.text[mention.start : mention.end] == mention.text
    assert layouts == {"s2orc-2019", "s2orc-2020", "s2orc-2021"}


def test_ids_and_metadata_per_layout(shared):
    d2019 = parse_s2orc_record(
        json.loads((shared / "s2orc/s2orc-doc2json/20190928/10002293.json").read_text()), "a", "a"
    )
    assert d2019.paper_id == "doi:10.3389/fmicb.2017.00498"
    assert d2019.s2_paper_id == "10002293" and d2019.year == 2017
    assert d2019.bib_entries[0].doi == "10.1039/c3pp50195g"
    d2020 = parse_s2orc_record(
        json.loads((shared / "s2orc/s2orc-doc2json/20200705/18980380.json").read_text()), "b", "b"
    )
    assert d2020.paper_id == "18980380" and d2020.title is None  # the 2020 layout keeps titles in metadata


UNARXIVE = {
    "paper_id": "2105.05862",
    "_pdf_hash": None,
    "_source_hash": "b7d5",
    "metadata": {
        "id": "2105.05862",
        "title": "A Hand-Written Test Paper",
        "authors": "A. One and B. Two",
        "categories": "gr-qc astro-ph.HE",
        "versions": [{"version": "v1", "created": "Wed, 12 May 2021 10:00:00 GMT"}],
    },
    "discipline": "Physics",
    "abstract": {"text": "We test the parser."},
    "body_text": [
        {
            "section": "Intro",
            "sec_number": "1",
            "text": "As shown in {{cite:aa}} and {{cite:bb}}, it works.",
            "cite_spans": [
                {"start": 12, "end": 24, "text": "{{cite:aa}}", "ref_id": "aa"},
                {"start": 29, "end": 41, "text": "{{cite:bb}}", "ref_id": "bb"},
            ],
            "ref_spans": [],
        }
    ],
    "bib_entries": {
        "aa": {
            "bib_entry_raw": "A. Author, Some title, arXiv:1905.00003v2.",
            "contained_arXiv_ids": [{"id": "1905.00003", "text": "arXiv:1905.00003v2", "start": 22, "end": 40}],
            "contained_links": [],
            "ids": {},
        },
        "bb": {
            "bib_entry_raw": "B. Author, Other title, J. 1 (2000).",
            "contained_arXiv_ids": [],
            "contained_links": [],
            "ids": {"doi": "10.1000/XYZ"},
        },
    },
    "ref_entries": {},
}


def test_unarxive_layout():
    text = UNARXIVE["body_text"][0]["text"]
    for span in UNARXIVE["body_text"][0]["cite_spans"]:
        span["start"] = text.index(span["text"])
        span["end"] = span["start"] + len(span["text"])
    document = parse_s2orc_record(UNARXIVE, "u.jsonl:1", "u")
    assert document.source_format == "unarxive"
    assert document.paper_id == "2105.05862"
    assert document.date.isoformat() == "2021-05-12"
    assert document.categories == ("gr-qc", "astro-ph.HE")
    assert document.authors == ("A. One", "B. Two")
    assert {b.bib_id: (b.arxiv_id, b.doi) for b in document.bib_entries} == {
        "aa": ("1905.00003", None),
        "bb": (None, "10.1000/xyz"),
    }
    assert [m.bib_id for p in document.paragraphs for m in p.mentions] == ["aa", "bb"]


def test_bad_json_is_dead_lettered_with_its_reason():
    cases = {
        b"": "empty_file",
        b'{"paper_id": "1", "body_text": [{"text": "abc"': "truncated_json",
        b"this is not json at all": "malformed_json",
        b'{"paper_id": "1", "body_text": []}': "no_body",
        b"[1, 2, 3]": "unknown_layout",
        b'{"paper_id": "1", "body_text": [{"text": "caf\xe9"}]}': "undecodable_bytes",
    }
    for data, reason in cases.items():
        letter = parse_document(data, "mem://x.json", "s2orc")
        assert isinstance(letter, DeadLetter), data
        assert letter.reason == reason, (data, letter)


def test_a_json_file_that_holds_json_lines_gives_one_document_per_line(shared):
    from extractors.documents.files import parse_document_file

    lines = [
        (shared / f"s2orc/s2orc-doc2json/20200705/{n}.json").read_bytes().replace(b"\n", b" ")
        for n in ("18980380", "94551546")
    ]
    results = list(parse_document_file(b"\n".join(lines) + b"\n", "two.json", "s2orc"))
    assert [(r.source, r.paper_id) for r in results] == [("two.json:1", "18980380"), ("two.json:2", "94551546")]


def test_a_real_document_with_a_year_or_cite_offsets_not_finite_keeps_everything_else(shared):
    """Python's json reads NaN and Infinity: the field is dropped and counted, the document kept."""
    path = shared / "s2orc/s2orc-doc2json/20190928/10002293.json"
    record = json.loads(path.read_text())
    assert record["metadata"]["year"] == "2017"
    whole = parse_s2orc_record(record, "a", "a")
    blocks = record["grobid_parse"]["body_text"]
    with_spans = [b for b in blocks if b["cite_spans"]]
    first, second = with_spans[0]["cite_spans"][0], with_spans[-1]["cite_spans"][-1]
    gone = {(with_spans[0]["text"], first["start"]), (with_spans[-1]["text"], second["start"])}
    record["metadata"]["year"] = float("nan")
    first["start"], second["end"] = float("nan"), float("inf")
    data = json.dumps(record).encode()
    assert b'"year": NaN' in data and b'"end": Infinity' in data
    count, counts = counter_dict()
    parsed = parse_document(data, str(path), "s2orc", count)
    assert isinstance(parsed, ParsedDocument), parsed
    assert counts == {"field_dropped:metadata.year_not_finite": 1, "cite_spans_dropped:offset_not_finite": 2}
    assert parsed.year is None and parsed.paper_id == whole.paper_id and parsed.bib_entries == whole.bib_entries
    assert [p.text for p in parsed.paragraphs] == [p.text for p in whole.paragraphs]
    kept = [(p.text, m.start) for p in whole.paragraphs for m in p.mentions if (p.text, m.start) not in gone]
    assert len(kept) == independent_counts(json.loads(path.read_text()))[1] - 2
    assert [(p.text, m.start) for p in parsed.paragraphs for m in p.mentions] == kept


def test_a_repeated_key_in_a_real_document_keeps_the_last_value_and_says_so(shared):
    path = shared / "s2orc/s2orc-doc2json/20200705/18980380.json"
    text = path.read_text().rstrip()
    assert text.endswith("}")
    repeated = text[:-1] + ', "paper_id": "18980381", "_pdf_hash": null}'
    count, counts = counter_dict()
    assert parse_document(repeated.encode(), str(path), "s2orc", count).paper_id == "18980381"  # the last value
    assert counts == {"json_duplicate_key:paper_id": 1, "json_duplicate_key:_pdf_hash": 1}
    count, counts = counter_dict()
    assert parse_document(text.encode(), str(path), "s2orc", count).paper_id == "18980380"
    assert counts == {}


def doc2json_copies(shared, tmp_path):
    """Two real s2orc-doc2json outputs named as doc2json names ACL 2020 papers: `paper_id` "2020" in both (the
    first is doc2json's own output for 2020.acl-main.207.pdf; the second N18-3011's, renamed)."""
    source = shared / "grobid/s2orc-doc2json"
    acl = json.loads((source / "2020.acl-main.207.json").read_text())
    assert acl["paper_id"] == "2020"
    other = json.loads((source / "N18-3011.json").read_text())
    other["paper_id"] = "2020"
    paths = [tmp_path / "2020.acl-main.207.json", tmp_path / "2020.acl-demos.12.json"]
    for path, record in zip(paths, (acl, other), strict=True):
        path.write_text(json.dumps(record))
    return paths


def test_a_doc2json_paper_id_that_is_a_year_gives_way_to_the_file_stem(shared, tmp_path):
    documents = [parse_document(p.read_bytes(), str(p), "s2orc") for p in doc2json_copies(shared, tmp_path)]
    assert [(d.source_format, d.paper_id, d.s2_paper_id) for d in documents] == [
        ("s2orc-doc2json", "2020.acl-main.207", None),
        ("s2orc-doc2json", "2020.acl-demos.12", None),
    ]
    record = json.loads((shared / "grobid/s2orc-doc2json/2020.acl-main.207.json").read_text())
    # the head of an arXiv id cut at its dot: the stem names the paper, and is its arXiv id
    arxiv = parse_s2orc_record({**record, "paper_id": "2101"}, "2101.00001.json", "2101.00001")
    assert (arxiv.paper_id, arxiv.arxiv_id, arxiv.s2_paper_id) == ("2101.00001", "2101.00001", None)
    # a year under any other file name is no identifier either
    assert parse_s2orc_record(record, "x/paper-17.json", "paper-17").paper_id == "paper-17"
    # a doc2json paper_id that names the paper stays; so does a real S2ORC paper_id
    named = parse_document((shared / "grobid/s2orc-doc2json/N18-3011.json").read_bytes(), "N18-3011.json", "s2orc")
    assert named.paper_id == "N18-3011"
    for release in ("20200705/18980380.json", "20210101/24e6b80e338a4e543de6b49cada07156c9149d22.json"):
        path = shared / "s2orc/s2orc-doc2json" / release
        parsed = parse_document(path.read_bytes(), "renamed.json", "s2orc")
        assert parsed.s2_paper_id == json.loads(path.read_text())["paper_id"] == path.stem
        assert parsed.paper_id in (path.stem, f"doi:{parsed.doi}")


def test_s2ag_spans_with_offsets_not_finite_are_dropped_and_counted():
    text = "Intro. As shown in [1], it works."
    spans = {
        "paragraph": json.dumps([{"start": 7, "end": len(text)}]),
        "bibref": '[{"start": NaN, "end": 22}, {"start": 19, "end": Infinity}, {"start": -Infinity, "end": 22},'
        ' {"start": 19, "end": 22, "attributes": {"ref_id": "b9", "ref_id": "b0"}}]',
    }
    record = {"corpusid": 5, "externalids": {}, "content": {"source": {}, "text": text, "annotations": spans}}
    count, counts = counter_dict()
    parsed = parse_s2orc_record(record, "s.jsonl:1", "s", count)
    assert [(m.text, m.bib_id) for p in parsed.paragraphs for m in p.mentions] == [("[1]", "b0")]
    assert counts == {"s2ag_span_malformed": 3, "json_duplicate_key:(nested)": 1}
