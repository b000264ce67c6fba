"""S2ORC as the Semantic Scholar Datasets API ("S2AG") ships it since 2023, and its `papers` / `abstracts`
datasets as the paper database.

A full-text record is `{corpusid, externalids, content: {source, text, annotations}}`: the whole paper is one
string, and each annotation is a JSON *string* of `{start, end, attributes?}` spans into it, or null. Spans
become paragraphs, sections, mentions and bib entries; a bad span is dropped and counted, and an annotation that
is not a list makes the record a dead letter (`malformed_annotations`). How spans are read: docs/design.md.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from extractors.documents.fields import decode_json
from extractors.documents.sentences import paragraph_with_sentences
from extractors.documents.tei import DocumentError, parse_date
from mapping.ids import (
    Identifiers,
    arxiv_id_in_text,
    doi_in_text,
    identifier_key,
    normalize_arxiv_id,
    normalize_corpus_id,
    normalize_doi,
    other_id_keys,
    paper_id_for,
)
from mapping.records import BibEntry, CounterFn, Mention, Paper, PaperAbstract, Paragraph, ParsedDocument, no_count

SOURCE_FORMAT = "s2ag"
PAPERS_SOURCE = "s2ag-papers"

_YEAR = re.compile(r"(?<![\d./:-])(1[89]\d\d|20\d\d)(?!\.?\d)")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class _Span:
    """One annotation span: character offsets into the record's text, and its attributes."""

    start: int
    end: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


class _Spans:
    """One annotation's spans sorted by start, with the lookup of the spans inside a range."""

    def __init__(self, spans: Sequence[_Span]) -> None:
        self.spans = sorted(spans, key=lambda s: (s.start, s.end))
        self.starts = [s.start for s in self.spans]

    def within(self, start: int, end: int) -> list[_Span]:
        """The spans lying wholly inside `[start, end)`, in order."""
        found = []
        for span in self.spans[bisect.bisect_left(self.starts, start) :]:
            if span.start >= end:
                break
            if span.end <= end:
                found.append(span)
        return found

    def before(self, position: int) -> int:
        """How many spans start before `position`."""
        return bisect.bisect_left(self.starts, position)


def is_s2ag_record(record: Mapping[str, Any]) -> bool:
    """Whether a full-text JSON object has the S2AG layout (`corpusid` and `content` with text/annotations)."""
    content = record.get("content")
    return "corpusid" in record and isinstance(content, Mapping) and ("text" in content or "annotations" in content)


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return _WS.sub(" ", value).strip() or None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


class _Annotations:
    """The annotations of one record, decoded on first use."""

    def __init__(self, annotations: Mapping[str, Any], text: str, count: CounterFn) -> None:
        self._raw, self._text, self._count = annotations, text, count
        self._decoded: dict[str, _Spans] = {}

    def __getitem__(self, name: str) -> _Spans:
        if name not in self._decoded:
            self._decoded[name] = _Spans(self._decode(name))
        return self._decoded[name]

    def _decode(self, name: str) -> list[_Span]:
        value = self._raw.get(name)
        if value is None:
            return []
        if isinstance(value, str):
            try:
                value = decode_json(value, self._count)
            except json.JSONDecodeError as err:
                raise DocumentError("malformed_annotations", f"{name}: not JSON ({err.msg} at {err.pos})") from err
        if not isinstance(value, list):
            raise DocumentError("malformed_annotations", f"{name}: a JSON {type(value).__name__}, not a list of spans")
        spans = []
        for item in value:
            try:
                start, end = int(item["start"]), int(item["end"])
            except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: an infinite offset
                self._count("s2ag_span_malformed", 1)
                continue
            if not 0 <= start <= end <= len(self._text):
                self._count("s2ag_span_out_of_range", 1)
                continue
            start, end = _trim(self._text, start, end)
            if start == end:
                self._count("s2ag_span_blank", 1)
                continue
            attributes = item.get("attributes")
            spans.append(_Span(start, end, attributes if isinstance(attributes, Mapping) else {}))
        return spans


def _span_text(text: str, span: _Span) -> str | None:
    return _clean(text[span.start : span.end])


def _paragraph(
    text: str, span: _Span, bibrefs: _Spans, section_index: int, heading: str | None, kind: str
) -> Paragraph | None:
    body = text[span.start : span.end]
    mentions = []
    for ref in bibrefs.within(span.start, span.end):
        ref_id = ref.attributes.get("ref_id")
        start, end = ref.start - span.start, ref.end - span.start
        mentions.append(Mention(start, end, body[start:end], str(ref_id) if ref_id not in (None, "") else None))
    if not body.strip():
        return None
    return paragraph_with_sentences(body, mentions, section_index, heading, kind)


