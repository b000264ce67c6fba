"""PDFs through a GROBID server into parsed documents: concurrent, retried, dead-lettered, cached.

Each worker process keeps at most `--grobid_concurrency` requests in flight. A TEI cache keyed by the PDF's
SHA-256, the GROBID version and the options means a refresh sends only new PDFs; deterministic failures are cached
too (`<key>.failed.json`), transient ones never. The TEI goes through `parse_document`, as `--tei` input does.
`ParseRawReferences` (`--grobid_citations`) sends raw reference strings to `/api/processCitationList`.
Behaviour: docs/grobid.md; the thread pool: docs/design.md.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput

from extractors.clients.grobid import (
    GrobidClient,
    GrobidOptions,
    GrobidResult,
    RetryPolicy,
    citation_cache_key,
    grobid_tei_problem,
    merge_parsed_entry,
    sendable_raw_reference,
    tei_cache_key,
)
from extractors.documents.files import parse_document
from extractors.documents.streams import TooLarge, compression_of, read_errors
from extractors.documents.tei import DocumentError, bib_entry_from_struct
from mapping.matcher import MatchConfig, usable_title
from mapping.records import BibEntry, DeadLetter, InputTally, ParsedDocument
from pipelines.inputs import (
    MAX_DOCUMENT_BYTES,
    MAX_PDF_BYTES,
    FileChanged,
    ParseFiles,
    ReadConfig,
    ReadTask,
    check_read_whole,
    read_document_bytes,
    read_failure,
)
from pipelines.tallies import DEAD, INPUTS, TALLY, Tallies, TallyingFn, dead_letter_output, in_global_window

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class GrobidConfig:
    url: str
    version: str
    options: GrobidOptions = field(default_factory=GrobidOptions)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 4
    tei_cache: str | None = None
    retry_failed: bool = False  # send again the PDFs whose deterministic failure the cache recorded
    citation_batch_size: int = 50  # raw reference strings per processCitationList request

    def as_metadata(self) -> dict[str, object]:
        return {
            "url": self.url,
            "version": self.version,
            "options": self.options.as_metadata(),
            "retries": self.policy.retries,
            "timeout_s": self.policy.timeout_s,
            "concurrency_per_process": self.concurrency,
            "tei_cache": self.tei_cache,
            "retry_failed": self.retry_failed,
            "citation_batch_size": self.citation_batch_size,
        }


def cache_path(cache: str, key: str) -> str:
    return FileSystems.join(cache, key[:2], f"{key}.tei.xml")


def _read_if_there(path: str | None) -> bytes | None:
    """A cache file's bytes; None when there is no cache (`path` None) or no such file."""
    if path is None or not FileSystems.exists(path):
        return None
    with FileSystems.open(path) as handle:
        return handle.read()


def read_cached(cache: str | None, key: str) -> bytes | None:
    return _read_if_there(cache_path(cache, key) if cache else None)


def write_cached(cache: str, key: str, tei: bytes) -> None:
    _write_atomically(cache_path(cache, key), tei)


def _write_atomically(final: str, data: bytes) -> None:
    """Write under a temporary name, then rename: a reader never sees half a file."""
    temporary = f"{final}.tmp-{uuid.uuid4().hex}"
    with FileSystems.create(temporary) as handle:
        handle.write(data)
    FileSystems.rename([temporary], [final])


def citation_cache_path(cache: str, key: str) -> str:
    return FileSystems.join(cache, key[:2], f"{key}.citation.xml")


def failure_path(cache: str, key: str) -> str:
    return FileSystems.join(cache, key[:2], f"{key}.failed.json")


def read_cached_failure(cache: str | None, key: str) -> GrobidResult | None:
    """The deterministic failure recorded under `key`, if any. A record that cannot be read counts as none:
    the PDF is sent again, which costs one request and loses nothing."""
    path = failure_path(cache, key) if cache else None
    data = _read_if_there(path)
    if data is None:
        return None
    try:
        return GrobidResult.from_failure_record(data)
    except ValueError as err:
        LOG.warning("ignoring the unreadable failure record %s (%s); the PDF is sent again", path, err)
        return None


def write_cached_failure(cache: str, key: str, result: GrobidResult, version: str) -> None:
    _write_atomically(failure_path(cache, key), result.failure_record(version))


