"""Input files into records: matched, planned into read tasks, decompressed, capped, parsed, accounted for.

Every input flag reads through here: globs matched (a directory is a dead letter); one read task per file, or
byte ranges of `--read_range_bytes` for a large uncompressed line-oriented file; tasks reshuffled, then read with
decompression by suffix and `--max_document_bytes` caps (`extractors.documents.streams`); one `InputTally` per
task, summed per file into `inputs/`. A JSONL record is `path:LINE` when its file is read whole, `path@BYTE`
when read in ranges.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput

from extractors.documents.files import is_jsonl, parse_document, parse_document_file, parse_metadata_line
from extractors.documents.streams import (
    CHUNK_BYTES,
    TooLarge,
    byte_ranges,
    compression_of,
    decompressed,
    iter_lines,
    read_capped,
    read_errors,
)
from mapping.records import DeadLetter, InputTally
from pipelines.outputs import is_local
from pipelines.tallies import DEAD, INPUTS, TALLY, Tallies, TallyingFn, dead_letter_output, step_label

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
    """Read `path` whole (`start`=0, `end`=None) or the lines starting in `[start, end)`. `size` and `mtime`: the
    file as it was listed, which it must still be when read (`FileChanged`)."""

    path: str
    kind: str
    start: int = 0
    end: int | None = None
    size: int | None = None
    mtime: float | None = None

    @property
    def ranged(self) -> bool:
        return self.end is not None


class FileChanged(OSError):
    """An input file is not what it was when it was listed (another size or modification time, or gone): what was
    read of it cannot be trusted to be one version of it."""


CHANGED_WHILE_READ = "changed_while_read"
CHANGED = "changed"
"""The tagged output of the paths of the files that changed while they were read."""


def file_stamp(path: str) -> tuple[int, float | None] | None:
    """A file's (size, modification time) now, or None when it is gone. Local files: `os.stat`; other filesystems:
    one metadata lookup."""
    if is_local(path):
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return stat.st_size, stat.st_mtime
    try:
        found = FileSystems.match([path])[0].metadata_list
    except Exception:  # noqa: BLE001 - a missing object matches nothing
        return None
    if not found:
        return None
    return found[0].size_in_bytes, getattr(found[0], "last_updated_in_seconds", None) or None


def check_unchanged(task: ReadTask, stamp: tuple[int, float | None] | None = None) -> None:
    """Raise `FileChanged` when `task`'s file is no longer as it was listed (its size, and its modification time where
    the filesystem gives one). `stamp`: the file as it is now, when the caller has it already."""
    if task.size is None:
        return
    now = stamp if stamp is not None else file_stamp(task.path)
    if now is None:
        raise FileChanged(f"{task.path} was listed ({task.size:,} bytes) and is gone")
    size, mtime = now
    if size != task.size or (task.mtime and mtime and abs(mtime - task.mtime) > 1e-6):
        raise FileChanged(
            f"{task.path} changed after it was listed ({task.size:,} bytes then, {size:,} now"
            + (", modified since" if size == task.size else "")
            + "): none of it is used; run again once it has stopped changing"
        )


def check_read_whole(task: ReadTask, raw_bytes: int | None) -> None:
    """`FileChanged` when a file read whole is not the file listed: locally its size and time now; elsewhere the
    bytes read from it as stored (`raw_bytes`, None when not known) against its listed size, a free check where a
    stat per file would be an API call per document."""
    if task.size is None:
        return
    if is_local(task.path):
        check_unchanged(task)
    elif raw_bytes is not None and raw_bytes != task.size:
        check_unchanged(task, (raw_bytes, None))


def read_failure(path: str, err: BaseException) -> DeadLetter:
    """The dead letter of a file that could not be read: `changed_while_read` for a `FileChanged`, else
    `unreadable_file` (a truncated .gz, a corrupt .bz2, an I/O error)."""
    if isinstance(err, FileChanged):
        return DeadLetter(path, "read", CHANGED_WHILE_READ, str(err)[:500])
    return DeadLetter(path, "read", "unreadable_file", f"{type(err).__name__}: {err}"[:500])


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
    return is_local(path) and os.path.isdir(path)


def open_raw(path: str):
    """The file's bytes as stored (no decompression: `extractors.documents.streams` does that, bounded)."""
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def read_document_bytes(path: str, cap: int, task: ReadTask | None = None) -> bytes:
    """A whole file, decompressed by its suffix; `TooLarge` above `cap` decompressed bytes. With the `task` that
    listed it, `FileChanged` if the file read is not the file listed (`check_read_whole`)."""
    with open_raw(path) as raw:
        counted = _CountingReader(raw)
        with decompressed(counted, compression_of(path)) as handle:
            data = read_capped(handle, cap)
        if task is not None and task.size is not None:
            if not is_local(path):
                while counted.read(CHUNK_BYTES):  # a compressed stream may stop before the file's last bytes
                    pass
            check_read_whole(task, counted.read_bytes)
        return data


