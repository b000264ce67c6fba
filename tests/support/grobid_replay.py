"""A loopback HTTP server that speaks GROBID's API, for tests and benchmarks (no GROBID can run in CI).

It answers `/api/isalive`, `/api/version` and multipart `/api/processFulltextDocument` (field `input`),
replaying for each known PDF the real TEI that GROBID produced for it (matched by the SHA-256 of the PDF
bytes), and injects faults:

- `slots`: concurrent requests it serves, like GROBID's own `concurrency`; one more gets 503 at once;
- `latency_s`: time each successful answer takes;
- `script`: per PDF hash, a list of actions consumed one per request: "503", "500", "slow" (sleeps
  `slow_s`, longer than the client's timeout), "drop" (closes the connection without an answer), "ok";
  and answers that go wrong on the way (`FAULTS`): a 200 whose body is "empty", an "html" page or
  "truncated" (the first half of the TEI); "trickle" (the TEI's first `trickle_bytes` bytes one every
  `trickle_s`, then the rest) and "trickle_head" (the status line and headers so); "reset" (half the TEI,
  then a TCP reset); "huge" (a Content-Length of `HUGE_DECLARED_BYTES`) and "huge_chunked" (chunked, no
  length), each sending at most `huge_bytes` while the client reads;
- an unknown PDF gets GROBID 0.8's answer to a PDF it cannot read, 500 `BAD_INPUT_DATA_BODY`; "500" in a
  script is a 500 that does not blame the PDF (`[GENERAL]`).

`calls` counts processing requests, per hash in `calls_by_hash`; `body_bytes_sent` counts the body bytes that the
faulty answers got into the socket, `trickled_bytes` the bytes trickled. A request in absolute form
(`POST http://host/api/...`) is served like any other, so the server can stand in for an HTTP proxy in front of
GROBID. A PDF may carry a trailing `COPY_MARKER` + number (a PDF comment) so benchmarks can make distinct files
of one real PDF.

It also answers form-urlencoded `/api/processCitationList` (field `citations` once per raw string,
`includeRawCitations`, `consolidateCitations`) the way GROBID 0.8.2 does (`GrobidRestProcessString.
processCitationList`, kermitt2/grobid at tag 0.8.2): `CITATION_LIST_HEAD` + one `<biblStruct xml:id="b<i>">`
per string, in order + `CITATION_LIST_TAIL`. A known string (`citation_structs`, by its whitespace-collapsed
text; `citation_pairs` makes them from the `<note type="raw_reference">` strings of a real TEI) gets the real
biblStruct GROBID wrote for it, byte for byte; an unknown one gets GROBID's biblStruct for a string it could not
parse (`<monogr><imprint/></monogr>`); a blank or punctuation-only string makes the whole batch a bare 500, as
GROBID's null item does. `citation_envelope="listBibl"` answers a bare `<listBibl>` instead.
`citation_script` is consumed one action per citation request: the actions above, plus "short" (the last
biblStruct left out), "html" (200 with an HTML page) and "empty" (204). `citation_calls` counts those
requests and `citation_batches` records how many strings each carried.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

COPY_MARKER = b"\n%citrec-copy:"
FAULTS = ("empty", "html", "truncated", "trickle", "trickle_head", "reset", "huge", "huge_chunked")
HTML_PAGE = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
HUGE_DECLARED_BYTES = 2**30
HUGE_BLOCK = b"<p>" + b"x" * (2**20 - 7) + b"</p>"
BAD_INPUT_DATA_BODY = b"[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1"
# GROBID 0.8.2's envelope around processCitationList's biblStructs, as GrobidRestProcessString writes it.
CITATION_LIST_HEAD = (
    b'<TEI xmlns="http://www.tei-c.org/ns/1.0" xmlns:xlink="http://www.w3.org/1999/xlink" '
    b'\n xmlns:mml="http://www.w3.org/1998/Math/MathML">\n'
    b"\t<teiHeader/>\n\t<text>\n\t\t<front/>\n\t\t<body/>\n\t\t<back>\n\t\t\t<div>\n\t\t\t\t<listBibl>\n"
)
CITATION_LIST_TAIL = b"\t\t\t\t</listBibl>\n\t\t\t</div>\n\t\t</back>\n\t</text>\n</TEI>\n"
_BIBL_STRUCT = re.compile(rb"<biblStruct\b[^>]*>(.*?)</biblStruct>", re.DOTALL)
_RAW_NOTE = re.compile(rb'<note type="raw_reference">(.*?)</note>', re.DOTALL)
_RAW_NOTE_LINE = re.compile(rb'\s*<note type="raw_reference">.*?</note>', re.DOTALL)


def real_pairs(shared: Path) -> tuple[dict[str, bytes], list[Path]]:
    """TEI by PDF hash, and the PDFs, for every PDF under shared/grobid that has its TEI beside it."""
    tei_by_hash: dict[str, bytes] = {}
    pdfs = []
    for pdf in sorted((shared / "grobid").glob("*/*.pdf")):
        tei = pdf.with_suffix(".tei.xml")
        if tei.exists():
            tei_by_hash[hashlib.sha256(pdf.read_bytes()).hexdigest()] = tei.read_bytes()
            pdfs.append(pdf)
    return tei_by_hash, pdfs


def collapse(text: str) -> str:
    return " ".join(text.split())


def citation_pairs(tei: bytes) -> dict[str, bytes]:
    """The inside of each bibliography biblStruct of a real GROBID TEI (bytes as GROBID wrote them), by its
    `raw_reference` note's text: what processCitationList answers for that string."""
    pairs = {}
    for inner in _BIBL_STRUCT.findall(tei):
        note = _RAW_NOTE.search(inner)
        if note:
            pairs[collapse(html.unescape(note.group(1).decode()))] = inner
    return pairs


