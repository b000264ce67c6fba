"""PDFs through a GROBID server into parsed documents: concurrent, retried, dead-lettered, cached.

Each worker keeps up to twice `--grobid_concurrency` PDFs in flight on a thread pool of
`--grobid_concurrency` requests (match it to the server's own `concurrency` setting, divided by the
number of workers). Before a PDF is sent, the TEI cache is looked up under the SHA-256 of the PDF bytes,
the GROBID version and the request options; a hit makes no GROBID call, so a refresh over an unchanged
corpus makes none at all. New TEI is written to the cache atomically (a temporary name, then a rename).

Deterministic failures (`not_a_pdf`, GROBID's `[BAD_INPUT_DATA]` / `[NO_BLOCKS]`; `extractors/grobid.py` says
why only these) are cached the same way, as a small JSON record `<key>.failed.json` beside where the TEI
would be: the next run dead-letters the PDF again from the record, with no GROBID call. `--retry_failed`
sends them again on purpose; a success deletes the record. Transient failures are never cached. The
TEI is parsed by `parse_document`, the function the `--tei` input uses, so both dead-letter alike.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from extractors.documents import parse_document
from extractors.grobid import GrobidClient, GrobidOptions, GrobidResult, RetryPolicy, tei_cache_key
from extractors.records import DeadLetter, InputTally, ParsedDocument
from extractors.streams import TooLarge, read_errors
from pipelines.inputs import MAX_PDF_BYTES, PlanReads, ReadConfig, ReadTask, read_document_bytes
from pipelines.tallies import DEAD, INPUTS, TALLY, Tallies, dead_letter_output

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

    def as_metadata(self) -> dict[str, object]:
        return {
            "url": self.url,
            "version": self.version,
            "options": self.options.as_metadata(),
            "retries": self.policy.retries,
            "timeout_s": self.policy.timeout_s,
            "concurrency_per_worker": self.concurrency,
            "tei_cache": self.tei_cache,
            "retry_failed": self.retry_failed,
        }


def cache_path(cache: str, key: str) -> str:
    return FileSystems.join(cache, key[:2], f"{key}.tei.xml")


def read_cached(cache: str | None, key: str) -> bytes | None:
    if not cache:
        return None
    path = cache_path(cache, key)
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path) as handle:
        return handle.read()


def write_cached(cache: str, key: str, tei: bytes) -> None:
    _write_atomically(cache_path(cache, key), tei)


def _write_atomically(final: str, data: bytes) -> None:
    """Write under a temporary name, then rename: a reader never sees half a file."""
    temporary = f"{final}.tmp-{uuid.uuid4().hex}"
    with FileSystems.create(temporary) as handle:
        handle.write(data)
    FileSystems.rename([temporary], [final])


def failure_path(cache: str, key: str) -> str:
    return FileSystems.join(cache, key[:2], f"{key}.failed.json")


def read_cached_failure(cache: str | None, key: str) -> GrobidResult | None:
    """The deterministic failure recorded under `key`, if any. A record that cannot be read counts as none:
    the PDF is sent again, which costs one request and loses nothing."""
    if not cache:
        return None
    path = failure_path(cache, key)
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path) as handle:
        data = handle.read()
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


class GrobidParseFn(beam.DoFn):
    """Per PDF: cache lookup and GROBID call on a pool of `concurrency` threads, then TEI parsing."""

    def __init__(self, config: GrobidConfig, max_bytes: int = MAX_PDF_BYTES) -> None:
        self.config = config
        self.max_bytes = max_bytes
        self.reader: Callable[[str, int], bytes] = read_document_bytes  # the PDF's bytes, capped
        self._client: GrobidClient | None = None
        self._pool: ThreadPoolExecutor | None = None

    def setup(self) -> None:
        self._client = GrobidClient(self.config.url, self.config.options, self.config.policy)
        self._pool = ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="grobid")

    def teardown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

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
        cache = self.config.tei_cache
        key = tei_cache_key(pdf, self.config.version, self.config.options)
        tei = read_cached(cache, key)
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

    def start_bundle(self) -> None:
        self._pending: set[Future] = set()

    def process(self, task: ReadTask):
        """Keeps up to 2 x concurrency PDFs in flight across elements, so the server never waits on us."""
        self._pending.add(self._pool.submit(self._fetch, task))
        yield from self._collect(wait_until=2 * self.config.concurrency)

    def finish_bundle(self):
        for output in self._collect(wait_until=1):
            if isinstance(output, TaggedOutput):
                yield TaggedOutput(output.tag, WindowedValue(output.value, MIN_TIMESTAMP, [GlobalWindow()]))
            else:
                yield WindowedValue(output, MIN_TIMESTAMP, [GlobalWindow()])

    def _collect(self, wait_until: int):
        """Outputs of finished PDFs; blocks while `wait_until` or more are still pending."""
        tally = Tallies()
        while self._pending:
            done = {f for f in self._pending if f.done()}
            if not done and len(self._pending) >= wait_until:
                done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            if not done:
                break
            self._pending -= done
            for future in done:
                path, fetched, counts = future.result()
                outcome = fetched if isinstance(fetched, DeadLetter) else _parse(fetched, path)
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
        yield from tally.emit()


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


class ParsePdfs(beam.PTransform):
    """PDF files (globs) through GROBID into `ParsedDocument`s; outputs `documents`, `dead`, `tally`."""

    def __init__(self, patterns: list[str], config: GrobidConfig, read: ReadConfig | None = None) -> None:
        super().__init__()
        self.patterns = patterns
        self.config = config
        self.read = read or ReadConfig()

    def expand(self, pbegin):
        planned = pbegin | "PlanPdfReads" >> PlanReads(self.patterns, "pdfs", self.read)
        parsed = planned["tasks"] | "Grobid" >> beam.ParDo(
            GrobidParseFn(self.config, self.read.max_pdf_bytes)
        ).with_outputs(TALLY, DEAD, INPUTS, main="documents")
        outputs = {"documents": parsed.documents}
        for name in (DEAD, TALLY, INPUTS):
            outputs[name] = (planned[name], parsed[name]) | f"Pdf{name.title()}" >> beam.Flatten()
        return outputs
