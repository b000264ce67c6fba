"""S2ORC full-text JSON (2019, 2020 and 2021 layouts, and s2orc-doc2json output) and unarXive JSONL.

The layout is recognised by its keys; every identifier a bib entry carries is read, strongest evidence first
(`_bib_entry_keys`); citation offsets are character offsets into each paragraph's `text`, as in the source. A
wrongly typed field is coerced where the reading is unambiguous, else the record is a `wrong_type:<field path>`
dead letter (readers in `extractors.documents.fields`). The layouts and each field's rule: docs/design.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from extractors.documents.fields import (
    as_author_names,
    as_identifier,
    as_int,
    as_mapping,
    as_mappings,
    as_text,
    as_texts,
    as_year,
    decode_json,
    not_finite,
    wrong_type,
)
from extractors.documents.sentences import paragraph_with_sentences
from extractors.documents.tei import DocumentError, parse_date, raises_only_document_errors
from mapping.ids import (
    Identifiers,
    document_ids,
    identifier_key,
    identifier_key_in_url,
    keys_in_reference_text,
    normalize_arxiv_id,
    normalize_doi,
)
from mapping.records import BibEntry, CounterFn, Mention, Paragraph, ParsedDocument, no_count


def authors_from_json(value: Any, path: str = "authors") -> tuple[str, ...]:
    """Names from S2ORC's `[{first, middle, last}]`, a list of name strings, or one arXiv-style string."""
    return as_author_names(value, path)


# S2ORC `other_ids` names (their case varies across releases) and unarXive `ids` names, lower-cased, to key kinds
_ID_KINDS = {
    "doi": "doi",
    "arxiv": "arxiv",
    "arxiv_id": "arxiv",
    "pmid": "pmid",
    "pubmed": "pmid",
    "pubmed_id": "pmid",
    "pmcid": "pmcid",
    "pmc": "pmcid",
    "pmc_id": "pmcid",
    "openalex": "openalex",
    "open_alex_id": "openalex",
    "sem_open_alex_id": "openalex",
    "mag": "mag",
    "mag_id": "mag",
    "acl": "acl",
    "acl_id": "acl",
    "dblp": "dblp",
}


def _keys_from(ids: Any, path: str) -> list[str | None]:
    """Identifier keys from an S2ORC `other_ids` (`{"DOI": ["10.…"], "PMID": [...]}`) or unarXive `ids`
    (`{"doi": "…", "pubmed_id": …}`) mapping; names this reader does not know are skipped."""
    keys: list[str | None] = []
    for name, values in as_mapping(ids, path).items():
        kind = _ID_KINDS.get(str(name).lower())
        if kind is None:
            continue
        for value in values if isinstance(values, list) else [values]:
            keys.append(identifier_key(kind, as_identifier(value, f"{path}.{name}")))
    return keys


def _linked_id(item: Any, path: str, key: str) -> str | None:
    """unarXive's `contained_arXiv_ids` / `contained_links` items: `{key: ...}` objects, or plain strings."""
    if isinstance(item, Mapping):
        return as_identifier(item.get(key), f"{path}.{key}")
    if isinstance(item, str):
        return as_identifier(item, path)
    raise wrong_type(path, "list of objects", item)


def parse_year(value: Any) -> int | None:
    try:
        year = int(str(value)[:4]) if value not in (None, "") else None
    except ValueError:
        return None
    return year if year and 1000 <= year <= 2999 else None


