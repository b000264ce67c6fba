"""A GROBID client for the pipeline: one `requests.Session` per worker, bounded jittered retries.

Every outcome is classified so that the pipeline can dead-letter it with a reason: busy servers, timeouts,
dropped connections and answers that are not GROBID TEI are retried with backoff; an answer must arrive whole,
within a deadline and a size cap; a failure is `deterministic` (cacheable) only when it is the PDF's own fault.
Raw reference strings go to `/api/processCitationList` (`process_citation_list`). The rules: docs/grobid.md;
why this client and the wire formats: docs/design.md.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace

import requests
import urllib3
from lxml import etree

from extractors.documents.tei import TEI_NS, DocumentError, parse_xml_root
from mapping.records import BibEntry

START_HINT = "start one with: docker run --rm -p 8070:8070 grobid/grobid:0.8.2-crf"
# GROBID's GrobidExceptionStatus values that say the PDF itself cannot be read; its answers start "[STATUS] ".
DETERMINISTIC_ERRORS = frozenset({"BAD_INPUT_DATA", "NO_BLOCKS"})
_ERROR_TAG = re.compile(r"\s*\[([A-Z_]+)\]")
MAX_ANSWER_BYTES = 20 * 2**20
"""The default cap on one answer: the default `--max_document_bytes`, since a TEI from GROBID goes where a `--tei`
document goes and is held in memory whole (the largest TEI of a real paper we have seen is ~1.5 MB)."""
_CHUNK_BYTES = 64 * 2**10
_ERROR_BODY_BYTES = 64 * 2**10  # of an error answer only the start is read: its `[STATUS]` tag and a detail


@dataclass(frozen=True)
class GrobidOptions:
    """The request options; they are part of the TEI cache key."""

    segment_sentences: bool = True
    include_raw_citations: bool = True
    consolidate_header: bool = False
    consolidate_citations: bool = False
    tei_coordinates: tuple[str, ...] = ()

    def form(self) -> dict[str, str]:
        data = {
            "segmentSentences": "1" if self.segment_sentences else "0",
            "includeRawCitations": "1" if self.include_raw_citations else "0",
            "consolidateHeader": "1" if self.consolidate_header else "0",
            "consolidateCitations": "1" if self.consolidate_citations else "0",
        }
        if self.tei_coordinates:
            data["teiCoordinates"] = ",".join(self.tei_coordinates)
        return data

    def citation_form(self) -> dict[str, str]:
        """`processCitationList`'s options (it takes no other)."""
        return {
            "consolidateCitations": "1" if self.consolidate_citations else "0",
            "includeRawCitations": "1" if self.include_raw_citations else "0",
        }

    def as_metadata(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class RetryPolicy:
    """How often to retry and how long to wait; `timeout_s` bounds each attempt as a whole (and so each socket
    read)."""

    retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    timeout_s: float = 120.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max, base * 2**attempt)]."""
        return rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * (2**attempt)))


@dataclass(frozen=True)
class GrobidResult:
    """A PDF's outcome: the TEI, or a failure `reason` with a readable `detail`; `deterministic` failures
    would recur on the same GROBID version and options (see the module docstring)."""

    tei: bytes | None
    reason: str | None = None
    detail: str = ""
    attempts: int = 1
    status: int | None = None
    deterministic: bool = False

    def failure_record(self, version: str) -> bytes:
        """The JSON a failure cache keeps for a deterministic failure (no timestamp: same input, same bytes)."""
        record = {"reason": self.reason, "detail": self.detail, "status": self.status, "grobid_version": version}
        return json.dumps(record, sort_keys=True, indent=1).encode()

    @classmethod
    def from_failure_record(cls, data: bytes) -> GrobidResult:
        """Inverse of `failure_record`; raises ValueError on anything else."""
        record = json.loads(data)
        if not isinstance(record, dict) or not isinstance(record.get("reason"), str) or not record["reason"]:
            raise ValueError("not a GROBID failure record")
        status = record.get("status")
        return cls(
            None,
            record["reason"],
            str(record.get("detail", "")),
            attempts=0,
            status=status if isinstance(status, int) else None,
            deterministic=True,
        )


@dataclass(frozen=True)
class CitationListResult:
    """A batch of raw reference strings' outcome: one `biblStruct` (XML bytes, TEI namespace) per string, in
    the order sent, or a failure `reason` with a readable `detail` for the whole batch."""

    structs: tuple[bytes, ...] | None
    reason: str | None = None
    detail: str = ""
    attempts: int = 1
    status: int | None = None


def is_deterministic_error(status: int, body: str) -> bool:
    """Whether an error answer says the PDF itself cannot be read, by GROBID's `[STATUS]` tag. The full-text
    resource answers 500 for every exception; 400 is what GROBID's `GrobidStatusToHttpStatusMapper` gives
    BAD_INPUT_DATA and NO_BLOCKS where an exception reaches it."""
    tag = _ERROR_TAG.match(body)
    return status in (400, 500) and tag is not None and tag.group(1) in DETERMINISTIC_ERRORS


class GrobidUnavailable(RuntimeError):
    pass


def tei_cache_key(pdf: bytes, version: str, options: GrobidOptions) -> str:
    """SHA-256 over the PDF's bytes, the GROBID version and the request options."""
    digest = hashlib.sha256()
    digest.update(hashlib.sha256(pdf).hexdigest().encode())
    digest.update(b"|" + version.encode() + b"|")
    digest.update(json.dumps(options.as_metadata(), sort_keys=True).encode())
    return digest.hexdigest()


