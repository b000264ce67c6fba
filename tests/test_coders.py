"""`pipelines.coders`: every record comes back equal, equal records give equal bytes, and documents cross the
CanonicalizeIds and MergeDatabase joins without being pickled."""

from __future__ import annotations

import dataclasses
import datetime as dt
import pickle

import apache_beam as beam
import pytest
from apache_beam.coders import registry
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.documents.files import parse_document, parse_metadata_line
from mapping.records import (
    BibEntry,
    Context,
    DeadLetter,
    InputTally,
    Mention,
    Paper,
    Paragraph,
    ParsedDocument,
)
from mapping.taxonomy import taxonomy_fields
from pipelines.coders import (
    DOCUMENTS,
    SEALED,
    ContextCoder,
    DeadLetterCoder,
    DocumentCoder,
    InputTallyCoder,
    PaperCoder,
    SealedDocument,
    field_plan,
    pack_contexts,
    seal,
    unpack_contexts,
    unseal,
)

CODERS = {
    ParsedDocument: DocumentCoder(),
    Paper: PaperCoder(),
    Context: ContextCoder(),
    DeadLetter: DeadLetterCoder(),
    InputTally: InputTallyCoder(),
}


def real_documents(shared) -> list[ParsedDocument]:
    paths = [(p, "tei") for p in sorted((shared / "grobid").glob("*/*.tei.xml"))]
    paths += [(p, "s2orc") for p in sorted((shared / "s2orc/s2orc-doc2json").glob("*/*.json"))]
    documents = [parse_document(p.read_bytes(), str(p), kind) for p, kind in paths]
    return [d for d in documents if isinstance(d, ParsedDocument)]


def test_real_documents_and_papers_come_back_equal_and_encode_the_same_again(shared):
    documents = real_documents(shared)
    assert len(documents) >= 40 and any(d.date for d in documents)
    lines = (shared / "arxiv/arxiv-browse_abs_derived.jsonl").read_bytes().splitlines()
    papers = [p for p in (parse_metadata_line(line, "x") for line in lines if line.strip()) if isinstance(p, Paper)]
    papers = [dataclasses.replace(p, **taxonomy_fields(p.categories)) for p in papers]  # as MergeDatabase makes them
    assert len(papers) > 1000 and any(p.date for p in papers) and any(p.acm_classes for p in papers)
    for records, coder in ((documents, CODERS[ParsedDocument]), (papers, CODERS[Paper])):
        for record in records:
            encoded = coder.encode(record)
            decoded = coder.decode(encoded)
            assert decoded == record and hash(decoded) == hash(record)
            assert all(isinstance(p, Paragraph) for p in getattr(decoded, "paragraphs", ()))
            assert coder.encode(decoded) == encoded  # deterministic: the same value, the same bytes
    pickled = sum(len(pickle.dumps(d)) for d in documents)
    assert sum(len(CODERS[ParsedDocument].encode(d)) for d in documents) < pickled
    assert sum(len(DOCUMENTS.encode(d)) for d in documents) < pickled / 2  # what crosses the joins, compressed


def test_equal_records_built_apart_give_equal_bytes():
    """Pickle writes a string shared by two fields once and equal but distinct strings twice; these bytes must not
    depend on how a record's values happen to be shared."""
    heading = "Related work"
    shared = Paragraph("Text [1].", 0, heading, ((0, 9),), (Mention(5, 8, "[1]", "b0"),), "body")
    apart = Paragraph("Text [1].", 0, "".join(["Related", " work"]), ((0, 9),), (Mention(5, 8, "[1]", "b0"),), "body")
    one = ParsedDocument("p", "s", "tei", heading, None, (), (shared, shared), ())
    two = ParsedDocument("p", "s", "tei", "Related work", None, (), (shared, apart), ())
    assert one == two
    assert DOCUMENTS.encode(one) == DOCUMENTS.encode(two)


def test_the_coders_are_registered_for_their_types_and_deterministic():
    for record_type, coder in CODERS.items():
        assert isinstance(registry.get_coder(record_type), type(coder))
        assert coder.is_deterministic()
        assert pickle.loads(pickle.dumps(coder)) == coder
    assert pickle.loads(pickle.dumps(DOCUMENTS)) == DOCUMENTS and DOCUMENTS.is_deterministic()


def test_every_field_of_every_record_is_planned():
    for record_type in CODERS:
        names = [name for name, _, _ in field_plan(record_type)]
        assert names == [f.name for f in dataclasses.fields(record_type)]
    kinds = {name: how for name, how, _ in field_plan(ParsedDocument)}
    assert (kinds["paragraphs"], kinds["bib_entries"], kinds["date"], kinds["title"]) == (
        "records",
        "records",
        "date",
        "value",
    )


def test_values_the_encoding_cannot_carry_faithfully_are_refused():
    with pytest.raises(TypeError, match="date"):
        CODERS[Paper].encode(Paper("p", "T", date=dt.datetime(2020, 1, 2, 3, 4)))
    with pytest.raises(Exception, match="deterministically"):
        CODERS[DeadLetter].encode(DeadLetter("s", "stage", "reason", detail=object()))
    with pytest.raises(TypeError, match="frozen dataclass"):
        field_plan(dict)


