"""Input files into documents or dead letters: the one entry point the pipelines call per file or line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from extractors.documents.metadata import paper_from_metadata
from extractors.documents.s2orc import load_json_record, parse_s2orc_record
from extractors.documents.tei import DocumentError, parse_tei
from mapping.records import (
    DESCRIPTION_FIELDS,
    IDENTIFIER_FIELDS,
    CounterFn,
    DeadLetter,
    Paper,
    ParsedDocument,
    fields_of,
    no_count,
)

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".jsonl.bz2", ".jsonl.zst")


def is_jsonl(path: str) -> bool:
    return path.lower().endswith(JSONL_SUFFIXES)


def file_stem(path: str) -> str:
    name = PurePosixPath(path.split("#", 1)[0]).name
    for suffix in (".gz", ".bz2", ".zst", ".jsonl", ".json", ".xml", ".tei", ".grobid"):
        name = name.removesuffix(suffix)
    return name


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DocumentError("undecodable_bytes", f"not UTF-8 at byte {err.start}: {err.reason}") from err


def _tally_into(counts: Counter[str]) -> CounterFn:
    def tally(name: str, n: int = 1) -> None:
        counts[name] += n

    return tally


def parse_document(data: bytes, source: str, kind: str, count: CounterFn = no_count) -> ParsedDocument | DeadLetter:
    """One document's bytes (`kind` "tei" or "s2orc") into a document, or a dead letter saying why not.

    What the parser dropped or overwrote inside a document that parses (cite spans out of range, a year that
    is NaN, a repeated JSON key) reaches `count`; a dead-lettered document counts nothing else."""
    try:
        if kind == "tei":
            return parse_tei(data, source)
        if not data.strip():
            raise DocumentError("empty_file", "the file has no content")
        dropped: Counter[str] = Counter()
        tally = _tally_into(dropped)
        record = load_json_record(_decode(data), tally)
        document = parse_s2orc_record(record, source, file_stem(source), tally)
        for name, n in dropped.items():
            count(name, n)
        return document
    except DocumentError as err:
        return DeadLetter(source=source, stage="parse", reason=err.reason, detail=err.detail[:500])
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as err:
        return DeadLetter(
            source=source, stage="parse", reason="parser_error", detail=f"{type(err).__name__}: {err}"[:500]
        )


def parse_document_file(
    data: bytes, path: str, kind: str, count: CounterFn = no_count
) -> Iterator[ParsedDocument | DeadLetter]:
    """A whole non-JSONL file: one document, except a `.json` file that is really JSON Lines (the arXiv
    snapshot's own name is `.json`), which gives one document per line, identified as `path:line`."""
    if kind == "s2orc":
        not_json = _not_json(data)
        if not_json:
            yield DeadLetter(source=path, stage="parse", reason="unknown_layout", detail=not_json)
            return
    result = parse_document(data, path, kind, count)
    if kind == "s2orc" and isinstance(result, DeadLetter) and "Extra data" in result.detail:
        for source, line in numbered_lines(data.splitlines(), path):
            yield parse_document(line, source, kind, count)
        return
    yield result


_JSON_START = re.compile(rb'^(\{\s*["}]|\[\s*([\[\]{"\-0-9]|true|false|null))')


def _not_json(data: bytes) -> str | None:
    """Why a whole file is not JSON at all (one dead letter for the file, not one per line), or None."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"SQLite format 3"):
        return "an SQLite database (unarXive 2020's refs.db?), not S2ORC or unarXive JSON"
    if not head.startswith(b"{") and b"{{cite:" in data[:200_000]:
        # before the JSON test: a LaTeX-derived text may begin like an array ("[12pt]article")
        return "plain text with {{cite:...}} markers: the unarXive 2020 layout (.txt + refs.db), which is not read"
    if not head or _JSON_START.match(head):
        return None
    return f"not JSON: the file starts with {bytes(head[:40])!r}"


def parse_metadata_line(line: bytes, source: str, count: CounterFn = no_count) -> Paper | DeadLetter:
    """One line of a metadata JSONL file into a paper, or a dead letter saying why not. What a record that
    parses had dropped or overwritten (a year that is NaN, a repeated JSON key) reaches `count`."""
    dropped: Counter[str] = Counter()
    tally = _tally_into(dropped)
    try:
        paper = paper_from_metadata(load_json_record(_decode(line), tally), tally)
    except DocumentError as err:
        return DeadLetter(source=source, stage="metadata", reason=err.reason, detail=err.detail[:500])
    for name, n in dropped.items():
        count(name, n)
    return paper


def numbered_lines(lines: Iterable[bytes], path: str) -> Iterator[tuple[str, bytes]]:
    """(`path:line`, bytes) for each non-blank line: the identity a JSONL record keeps in dead letters."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield f"{path}:{number}", line


def paper_from_document(document: ParsedDocument) -> Paper:
    """What a parsed document says about itself, as a database record of lowest precedence."""
    fields = fields_of(document, DESCRIPTION_FIELDS + IDENTIFIER_FIELDS)
    return Paper(paper_id=document.paper_id, source="document", **fields)
