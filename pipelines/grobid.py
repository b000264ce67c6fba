"""PDFs through a GROBID server into parsed documents: concurrent, retried, dead-lettered, cached.

Each worker keeps up to twice `--grobid_concurrency` PDFs in flight on a thread pool of
`--grobid_concurrency` requests (match it to the server's own `concurrency` setting, divided by the
number of workers). Before a PDF is sent, the TEI cache is looked up under the SHA-256 of the PDF bytes,
the GROBID version and the request options; a hit makes no GROBID call, so a refresh over an unchanged
corpus makes none at all. New TEI is written to the cache atomically (a temporary name, then a rename).
"""

from __future__ import annotations

import uuid
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from extractors.grobid import GrobidClient, GrobidOptions, RetryPolicy, tei_cache_key
from extractors.records import DeadLetter, ParsedDocument
from extractors.tei import DocumentError, parse_tei
from pipelines.transforms import DEAD, TALLY, MatchFiles, Tallies, dead_letter_output


@dataclass(frozen=True)
class GrobidConfig:
    url: str
    version: str
    options: GrobidOptions = field(default_factory=GrobidOptions)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 4
    tei_cache: str | None = None

    def as_metadata(self) -> dict[str, object]:
        return {
            "url": self.url,
            "version": self.version,
            "options": self.options.as_metadata(),
            "retries": self.policy.retries,
            "timeout_s": self.policy.timeout_s,
            "concurrency_per_worker": self.concurrency,
            "tei_cache": self.tei_cache,
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
    """Write under a temporary name, then rename: a reader never sees half a file."""
    final = cache_path(cache, key)
    temporary = f"{final}.tmp-{uuid.uuid4().hex}"
    with FileSystems.create(temporary) as handle:
        handle.write(tei)
    FileSystems.rename([temporary], [final])


class GrobidParseFn(beam.DoFn):
    """Per PDF: cache lookup and GROBID call on a pool of `concurrency` threads, then TEI parsing."""

    def __init__(self, config: GrobidConfig) -> None:
        self.config = config
        self._client: GrobidClient | None = None
        self._pool: ThreadPoolExecutor | None = None

    def setup(self) -> None:
        self._client = GrobidClient(self.config.url, self.config.options, self.config.policy)
        self._pool = ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="grobid")

    def teardown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _fetch(self, readable: fileio.ReadableFile) -> tuple[str, bytes | DeadLetter, Counter]:
        """Runs on a pool thread: the TEI from the cache or from GROBID. Parsing happens on the bundle's
        thread, so that a request thread is free again the moment GROBID answers. Whatever goes wrong
        here ends as this PDF's dead letter, never as a failed bundle that would resend the others."""
        try:
            return self._fetch_or_raise(readable)
        except Exception as err:  # noqa: BLE001 - one PDF's failure must not lose the others
            path = readable.metadata.path
            return path, DeadLetter(path, "grobid", "unexpected_error", f"{type(err).__name__}: {err}"[:500]), Counter()

    def _fetch_or_raise(self, readable: fileio.ReadableFile) -> tuple[str, bytes | DeadLetter, Counter]:
        counts: Counter[str] = Counter()
        path = readable.metadata.path
        try:
            pdf = readable.read()
        except OSError as err:
            return path, DeadLetter(path, "grobid", "unreadable_file", str(err)[:300]), counts
        key = tei_cache_key(pdf, self.config.version, self.config.options)
        tei = read_cached(self.config.tei_cache, key)
        if tei is not None:
            counts["grobid_cache_hits"] += 1
            return path, tei, counts
        result = self._client.process_fulltext(pdf, name=path.rsplit("/", 1)[-1])
        counts["grobid_requests"] += result.attempts
        if result.tei is None:
            return path, DeadLetter(path, "grobid", result.reason or "grobid_failed", result.detail[:500]), counts
        counts["grobid_parsed"] += 1
        if self.config.tei_cache:
            try:
                write_cached(self.config.tei_cache, key, result.tei)
            except OSError as err:  # the TEI is still good; only the cache missed it
                counts["grobid_cache_write_failed"] += 1
                counts[f"grobid_cache_error:{type(err).__name__}"] += 1
        return path, result.tei, counts

    def start_bundle(self) -> None:
        self._pending: set[Future] = set()

    def process(self, readable: fileio.ReadableFile):
        """Keeps up to 2 x concurrency PDFs in flight across elements, so the server never waits on us."""
        self._pending.add(self._pool.submit(self._fetch, readable))
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
                if isinstance(outcome, DeadLetter):
                    yield dead_letter_output(outcome, tally, documents=True)
                else:
                    yield outcome
        yield from tally.emit()


def _parse(tei: bytes, path: str) -> ParsedDocument | DeadLetter:
    try:
        return parse_tei(tei, path)
    except DocumentError as err:
        return DeadLetter(path, "parse", err.reason, err.detail[:500])


class ParsePdfs(beam.PTransform):
    """PDF files (globs) through GROBID into `ParsedDocument`s; outputs `documents`, `dead`, `tally`."""

    def __init__(self, patterns: list[str], config: GrobidConfig) -> None:
        super().__init__()
        self.patterns = patterns
        self.config = config

    def expand(self, pbegin):
        parsed = (
            pbegin
            | "MatchPdfs" >> MatchFiles(self.patterns)
            | "Grobid" >> beam.ParDo(GrobidParseFn(self.config)).with_outputs(TALLY, DEAD, main="documents")
        )
        return {"documents": parsed.documents, DEAD: parsed[DEAD], TALLY: parsed[TALLY]}