def citation_cache_key(raw: str, version: str, options: GrobidOptions) -> str:
    """SHA-256 over the raw string, the GROBID version and the options `processCitationList` takes (so that a
    change of `--consolidate_header` or sentence segmentation keeps the citation cache)."""
    digest = hashlib.sha256()
    digest.update(hashlib.sha256(raw.encode("utf-8")).hexdigest().encode())
    digest.update(b"|" + version.encode() + b"|processCitationList|")
    digest.update(json.dumps(options.citation_form(), sort_keys=True).encode())
    return digest.hexdigest()


MAX_RAW_REFERENCE_CHARS = 2_000
"""Longer "reference strings" are parsing accidents (a swallowed paragraph or author list); GROBID would spend
its time on them and a timeout would fail the whole batch."""


def sendable_raw_reference(raw: str | None, min_chars: int) -> tuple[str | None, str]:
    """(the string to send, "") or (None, why not): whitespace runs become one space (so the cache key does not
    depend on line breaks); a string with fewer than `min_chars` letters or digits cannot hold a usable title,
    and one made of punctuation only (`()`, `.`) would make GROBID 0.8 fail the whole batch."""
    text = " ".join((raw or "").split())
    if sum(ch.isalnum() for ch in text) < min_chars:
        return None, "too_short"
    if len(text) > MAX_RAW_REFERENCE_CHARS:
        return None, "too_long"
    return text, ""


_LIST_BIBL = f"{{{TEI_NS}}}listBibl"
_BIBL_STRUCT = f"{{{TEI_NS}}}biblStruct"


def split_citation_list(answer: bytes) -> list[bytes]:
    """The `biblStruct`s of a `processCitationList` answer, in order, each serialised on its own (with the TEI
    namespace). Reads GROBID's TEI envelope and a bare `<listBibl>`, namespaced or not (elements without a
    namespace are put in TEI's). Raises ValueError on anything that is not XML with a `listBibl`."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
    try:
        root = etree.fromstring(answer, parser)
    except etree.XMLSyntaxError as err:
        raise ValueError(f"not XML: {err}") from err
    if not any(etree.QName(node).localname == "listBibl" for node in root.iter(etree.Element)):
        raise ValueError(f"no listBibl in an answer whose root is {etree.QName(root).localname!r}")
    for node in root.iter(etree.Element):
        if etree.QName(node).namespace is None:
            node.tag = f"{{{TEI_NS}}}{node.tag}"
    structs = [node for node in root.iter(_BIBL_STRUCT) if node.getparent() is not None]
    structs = [node for node in structs if node.getparent().tag == _LIST_BIBL]
    return [etree.tostring(node, encoding="UTF-8", xml_declaration=False, with_tail=False) for node in structs]


def merge_parsed_entry(original: BibEntry, parsed: BibEntry) -> BibEntry:
    """`original` with GROBID's reading of its raw string: every field GROBID filled (title, authors, year,
    venue, identifiers) replaces the original's, every field it left empty keeps the original's (an arXiv id
    from unarXive's `contained_arXiv_ids` is not lost), `other_ids` are the union of both; the bib id and the raw
    string stay the original's."""
    changes = {
        f.name: getattr(parsed, f.name)
        for f in fields(BibEntry)
        if f.name not in ("bib_id", "raw") and getattr(parsed, f.name)
    }
    if "other_ids" in changes:
        changes["other_ids"] = tuple(dict.fromkeys((*original.other_ids, *parsed.other_ids)))
    return replace(original, **changes)


def parse_version(text: str) -> str:
    """GROBID's `/api/version` answers plain text ("0.8.2") or JSON ({"version": "0.8.2", ...})."""
    text = text.strip()
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict):
        return str(value.get("version", text))
    return str(value)