def forget_cached_failure(cache: str, key: str) -> None:
    path = failure_path(cache, key)
    if FileSystems.exists(path):
        FileSystems.delete([path])


_POOLS: dict[tuple[str, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def process_pool(url: str, concurrency: int) -> ThreadPoolExecutor:
    """The one pool of `concurrency` threads through which this process talks to the GROBID server at `url`, shared
    by every DoFn instance in it, so that the process never has more than `concurrency` requests in flight however
    many instances the runner makes. It lives as long as the process (an instance's teardown leaves it to the
    others)."""
    with _POOLS_LOCK:
        pool = _POOLS.get((url, concurrency))
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="grobid")
            _POOLS[(url, concurrency)] = pool
        return pool


class _PooledFn(TallyingFn):
    """Runs `_fetch` of each element on the process's GROBID pool (`process_pool`: `config.concurrency` threads for
    every instance in the process), keeping up to twice that many of its own elements queued so the server never
    waits on us, and yields `_outputs` of each result on the bundle's thread. `_fetch` must not raise: whatever
    goes wrong there is that element's own outcome. GROBID's answers over `max_answer_bytes` are refused."""

    def __init__(self, config: GrobidConfig, max_answer_bytes: int = MAX_DOCUMENT_BYTES) -> None:
        self.config = config
        self.max_answer_bytes = max_answer_bytes
        self._client: GrobidClient | None = None
        self._pool: ThreadPoolExecutor | None = None

    def setup(self) -> None:
        self._client = GrobidClient(
            self.config.url, self.config.options, self.config.policy, max_answer_bytes=self.max_answer_bytes
        )
        self._pool = process_pool(self.config.url, self.config.concurrency)

    def start_bundle(self) -> None:
        super().start_bundle()
        self._pending: set[Future] = set()

    def process(self, element):
        self._pending.add(self._pool.submit(self._fetch, element))
        yield from self._collect(wait_until=2 * self.config.concurrency)

    def finish_bundle(self):
        for output in self._collect(wait_until=1):
            if isinstance(output, TaggedOutput):
                yield TaggedOutput(output.tag, in_global_window(output.value))
            else:
                yield in_global_window(output)
        yield from super().finish_bundle()

    def _collect(self, wait_until: int):
        """Outputs of finished elements; blocks while `wait_until` or more are still pending."""
        tally = self.tallies()
        while self._pending:
            done = {f for f in self._pending if f.done()}
            if not done and len(self._pending) >= wait_until:
                done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            if not done:
                break
            self._pending -= done
            for future in done:
                yield from self._outputs(future.result(), tally)
        yield from tally.emit()

    def _fetch(self, element):  # pragma: no cover - abstract
        raise NotImplementedError

    def _outputs(self, fetched, tally: Tallies) -> Iterator:  # pragma: no cover - abstract
        raise NotImplementedError


class GrobidParseFn(_PooledFn):
    """Per PDF: cache lookup and GROBID call on a pool of `concurrency` threads, then TEI parsing. PDFs are capped
    at `max_bytes`, GROBID's answers at `max_answer_bytes`."""

    def __init__(
        self, config: GrobidConfig, max_bytes: int = MAX_PDF_BYTES, max_answer_bytes: int = MAX_DOCUMENT_BYTES
    ) -> None:
        super().__init__(config, max_answer_bytes)
        self.max_bytes = max_bytes
        self.reader: Callable[[str, int], bytes] = read_document_bytes  # the PDF's bytes, capped

    def _fetch(self, task: ReadTask) -> tuple[str, bytes | DeadLetter, Counter]:
        """Runs on a pool thread: the TEI from the cache or from GROBID. Parsing happens on the bundle's
        thread, so that a request thread is free again the moment GROBID answers. Whatever goes wrong
        here ends as this PDF's dead letter, never as a failed bundle that would resend the others."""
        try:
            return self._fetch_or_raise(task)
        except Exception as err:  # noqa: BLE001 - one PDF's failure must not lose the others
            path = task.path
            return path, DeadLetter(path, "grobid", "unexpected_error", f"{type(err).__name__}: {err}"[:500]), Counter()

    def _fetch_or_raise(self, task: ReadTask) -> tuple[str, bytes | DeadLetter, Counter]:
        counts: Counter[str] = Counter()
        path = task.path
        try:
            pdf = self.reader(path, self.max_bytes)
        except TooLarge as err:
            return path, DeadLetter(path, "read", "too_large", str(err)), counts
        except read_errors() as err:
            return path, DeadLetter(path, "grobid", "unreadable_file", str(err)[:300]), counts
        try:
            check_read_whole(task, len(pdf) if compression_of(path) is None else None)
        except FileChanged as err:
            return path, read_failure(path, err), counts
        cache = self.config.tei_cache
        key = tei_cache_key(pdf, self.config.version, self.config.options)
        tei = read_cached(cache, key)
        if tei is not None and grobid_tei_problem(tei) is not None:
            counts["grobid_cache_invalid"] += 1  # sent again; a good answer replaces it
            tei = None
        if tei is not None:
            counts["grobid_cache_hits"] += 1
            return path, tei, counts
        if not self.config.retry_failed:
            failure = read_cached_failure(cache, key)
            if failure is not None:
                counts["grobid_failure_cache_hits"] += 1
                return path, _grobid_dead_letter(path, failure), counts
        result = self._client.process_fulltext(pdf, name=path.rsplit("/", 1)[-1])
        counts["grobid_requests"] += result.attempts
        if result.tei is None:
            if not result.deterministic:
                counts["grobid_transient_failures"] += 1  # not cached: the next run sends it again
            elif cache and _update_cache(counts, write_cached_failure, cache, key, result, self.config.version):
                counts["grobid_failures_cached"] += 1
            return path, _grobid_dead_letter(path, result), counts
        counts["grobid_parsed"] += 1
        if cache and _update_cache(counts, write_cached, cache, key, result.tei):
            _update_cache(counts, forget_cached_failure, cache, key)  # after --retry_failed, the TEI replaces it
        return path, result.tei, counts

    def _outputs(self, fetched: tuple[str, bytes | DeadLetter, Counter], tally: Tallies) -> Iterator:
        path, tei_or_letter, counts = fetched
        outcome = tei_or_letter if isinstance(tei_or_letter, DeadLetter) else _parse(tei_or_letter, path)
        tally("documents_in")
        for name, n in counts.items():
            tally(name, n)
        failed = isinstance(outcome, DeadLetter)
        reason = outcome.reason if failed else None
        yield TaggedOutput(INPUTS, InputTally(path, "pdfs", 1, int(not failed), int(failed), reason=reason))
        if failed:
            yield dead_letter_output(outcome, tally, documents=True)
        else:
            yield outcome


def _grobid_dead_letter(path: str, result: GrobidResult) -> DeadLetter:
    return DeadLetter(path, "grobid", result.reason or "grobid_failed", result.detail[:500])


def _update_cache(counts: Counter, step: Callable[..., None], *args) -> bool:
    """One cache write or delete; a failure is counted, never fatal: the PDF's outcome stands without it."""
    try:
        step(*args)
    except OSError as err:
        counts["grobid_cache_write_failed"] += 1
        counts[f"grobid_cache_error:{type(err).__name__}"] += 1
        return False
    return True


def _parse(tei: bytes, path: str) -> ParsedDocument | DeadLetter:
    """The `--tei` input's own parsing, so a TEI dead-letters the same way whichever path brought it."""
    return parse_document(tei, path, "tei")


class ParsePdfs(ParseFiles):
    """PDF files (globs) through GROBID into `ParsedDocument`s; outputs `documents`, `dead`, `tally`, `inputs`."""

    def __init__(self, patterns: list[str], config: GrobidConfig, read: ReadConfig | None = None) -> None:
        read = read or ReadConfig()
        parse = GrobidParseFn(config, read.max_pdf_bytes, read.max_document_bytes)
        super().__init__(patterns, "pdfs", read, parse, main="documents")


# ---------------------------------------------------------------------------------------------------------
# Raw reference strings through processCitationList

CITATION_STAGE = "grobid_citations"
GROBID_READING = "grobid"  # the bib id a parsed biblStruct carries until it is merged into its entry

Reference = tuple[str, int, str]
"""Where a raw string is cited: (document source, index of the entry in its `bib_entries`, bib id)."""


def raw_references_to_parse(document: ParsedDocument, match: MatchConfig, tally: Tallies) -> list[tuple[str, int]]:
    """(string to send, entry index) for each bib entry with a raw string but no usable title; the entries whose
    string cannot be sent are counted (`grobid_citations_skipped:<why>`) and stay as they are."""
    wanted = []
    for index, entry in enumerate(document.bib_entries):
        if not entry.raw or usable_title(entry.title, match) is not None:
            continue
        raw, why = sendable_raw_reference(entry.raw, match.min_title_chars)
        if raw is None:
            tally(f"grobid_citations_skipped:{why}")
        else:
            wanted.append((raw, index))
    return wanted


class _SelectRawReferencesFn(TallyingFn):
    """Documents with nothing to send go straight on (main output); the others wait for GROBID's readings
    (`pending`, by source) while their strings go out (`strings`: raw string -> reference)."""

    def __init__(self, match: MatchConfig) -> None:
        self.match = match

    def process(self, document: ParsedDocument) -> Iterator:
        tally = self.tallies()
        wanted = raw_references_to_parse(document, self.match, tally)
        if wanted:
            tally("grobid_citation_entries", len(wanted))
            yield TaggedOutput("pending", (document.source, document))
            for raw, index in wanted:
                reference: Reference = (document.source, index, document.bib_entries[index].bib_id)
                yield TaggedOutput("strings", (raw, reference))
        else:
            yield document
        yield from tally.emit()


def _parse_struct(struct: bytes) -> BibEntry | DeadLetter:
    try:
        return bib_entry_from_struct(struct, GROBID_READING)
    except DocumentError as err:
        return DeadLetter("", CITATION_STAGE, err.reason, err.detail[:300])


def _reading_outputs(raw: str, references: list[Reference], reading: BibEntry | DeadLetter, tally: Tallies):
    """One string's outcome for every entry that cites it: (source, (index, reading)) to merge, or a dead
    letter per entry."""
    for source, index, bib_id in references:
        if isinstance(reading, DeadLetter):
            tally("grobid_citations_failed")
            detail = f"{reading.detail}; raw: {raw[:200]}"[:500]
            letter = DeadLetter(f"{source}#{bib_id}", CITATION_STAGE, reading.reason, detail)
            yield dead_letter_output(letter, tally, documents=False)
        else:
            yield source, (index, reading)


class _CitationCacheFn(_PooledFn):
    """Per distinct raw string: GROBID's reading from the citation cache (tagged `readings`), or the string
    on to be sent (main output, with the entries that cite it)."""

    def __init__(self, config: GrobidConfig) -> None:
        super().__init__(config)
        self.cache = config.tei_cache

    def process(self, element: tuple[str, Iterable[Reference]]):
        raw, references = element  # read the grouped values here: a runner may page them in on this thread only
        yield from super().process((raw, sorted(set(references))))

    def _fetch(self, element: tuple[str, list[Reference]]) -> tuple[str, list[Reference], BibEntry | None, Counter]:
        raw, references = element
        counts: Counter[str] = Counter()
        if not self.cache:
            return raw, references, None, counts
        try:
            struct = _read_cached_citation(self.cache, raw, self.config)
        except Exception as err:  # noqa: BLE001 - an unreadable cache entry only costs a request
            counts[f"grobid_citation_cache_error:{type(err).__name__}"] += 1
            return raw, references, None, counts
        if struct is None:
            return raw, references, None, counts
        reading = _parse_struct(struct)
        if isinstance(reading, DeadLetter):
            counts["grobid_citation_cache_unreadable"] += 1  # sent again; the answer overwrites it
            return raw, references, None, counts
        counts["grobid_citation_cache_hits"] += 1
        return raw, references, reading, counts

    def _outputs(self, fetched, tally: Tallies) -> Iterator:
        raw, references, reading, counts = fetched
        tally("grobid_citation_strings")
        for name, n in counts.items():
            tally(name, n)
        if reading is None:
            yield raw, references
        else:
            for source, index, _ in references:
                yield TaggedOutput("readings", (source, (index, reading)))


def _read_cached_citation(cache: str, raw: str, config: GrobidConfig) -> bytes | None:
    return _read_if_there(citation_cache_path(cache, citation_cache_key(raw, config.version, config.options)))


def _write_cached_citation(cache: str, raw: str, config: GrobidConfig, struct: bytes) -> None:
    _write_atomically(citation_cache_path(cache, citation_cache_key(raw, config.version, config.options)), struct)


class _CitationListFn(_PooledFn):
    """Per batch of distinct raw strings: one processCitationList request (retried like a PDF's), each
    answer parsed and cached; a failed batch becomes a dead letter for every entry citing one of its strings."""

    def _fetch(self, batch: list[tuple[str, list[Reference]]]) -> tuple[list, list[BibEntry | DeadLetter], Counter]:
        counts: Counter[str] = Counter()
        raws = [raw for raw, _ in batch]
        try:
            result = self._client.process_citation_list(raws)
        except Exception as err:  # noqa: BLE001 - one batch's failure must not lose the others
            letter = DeadLetter("", CITATION_STAGE, "unexpected_error", f"{type(err).__name__}: {err}"[:300])
            return batch, [letter] * len(batch), counts
        counts["grobid_citation_requests"] += result.attempts
        if result.structs is None:
            counts[f"grobid_citation_batches_failed:{result.reason}"] += 1
            letter = DeadLetter("", CITATION_STAGE, result.reason or "grobid_failed", result.detail[:300])
            return batch, [letter] * len(batch), counts
        readings = []
        cache = self.config.tei_cache
        for raw, struct in zip(raws, result.structs, strict=True):
            reading = _parse_struct(struct)
            if cache and not isinstance(reading, DeadLetter):
                _update_cache(counts, _write_cached_citation, cache, raw, self.config, struct)
            readings.append(reading)
        return batch, readings, counts

    def _outputs(self, fetched, tally: Tallies) -> Iterator:
        batch, readings, counts = fetched
        for name, n in counts.items():
            tally(name, n)
        for (raw, references), reading in zip(batch, readings, strict=True):
            yield from _reading_outputs(raw, references, reading, tally)


class _MergeReadingsFn(TallyingFn):
    """One document and GROBID's readings of its raw strings: each read entry becomes GROBID's fields with
    its own bib id and raw string (`extractors.clients.grobid.merge_parsed_entry`)."""

    def __init__(self, match: MatchConfig) -> None:
        self.match = match

    def process(self, element) -> Iterator:
        _, grouped = element
        tally = self.tallies()
        readings = dict(grouped["readings"])
        for document in grouped["documents"]:
            entries = list(document.bib_entries)
            for index, reading in sorted(readings.items()):
                tally("grobid_citations_parsed")
                if usable_title(reading.title, self.match) is None:
                    tally("grobid_citations_untitled")
                entries[index] = merge_parsed_entry(entries[index], reading)
            yield replace(document, bib_entries=tuple(entries))
        yield from tally.emit()


class ParseRawReferences(beam.PTransform):
    """Bib entries that have only a raw reference string, read by GROBID's processCitationList, so that they
    can resolve by title. Documents in, the same documents out (`documents`), plus `dead` (one per entry whose
    string failed; not documents) and `tally`."""

    def __init__(self, config: GrobidConfig, match: MatchConfig | None = None) -> None:
        super().__init__()
        self.config = config
        self.match = match or MatchConfig()

    def expand(self, documents):
        selected = documents | "SelectRawReferences" >> beam.ParDo(_SelectRawReferencesFn(self.match)).with_outputs(
            "pending", "strings", TALLY, main="untouched"
        )
        looked_up = (
            selected.strings
            | "GroupByRawString" >> beam.GroupByKey()
            | "LookUpCitationCache"
            >> beam.ParDo(_CitationCacheFn(self.config)).with_outputs("readings", TALLY, main="misses")
        )
        size = self.config.citation_batch_size
        sent = (
            looked_up.misses
            | "BatchRawStrings" >> beam.BatchElements(min_batch_size=size, max_batch_size=size)
            | "ProcessCitationList"
            >> beam.ParDo(_CitationListFn(self.config)).with_outputs(DEAD, TALLY, main="readings")
        )
        readings = (looked_up.readings, sent.readings) | "AllReadings" >> beam.Flatten()
        merged = (
            {"documents": selected.pending, "readings": readings}
            | "JoinReadingsToDocuments" >> beam.CoGroupByKey()
            | "MergeReadings" >> beam.ParDo(_MergeReadingsFn(self.match)).with_outputs(TALLY, main="documents")
        )
        tallies = (selected[TALLY], looked_up[TALLY], sent[TALLY], merged[TALLY])
        return {
            "documents": (selected.untouched, merged.documents) | "AllDocuments" >> beam.Flatten(),
            DEAD: sent[DEAD],
            TALLY: tallies | "CitationTallies" >> beam.Flatten(),
        }