def _body_paragraphs(text: str, annotations: _Annotations, abstract: Sequence[_Span], first: int) -> list[Paragraph]:
    headers = annotations["sectionheader"]
    bibrefs = annotations["bibref"]
    paragraphs: list[Paragraph] = []
    dense: dict[int, int] = {}  # headers before the paragraph -> section index, numbered as sections appear
    for span in annotations["paragraph"].spans:
        if any(a.start <= span.start and span.end <= a.end for a in abstract):
            continue
        preceding = headers.before(span.start)
        heading = _span_text(text, headers.spans[preceding - 1]) if preceding else None
        section_index = dense.setdefault(preceding, first + len(dense))
        paragraph = _paragraph(text, span, bibrefs, section_index, heading, "body")
        if paragraph is not None:
            paragraphs.append(paragraph)
    return paragraphs


def _year_in(value: str | None) -> int | None:
    match = _YEAR.search(value or "")
    return int(match.group(1)) if match else None


def _bib_entries(text: str, annotations: _Annotations) -> tuple[BibEntry, ...]:
    entries = []
    for position, span in enumerate(annotations["bibentry"].spans):
        raw = _clean(text[span.start : span.end])

        def inside(name: str, span: _Span = span) -> list[str]:
            found = (_span_text(text, s) for s in annotations[name].within(span.start, span.end))
            return [t for t in found if t]

        titles, venues = inside("bibtitle"), inside("bibvenue")
        year = next((y for y in map(_year_in, inside("bibdate")) if y), None) or _year_in(raw)
        attributes = span.attributes
        bib_id = attributes.get("id")
        doi = normalize_doi(str(attributes.get("doi") or "")) or doi_in_text(raw)
        arxiv = arxiv_id_in_text(raw)
        entries.append(
            BibEntry(
                bib_id=str(bib_id) if bib_id not in (None, "") else f"bibentry{position}",
                title=titles[0] if titles else None,
                authors=tuple(inside("bibauthor")),
                year=year,
                venue=venues[0] if venues else None,
                doi=doi,
                arxiv_id=arxiv,
                raw=raw,
                s2_corpus_id=normalize_corpus_id(attributes.get("matched_paper_id")),
            )
        )
    return tuple(entries)


# `externalids` names of the kinds kept in `other_ids`
_EXTERNAL_OTHER_IDS = (("PubMed", "pmid"), ("PubMedCentral", "pmcid"), ("ACL", "acl"), ("MAG", "mag"), ("DBLP", "dblp"))


def _external_ids(record: Mapping[str, Any]) -> Identifiers:
    """The identifiers of an S2AG record: `externalids` (ArXiv, DOI, CorpusId, PubMed, PubMedCentral, ACL, MAG,
    DBLP; values may be null, or absent) and `corpusid`."""
    ids = record.get("externalids")
    ids = ids if isinstance(ids, Mapping) else {}
    arxiv = normalize_arxiv_id(str(ids.get("ArXiv") or "")) or None
    doi = normalize_doi(str(ids.get("DOI") or ""))
    corpus = normalize_corpus_id(record.get("corpusid")) or normalize_corpus_id(ids.get("CorpusId"))
    others = other_id_keys(identifier_key(kind, ids.get(name)) for name, kind in _EXTERNAL_OTHER_IDS)
    return Identifiers(arxiv_id=arxiv, doi=doi, s2_corpus_id=corpus, other_ids=others)


