"""The paper database: arXiv OAI snapshot records and S2ORC metadata records, on the real samples."""

from __future__ import annotations

import datetime as dt

from extractors.documents.files import numbered_lines, parse_metadata_line
from extractors.documents.metadata import first_version_date, merge_papers, split_authors
from mapping.records import DeadLetter, Paper


def _papers(path):
    return [
        parse_metadata_line(line, source) for source, line in numbered_lines(path.read_bytes().splitlines(), str(path))
    ]


def test_every_real_arxiv_record_becomes_a_paper_dated_by_its_first_version(shared):
    papers = _papers(shared / "arxiv/arxiv-browse_abs_derived.jsonl")
    assert len(papers) == 1191
    assert not [p for p in papers if isinstance(p, DeadLetter)]
    first = papers[0]
    assert first.paper_id == "acc-phys/9411001"
    assert first.date == dt.date(1994, 11, 1)
    assert first.categories == ("acc-phys", "physics.acc-ph")
    assert first.authors == ("Salman Habib", "Robert D. Ryne")
    assert all(p.date is not None for p in papers)


def test_every_real_s2orc_metadata_record_becomes_a_paper(shared):
    papers = _papers(shared / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl")
    assert len(papers) == 1000
    assert not [p for p in papers if isinstance(p, DeadLetter)]
    with_arxiv = [p for p in papers if p.arxiv_id]
    assert all(p.paper_id == p.arxiv_id for p in with_arxiv)
    assert all(p.paper_id == p.s2_paper_id for p in papers if not p.arxiv_id and not p.doi)


def test_bad_metadata_lines_are_dead_lettered():
    assert parse_metadata_line(b'{"id": "x", "versions": []', "m.jsonl:3").reason == "truncated_json"
    assert parse_metadata_line(b'{"id": "not an id", "versions": []}', "m.jsonl:4").reason == "bad_identifier"
    assert parse_metadata_line(b'{"foo": 1}', "m.jsonl:5").reason == "unknown_layout"


def test_helpers():
    assert split_authors("A. Smith, B. Lee and C. Wu (MIT)") == ("A. Smith", "B. Lee", "C. Wu")
    versions = [{"created": "Tue, 3 Nov 2020 10:00:00 GMT"}, {"created": "Mon, 2 Nov 2020 10:00:00 GMT"}]
    assert first_version_date(versions) == dt.date(2020, 11, 2)
    merged = merge_papers(
        [
            Paper("1", "From the document", abstract="doc abstract", year=2019, source="document"),
            Paper("1", "From arXiv", date=dt.date(2020, 1, 2), source="arxiv-metadata"),
        ]
    )
    assert (merged.title, merged.abstract, merged.year, merged.source) == (
        "From arXiv",
        "doc abstract",
        2020,
        "arxiv-metadata",
    )