class _CountingReader:
    """A binary reader that counts the bytes read through it."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def __enter__(self) -> _CountingReader:
        return self

    def __exit__(self, *_) -> None:
        """The raw handle is closed by its owner."""

    def close(self) -> None:
        """The raw handle is closed by its owner."""

    @property
    def closed(self) -> bool:
        return False


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
    """A pattern into read tasks, one per matched file (or byte range of one), each with the file's size and
    modification time as listed; a matched directory, and a pattern that matches nothing when the job lists it (a
    file removed after the launcher checked it), into dead letters."""

    def __init__(self, kind: str, config: ReadConfig) -> None:
        self.kind = kind
        self.config = config

    def process(self, pattern: str) -> Iterator:
        found = FileSystems.match([pattern])[0].metadata_list
        if not found:
            yield from self._dead(pattern, "no_file_matched", "the pattern matched no file when the job listed it")
        for metadata in found:
            yield from self._plan(metadata)

    def _dead(self, path: str, reason: str, detail: str) -> Iterator:
        tally = self.tallies()
        documents = self.kind in DOCUMENT_KINDS
        if documents:
            tally("documents_in")
        elif self.kind == "reviews":
            tally("review_files_in")
            tally("review_files_dead_lettered")
        elif self.kind == "metadata":
            tally("metadata_records_in")
            tally("metadata_records_dead_lettered")
        yield dead_letter_output(DeadLetter(path, "read", reason, detail), tally, documents=documents)
        yield TaggedOutput(INPUTS, InputTally(path, self.kind, 1, 0, 1, reason=reason))
        yield from tally.emit()

    def _plan(self, metadata) -> Iterator:
        path = metadata.path
        if is_directory(path):
            tally = self.tallies()
            tally("inputs_directories")
            yield from tally.emit()
            yield from self._dead(path, "is_a_directory", "the glob matched a directory; it was not read")
            return
        stamp = {"size": metadata.size_in_bytes, "mtime": getattr(metadata, "last_updated_in_seconds", None) or None}
        if self.kind in RANGED_KINDS and line_oriented(path, self.kind) and compression_of(path) is None:
            ranges = byte_ranges(metadata.size_in_bytes, self.config.range_bytes)
            if len(ranges) > 1:
                for start, end in ranges:
                    yield ReadTask(path, self.kind, start, end, **stamp)
                return
        yield ReadTask(path, self.kind, **stamp)


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
            return parse_metadata_line(data, source, tally)
        return parse_document(data, source, self.kind, tally)

    @property
    def _documents(self) -> bool:
        return self.kind in DOCUMENT_KINDS

    def process(self, task: ReadTask) -> Iterator:
        tally = self.tallies()
        account = InputTally(task.path, self.kind)
        lines = line_oriented(task.path, self.kind)
        if lines:
            outcomes = self._lines(task, tally)
        else:
            outcomes = self._whole(task, tally)
        try:
            for outcome in outcomes:
                account = self._count(outcome, account, tally)
                if isinstance(outcome, DeadLetter) and outcome.source == task.path:
                    account = replace(account, reason=outcome.reason)
                yield from self._route(outcome, account, tally, task.path)
            if lines:
                check_unchanged(task)
        except read_errors() as err:
            # the file itself broke mid-way (a truncated .gz, a corrupt .bz2, an unreadable object) or changed
            # while it was read: what was read stays (a changed file's records are dropped later, `KeepUnchangedFn`),
            # the rest of the file is one dead letter, counted like any other
            letter = read_failure(task.path, err)
            if isinstance(err, FileChanged):
                yield TaggedOutput(CHANGED, task.path)
                if task.ranged:
                    letter = replace(letter, source=f"{task.path}@{task.start}")
            account = replace(self._count(letter, account, tally), reason=letter.reason)
            yield from self._route(letter, account, tally, task.path)
        yield TaggedOutput(INPUTS, account)
        yield from tally.emit()

    def _lines(self, task: ReadTask, tally: Tallies) -> Iterator:
        check_unchanged(task)
        cap = self.config.max_document_bytes
        for source, line in iter_task_lines(task, cap):
            if line.data is None:
                yield DeadLetter(source, "read", "too_large", f"a {line.size:,}-byte line; the cap is {cap:,}")
            else:
                yield self._parse(line.data, source, tally)

    def _whole(self, task: ReadTask, tally: Tallies) -> Iterator:
        try:
            data = read_document_bytes(task.path, self.config.max_document_bytes, task)
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

    def _route(self, outcome, account: InputTally, tally: Tallies, path: str) -> Iterator:
        if isinstance(outcome, DeadLetter):
            yield dead_letter_output(outcome, tally, documents=self._documents)
            if outcome.source != account.path:
                yield TaggedOutput(INPUTS, InputTally(outcome.source, self.kind, 1, 0, 1, reason=outcome.reason))
            return
        tag = self.tagged.get(type(outcome))
        yield TaggedOutput(tag, (path, outcome)) if tag else (path, outcome)


class KeepUnchangedFn(TallyingFn):
    """`(path, record)` from `ReadRecordsFn` into the record, unless its file changed while it was read (`changed`,
    a side input: the paths): then the record is a dead letter, `changed_while_read`, and its file's row in
    `inputs/` moves it from parsed to dead-lettered. A file read in byte ranges, or whole while its records stream
    out, is only known to be one version once every task of it has checked it: hence this step after them all."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._changed: tuple[int, frozenset[str]] = (0, frozenset())

    def process(self, element: tuple[str, object], changed: list[str]) -> Iterator:
        path, record = element
        if not changed:
            yield record
            return
        if self._changed[0] != id(changed):
            self._changed = (id(changed), frozenset(changed))
        if path not in self._changed[1]:
            yield record
            return
        tally = self.tallies()
        source = getattr(record, "source", None)
        letter = DeadLetter(
            source if isinstance(source, str) and source != "metadata" else path,
            "read",
            CHANGED_WHILE_READ,
            f"{path} changed while it was read: none of its records are used",
        )
        documents = self.kind in DOCUMENT_KINDS
        if not documents:
            tally("metadata_records_dead_lettered")
        yield dead_letter_output(letter, tally, documents=documents)
        yield TaggedOutput(INPUTS, InputTally(path, self.kind, 0, -1, 1, reason=CHANGED_WHILE_READ))
        yield from tally.emit()


