"""Input files into records: matched, planned into read tasks, decompressed, capped, parsed, accounted for.

Every input flag (`--tei`, `--s2orc`, `--metadata`, `--reviews`, `--pdfs`) reads through here:

1. **Match** the globs (`fileio.MatchAll`). A matched directory is a dead letter (`is_a_directory`),
   never silently skipped.
2. **Plan**: one read task per file, except a large uncompressed line-oriented file (the arXiv OAI
   snapshot is one ~4 GB file), which is cut into byte ranges of `--read_range_bytes` read in parallel.
   Compressed files cannot be entered in the middle and are read whole, streamed.
3. **Reshuffle** the tasks over workers, then **read**: decompression by suffix (`.gz`, `.bz2`, `.zst`,
   `.xz`) with bounded reads (`extractors.documents.streams`); a document or JSONL line over
   `--max_document_bytes` (decompressed) is a `too_large` dead letter and is never held whole in memory.
4. **Account**: one `InputTally` per read task (records read, parsed, dead-lettered), summed per file
   into the `inputs/` table, plus a row per JSONL line that failed.

A JSONL record is identified as `path:LINE` when its file is read whole, and as `path@BYTE` (the byte
offset of the line's first byte) when the file is read in ranges.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.localfilesystem import LocalFileSystem
from apache_beam.pvalue import TaggedOutput

from extractors.documents.files import is_jsonl, parse_document, parse_document_file, parse_metadata_line
from extractors.documents.streams import (
    TooLarge,
    byte_ranges,
    compression_of,
    decompressed,
    iter_lines,
    read_capped,
    read_errors,
)
from extractors.records import DeadLetter, InputTally
from pipelines.tallies import DEAD, INPUTS, TALLY, Tallies, TallyingFn, dead_letter_output

LOG = logging.getLogger(__name__)

MAX_DOCUMENT_BYTES = 20 * 2**20
"""The default cap on one document or JSONL line, decompressed. The largest GROBID TEI of a real paper we
have seen is ~1.5 MB and an S2ORC full text rarely passes 1 MB; 20 MiB leaves room for books and theses."""
READ_RANGE_BYTES = 64 * 2**20
MAX_PDF_BYTES = 200 * 2**20
"""PDFs get their own cap: scanned theses and figure-heavy papers reach 100 MB; GROBID itself refuses what it
cannot hold."""
DOCUMENT_KINDS = ("tei", "s2orc", "pdfs")
RANGED_KINDS = ("tei", "s2orc", "metadata")
"""Kinds whose JSONL files are read record by record (and so may be cut in byte ranges); review files are
parsed whole."""


@dataclass(frozen=True)
class ReadConfig:
    max_document_bytes: int = MAX_DOCUMENT_BYTES
    range_bytes: int = READ_RANGE_BYTES
    max_pdf_bytes: int = MAX_PDF_BYTES

    def as_metadata(self) -> dict[str, int]:
        return {
            "max_document_bytes": self.max_document_bytes,
            "read_range_bytes": self.range_bytes,
            "max_pdf_bytes": self.max_pdf_bytes,
        }


@dataclass(frozen=True)
class ReadTask:
    """Read `path` whole (`start`=0, `end`=None) or the lines starting in `[start, end)`."""

    path: str
    kind: str
    start: int = 0
    end: int | None = None

    @property
    def ranged(self) -> bool:
        return self.end is not None


def line_oriented(path: str, kind: str) -> bool:
    """Metadata files are always JSON Lines (the arXiv snapshot's own name is `.json`); documents when
    their name says so."""
    return kind == "metadata" or is_jsonl(path)


_LINE_SUFFIX = re.compile(r"^(.*)(?::\d+|@\d+)$")
_JSON_NAME = re.compile(r"\.(jsonl|json|ndjson)(\.(gz|gzip|bz2|zst|xz|lzma))?$", re.I)


def file_of(source: str) -> str:
    """The file a record came from: `path` for `path:LINE` or `path@BYTE` (a line of a JSON file)."""
    match = _LINE_SUFFIX.match(source)
    if match and _JSON_NAME.search(match.group(1)):
        return match.group(1)
    return source


def is_directory(path: str) -> bool:
    if path.endswith(("/", "\\")):
        return True
    return isinstance(FileSystems.get_filesystem(path), LocalFileSystem) and os.path.isdir(path)


def open_raw(path: str):
    """The file's bytes as stored (no decompression: `extractors.documents.streams` does that, bounded)."""
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def read_document_bytes(path: str, cap: int) -> bytes:
    """A whole file, decompressed by its suffix; `TooLarge` above `cap` decompressed bytes."""
    with open_raw(path) as raw, decompressed(raw, compression_of(path)) as handle:
        return read_capped(handle, cap)


def iter_task_lines(task: ReadTask, cap: int):
    """(source, Line) for every non-blank line of the task's file or range."""
    with open_raw(task.path) as raw:
        if task.ranged:
            if task.start > 0:
                raw.seek(task.start - 1)
            lines = iter_lines(raw, cap, start=task.start, end=task.end)
            for line in lines:
                yield f"{task.path}@{line.offset}", line
        else:
            with decompressed(raw, compression_of(task.path)) as handle:
                for line in iter_lines(handle, cap):
                    yield f"{task.path}:{line.number}", line


class PlanReadsFn(TallyingFn):
    """A matched file into read tasks; a directory into a dead letter."""

    def __init__(self, kind: str, config: ReadConfig) -> None:
        self.kind = kind
        self.config = config

    def process(self, metadata) -> Iterator:
        path = metadata.path
        if is_directory(path):
            tally = self.tallies()
            tally("inputs_directories")
            documents = self.kind in DOCUMENT_KINDS
            if documents:
                tally("documents_in")
            elif self.kind == "reviews":
                tally("review_files_in")
                tally("review_files_dead_lettered")
            letter = DeadLetter(path, "read", "is_a_directory", "the glob matched a directory; it was not read")
            yield dead_letter_output(letter, tally, documents=documents)
            yield TaggedOutput(INPUTS, InputTally(path, self.kind, 1, 0, 1, reason="is_a_directory"))
            yield from tally.emit()
            return
        if self.kind in RANGED_KINDS and line_oriented(path, self.kind) and compression_of(path) is None:
            ranges = byte_ranges(metadata.size_in_bytes, self.config.range_bytes)
            if len(ranges) > 1:
                for start, end in ranges:
                    yield ReadTask(path, self.kind, start, end)
                return
        yield ReadTask(path, self.kind)


class PlanReads(beam.PTransform):
    """Globs into read tasks spread over workers; outputs `tasks`, `dead`, `tally`, `inputs`."""

    def __init__(self, patterns: list[str], kind: str, config: ReadConfig) -> None:
        super().__init__()
        self.patterns = patterns
        self.kind = kind
        self.config = config

    def expand(self, pbegin):
        planned = (
            pbegin
            | "Patterns" >> beam.Create(self.patterns)
            | "Match" >> fileio.MatchAll()
            | "Plan" >> beam.ParDo(PlanReadsFn(self.kind, self.config)).with_outputs(DEAD, TALLY, INPUTS, main="tasks")
        )
        tasks = planned.tasks | "Spread" >> beam.Reshuffle()
        return {"tasks": tasks, DEAD: planned[DEAD], TALLY: planned[TALLY], INPUTS: planned[INPUTS]}


ParseFn = Callable[[bytes, str], object]


class ReadRecordsFn(TallyingFn):
    """A read task into records (whatever `parse` returns that is not a `DeadLetter`) and dead letters.

    Documents (`kind` tei or s2orc) count `documents_in`; metadata counts `metadata_records_in`. Records
    of a type listed in `tagged` go to that tagged output instead of the main one.
    """

    PROGRESS_EVERY = 10_000

    def __init__(self, kind: str, config: ReadConfig, tagged: dict[type, str] | None = None) -> None:
        self.kind = kind
        self.config = config
        self.tagged = tagged or {}
        self._seen = 0

    def _parse(self, data: bytes, source: str, tally: Tallies):
        if self.kind == "metadata":
            return parse_metadata_line(data, source)
        return parse_document(data, source, self.kind, tally)

    @property
    def _documents(self) -> bool:
        return self.kind in DOCUMENT_KINDS

    def process(self, task: ReadTask) -> Iterator:
        tally = self.tallies()
        account = InputTally(task.path, self.kind)
        if line_oriented(task.path, self.kind):
            outcomes = self._lines(task, tally)
        else:
            outcomes = self._whole(task, tally)
        try:
            for outcome in outcomes:
                account = self._count(outcome, account, tally)
                if isinstance(outcome, DeadLetter) and outcome.source == task.path:
                    account = replace(account, reason=outcome.reason)
                yield from self._route(outcome, account, tally)
        except read_errors() as err:
            # the file itself broke mid-way (a truncated .gz, a corrupt .bz2, an unreadable object):
            # what was read stays, the rest of the file is one dead letter, counted like any other
            letter = DeadLetter(task.path, "read", "unreadable_file", f"{type(err).__name__}: {err}"[:500])
            account = replace(self._count(letter, account, tally), reason=letter.reason)
            yield from self._route(letter, account, tally)
        yield TaggedOutput(INPUTS, account)
        yield from tally.emit()

    def _lines(self, task: ReadTask, tally: Tallies) -> Iterator:
        cap = self.config.max_document_bytes
        for source, line in iter_task_lines(task, cap):
            if line.data is None:
                yield DeadLetter(source, "read", "too_large", f"a {line.size:,}-byte line; the cap is {cap:,}")
            else:
                yield self._parse(line.data, source, tally)

    def _whole(self, task: ReadTask, tally: Tallies) -> Iterator:
        try:
            data = read_document_bytes(task.path, self.config.max_document_bytes)
        except TooLarge as err:
            yield DeadLetter(task.path, "read", "too_large", str(err))
            return
        yield from parse_document_file(data, task.path, self.kind, tally)

    def _count(self, outcome, account: InputTally, tally: Tallies) -> InputTally:
        self._seen += 1
        if self._seen % self.PROGRESS_EVERY == 0:
            last = getattr(outcome, "source", "")
            LOG.info("read %d %s records on this worker (last: %s)", self._seen, self.kind, last)
        failed = isinstance(outcome, DeadLetter)
        if self._documents:
            tally("documents_in")
        else:
            tally("metadata_records_in")
            if failed:
                tally("metadata_records_dead_lettered")
        return replace(
            account,
            records_read=account.records_read + 1,
            parsed=account.parsed + (not failed),
            dead_lettered=account.dead_lettered + failed,
        )

    def _route(self, outcome, account: InputTally, tally: Tallies) -> Iterator:
        if isinstance(outcome, DeadLetter):
            yield dead_letter_output(outcome, tally, documents=self._documents)
            if outcome.source != account.path:
                yield TaggedOutput(INPUTS, InputTally(outcome.source, self.kind, 1, 0, 1, reason=outcome.reason))
            return
        tag = self.tagged.get(type(outcome))
        yield TaggedOutput(tag, outcome) if tag else outcome


class ParseFiles(beam.PTransform):
    """Globs of one input kind, planned into read tasks (`PlanReads`), each task through `parse` (a DoFn of
    `ReadTask`s). Outputs `parse`'s main output under `main`, each of its `tags`, and `dead`, `tally`, `inputs`
    of the planning and the parsing together: what every input flag's reader is made of."""

    def __init__(
        self, patterns: list[str], kind: str, config: ReadConfig, parse: beam.DoFn, main: str, tags: Sequence[str] = ()
    ) -> None:
        super().__init__()
        self.patterns = patterns
        self.kind = kind
        self.config = config
        self.parse = parse
        self.main = main
        self.tags = tuple(tags)

    def expand(self, pbegin):
        planned = pbegin | "PlanReads" >> PlanReads(self.patterns, self.kind, self.config)
        parsed = planned["tasks"] | "Read" >> beam.ParDo(self.parse).with_outputs(
            DEAD, TALLY, INPUTS, *self.tags, main=self.main
        )
        outputs = {self.main: parsed[self.main], **{tag: parsed[tag] for tag in self.tags}}
        for name in (DEAD, TALLY, INPUTS):
            outputs[name] = (planned[name], parsed[name]) | f"All{name.title()}" >> beam.Flatten()
        return outputs


class ReadRecords(ParseFiles):
    """Globs of one input kind into parsed records; outputs `records`, `dead`, `tally`, `inputs` and one
    output per tag in `tagged` (the records of that type)."""

    def __init__(self, patterns: list[str], kind: str, config: ReadConfig, tagged: dict[type, str] | None = None):
        tagged = tagged or {}
        tags = sorted(set(tagged.values()))
        super().__init__(patterns, kind, config, ReadRecordsFn(kind, config, tagged), "records", tags)


class CombineInputTallies(beam.CombineFn):
    """Per path: the sum of its tasks' counts, every kind and duplicate named, the first reason."""

    def create_accumulator(self) -> InputTally | None:
        return None

    def add_input(self, accumulator: InputTally | None, tally: InputTally) -> InputTally:
        return tally if accumulator is None else accumulator.plus(tally)

    def merge_accumulators(self, accumulators) -> InputTally | None:
        merged = None
        for accumulator in accumulators:
            if accumulator is not None:
                merged = accumulator if merged is None else merged.plus(accumulator)
        return merged

    def extract_output(self, accumulator: InputTally | None) -> InputTally | None:
        return accumulator


class AccountInputs(beam.PTransform):
    """Every `InputTally` summed per path: one row per input file, and per failed or duplicate line."""

    def expand(self, tallies):
        return (
            tallies
            | "ByPath" >> beam.Map(lambda t: (t.path, t))
            | "SumPerPath" >> beam.CombinePerKey(CombineInputTallies())
            | "Rows" >> beam.Values()
        )