texts = st.text(max_size=30)
maybe = st.none() | texts
mentions = st.builds(Mention, st.integers(0, 10**6), st.integers(0, 10**6), texts, maybe)
spans = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6))
paragraphs = st.builds(
    Paragraph, texts, st.integers(-5, 10**6), maybe, st.tuples(spans, spans), st.lists(mentions, max_size=3).map(tuple)
)
bib_entries = st.builds(
    BibEntry,
    texts,
    title=maybe,
    authors=st.lists(texts, max_size=3).map(tuple),
    year=st.none() | st.integers(-(2**40), 2**40),
    other_ids=st.lists(texts, max_size=2).map(tuple),
)
dates = st.none() | st.dates()
documents = st.builds(
    ParsedDocument,
    texts,
    texts,
    texts,
    maybe,
    maybe,
    st.lists(texts, max_size=3).map(tuple),
    st.lists(paragraphs, max_size=4).map(tuple),
    st.lists(bib_entries, max_size=3).map(tuple),
    date=dates,
    year=st.none() | st.integers(),
)


@settings(max_examples=200, deadline=None)
@given(documents)
def test_any_document_comes_back_equal(document):
    encoded = DOCUMENTS.encode(document)
    assert DOCUMENTS.decode(encoded) == document
    assert DOCUMENTS.encode(DOCUMENTS.decode(encoded)) == encoded


@settings(max_examples=200, deadline=None)
@given(documents, st.text(max_size=12))
def test_a_sealed_document_opens_to_the_same_document_with_the_header_as_changed(document, new_id):
    sealed = seal(document)
    assert sealed.header.paragraphs == () and sealed.header.bib_entries == ()
    assert sealed.paper_id == document.paper_id and sealed.source == document.source
    assert unseal(sealed) == document
    assert unseal(SEALED.decode(SEALED.encode(sealed))) == document
    assert SEALED.encode(SEALED.decode(SEALED.encode(sealed))) == SEALED.encode(sealed)
    renamed = SealedDocument(sealed.header.with_id(new_id), sealed.body)
    assert unseal(renamed) == dataclasses.replace(document, paper_id=new_id)
    assert unseal(document) is document


def test_packed_contexts_come_back_equal_in_order_and_pack_the_same_again():
    contexts = [
        Context(
            f"2101.0000{i}_x_{i}",
            f"2101.0000{i}",
            "x",
            f"b{i}",
            f"text {i} TARGETCIT",
            f"sentence {i}",
            "Intro",
            "[1]",
            citing_date=dt.date(2021, 1, i + 1),
            citing_year=2021,
            cited_categories=("cs.CL",) * i,
        )
        for i in range(5)
    ]
    packed = pack_contexts(contexts)
    assert unpack_contexts(packed) == contexts
    assert pack_contexts(unpack_contexts(packed)) == packed
    assert unpack_contexts(pack_contexts([])) == []
    assert len(packed) < sum(len(ContextCoder().encode(c)) for c in contexts)  # one compressed frame


def test_sealed_real_documents_are_smaller_than_documents_pickled(shared):
    documents = real_documents(shared)
    for document in documents:
        assert unseal(SEALED.decode(SEALED.encode(seal(document)))) == document
    pickled = sum(len(pickle.dumps(d)) for d in documents)
    assert sum(len(SEALED.encode(seal(d))) for d in documents) < pickled / 2


@pytest.mark.beam
def test_documents_cross_canonicalize_and_merge_without_being_pickled(monkeypatch):
    """A document that Beam pickled would raise here: the joins carry `HEADERS` bytes and sealed bodies, and
    MergeDatabase's typed output (sealed documents) is encoded by `SealedDocumentCoder` wherever the runner keeps
    it."""
    from pipelines.transforms import CanonicalizeIds, MergeDatabase
    from tests.support.documents import document, paragraph

    def refuse(self, protocol):
        raise AssertionError("a ParsedDocument was pickled")

    def opened_text(sealed: SealedDocument) -> str:
        return unseal(sealed).paragraphs[0].text

    monkeypatch.setattr(ParsedDocument, "__reduce_ex__", refuse)
    papers = [Paper("1901.00001", "Real Title", arxiv_id="1901.00001", s2_paper_id="55", date=dt.date(2019, 1, 2))]
    text = "It builds on [1]."
    docs = [
        document([paragraph(text, [("[1]", "b0")])], paper_id="55", source="a.json", s2_paper_id="55", title=None),
        document([paragraph(text, [("[1]", "b0")])], paper_id="1901.00001", source="b.json"),
    ]
    with TestPipeline(runner="FnApiRunner") as p:
        meta = p | "Papers" >> beam.Create(papers)
        canon = {"documents": p | "Docs" >> beam.Create(docs), "papers": meta} | CanonicalizeIds()
        merged = {"documents": canon["documents"], "bodies": canon["bodies"], "papers": meta} | MergeDatabase()
        kept = merged["documents"] | beam.Reshuffle() | beam.Map(lambda d: (d.paper_id, d.source, opened_text(d)))
        assert_that(kept, equal_to([("1901.00001", "a.json", text)]))
