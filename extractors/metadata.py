"""The paper database: arXiv OAI metadata snapshot records and S2ORC metadata records into `Paper`.

arXiv snapshot lines carry `id`, `title`, `abstract`, `categories` ("cs.IR cs.CL"), `authors` (one
string), `doi` and `versions` ([{version, created: "Mon, 2 Apr 2007 19:18:42 GMT"}]); the paper's date is
its first version's. S2ORC metadata lines carry `paper_id`, `title`, `authors` ([{first, middle, last}]),
`abstract`, `year`, `arxiv_id`, `doi`; their date is only a year.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from typing import Any

from extractors.ids import normalize_arxiv_id, normalize_doi, paper_id_for
from extractors.records import Paper
from extractors.s2orc import authors_from_json, parse_year
from extractors.tei import DocumentError, parse_date

_AUTHOR_SEPARATORS = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_PARENTHESES = re.compile(r"\([^()]*\)")
_WS = re.compile(r"\s+")


def first_version_date(versions: Any) -> dt.date | None:
    """The date of the earliest `created` among arXiv `versions`, or None."""
    dates = []
    for version in versions or ():
        created = version.get("created") if isinstance(version, Mapping) else None
        if not created:
            continue
        try:
            dates.append(email.utils.parsedate_to_datetime(created).date())
        except (TypeError, ValueError):
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


def split_authors(authors: str) -> tuple[str, ...]:
    """arXiv's one-string author list ("A. Smith, B. Lee and C. Wu (MIT)") into names."""
    text = _WS.sub(" ", _PARENTHESES.sub("", authors or "")).strip()
    return tuple(name.strip() for name in _AUTHOR_SEPARATORS.split(text) if name.strip())


def _clean(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    text = _WS.sub(" ", text).strip()
    return text or None


def paper_from_metadata(record: Any) -> Paper:
    """One metadata JSON object (arXiv snapshot or S2ORC metadata) into a `Paper`."""
    if not isinstance(record, Mapping):
        raise DocumentError("unknown_layout", f"expected a JSON object, got {type(record).__name__}")
    if "id" in record and ("versions" in record or "categories" in record):
        arxiv_id = normalize_arxiv_id(str(record["id"]))
        if arxiv_id is None:
            raise DocumentError("bad_identifier", f"arXiv id {record['id']!r} is not an arXiv identifier")
        date = first_version_date(record.get("versions"))
        year = date.year if date else None
        return Paper(
            paper_id=arxiv_id,
            title=_clean(record.get("title")),
            abstract=_clean(record.get("abstract")),
            authors=split_authors(record.get("authors") or ""),
            date=date,
            year=year,
            categories=tuple(str(record.get("categories") or "").split()),
            doi=normalize_doi(record.get("doi")),
            arxiv_id=arxiv_id,
            source="arxiv-metadata",
            acm_classes_author=acm_codes_in(record.get("acm-class")),
        )
    if "paper_id" in record:
        arxiv_id = normalize_arxiv_id(str(record.get("arxiv_id") or "")) or None
        doi = normalize_doi(record.get("doi"))
        s2_id = str(record["paper_id"])
        fields = record.get("mag_field_of_study") or record.get("fieldsOfStudy") or ()
        return Paper(
            paper_id=paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=s2_id, fallback=None),
            title=_clean(record.get("title")),
            abstract=_clean(record.get("abstract")),
            authors=authors_from_json(record.get("authors")),
            year=parse_year(record.get("year")),
            categories=tuple(str(f) for f in fields if f) if isinstance(fields, list) else (),
            doi=doi,
            arxiv_id=arxiv_id,
            s2_paper_id=s2_id,
            source="s2orc-metadata",
        )
    raise DocumentError("unknown_layout", f"neither arXiv nor S2ORC metadata: keys {sorted(record)[:8]}")


def merge_papers(papers: list[Paper]) -> Paper:
    """Several records of one paper into one: metadata records first (in a fixed order), then documents,
    each field taken from the first record that has it. Deterministic whatever the input order."""
    rank = {"arxiv-metadata": 0, "s2orc-metadata": 1}
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
    ):
        values[name] = next((getattr(p, name) for p in ordered if getattr(p, name)), getattr(first, name))
    if values["date"] is not None:
        values["year"] = values["date"].year
    return Paper(paper_id=first.paper_id, source=first.source, **values)