_TEI_ROOT = f"{{{TEI_NS}}}TEI"
_TEI_HEADER = f"{{{TEI_NS}}}teiHeader"


def grobid_tei_problem(data: bytes) -> str | None:
    """Why an answer is not a TEI document as GROBID writes one (well-formed XML whose root is TEI's `TEI` with a
    `teiHeader` child), or None when it is. An empty answer, a proxy's HTML page and a body cut short (no longer
    well-formed) fail here, so none is ever taken for a PDF's TEI. What the TEI holds is not judged: a TEI without
    a body is GROBID's own reading of the PDF, and the parser dead-letters it the same way every run. The XML is
    read as the parser reads it (`parse_xml_root`, any depth)."""
    if not data or data.isspace():
        return "empty answer"
    try:
        root = parse_xml_root(data)
    except DocumentError as err:
        return f"not well-formed XML: {err.detail}"
    if root.tag != _TEI_ROOT:
        return f"root element is {root.tag!r}, not TEI"
    if root.find(_TEI_HEADER) is None:
        return "a TEI without a teiHeader"
    return None


# ---------------------------------------------------------------------------------------------------------
# One attempt, bounded as a whole

_ATTEMPT = threading.local()  # the deadline of the attempt this thread is making, for its connection to join


class _AttemptDeadline:
    """Ends one attempt `seconds` after it began, whatever the server does. A socket timeout bounds each read only,
    so a server that sends a byte now and then, headers or body, holds a request as long as it likes; at the
    deadline a timer shuts the attempt's socket down, which wakes the read blocked on it. The connection joins
    the attempt (`watch`) when it is opened and whenever it sends a request (a kept-alive one is reused)."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._lock = threading.Lock()
        self._over = False
        self._connection: urllib3.connection.HTTPConnection | None = None
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _AttemptDeadline:
        _ATTEMPT.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        with self._lock:
            self._over = True
            self._connection = None
        _ATTEMPT.deadline = None

    def watch(self, connection: urllib3.connection.HTTPConnection) -> None:
        with self._lock:
            if self._over:
                return
            self._connection = connection
            if self.expired:
                _shut_down(connection)

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expired = True
            if self._connection is not None:
                _shut_down(self._connection)


def _shut_down(connection: urllib3.connection.HTTPConnection) -> None:
    sock = getattr(connection, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


def _watch(connection: urllib3.connection.HTTPConnection) -> None:
    deadline = getattr(_ATTEMPT, "deadline", None)
    if deadline is not None:
        deadline.watch(connection)


class _Watched:
    """A connection that joins the deadline of the attempt using it (`_AttemptDeadline`)."""

    def connect(self) -> None:
        super().connect()
        _watch(self)

    def request(self, *args, **kwargs) -> None:
        _watch(self)
        super().request(*args, **kwargs)


class _WatchedHTTPConnection(_Watched, urllib3.connection.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
    pass


class _WatchedHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


class _WatchedAdapter(requests.adapters.HTTPAdapter):
    """requests' adapter whose connections join their attempt's deadline, directly or through an HTTP proxy (a
    SOCKS proxy keeps its own connections: there only the checks between reads of the body apply)."""

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs) -> urllib3.PoolManager:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager


class _AttemptFailed(Exception):
    """One attempt's failure: its reason, a readable detail, and whether another attempt may do better."""

    def __init__(self, reason: str, detail: str, retry: bool = True, status: int | None = None) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.retry = retry
        self.status = status


def _timed_out(err: BaseException) -> bool:
    """Whether a requests error is a socket timeout (one read waiting `timeout_s` for a byte); requests wraps one
    met while streaming a body in a ConnectionError."""
    return isinstance(err, requests.Timeout) or any(isinstance(a, urllib3.exceptions.TimeoutError) for a in err.args)