def _bib_entry_keys(entry: Mapping[str, Any], raw: str | None) -> list[str | None]:
    """A bib entry's identifier keys, strongest evidence first: S2ORC `other_ids`; unarXive's
    `contained_arXiv_ids`, `ids` and `contained_links`; the S2ORC `link` (2020) / `links` (2019), which is the
    cited paper's S2ORC `paper_id`, that is its Semantic Scholar corpus id; then an arXiv id or DOI in the raw
    reference string."""
    keys = _keys_from(entry.get("other_ids"), "bib_entries.other_ids")
    if "bib_entry_raw" in entry:  # unarXive
        for linked in _list(entry.get("contained_arXiv_ids"), "bib_entries.contained_arXiv_ids"):
            keys.append(identifier_key("arxiv", _linked_id(linked, "bib_entries.contained_arXiv_ids", "id")))
        keys.extend(_keys_from(entry.get("ids"), "bib_entries.ids"))
        for link in _list(entry.get("contained_links"), "bib_entries.contained_links"):
            keys.append(identifier_key_in_url(_linked_id(link, "bib_entries.contained_links", "url")))
    for name in ("link", "links"):
        value = entry.get(name)
        for item in value if isinstance(value, list) else [value]:
            keys.append(identifier_key("s2corpus", as_identifier(item, f"bib_entries.{name}")))
    keys.extend(keys_in_reference_text(raw))
    return keys


def _bib_entries(entries: Any, count: CounterFn = no_count) -> tuple[BibEntry, ...]:
    result = []
    for key, entry in as_mapping(entries, "bib_entries").items():
        if not isinstance(entry, Mapping):
            raise wrong_type("bib_entries", "object of objects", entry)
        raw = as_text(entry.get("raw_text"), "bib_entries.raw_text") or as_text(
            entry.get("bib_entry_raw"), "bib_entries.bib_entry_raw"
        )
        ids = Identifiers.from_keys(_bib_entry_keys(entry, raw))
        title = as_text(entry.get("title"), "bib_entries.title")
        venue = as_text(entry.get("venue"), "bib_entries.venue")
        result.append(
            BibEntry(
                bib_id=str(key),
                title=(title or "").strip() or None,
                authors=authors_from_json(entry.get("authors"), "bib_entries.authors"),
                year=as_year(entry.get("year"), "bib_entries.year", count),
                venue=(venue or "").strip() or None,
                raw=raw.strip() if isinstance(raw, str) and raw.strip() else None,
                **asdict(ids),
            )
        )
    return tuple(result)


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(path, "list", value)
    return value


def _paragraphs(
    blocks: Any, kind: str, first_section: int, path: str, count: CounterFn = no_count
) -> tuple[list[Paragraph], int]:
    """Paragraphs from a `body_text`-like list; a new section starts where the section name changes. A cite
    span without offsets, reversed, or outside its paragraph is dropped and counted
    (`cite_spans_dropped:out_of_range`), as is one with an offset that is NaN or infinite
    (`cite_spans_dropped:offset_not_finite`)."""
    paragraphs: list[Paragraph] = []
    section_index = first_section - 1
    previous: object = object()
    for block in as_mappings(blocks, path):
        text = as_text(block.get("text"), f"{path}.text") or ""
        section = as_text(block.get("section"), f"{path}.section") or None
        sec_num = as_text(block.get("sec_num"), f"{path}.sec_num") or as_text(
            block.get("sec_number"), f"{path}.sec_number"
        )
        marker = (section, sec_num)
        if marker != previous:
            section_index += 1
            previous = marker
        mentions = []
        for span in as_mappings(block.get("cite_spans"), f"{path}.cite_spans"):
            if not_finite(span.get("start")) or not_finite(span.get("end")):
                count("cite_spans_dropped:offset_not_finite", 1)
                continue
            start = as_int(span.get("start"), f"{path}.cite_spans.start")
            end = as_int(span.get("end"), f"{path}.cite_spans.end")
            if start is None or end is None or not 0 <= start <= end <= len(text):
                count("cite_spans_dropped:out_of_range", 1)
                continue
            ref = as_identifier(span.get("ref_id"), f"{path}.cite_spans.ref_id")
            mentions.append(Mention(start=start, end=end, text=text[start:end], bib_id=ref or None))
        mentions.sort(key=lambda m: (m.start, m.end))
        if not text.strip() and not mentions:
            continue
        heading = section if kind != "abstract" else (section or "Abstract")
        paragraphs.append(paragraph_with_sentences(text, mentions, section_index, heading, kind))
    return paragraphs, max(section_index + 1, first_section)


