"""The paper database: arXiv OAI metadata snapshot records and S2ORC metadata records into `Paper`.

An arXiv paper's date is its first version's; an S2ORC paper's is only a year. A wrongly typed field is coerced
where the reading is unambiguous, else the line is a `wrong_type:<field>` dead letter (readers in
`extractors.documents.fields`). `paper_from_metadata` raises only `DocumentError`, the one exception
`parse_metadata_line` turns into a dead letter. The fields read and each one's rule: docs/design.md.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from typing import Any

from extractors.documents.fields import as_author_names, as_identifier, as_mappings, as_text, as_texts, as_year
from extractors.documents.fields import split_authors as split_authors  # re-exported: its home was here
from extractors.documents.s2ag import s2ag_metadata_record
from extractors.documents.tei import DocumentError, parse_date, raises_only_document_errors
from mapping.ids import (
    identifier_key,
    identifier_key_in_url,
    normalize_arxiv_id,
    normalize_corpus_id,
    normalize_doi,
    other_id_keys,
    paper_id_for,
)
from mapping.records import CounterFn, Paper, PaperAbstract, no_count

_WS = re.compile(r"\s+")


def first_version_date(versions: Any, path: str = "versions") -> dt.date | None:
    """The date of the earliest `created` among arXiv `versions`, or None. A `versions` that is not a list of
    objects, or a `created` that is not text, raises `DocumentError("wrong_type:versions…")`."""
    dates = []
    for version in as_mappings(versions, path):
        created = as_text(version.get("created"), f"{path}.created", numbers=False)
        if not created:
            continue
        try:
            dates.append(email.utils.parsedate_to_datetime(created).date())
        except (TypeError, ValueError, IndexError, OverflowError):
            date, _ = parse_date(created)
            if date:
                dates.append(date)
    return min(dates) if dates else None


_ACM_CODE = re.compile(r"(?<![\w.])([A-K](?:\.(?:\d+|m)){0,2})(?![\w])")


def acm_codes_in(value: str | None) -> tuple[str, ...]:
    """An arXiv record's own `ACM-class:` line ("I.2.7; H.3.3", "F.2.2, G.2.2") as CCS codes, in order."""
    codes: list[str] = []
    for match in _ACM_CODE.finditer(value or ""):
        if match.group(1) not in codes:
            codes.append(match.group(1))
    return tuple(codes)


# S2ORC metadata fields of the kinds kept in `other_ids`; a field can hold several ids, comma-separated
# (`"mag_id": "2905718899,2462120585"` in the 2020 sample)
_S2ORC_OTHER_IDS = (("pubmed_id", "pmid"), ("pmc_id", "pmcid"), ("acl_id", "acl"), ("mag_id", "mag"))


def _corpus_id_of(s2_id: str, s2_url: str | None) -> str | None:
    """An S2ORC paper's Semantic Scholar corpus id. S2ORC's `paper_id` is it: "Resolved citation links are
    represented by the cited paper's paper_id", and `s2_url` (`https://api.semanticscholar.org/CorpusID:<paper_id>`
    in every record of the 2020 release) says it is the corpus id; the URL decides where there is one."""
    key = identifier_key_in_url(s2_url) if s2_url else None
    if key and key.startswith("s2corpus:"):
        return key.split(":", 1)[1]
    return normalize_corpus_id(s2_id)