@dataclass
class GrobidClient:
    """Talks to one GROBID server. Thread-safe: a session per thread (requests.Session is not). Answers over
    `max_answer_bytes` are refused (`grobid_too_large`)."""

    url: str
    options: GrobidOptions = field(default_factory=GrobidOptions)
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    seed: int = 0
    max_answer_bytes: int = MAX_ANSWER_BYTES

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")
        self._local = threading.local()

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            adapter = _WatchedAdapter(pool_connections=1, pool_maxsize=4, max_retries=0)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._local.session = session
            self._local.rng = random.Random(f"{self.seed}-{threading.get_ident()}")
        return session

    def check_alive(self) -> str:
        """The server's version; raises `GrobidUnavailable` with one line saying how to start one."""
        try:
            with _AttemptDeadline(10):
                alive = self._session().get(f"{self.url}/api/isalive", timeout=10)
            if alive.status_code != 200 or alive.text.strip().lower() not in ("true", "1"):
                raise GrobidUnavailable(
                    f"GROBID at {self.url} is not alive (isalive: {alive.status_code}); {START_HINT}"
                )
            with _AttemptDeadline(10):
                version = self._session().get(f"{self.url}/api/version", timeout=10)
            version.raise_for_status()
        except requests.RequestException as err:
            raise GrobidUnavailable(
                f"GROBID is unreachable at {self.url} ({type(err).__name__}); {START_HINT}"
            ) from err
        return parse_version(version.text)

    def process_fulltext(self, pdf: bytes, name: str = "document.pdf") -> GrobidResult:
        """One PDF through `/api/processFulltextDocument`, with bounded retries; a 200 whose body is not GROBID TEI
        is retried like a dropped connection (`grobid_invalid_tei`)."""
        if not pdf.lstrip()[:5] == b"%PDF-":
            return GrobidResult(None, "not_a_pdf", "the file does not start with %PDF-", attempts=0, deterministic=True)
        body, outcome = self._post(
            "processFulltextDocument",
            files={"input": (name, pdf, "application/pdf")},
            data=self.options.form(),
            check=grobid_tei_problem,
        )
        if body is None:
            return outcome
        return GrobidResult(body, attempts=outcome.attempts, status=200)

    def process_citation_list(self, raw_strings: Sequence[str]) -> CitationListResult:
        """Raw reference strings through `/api/processCitationList` in one request (form-urlencoded, field
        `citations` once per string), with the retries of `process_fulltext`: one `biblStruct` per string,
        in order, or a failure for the whole batch. A blank string makes GROBID 0.8 fail the whole batch
        (a null item in its answer: 500), so `sendable_raw_reference` decides what may be sent."""
        if not raw_strings:
            return CitationListResult((), attempts=0)
        form = [("citations", raw) for raw in raw_strings] + list(self.options.citation_form().items())
        body, outcome = self._post("processCitationList", data=form, ok=(200, 204))
        if body is None:
            return CitationListResult(None, outcome.reason, outcome.detail, outcome.attempts, outcome.status)
        attempts, status = outcome.attempts, outcome.status
        try:
            structs = split_citation_list(body) if status == 200 else []
        except ValueError as err:
            detail = f"{err}; answer starts {body[:120]!r}"
            return CitationListResult(None, "grobid_citation_malformed_answer", detail, attempts, status)
        if len(structs) != len(raw_strings):
            detail = f"{len(structs)} biblStruct for {len(raw_strings)} strings (HTTP {status})"
            return CitationListResult(None, "grobid_citation_count_mismatch", detail, attempts, status)
        return CitationListResult(tuple(structs), attempts=attempts, status=status)

    def _post(
        self,
        service: str,
        *,
        data,
        files=None,
        ok: tuple[int, ...] = (200,),
        check: Callable[[bytes], str | None] | None = None,
    ) -> tuple[bytes | None, GrobidResult]:
        """POST to `/api/<service>` with bounded retries: (the answer's body, a result carrying its attempts and
        status) when its status is in `ok` and `check` finds no problem in the body, else (None, the classified
        failure; see the module docstring)."""
        session = self._session()
        rng: random.Random = self._local.rng
        endpoint = f"{self.url}/api/{service}"
        last = GrobidResult(None, "grobid_busy", "no attempt made", attempts=0)
        for attempt in range(self.policy.retries + 1):
            attempts = attempt + 1
            try:
                status, phrase, body = self._exchange(session, endpoint, data=data, files=files, ok=ok)
            except _AttemptFailed as failed:
                last = GrobidResult(None, failed.reason, failed.detail, attempts=attempts, status=failed.status)
                if not failed.retry:
                    return None, last
            else:
                if status in ok:
                    problem = check(body) if check is not None else None
                    if problem is None:
                        return body, GrobidResult(None, attempts=attempts, status=status)
                    detail = f"{problem}; the answer starts {body[:80]!r}"
                    last = GrobidResult(None, "grobid_invalid_tei", detail, attempts=attempts, status=status)
                elif status != 503:
                    detail = body.decode("utf-8", "replace")[:300].strip()
                    return None, GrobidResult(
                        None,
                        f"grobid_error_{status}",
                        detail or phrase,
                        attempts=attempts,
                        status=status,
                        deterministic=is_deterministic_error(status, detail),
                    )
                else:
                    detail = body.decode("utf-8", "replace")[:300].strip()
                    last = GrobidResult(
                        None, "grobid_busy", f"503 after {attempts} attempts: {detail}", attempts=attempts, status=503
                    )
            if attempt < self.policy.retries:
                time.sleep(self.policy.delay(attempt, rng))
        return None, last

    def _exchange(
        self, session: requests.Session, endpoint: str, *, data, files, ok: tuple[int, ...]
    ) -> tuple[int, str, bytes]:
        """One attempt, within `policy.timeout_s` in all: (status, reason phrase, body). A body in `ok` is read
        whole up to `max_answer_bytes`; of any other only the start is read. Raises `_AttemptFailed`."""
        timeout = self.policy.timeout_s
        with _AttemptDeadline(timeout) as deadline:
            try:
                response = session.post(
                    endpoint,
                    files=files,
                    data=data,
                    headers={"Accept": "application/xml"},
                    timeout=timeout,
                    stream=True,
                )
            except requests.RequestException as err:
                if deadline.expired or _timed_out(err):
                    raise _AttemptFailed("grobid_timeout", f"no answer within {timeout} s: {err}") from err
                raise _AttemptFailed("grobid_connection", f"connection failed or dropped: {err}") from err
            try:
                if deadline.expired:  # the headers were cut short by the deadline, or only just made it
                    raise _AttemptFailed("grobid_timeout", f"no whole answer head within {timeout} s")
                body = self._read_body(response, deadline, whole=response.status_code in ok)
            finally:
                response.close()  # a body not read to its end closes the connection instead of reusing it
            return response.status_code, response.reason or "", body

    def _read_body(self, response: requests.Response, deadline: _AttemptDeadline, whole: bool) -> bytes:
        """The answer's body: whole (`grobid_too_large` past `max_answer_bytes`, found from the Content-Length
        before reading when it says so), or only its first `_ERROR_BODY_BYTES` when not `whole`."""
        cap = self.max_answer_bytes if whole else _ERROR_BODY_BYTES
        declared = response.headers.get("Content-Length", "")
        if whole and declared.isdigit() and int(declared) > cap:
            raise _AttemptFailed(
                "grobid_too_large",
                f"the answer declares {int(declared):,} bytes, more than {cap:,}; none of it was read",
                retry=False,
                status=response.status_code,
            )
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_content(_CHUNK_BYTES):
                parts.append(chunk)
                size += len(chunk)
                if size > cap and whole:
                    raise _AttemptFailed(
                        "grobid_too_large",
                        f"the answer is more than {cap:,} bytes (read {size:,} before stopping)",
                        retry=False,
                        status=response.status_code,
                    )
                if size > cap or deadline.expired:
                    break
        except requests.RequestException as err:
            if not deadline.expired:
                what = "stalled" if _timed_out(err) else "was cut"
                reason = "grobid_timeout" if _timed_out(err) else "grobid_connection"
                detail = f"the answer {what} after {size:,} bytes: {type(err).__name__}: {err}"
                raise _AttemptFailed(reason, detail, status=response.status_code) from err
        if deadline.expired:  # also when the shut-down socket made the body look finished
            read = f" ({size:,} bytes of it were read)" if size else ""
            detail = f"the answer did not arrive whole within {self.policy.timeout_s} s{read}"
            raise _AttemptFailed("grobid_deadline", detail, status=response.status_code)
        return b"".join(parts)[: cap if not whole else None]