def parse_s2ag_record(record: Any, source: str, stem: str, count: CounterFn = no_count) -> ParsedDocument:
    """Parse one S2AG S2ORC record. Raises `DocumentError` (`unknown_layout`, `malformed_annotations`, `no_body`)
    when it cannot; dropped spans are reported through `count`."""
    if not isinstance(record, Mapping) or not is_s2ag_record(record):
        raise DocumentError("unknown_layout", "not an S2AG record: no `corpusid` with `content.text/annotations`")
    content = record["content"]
    text = content.get("text")
    if not isinstance(text, str) or not text.strip():
        raise DocumentError("no_body", "S2AG record has no content.text")
    raw_annotations = content.get("annotations")
    if not isinstance(raw_annotations, Mapping):
        raise DocumentError("malformed_annotations", f"content.annotations is a {type(raw_annotations).__name__}")
    annotations = _Annotations(raw_annotations, text, count)
    abstract_spans = annotations["abstract"].spans
    abstract_pars = [
        p
        for p in (_paragraph(text, s, annotations["bibref"], 0, "Abstract", "abstract") for s in abstract_spans)
        if p is not None
    ]
    body = _body_paragraphs(text, annotations, abstract_spans, 1 if abstract_pars else 0)
    if not body:
        raise DocumentError("no_body", "S2AG record has no paragraph annotation with text")
    ids = _external_ids(record)
    arxiv_id, doi, corpus_id = ids.arxiv_id, ids.doi, ids.s2_corpus_id
    titles = [t for t in (_span_text(text, s) for s in annotations["title"].spans) if t]
    authors = tuple(t for t in (_span_text(text, s) for s in annotations["author"].spans) if t)
    return ParsedDocument(
        paper_id=paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=None, s2_corpus_id=corpus_id, fallback=stem),
        source=source,
        source_format=SOURCE_FORMAT,
        title=titles[0] if titles else None,
        abstract=" ".join(p.text for p in abstract_pars) or None,
        authors=authors,
        paragraphs=tuple(abstract_pars + body),
        bib_entries=_bib_entries(text, annotations),
        arxiv_id=arxiv_id,
        doi=doi,
        s2_corpus_id=corpus_id,
        other_ids=ids.other_ids,
    )


def paper_from_s2ag(record: Mapping[str, Any]) -> Paper:
    """A record of the `papers` dataset into a `Paper` (its abstract is in the `abstracts` dataset)."""
    ids = _external_ids(record)
    arxiv_id, doi, corpus_id = ids.arxiv_id, ids.doi, ids.s2_corpus_id
    if corpus_id is None:
        raise DocumentError("bad_identifier", f"corpusid {record.get('corpusid')!r} is not a corpus id")
    date, year = parse_date(str(record.get("publicationdate") or ""))
    if date is None:
        year_value = record.get("year")
        year = year_value if isinstance(year_value, int) and 1000 <= year_value <= 2999 else year
    authors = record.get("authors")
    names = (_clean(a.get("name")) for a in authors if isinstance(a, Mapping)) if isinstance(authors, list) else ()
    fields = record.get("s2fieldsofstudy")
    categories = [f.get("category") for f in fields if isinstance(f, Mapping)] if isinstance(fields, list) else []
    return Paper(
        paper_id=paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=None, s2_corpus_id=corpus_id, fallback=None),
        title=_clean(record.get("title")),
        abstract=_clean(record.get("abstract")),
        authors=tuple(n for n in names if n),
        date=date,
        year=year,
        categories=tuple(dict.fromkeys(str(c) for c in categories if isinstance(c, str) and c.strip())),
        doi=doi,
        arxiv_id=arxiv_id,
        source=PAPERS_SOURCE,
        s2_corpus_id=corpus_id,
        other_ids=ids.other_ids,
    )


def abstract_from_s2ag(record: Mapping[str, Any]) -> PaperAbstract:
    """A record of the `abstracts` dataset into a `PaperAbstract`."""
    corpus_id = normalize_corpus_id(record.get("corpusid"))
    if corpus_id is None:
        raise DocumentError("bad_identifier", f"corpusid {record.get('corpusid')!r} is not a corpus id")
    return PaperAbstract(corpus_id=corpus_id, abstract=_clean(record.get("abstract")))


def s2ag_metadata_record(record: Mapping[str, Any]) -> Paper | PaperAbstract:
    """A `papers` record (title or externalids) into a `Paper`, an `abstracts` record into a `PaperAbstract`."""
    if "title" in record or "externalids" in record:
        return paper_from_s2ag(record)
    if "abstract" in record:
        return abstract_from_s2ag(record)
    raise DocumentError("unknown_layout", f"S2AG record with neither title nor abstract: keys {sorted(record)[:8]}")


def with_abstract(paper: Paper, abstracts: Iterable[PaperAbstract]) -> Paper:
    """`paper` with the abstract of its corpus id filled in when it has none. Of several non-empty abstracts for
    that corpus id the longest wins (then the first in text order), whatever order they arrive in."""
    if paper.abstract or paper.s2_corpus_id is None:
        return paper
    texts = [a.abstract for a in abstracts if a.corpus_id == paper.s2_corpus_id and a.abstract]
    if not texts:
        return paper
    return replace(paper, abstract=min(texts, key=lambda t: (-len(t), t)))