def _layout(record: Mapping[str, Any]) -> str:
    content = record.get("content")
    if "corpusid" in record and isinstance(content, Mapping) and ("text" in content or "annotations" in content):
        return "s2ag"  # the Semantic Scholar Datasets API's S2ORC: `extractors/documents/s2ag.py`
    if "grobid_parse" in record or "latex_parse" in record:
        return "s2orc-2019"
    if "pdf_parse" in record:
        return "s2orc-doc2json"
    entries = record.get("bib_entries")
    if isinstance(entries, Mapping) and any(isinstance(e, Mapping) and "bib_entry_raw" in e for e in entries.values()):
        return "unarxive"
    if "_source_hash" in record or "discipline" in record:
        return "unarxive"
    if "body_text" in record and isinstance(record.get("metadata"), Mapping):
        return "s2orc-2021"
    if "body_text" in record:
        return "s2orc-2020"
    raise DocumentError("unknown_layout", f"no S2ORC or unarXive layout fits keys {sorted(record)[:8]}")


_SHORT_NUMBER = re.compile(r"\s*\d{1,4}\s*", re.ASCII)


def _doc2json_paper_id(paper_id: str, stem: str) -> str | None:
    """The paper_id s2orc-doc2json wrote, when it is a Semantic Scholar id (digits, or a 40-hex paper sha): None for
    the head of a file name it cut at the first dot ("2020" of "2020.acl-main.207", "10" of
    "10.1145_3292500.3330701": a bare number of at most four digits or a head the stem continues past a dot) and for
    any other file name it took ("N18-3011", an ACL Anthology id); the stem then decides."""
    text = paper_id.strip()
    if _SHORT_NUMBER.fullmatch(text) or stem.startswith(text + "."):
        return None
    return text if _S2_ID.fullmatch(text) else None


_S2_ID = re.compile(r"\d+|[0-9a-f]{40}")


def _as_abstract_text(value: Any, path: str) -> str | None:
    """An abstract given as one string (a number becomes its text); block lists and objects are read as blocks."""
    return None if isinstance(value, list | Mapping) else as_text(value, path)


