"""S2ORC as the Semantic Scholar Datasets API ships it (`extractors/documents/s2ag.py`), its `papers` and `abstracts`
datasets, and S2 corpus ids as an identifier in both matchers.

No full real S2AG record is stored in this repository or in ../shared/data: every record here is written by hand
from the documented layout (../shared/data/s2ag-s2orc-format.md: `corpusid`, `externalids`, `content.text`, and
annotations as JSON *strings* of `{start, end, attributes}` spans). The span offsets are found with `str.index`
on the hand-written text; every expected value is written out literally.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.documents.files import paper_from_document, parse_document, parse_metadata_line
from extractors.documents.metadata import merge_papers
from extractors.documents.s2ag import parse_s2ag_record, with_abstract
from extractors.documents.tei import DocumentError
from mapping.ids import identifier_keys, paper_id_for
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig
from mapping.records import BibEntry, DeadLetter, Mention, Paper, PaperAbstract, ParsedDocument, Resolution
from pipelines.transforms import _ChooseCanonicalIdFn
from tests.support.matching import assert_join_resolves_the_same, in_memory_resolutions

TITLE = "Graph Neural Citation Recommendation"
ABSTRACT = "We recommend citations with graphs [1]."
P1 = "Citation recommendation is old [1]. Graphs help (Smith et al., 2019)."
P2 = "We build on BERT [2]."
P3 = "Our model uses attention [2,3] and memory [4]."
BIB0 = "[1] J. Smith and K. Lee. 2019. Citation graphs. In Proc. SIGIR. doi:10.1145/3331184.3331200"
BIB1 = (
    "[2] J. Devlin, M. Chang. BERT: Pre-training of deep bidirectional transformers. "
    "arXiv preprint arXiv:1810.04805, 2018."
)
BIB2 = "[3] R. Roe. Unmatched work of 1999 things. Journal of Things, 2001."
TEXT = "\n".join(
    [
        TITLE,
        "Ada Lovelace",
        "Alan Turing",
        ABSTRACT,
        "1 Introduction",
        P1,
        P2,
        "2 Method",
        P3,
        "References",
        BIB0,
        BIB1,
        BIB2,
        "",
    ]
)


def _span(needle: str, after: str | None = None, **attributes) -> dict:
    """The span of `needle` in TEXT (the first one after the text `after`)."""
    start = TEXT.index(needle, TEXT.index(after) if after else 0)
    span = {"start": start, "end": start + len(needle)}
    if attributes:
        span["attributes"] = attributes
    return span


def _annotation(*spans: dict) -> str:
    return json.dumps(list(spans))


def s2ag_record(**externalids) -> dict:
    """A 3-paragraph S2AG record: two sections, bibrefs, three bib entries (two matched to corpus ids), a null
    annotation, an annotation that is not JSON, and spans past the end of the text."""
    past_end = {"start": len(TEXT) + 5, "end": len(TEXT) + 9, "attributes": {"ref_id": "b0"}}
    return {
        "corpusid": 215812345,
        "externalids": {
            "ArXiv": None,
            "DOI": "10.1000/Graph.2020",
            "MAG": "3015",
            "ACL": None,
            "PubMed": None,
            "PubMedCentral": None,
            "DBLP": None,
            "CorpusId": "215812345",
            **externalids,
        },
        "content": {
            "source": {"pdfurls": ["https://example.org/paper.pdf"], "pdfsha": "0123abcd", "oainfo": None},
            "text": TEXT,
            "annotations": {
                "title": _annotation(_span(TITLE)),
                "author": _annotation(_span("Ada Lovelace"), _span("Alan Turing")),
                "abstract": _annotation(_span(ABSTRACT)),
                "venue": None,
                "sectionheader": _annotation(
                    _span("Introduction", n="1"), _span("Method", after="2 Method", n="2"), _span("References")
                ),
                # a paragraph span repeating the abstract, one running past the end of the text, and
                # whitespace around P3 (trimmed)
                "paragraph": _annotation(
                    _span(P3, after="2 Method") | {"start": TEXT.index(P3) - 1, "end": TEXT.index(P3) + len(P3) + 1},
                    _span(P1),
                    _span(ABSTRACT),
                    _span(P2),
                    {"start": 10, "end": len(TEXT) + 100},
                ),
                "bibref": _annotation(
                    _span("[1]", after=ABSTRACT, ref_id="b0"),
                    _span("[1]", after=P1, ref_id="b0"),
                    _span("Smith et al., 2019", after=P1, ref_id="b0"),
                    _span("[2]", after=P2, ref_id="b1"),
                    _span("2", after="attention [", ref_id="b1"),
                    _span("3", after="attention [2,", ref_id="b2"),
                    _span("[4]", after=P3),  # no attributes: a marker S2 did not link
                    past_end,
                ),
                "bibentry": _annotation(
                    _span(BIB0, id="b0", matched_paper_id=12345),
                    _span(BIB1, id="b1", matched_paper_id="52967399"),
                    _span(BIB2, id="b2", matched_paper_id=None, doi="10.5555/ABC.1"),
                ),
                "bibtitle": _annotation(
                    _span("Citation graphs", after=BIB0),
                    _span("BERT: Pre-training of deep bidirectional transformers", after=BIB1),
                    _span("Unmatched work of 1999 things", after=BIB2),
                ),
                "bibauthor": _annotation(
                    _span("J. Smith", after=BIB0),
                    _span("K. Lee", after=BIB0),
                    _span("J. Devlin", after=BIB1),
                    _span("M. Chang", after=BIB1),
                    _span("R. Roe", after=BIB2),
                ),
                "bibvenue": _annotation(_span("Proc. SIGIR", after=BIB0), _span("Journal of Things", after=BIB2)),
                "bibdate": _annotation(_span("2018", after=BIB1), _span("2001", after=BIB2)),
                "figure": None,
                "formula": '[{"start": 3, "end": ',  # not JSON, but this parser never reads formulas
            },
        },
    }


EXPECTED_BIB = (
    BibEntry(
        "b0",
        title="Citation graphs",
        authors=("J. Smith", "K. Lee"),
        year=2019,
        venue="Proc. SIGIR",
        doi="10.1145/3331184.3331200",
        raw=BIB0,
        s2_corpus_id="12345",
    ),
    BibEntry(
        "b1",
        title="BERT: Pre-training of deep bidirectional transformers",
        authors=("J. Devlin", "M. Chang"),
        year=2018,
        arxiv_id="1810.04805",
        raw=BIB1,
        s2_corpus_id="52967399",
    ),
    BibEntry(
        "b2",
        title="Unmatched work of 1999 things",
        authors=("R. Roe",),
        year=2001,  # the bibdate span, not the first year-like number in the text
        venue="Journal of Things",
        doi="10.5555/abc.1",
        raw=BIB2,
    ),
)


def _counter():
    counts: Counter = Counter()
    return counts, lambda name, n=1: counts.update({name: n})


def test_s2ag_record_paragraphs_sections_and_mentions():
    counts, count = _counter()
    document = parse_s2ag_record(s2ag_record(), "s2orc_0.jsonl:1", "s2orc_0", count)
    assert document.source_format == "s2ag"
    assert document.title == TITLE
    assert document.authors == ("Ada Lovelace", "Alan Turing")
    assert document.abstract == ABSTRACT
    shape = [(p.kind, p.section_index, p.section_heading, p.text) for p in document.paragraphs]
    assert shape == [
        ("abstract", 0, "Abstract", ABSTRACT),
        ("body", 1, "Introduction", P1),
        ("body", 1, "Introduction", P2),
        ("body", 2, "Method", P3),
    ]
    assert [p.mentions for p in document.paragraphs] == [
        (Mention(35, 38, "[1]", "b0"),),
        (Mention(31, 34, "[1]", "b0"), Mention(49, 67, "Smith et al., 2019", "b0")),
        (Mention(17, 20, "[2]", "b1"),),
        (Mention(26, 27, "2", "b1"), Mention(28, 29, "3", "b2"), Mention(42, 45, "[4]", None)),
    ]
    assert document.paragraphs[1].sentences == ((0, 35), (36, 69))
    # one bibref and one paragraph past the end of the text; the unparsable `formula` is never read
    assert counts == {"s2ag_span_out_of_range": 2}


def test_s2ag_bib_entries_with_corpus_ids_titles_authors_years_and_ids():
    document = parse_s2ag_record(s2ag_record(), "s2orc_0.jsonl:1", "s2orc_0")
    assert document.bib_entries == EXPECTED_BIB


def test_s2ag_paper_id_arxiv_then_doi_then_corpus_id_then_stem():
    def paper_id(**externalids) -> tuple[str, str | None]:
        document = parse_s2ag_record(s2ag_record(**externalids), "f.jsonl:3", "f")
        return document.paper_id, document.s2_corpus_id

    assert paper_id() == ("doi:10.1000/graph.2020", "215812345")
    assert paper_id(ArXiv="2004.12345v2") == ("2004.12345", "215812345")
    assert paper_id(DOI=None) == ("s2corpus:215812345", "215812345")
    record = s2ag_record()
    record["corpusid"], record["externalids"] = "not a number", None
    document = parse_s2ag_record(record, "f.jsonl:3", "f")
    assert (document.paper_id, document.s2_corpus_id, document.doi) == ("f", None, None)
    assert document.identifier_keys() == []
    assert parse_s2ag_record(s2ag_record(DOI=None), "f", "f").identifier_keys() == ["s2corpus:215812345", "mag:3015"]


def test_paper_id_rule_and_keys_with_corpus_ids():
    assert paper_id_for(arxiv_id=None, doi=None, s2_paper_id=None, s2_corpus_id="7", fallback="f") == "s2corpus:7"
    assert paper_id_for(arxiv_id=None, doi=None, s2_paper_id="9", s2_corpus_id="7", fallback="f") == "9"
    assert paper_id_for(arxiv_id=None, doi="10.1/x", s2_paper_id=None, s2_corpus_id="7", fallback="f") == "doi:10.1/x"
    assert identifier_keys(arxiv_id="1", doi="10.1/x", s2_paper_id="9", s2_corpus_id="7") == [
        "arxiv:1",
        "doi:10.1/x",
        "s2corpus:7",
        "s2:9",
    ]


def test_parse_document_dispatches_s2ag_json_lines():
    record = s2ag_record()
    document = parse_document(json.dumps(record).encode(), "x.jsonl:1", "s2orc")
    assert isinstance(document, ParsedDocument)
    assert document.source_format == "s2ag" and document.source == "x.jsonl:1"
    assert document.paper_id == "doi:10.1000/graph.2020" and document.s2_corpus_id == "215812345"
    assert document.bib_entries == EXPECTED_BIB
    assert document == parse_s2ag_record(record, "x.jsonl:1", "x")


def _with_annotations(**annotations) -> bytes:
    record = s2ag_record()
    record["content"]["annotations"].update(annotations)
    return json.dumps(record).encode()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_with_annotations(paragraph='[{"start": 0, "end": 5}'), "malformed_annotations"),
        (_with_annotations(bibref='{"start": 0, "end": 5}'), "malformed_annotations"),
        (_with_annotations(bibtitle=17), "malformed_annotations"),
        (_with_annotations(paragraph=None), "no_body"),
        (_with_annotations(paragraph=_annotation(_span(ABSTRACT))), "no_body"),  # only the abstract
        (json.dumps({"corpusid": 1, "content": {"text": None, "annotations": None}}).encode(), "no_body"),
        (
            json.dumps({"corpusid": 1, "content": {"text": "Some text.", "annotations": "[]"}}).encode(),
            "malformed_annotations",
        ),
    ],
)
def test_s2ag_records_that_cannot_be_parsed_become_dead_letters(data, reason):
    letter = parse_document(data, "x.jsonl:2", "s2orc")
    assert isinstance(letter, DeadLetter) and letter.reason == reason, letter


def test_s2ag_null_annotations_give_a_document_without_mentions_or_bibliography():
    text = "Intro\nOnly one paragraph here. Cited [1]."
    record = {
        "corpusid": "42",
        "externalids": {"ArXiv": None, "DOI": None, "CorpusId": 42},
        "content": {
            "source": None,
            "text": text,
            "annotations": {
                "paragraph": json.dumps([{"start": 6, "end": len(text)}]),
                "sectionheader": None,
                "bibref": None,
                "bibentry": None,
                "abstract": None,
                "title": None,
            },
        },
    }
    document = parse_s2ag_record(record, "y.jsonl:1", "y")
    assert document.paper_id == "s2corpus:42" and document.title is None and document.abstract is None
    assert [(p.section_index, p.section_heading, p.text, p.mentions) for p in document.paragraphs] == [
        (0, None, "Only one paragraph here. Cited [1].", ())
    ]
    assert document.bib_entries == ()


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 300) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
_SPAN = st.fixed_dictionaries(
    {"start": st.integers(-3, 200) | st.text(max_size=3), "end": st.integers(-3, 200) | st.none()},
    optional={"attributes": _VALUES},
)
_ANNOTATION = st.none() | st.lists(_SPAN, max_size=5).map(json.dumps) | st.text(max_size=10) | _VALUES


@settings(max_examples=150, deadline=None)
@given(
    annotations=st.dictionaries(
        st.sampled_from(["paragraph", "sectionheader", "bibref", "bibentry", "bibtitle", "abstract", "bibdate"]),
        _ANNOTATION,
    ),
    text=st.text(max_size=120) | st.none() | st.integers(),
    externalids=_VALUES,
)
def test_s2ag_parser_raises_only_document_errors_on_random_records(annotations, text, externalids):
    record = {"corpusid": 5, "externalids": externalids, "content": {"text": text, "annotations": annotations}}
    try:
        document = parse_s2ag_record(record, "z.jsonl:1", "z")
    except DocumentError as err:
        assert err.reason in {"no_body", "malformed_annotations"}
    else:
        for paragraph in document.paragraphs:
            for mention in paragraph.mentions:
                assert paragraph.text[mention.start : mention.end] == mention.text


PAPERS_RECORD = {
    "corpusid": 215812345,
    "externalids": {
        "ArXiv": "2004.12345",
        "DOI": "10.1000/Graph.2020",
        "MAG": "3015",
        "ACL": None,
        "PubMed": None,
        "PubMedCentral": None,
        "DBLP": "journals/corr/abs-2004-12345",
        "CorpusId": "215812345",
    },
    "url": "https://www.semanticscholar.org/paper/0123456789abcdef0123456789abcdef01234567",
    "title": "Graph Neural  Citation\nRecommendation",
    "authors": [{"authorId": "1", "name": "Ada Lovelace"}, {"authorId": None, "name": "Alan Turing"}],
    "venue": "arXiv.org",
    "publicationvenueid": None,
    "year": 2020,
    "referencecount": 3,
    "citationcount": 10,
    "influentialcitationcount": 1,
    "isopenaccess": True,
    "s2fieldsofstudy": [
        {"category": "Computer Science", "source": "external"},
        {"category": "Computer Science", "source": "s2-fos-model"},
        {"category": "Mathematics", "source": "s2-fos-model"},
    ],
    "publicationtypes": ["JournalArticle"],
    "publicationdate": "2020-04-26",
    "journal": {"name": "ArXiv", "volume": "abs/2004.12345", "pages": None},
}
ABSTRACTS_RECORD = {
    "corpusid": 215812345,
    "openaccessinfo": {
        "externalids": {"ArXiv": "2004.12345", "DOI": None},
        "license": "CCBY",
        "url": "https://arxiv.org/pdf/2004.12345",
        "status": "GREEN",
    },
    "abstract": "We  recommend citations\nwith graphs.",
}


def test_parse_metadata_line_reads_s2ag_papers_records():
    paper = parse_metadata_line(json.dumps(PAPERS_RECORD).encode(), "papers.jsonl:1")
    assert paper == Paper(
        paper_id="2004.12345",
        title="Graph Neural Citation Recommendation",
        authors=("Ada Lovelace", "Alan Turing"),
        date=dt.date(2020, 4, 26),
        year=2020,
        categories=("Computer Science", "Mathematics"),
        doi="10.1000/graph.2020",
        arxiv_id="2004.12345",
        source="s2ag-papers",
        s2_corpus_id="215812345",
        other_ids=("mag:3015", "dblp:journals/corr/abs-2004-12345"),
    )
    bare = {**PAPERS_RECORD, "externalids": {"ArXiv": None, "DOI": None}, "publicationdate": None, "year": 1999}
    paper = parse_metadata_line(json.dumps(bare).encode(), "papers.jsonl:2")
    assert (paper.paper_id, paper.date, paper.year, paper.identifier_keys()) == (
        "s2corpus:215812345",
        None,
        1999,
        ["s2corpus:215812345"],
    )
    no_corpus_id = {
        **PAPERS_RECORD,
        "corpusid": None,
        "externalids": {**PAPERS_RECORD["externalids"], "CorpusId": None},
    }
    letter = parse_metadata_line(json.dumps(no_corpus_id).encode(), "papers.jsonl:3")
    assert isinstance(letter, DeadLetter) and letter.reason == "bad_identifier"


def test_parse_metadata_line_reads_s2ag_abstracts_records():
    record = parse_metadata_line(json.dumps(ABSTRACTS_RECORD).encode(), "abstracts.jsonl:1")
    assert record == PaperAbstract(corpus_id="215812345", abstract="We recommend citations with graphs.")
    empty = parse_metadata_line(b'{"corpusid": 7, "openaccessinfo": null, "abstract": null}', "abstracts.jsonl:2")
    assert empty == PaperAbstract(corpus_id="7", abstract=None)
    letter = parse_metadata_line(b'{"corpusid": 7, "openaccessinfo": null}', "abstracts.jsonl:3")
    assert isinstance(letter, DeadLetter) and letter.reason == "unknown_layout"


def test_with_abstract_fills_only_a_missing_abstract_of_the_same_corpus_id():
    paper = Paper("s2corpus:7", "A title", s2_corpus_id="7")
    other = PaperAbstract("8", "Another paper's abstract, longer than any other here.")
    short, long = PaperAbstract("7", "Short."), PaperAbstract("7", "The longer abstract.")
    assert with_abstract(paper, [other, PaperAbstract("7", None), short, long]).abstract == "The longer abstract."
    assert with_abstract(paper, [long, short, other]).abstract == "The longer abstract."
    assert with_abstract(paper, [other]) == paper
    assert with_abstract(Paper("p", "t", abstract="Own.", s2_corpus_id="7"), [long]).abstract == "Own."


def test_corpus_id_travels_from_document_to_database_record():
    document = parse_s2ag_record(s2ag_record(DOI=None), "f.jsonl:1", "f")
    from_document = paper_from_document(document)
    assert from_document.s2_corpus_id == "215812345"
    database = Paper("s2corpus:215812345", "T", source="s2ag-papers")
    assert merge_papers([database, from_document]).s2_corpus_id == "215812345"


def test_in_memory_matcher_resolves_by_corpus_id_after_arxiv_and_doi():
    papers = [
        Paper("s2corpus:12345", "Something else entirely, not the cited title", s2_corpus_id="12345"),
        Paper("1810.04805", "BERT", arxiv_id="1810.04805", s2_corpus_id="99"),
        Paper("s2corpus:52967399", "An unrelated record holding the BERT corpus id", s2_corpus_id="52967399"),
    ]
    counts, count = _counter()
    matcher = InMemoryMatcher(papers)
    resolutions = matcher.resolve_many(list(EXPECTED_BIB), count)
    assert resolutions == [
        Resolution("b0", "s2corpus:12345", "s2_corpus_id", 1.0),  # its DOI is not in the database
        Resolution("b1", "1810.04805", "arxiv_id", 1.0),  # the arXiv id wins over the corpus id
        Resolution("b2", None, "unresolved"),
    ]
    assert counts == {
        "resolved_by:s2_corpus_id": 1,
        "resolved_by:arxiv_id": 1,
        "unresolved:no_title_match": 1,
        "bib_entries_with:arxiv_id": 1,
        "bib_entries_with:doi": 2,
        "bib_entries_with:s2_corpus_id": 2,
    }


@pytest.mark.beam
def test_join_matcher_resolves_corpus_ids_as_the_in_memory_matcher_does():
    config = MatchConfig()
    title = "Graph neural networks for citation recommendation"
    papers = [
        Paper("s2corpus:2", "First record of a shared corpus id", s2_corpus_id="5"),
        Paper("s2corpus:1", "Second record of a shared corpus id", s2_corpus_id="5"),
        Paper("doi:10.1/y", title, doi="10.1/y", s2_corpus_id="6"),
        Paper("t", "Citation graphs and their neighbourhoods", year=2019),
    ]
    refs = [
        ("a", BibEntry("b0", title="anything", s2_corpus_id="5")),  # two papers: the smallest id
        ("b", BibEntry("b1", title=None, doi="10.1/y", s2_corpus_id="5")),  # the DOI first
        ("c", BibEntry("b2", title="Citation graphs and their neighbourhoods", s2_corpus_id="404")),  # title
        ("d", BibEntry("b3", title=None, s2_corpus_id="6")),
    ]
    expected, counts = in_memory_resolutions(papers, refs, config)
    assert [r.paper_id for _, r in expected] == ["s2corpus:1", "doi:10.1/y", "t", "doi:10.1/y"]
    assert [r.method for _, r in expected] == ["s2_corpus_id", "doi", "title", "s2_corpus_id"]
    assert_join_resolves_the_same(papers, refs, config, expected, counts)


def test_canonical_id_ranks_keys_as_resolution_does_and_never_fails_on_an_unknown_kind():
    def ranked(key: str) -> list:
        return list(_ChooseCanonicalIdFn().process((key, {"papers": ["p2", "p1"], "documents": ["d"]})))

    assert ranked("s2corpus:7") == [("d", (2, "p1"))]
    assert ranked("doi:10.1/x") == [("d", (1, "p1"))]
    assert ranked("s2:7") == [("d", (3, "p1"))]
    assert ranked("pmid:7") == [("d", (4, "p1"))]
    assert ranked("openalex:W1") == [("d", (7, "p1"))]
    assert ranked("isbn:1") == [("d", (10, "p1"))]