def _clean(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    text = _WS.sub(" ", text).strip()
    return text or None


def _one(text: str) -> tuple[str]:
    return (text,)


@raises_only_document_errors
def paper_from_metadata(record: Any, count: CounterFn = no_count) -> Paper | PaperAbstract:
    """One metadata JSON object (arXiv snapshot, S2ORC metadata, or a record of the Semantic Scholar Datasets
    API's `papers` dataset) into a `Paper`; a record of its `abstracts` dataset into a `PaperAbstract`. `count`
    hears of the fields it dropped and kept the record (a year that is not finite)."""
    if not isinstance(record, Mapping):
        raise DocumentError("unknown_layout", f"expected a JSON object, got {type(record).__name__}")
    if "id" in record and ("versions" in record or "categories" in record):
        arxiv_id = normalize_arxiv_id(as_identifier(record["id"], "id"))
        if arxiv_id is None:
            raise DocumentError("bad_identifier", f"arXiv id {record['id']!r} is not an arXiv identifier")
        date = first_version_date(record.get("versions"))
        year = date.year if date else None
        return Paper(
            paper_id=arxiv_id,
            title=_clean(as_text(record.get("title"), "title")),
            abstract=_clean(as_text(record.get("abstract"), "abstract")),
            authors=as_author_names(record.get("authors"), "authors"),
            date=date,
            year=year,
            categories=as_texts(record.get("categories"), "categories"),
            doi=normalize_doi(as_identifier(record.get("doi"), "doi")),
            arxiv_id=arxiv_id,
            source="arxiv-metadata",
            acm_classes_author=acm_codes_in(as_text(record.get("acm-class"), "acm-class")),
        )
    if "paper_id" in record:
        s2_id = (as_identifier(record["paper_id"], "paper_id") or "").strip()
        if not s2_id:
            raise DocumentError("bad_identifier", "S2ORC metadata with an empty paper_id")
        arxiv_id = normalize_arxiv_id(as_identifier(record.get("arxiv_id"), "arxiv_id")) or None
        doi = normalize_doi(as_identifier(record.get("doi"), "doi"))
        fields = as_texts(record.get("mag_field_of_study"), "mag_field_of_study", split=_one) or as_texts(
            record.get("fieldsOfStudy"), "fieldsOfStudy", split=_one
        )
        return Paper(
            paper_id=paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=s2_id, fallback=None),
            title=_clean(as_text(record.get("title"), "title")),
            abstract=_clean(as_text(record.get("abstract"), "abstract")),
            authors=as_author_names(record.get("authors"), "authors"),
            year=as_year(record.get("year"), "year", count),
            categories=fields,
            doi=doi,
            arxiv_id=arxiv_id,
            s2_paper_id=s2_id,
            source="s2orc-metadata",
            s2_corpus_id=_corpus_id_of(s2_id, as_identifier(record.get("s2_url"), "s2_url")),
            other_ids=other_id_keys(
                identifier_key(kind, value)
                for name, kind in _S2ORC_OTHER_IDS
                for value in (as_identifier(record.get(name), name) or "").split(",")
            ),
            outbound_s2_ids=as_texts(record.get("outbound_citations"), "outbound_citations", split=_one),
        )
    if "corpusid" in record:
        return s2ag_metadata_record(record)
    raise DocumentError("unknown_layout", f"neither arXiv nor S2ORC metadata: keys {sorted(record)[:8]}")


def merge_papers(papers: list[Paper]) -> Paper:
    """Several records of one paper into one: metadata records first (in a fixed order), then documents,
    each field taken from the first record that has it. Deterministic whatever the input order."""
    rank = {"arxiv-metadata": 0, "s2orc-metadata": 1, "s2ag-papers": 1}
    ordered = sorted(papers, key=lambda p: (rank.get(p.source, 2), repr(p)))
    first = ordered[0]
    values = {}
    for name in (
        "title",
        "abstract",
        "authors",
        "date",
        "year",
        "categories",
        "doi",
        "arxiv_id",
        "s2_paper_id",
        "acm_classes_author",
        "s2_corpus_id",
    ):
        values[name] = next((getattr(p, name) for p in ordered if getattr(p, name)), getattr(first, name))
    if values["date"] is not None:
        values["year"] = values["date"].year
    values["other_ids"] = other_id_keys(key for p in ordered for key in p.other_ids)  # every record's, not the first
    values["outbound_s2_ids"] = next((p.outbound_s2_ids for p in ordered if p.outbound_s2_ids), ())
    return Paper(paper_id=first.paper_id, source=first.source, **values)