class ParseFiles(beam.PTransform):
    """Globs of one input kind, planned into read tasks (`PlanReads`), each task through `parse` (a DoFn of
    `ReadTask`s). Outputs `parse`'s main output under `main`, each of its `tags`, and `dead`, `tally`, `inputs`
    of the planning and the parsing together: what every input flag's reader is made of. `guarded`: `parse` yields
    `(path, record)` and the paths of files that changed while read (`changed`), whose records `KeepUnchangedFn`
    then drops (`ReadRecordsFn`); an unguarded `parse` reads whole files and checks them itself."""

    def __init__(
        self,
        patterns: list[str],
        kind: str,
        config: ReadConfig,
        parse: beam.DoFn,
        main: str,
        tags: Sequence[str] = (),
        guarded: bool = False,
    ) -> None:
        super().__init__()
        self.patterns = patterns
        self.kind = kind
        self.config = config
        self.parse = parse
        self.main = main
        self.tags = tuple(tags)
        self.guarded = guarded

    def expand(self, pbegin):
        planned = pbegin | "PlanReads" >> PlanReads(self.patterns, self.kind, self.config)
        extra = (CHANGED,) if self.guarded else ()
        parsed = planned["tasks"] | "Read" >> beam.ParDo(self.parse).with_outputs(
            DEAD, TALLY, INPUTS, *self.tags, *extra, main=self.main
        )
        outputs = {self.main: parsed[self.main], **{tag: parsed[tag] for tag in self.tags}}
        accounts = {name: [planned[name], parsed[name]] for name in (DEAD, TALLY, INPUTS)}
        if self.guarded:
            changed = beam.pvalue.AsList(parsed[CHANGED] | "ChangedFiles" >> beam.Distinct())
            for name in (self.main, *self.tags):
                kept = outputs[name] | f"KeepUnchanged{step_label(name)}" >> beam.ParDo(
                    KeepUnchangedFn(self.kind), changed
                ).with_outputs(DEAD, TALLY, INPUTS, main="records")
                outputs[name] = kept.records
                for account in accounts:
                    accounts[account].append(kept[account])
        for name, parts in accounts.items():
            outputs[name] = parts | f"All{name.title()}" >> beam.Flatten()
        return outputs


class ReadRecords(ParseFiles):
    """Globs of one input kind into parsed records; outputs `records`, `dead`, `tally`, `inputs` and one
    output per tag in `tagged` (the records of that type)."""

    def __init__(self, patterns: list[str], kind: str, config: ReadConfig, tagged: dict[type, str] | None = None):
        tagged = tagged or {}
        tags = sorted(set(tagged.values()))
        super().__init__(patterns, kind, config, ReadRecordsFn(kind, config, tagged), "records", tags, guarded=True)


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