def unparsed_struct(raw: str) -> bytes:
    """GROBID's biblStruct body for a string it could not parse (BiblioItem.toTEI of an empty item)."""
    note = html.escape(collapse(raw), quote=False)
    return f'\n\t<monogr>\n\t\t<imprint/>\n\t</monogr>\n\t<note type="raw_reference">{note}</note>\n'.encode()


def multipart_field(content_type: str, body: bytes, name: str) -> bytes:
    """One field of a multipart/form-data body (a plain byte split: the email parser is slow on MBs)."""
    boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    for part in body.split(b"--" + boundary):
        head, _, content = part.partition(b"\r\n\r\n")
        if f'name="{name}"'.encode() in head:
            return content.removesuffix(b"\r\n")
    return b""


def pdf_hash(data: bytes) -> str:
    cut = data.rfind(COPY_MARKER)
    if cut >= 0:
        data = data[:cut]
    return hashlib.sha256(data).hexdigest()


class FakeGrobid:
    def __init__(
        self,
        tei_by_hash: dict[str, bytes],
        *,
        slots: int = 10,
        latency_s: float = 0.0,
        slow_s: float = 5.0,
        version: str = "0.8.2",
        citation_structs: dict[str, bytes] | None = None,
        citation_envelope: str = "tei",
        trickle_s: float = 0.01,
        trickle_bytes: int = 200,
        huge_bytes: int = 128 * 2**20,
    ) -> None:
        self.tei_by_hash = tei_by_hash
        self.citation_structs = citation_structs or {}
        self.citation_envelope = citation_envelope
        self.citation_script: list[str] = []
        self.citation_calls = 0
        self.citation_batches: list[int] = []
        self.citation_forms: list[dict[str, list[str]]] = []
        self.slots = slots
        self.latency_s = latency_s
        self.slow_s = slow_s
        self.version = version
        self.script: dict[str, list[str]] = {}
        self.calls = 0
        self.calls_by_hash: Counter[str] = Counter()
        self.busy_answers = 0
        self.trickle_s = trickle_s
        self.trickle_bytes = trickle_bytes
        self.huge_bytes = huge_bytes
        self.body_bytes_sent = 0
        self.trickled_bytes = 0
        self._faults_writing = 0
        self._faults_done = threading.Condition()
        self.first_request: float | None = None  # time.monotonic() of the first processing request
        self.last_answer: float | None = None  # and of the last answer sent
        self._lock = threading.Lock()
        self._semaphore = threading.BoundedSemaphore(slots)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGrobid:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next_action(self, actions: list[str] | None) -> str:
        """Count a processing request and take the next scripted action for it ("ok" when none is left)."""
        with self._lock:
            self.first_request = self.first_request or time.monotonic()
            self.calls += 1
            return actions.pop(0) if actions else "ok"

    @contextmanager
    def _slot(self) -> Iterator[bool]:
        """One of the `slots` for the length of an answer; False, counted as a busy answer, when none is free."""
        if not self._semaphore.acquire(blocking=False):
            with self._lock:
                self.busy_answers += 1
            yield False
            return
        try:
            yield True
        finally:
            self._semaphore.release()
            with self._lock:
                self.last_answer = time.monotonic()

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def parse_request(self) -> bool:
                parsed = super().parse_request()
                if parsed:
                    self.path = urlsplit(self.path).path or self.path  # a proxy's request names the whole URL
                return parsed

            def _trickle(self, data: bytes) -> None:
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    with server._lock:
                        server.trickled_bytes += 1
                    time.sleep(server.trickle_s)

            def do_GET(self) -> None:
                if self.path.startswith("/api/isalive"):
                    self._send(200, b"true")
                elif self.path.startswith("/api/version"):
                    self._send(200, server.version.encode())
                elif self.path.startswith("/test/stats"):  # not GROBID's: for a server in another process
                    self._send(200, json.dumps(server.stats()).encode(), "application/json")
                else:
                    self._send(404, b"not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path.startswith("/api/processCitationList"):
                    self._citation_list(body)
                    return
                if not self.path.startswith("/api/processFulltextDocument"):
                    self._send(404, b"not found")
                    return
                pdf = multipart_field(self.headers["Content-Type"], body, "input")
                key = pdf_hash(pdf)
                with server._lock:
                    server.calls_by_hash[key] += 1
                action = server._next_action(server.script.get(key))
                with server._slot() as free:
                    if not free:
                        self._send(503, b"[NO_AVAILABLE_THREAD] all GROBID slots are busy")
                    elif action == "503":
                        self._send(503, b"[NO_AVAILABLE_THREAD] injected busy")
                    elif action == "500":
                        self._send(500, b"[GENERAL] injected failure")
                    elif action == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                    elif action == "slow":
                        time.sleep(server.slow_s)
                        self._send(200, server.tei_by_hash.get(key, b""), "application/xml")
                    elif action in FAULTS:
                        self.close_connection = True
                        with server._faults_done:
                            server._faults_writing += 1
                        try:
                            self._fault(action, server.tei_by_hash.get(key, b""))
                        except OSError:
                            pass  # the client went away: what a fault is for
                        finally:
                            with server._faults_done:
                                server._faults_writing -= 1
                                server._faults_done.notify_all()
                    elif key not in server.tei_by_hash:
                        self._send(500, BAD_INPUT_DATA_BODY)
                    else:
                        if server.latency_s:
                            time.sleep(server.latency_s)
                        self._send(200, server.tei_by_hash[key], "application/xml")

            def _head(self, status: int, headers: dict[str, str]) -> bytes:
                lines = [f"HTTP/1.1 {status} {self.responses[status][0]}", "Content-Type: application/xml"]
                lines += [f"{name}: {value}" for name, value in headers.items()]
                return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

            def _body(self, data: bytes) -> None:
                self.wfile.write(data)
                with server._lock:
                    server.body_bytes_sent += len(data)

            def _fault(self, action: str, tei: bytes) -> None:
                """One of `FAULTS`; the connection is closed after it."""
                if action in ("empty", "html", "truncated"):
                    body = {"empty": b"", "html": HTML_PAGE, "truncated": tei[: len(tei) // 2]}[action]
                    self.wfile.write(self._head(200, {"Content-Length": str(len(body))}))
                    self._body(body)
                elif action == "trickle":
                    self.wfile.write(self._head(200, {"Content-Length": str(len(tei))}))
                    self._trickle(tei[: server.trickle_bytes])
                    self._body(tei[server.trickle_bytes :])
                elif action == "trickle_head":
                    self._trickle(self._head(200, {"Content-Length": str(len(tei))}))
                    self._body(tei)
                elif action == "reset":
                    self.wfile.write(self._head(200, {"Content-Length": str(len(tei))}))
                    self._body(tei[: len(tei) // 2])
                    time.sleep(0.05)  # let the client read the headers first: a reset mid-body, not before it
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.rfile.close()
                    self.connection.close()  # with SO_LINGER 0: a reset, not an orderly close
                elif action == "huge":
                    self.wfile.write(self._head(200, {"Content-Length": str(HUGE_DECLARED_BYTES)}))
                    for _ in range(0, server.huge_bytes, len(HUGE_BLOCK)):
                        self._body(HUGE_BLOCK)
                else:  # huge_chunked
                    self.wfile.write(self._head(200, {"Transfer-Encoding": "chunked"}))
                    for _ in range(0, server.huge_bytes, len(HUGE_BLOCK)):
                        self._body(b"%x\r\n%s\r\n" % (len(HUGE_BLOCK), HUGE_BLOCK))

            def _citation_list(self, body: bytes) -> None:
                form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
                citations = form.get("citations", [])
                with server._lock:
                    server.citation_calls += 1
                    server.citation_batches.append(len(citations))
                    server.citation_forms.append(form)
                action = server._next_action(server.citation_script)
                with server._slot() as free:
                    if not free or action == "503":
                        self._send(503, b"")  # GROBID's 503 here has no body
                    elif action == "500" or any(not c.lstrip("[({.,])}: \n").rstrip(" \n") for c in citations):
                        self._send(500, b"")
                    elif action == "drop":
                        self.close_connection = True
                        self.connection.shutdown(2)
                    elif action == "empty":
                        self._send(204, b"")
                    elif action == "html":
                        self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
                    else:
                        if action == "slow":
                            time.sleep(server.slow_s)
                        elif server.latency_s:
                            time.sleep(server.latency_s)
                        raw_notes = form.get("includeRawCitations", ["0"])[0] == "1"
                        structs = server.citation_answer(citations, raw_notes)
                        if action == "short":
                            structs = structs[:-1]
                        self._send(200, server.citation_envelope_for(structs), "application/xml")

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 resets connections under a burst of clients
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def citation_answer(self, citations: list[str], raw_notes: bool) -> list[bytes]:
        structs = []
        for i, raw in enumerate(citations):
            inner = self.citation_structs.get(collapse(raw)) or unparsed_struct(raw)
            if not raw_notes:
                inner = _RAW_NOTE_LINE.sub(b"", inner)
            structs.append(b'<biblStruct xml:id="b%d">' % i + inner + b"</biblStruct>\n")
        return structs

    def citation_envelope_for(self, structs: list[bytes]) -> bytes:
        if self.citation_envelope == "listBibl":
            return b'<listBibl xmlns="http://www.tei-c.org/ns/1.0">\n' + b"".join(structs) + b"</listBibl>\n"
        return CITATION_LIST_HEAD + b"".join(structs) + CITATION_LIST_TAIL

    def settle(self, timeout_s: float = 30.0) -> None:
        """Wait until no faulty answer is being written (each ends when it is sent or the client has gone), so that
        `body_bytes_sent` is final."""
        with self._faults_done:
            if not self._faults_done.wait_for(lambda: self._faults_writing == 0, timeout_s):
                raise TimeoutError(f"faulty answers still being written after {timeout_s} s")

    def stats(self) -> dict[str, object]:
        with self._lock:
            return {
                "calls": self.calls,
                "busy_answers": self.busy_answers,
                "first_request": self.first_request,
                "last_answer": self.last_answer,
            }

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def serve_in_subprocess(shared: Path, **kwargs):
    """Start a FakeGrobid in a child process (so that it does not share the caller's GIL); returns
    (url, stop). `GET {url}/test/stats` reports its counters."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(str(shared), kwargs, child), daemon=True)
    process.start()
    url = parent.recv()

    def stop() -> None:
        parent.send("stop")
        process.join(timeout=10)

    return url, stop


def _serve(shared: str, kwargs: dict, conn) -> None:
    tei_by_hash, _ = real_pairs(Path(shared))
    with FakeGrobid(tei_by_hash, **kwargs) as server:
        conn.send(server.url)
        conn.recv()