@raises_only_document_errors
def parse_s2orc_record(record: Any, source: str, stem: str, count: CounterFn = no_count) -> ParsedDocument:
    """Parse one S2ORC / unarXive JSON object. Raises `DocumentError` with a drop reason when it cannot;
    `count` hears of what it dropped and kept the document (cite spans, years that are not finite)."""
    if not isinstance(record, Mapping):
        raise DocumentError("unknown_layout", f"expected a JSON object, got {type(record).__name__}")
    layout = _layout(record)
    if layout == "s2ag":
        from extractors.documents.s2ag import parse_s2ag_record

        return parse_s2ag_record(record, source, stem, count)
    metadata = as_mapping(record.get("metadata"), "metadata")
    parse: Mapping[str, Any] = record
    if layout == "s2orc-2019":
        parse = as_mapping(record.get("grobid_parse"), "grobid_parse") or as_mapping(
            record.get("latex_parse"), "latex_parse"
        )
    elif layout == "s2orc-doc2json":
        parse = as_mapping(record.get("pdf_parse"), "pdf_parse")
    title = as_text(metadata.get("title"), "metadata.title") or as_text(record.get("title"), "title")
    abstract_blocks = parse.get("abstract")
    if isinstance(abstract_blocks, Mapping):  # unarXive: {"text": ...}
        abstract_blocks = [{"text": abstract_blocks.get("text") or "", "section": "Abstract"}]
    elif not isinstance(abstract_blocks, list) and abstract_blocks is not None:
        abstract_blocks = [{"text": as_text(abstract_blocks, "abstract"), "section": "Abstract"}]
    abstract_pars, next_section = _paragraphs(abstract_blocks, "abstract", 0, "abstract", count)
    body_pars, next_section = _paragraphs(parse.get("body_text"), "body", next_section, "body_text", count)
    back_blocks = parse.get("back_matter") or record.get("back_matter")
    back_pars, _ = _paragraphs(back_blocks, "back", next_section, "back_matter", count)
    if not body_pars:
        raise DocumentError("no_body", f"{layout} record has no body_text paragraph")
    abstract = None
    if layout != "unarxive":
        abstract = _as_abstract_text(metadata.get("abstract"), "metadata.abstract") or _as_abstract_text(
            record.get("abstract"), "abstract"
        )
    if not abstract:
        abstract = " ".join(p.text for p in abstract_pars) or None
    arxiv_id = normalize_arxiv_id(
        as_identifier(metadata.get("arxiv_id"), "metadata.arxiv_id")
        or as_identifier(record.get("arxiv_id"), "arxiv_id")
    )
    if layout == "unarxive":
        arxiv_id = normalize_arxiv_id(
            as_identifier(record.get("paper_id"), "paper_id") or as_identifier(metadata.get("id"), "metadata.id")
        )
    doi = normalize_doi(as_identifier(metadata.get("doi"), "metadata.doi") or as_identifier(record.get("doi"), "doi"))
    s2_id = as_identifier(record.get("paper_id"), "paper_id") or None if layout != "unarxive" else None
    if s2_id and "metadata" not in record and ("pdf_parse" in record or "latex_parse" in record):  # doc2json
        s2_id = _doc2json_paper_id(s2_id, stem)
    year = as_year(metadata.get("year"), "metadata.year", count) or as_year(record.get("year"), "year", count)
    date = None
    versions = as_mappings(metadata.get("versions"), "metadata.versions")
    if versions:
        from extractors.documents.metadata import first_version_date

        date = first_version_date(versions, "metadata.versions")
        year = date.year if date else year
    elif year is None:
        _, year = parse_date(as_text(metadata.get("update_date"), "metadata.update_date", numbers=False))
    categories = as_texts(metadata.get("categories"), "metadata.categories")
    authors = authors_from_json(metadata.get("authors"), "metadata.authors") or authors_from_json(
        record.get("authors"), "authors"
    )
    paper_id, arxiv_id, doi = document_ids(arxiv_id=arxiv_id, doi=doi, s2_paper_id=s2_id, stem=stem)
    title = title.strip() if isinstance(title, str) and title.strip() else None
    if title is None and not (arxiv_id or doi or s2_id):
        raise DocumentError("no_title", "no title and no identifier to find one in the paper database")
    other_ids = Identifiers.from_keys(_keys_from(metadata, "metadata")).other_ids
    return ParsedDocument(
        paper_id=paper_id,
        source=source,
        source_format=layout,
        title=title,
        abstract=abstract.strip() if abstract else None,
        authors=authors,
        paragraphs=tuple(abstract_pars + body_pars + back_pars),
        bib_entries=_bib_entries(parse.get("bib_entries"), count),
        arxiv_id=arxiv_id,
        doi=doi,
        s2_paper_id=s2_id,
        date=date,
        year=year,
        categories=categories,
        other_ids=other_ids,
    )


def load_json_record(text: str, count: CounterFn = no_count) -> Any:
    """`json.loads` that names the failure: truncated JSON and other malformed JSON are told apart. A key an
    object repeats keeps its last value and is counted (`fields.decode_json`: `json_duplicate_key:<key>`)."""
    try:
        return decode_json(text, count)
    except RecursionError as err:
        raise DocumentError("too_deep", f"JSON nested deeper than the parser's recursion limit: {err}") from err
    except json.JSONDecodeError as err:
        stripped = text.rstrip()
        # cut short: the error is at the very end, or a string opened and never closed (JSON strings hold
        # no raw newline, so an unterminated one runs to the end of the line)
        truncated = err.msg.startswith("Unterminated string") or (
            err.pos >= len(stripped) - 1 and err.msg.startswith(("Expecting", "Invalid control character"))
        )
        raise DocumentError("truncated_json" if truncated else "malformed_json", str(err)) from err
    except ValueError as err:  # an integer literal past Python's 4,300-digit conversion limit
        raise DocumentError("malformed_json", str(err)) from err
