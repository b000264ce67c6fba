"""S2ORC full-text JSON (2019, 2020 and 2021 layouts, and s2orc-doc2json output) and unarXive JSONL.

Layouts recognised, by their keys:
- 2019 release: `metadata` + `grobid_parse` (or `latex_parse`) holding `abstract`, `body_text`,
  `bib_entries` (`other_ids.doi`, `links`);
- 2020 release (`pdf_parse` layout): `paper_id`, `_pdf_hash`, `abstract`, `body_text`, `bib_entries`
  (`other_ids.DOI/arXiv`, `link`), with no title: that lives in the S2ORC metadata;
- s2orc-doc2json output: `title`, `authors`, `year`, `pdf_parse{...}`;
- 2021: `metadata{title, authors, year}` beside `abstract`, `body_text`, `bib_entries`, `back_matter`;
- unarXive (2022/2023): `paper_id` is the arXiv id, `metadata` from the arXiv snapshot, `abstract.text`,
  `body_text` with `{{cite:…}}` markers and `cite_spans`, `bib_entries` with `bib_entry_raw`,
  `contained_arXiv_ids` and `ids.doi`.
Citation offsets are character offsets into each paragraph's `text`, as in the source.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from extractors.ids import normalize_arxiv_id, normalize_doi, paper_id_for
from extractors.records import BibEntry, Mention, Paragraph, ParsedDocument
from extractors.sentences import split_sentences
from extractors.tei import DocumentError, parse_date


def authors_from_json(value: Any) -> tuple[str, ...]:
    names = []
    for author in value or ():
        if isinstance(author, Mapping):
            parts = [author.get("first") or "", *(author.get("middle") or ()), author.get("last") or ""]
            name = " ".join(p.strip() for p in parts if p and p.strip())
        else:
            name = str(author).strip()
        if name:
            names.append(name)
    return tuple(names)


def _ids_from(other_ids: Any) -> tuple[str | None, str | None]:
    """(doi, arxiv_id) from an `other_ids` mapping whose key case varies across releases."""
    doi = arxiv = None
    if isinstance(other_ids, Mapping):
        for key, values in other_ids.items():
            values = values if isinstance(values, list) else [values]
            for value in values:
                if key.lower() == "doi" and doi is None:
                    doi = normalize_doi(str(value))
                elif key.lower() == "arxiv" and arxiv is None:
                    arxiv = normalize_arxiv_id(str(value))
    return doi, arxiv


def parse_year(value: Any) -> int | None:
    try:
        year = int(str(value)[:4]) if value not in (None, "") else None
    except ValueError:
        return None
    return year if year and 1000 <= year <= 2999 else None


def _bib_entries(entries: Any) -> tuple[BibEntry, ...]:
    if not isinstance(entries, Mapping):
        return ()
    result = []
    for key, entry in entries.items():
        if not isinstance(entry, Mapping):
            continue
        doi, arxiv = _ids_from(entry.get("other_ids"))
        raw = entry.get("raw_text") or entry.get("bib_entry_raw")
        if "bib_entry_raw" in entry:  # unarXive
            for linked in entry.get("contained_arXiv_ids") or ():
                arxiv = arxiv or normalize_arxiv_id(str(linked.get("id") if isinstance(linked, Mapping) else linked))
            ids = entry.get("ids")
            if doi is None and isinstance(ids, Mapping):
                doi = normalize_doi(ids.get("doi"))
            for link in entry.get("contained_links") or ():
                url = link.get("url") if isinstance(link, Mapping) else None
                if doi is None and url and "doi" in url:
                    doi = normalize_doi(url)
        if arxiv is None and raw and "arxiv" in raw.lower():
            arxiv = normalize_arxiv_id(raw)
        result.append(
            BibEntry(
                bib_id=str(key),
                title=(entry.get("title") or "").strip() or None,
                authors=authors_from_json(entry.get("authors")),
                year=parse_year(entry.get("year")),
                venue=(entry.get("venue") or "").strip() or None,
                doi=doi,
                arxiv_id=arxiv,
                raw=raw.strip() if isinstance(raw, str) and raw.strip() else None,
            )
        )
    return tuple(result)


def _paragraphs(blocks: Iterable[Any], kind: str, first_section: int) -> tuple[list[Paragraph], int]:
    """Paragraphs from a `body_text`-like list; a new section starts where the section name changes."""
    paragraphs: list[Paragraph] = []
    section_index = first_section - 1
    previous: object = object()
    for block in blocks or ():
        if not isinstance(block, Mapping):
            continue
        text = block.get("text") or ""
        if not isinstance(text, str):
            continue
        section = block.get("section") or None
        marker = (section, block.get("sec_num") or block.get("sec_number"))
        if marker != previous:
            section_index += 1
            previous = marker
        mentions = []
        for span in block.get("cite_spans") or ():
            try:
                start, end = int(span["start"]), int(span["end"])
            except (KeyError, TypeError, ValueError):
                continue
            if not 0 <= start <= end <= len(text):
                continue
            ref = span.get("ref_id")
            mentions.append(Mention(start=start, end=end, text=text[start:end], bib_id=str(ref) if ref else None))
        mentions.sort(key=lambda m: (m.start, m.end))
        if not text.strip() and not mentions:
            continue
        heading = section if kind != "abstract" else (section or "Abstract")
        paragraphs.append(
            Paragraph(
                text=text,
                section_index=section_index,
                section_heading=heading,
                sentences=split_sentences(text, [(m.start, m.end) for m in mentions]),
                mentions=tuple(mentions),
                kind=kind,
            )
        )
    return paragraphs, max(section_index + 1, first_section)


def _layout(record: Mapping[str, Any]) -> str:
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


def parse_s2orc_record(record: Any, source: str, stem: str) -> ParsedDocument:
    """Parse one S2ORC / unarXive JSON object. Raises `DocumentError` with a drop reason when it cannot."""
    if not isinstance(record, Mapping):
        raise DocumentError("unknown_layout", f"expected a JSON object, got {type(record).__name__}")
    layout = _layout(record)
    metadata = record.get("metadata") if isinstance(record.get("metadata"), Mapping) else {}
    parse: Mapping[str, Any] = record
    if layout == "s2orc-2019":
        parse = record.get("grobid_parse") or record.get("latex_parse") or {}
    elif layout == "s2orc-doc2json":
        parse = record.get("pdf_parse") or {}
    title = metadata.get("title") or record.get("title")
    abstract_blocks = parse.get("abstract")
    if isinstance(abstract_blocks, Mapping):  # unarXive: {"text": ...}
        abstract_blocks = [{"text": abstract_blocks.get("text") or "", "section": "Abstract"}]
    elif isinstance(abstract_blocks, str):
        abstract_blocks = [{"text": abstract_blocks, "section": "Abstract"}]
    abstract_pars, next_section = _paragraphs(abstract_blocks or (), "abstract", 0)
    body_pars, next_section = _paragraphs(parse.get("body_text") or (), "body", next_section)
    back_pars, _ = _paragraphs(parse.get("back_matter") or record.get("back_matter") or (), "back", next_section)
    if not body_pars:
        raise DocumentError("no_body", f"{layout} record has no body_text paragraph")
    abstract = metadata.get("abstract") or record.get("abstract") if layout != "unarxive" else None
    if not isinstance(abstract, str):
        abstract = " ".join(p.text for p in abstract_pars) or None
    arxiv_id = normalize_arxiv_id(str(metadata.get("arxiv_id") or record.get("arxiv_id") or "")) or None
    if layout == "unarxive":
        arxiv_id = normalize_arxiv_id(str(record.get("paper_id") or metadata.get("id") or ""))
    doi = normalize_doi(metadata.get("doi") or record.get("doi"))
    s2_id = str(record["paper_id"]) if record.get("paper_id") and layout != "unarxive" else None
    date, year = None, parse_year(metadata.get("year") or record.get("year"))
    versions = metadata.get("versions")
    if isinstance(versions, list) and versions:
        from extractors.metadata import first_version_date

        date = first_version_date(versions)
        year = date.year if date else year
    elif metadata.get("update_date") and year is None:
        _, year = parse_date(metadata.get("update_date"))
    categories = tuple(str(metadata.get("categories") or "").split())
    authors = authors_from_json(metadata.get("authors") or record.get("authors"))
    if layout == "unarxive" and isinstance(metadata.get("authors"), str):
        from extractors.metadata import split_authors

        authors = split_authors(metadata["authors"])
    paper_id = paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=s2_id, fallback=stem)
    title = title.strip() if isinstance(title, str) and title.strip() else None
    if title is None and not (arxiv_id or doi or s2_id):
        raise DocumentError("no_title", "no title and no identifier to find one in the paper database")
    return ParsedDocument(
        paper_id=paper_id,
        source=source,
        source_format=layout,
        title=title,
        abstract=abstract.strip() if abstract else None,
        authors=authors,
        paragraphs=tuple(abstract_pars + body_pars + back_pars),
        bib_entries=_bib_entries(parse.get("bib_entries")),
        arxiv_id=arxiv_id,
        doi=doi,
        s2_paper_id=s2_id,
        date=date,
        year=year,
        categories=categories,
    )


def load_json_record(text: str) -> Any:
    """`json.loads` that names the failure: truncated JSON and other malformed JSON are told apart."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        stripped = text.rstrip()
        truncated = err.pos >= len(stripped) - 1 or err.msg.startswith(("Unterminated", "Expecting"))
        truncated = truncated and err.pos >= len(stripped) - 2
        raise DocumentError("truncated_json" if truncated else "malformed_json", str(err)) from err
