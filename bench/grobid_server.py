"""A GROBID stand-in of known capacity, for the throughput benchmark (`bench/grobid_throughput.py`).

    python bench/grobid_server.py --slots 4 --latency 0.25      # serves until interrupted; prints its URL

A loopback `ThreadingHTTPServer` that answers `/api/isalive`, `/api/version` and multipart
`/api/processFulltextDocument` (field `input`) with the real TEI GROBID wrote for that PDF under
../shared/data/grobid, matched by the SHA-256 of the PDF's bytes. It serves `slots` requests at a time, each
answered after `latency` seconds, so its capacity is slots / latency PDFs per second; a request beyond the slots
gets 503 at once, as GROBID's own `concurrency` does, and an unknown PDF gets GROBID's 500 `[BAD_INPUT_DATA]`.
A PDF may end in `COPY_MARKER` + a number (a PDF comment), so the benchmark can make distinct files of one real PDF.

`GET /stats` (not GROBID's) reports the processing requests (`calls`), the 503s (`busy_answers`), and the
`time.monotonic()` of the first request and of the last answer: the window in which GROBID was working.
`serve_in_subprocess` runs it in its own process, so that it does not share the pipeline's GIL.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path

COPY_MARKER = b"\n%citrec-copy:"
VERSION = "0.8.2"
BAD_INPUT_DATA = b"[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1"
BUSY = b"[NO_AVAILABLE_THREAD] all GROBID slots are busy"


def real_pairs(shared: Path) -> tuple[dict[str, bytes], list[Path]]:
    """The TEI by PDF hash, and the PDFs, of every PDF under shared/grobid with its TEI beside it."""
    tei_by_hash: dict[str, bytes] = {}
    pdfs = []
    for pdf in sorted((shared / "grobid").glob("*/*.pdf")):
        tei = pdf.with_suffix(".tei.xml")
        if tei.is_file():
            tei_by_hash[pdf_hash(pdf.read_bytes())] = tei.read_bytes()
            pdfs.append(pdf)
    return tei_by_hash, pdfs


def pdf_hash(data: bytes) -> str:
    """SHA-256 of a PDF, without the copy marker a benchmark appended."""
    cut = data.rfind(COPY_MARKER)
    return hashlib.sha256(data[:cut] if cut >= 0 else data).hexdigest()


def multipart_field(content_type: str, body: bytes, name: str) -> bytes | None:
    """One field of a multipart/form-data body, by a plain split on the boundary (the email parser is slow on
    PDFs of megabytes); None when the body has no such field."""
    if "boundary=" not in content_type:
        return None
    boundary = content_type.split("boundary=", 1)[1].split(";", 1)[0].strip().strip('"').encode()
    for part in body.split(b"--" + boundary):
        head, _, content = part.partition(b"\r\n\r\n")
        if f'name="{name}"'.encode() in head:
            return content.removesuffix(b"\r\n")
    return None


class CapacityLimitedGrobid:
    """The stand-in: start it (or use it as a context manager), point a client at `url`, read `stats()`."""

    def __init__(self, tei_by_hash: dict[str, bytes], *, slots: int = 4, latency_s: float = 0.25) -> None:
        self.tei_by_hash = tei_by_hash
        self.slots = slots
        self.latency_s = latency_s
        self.calls = 0
        self.busy_answers = 0
        self.in_flight = 0
        self.first_request: float | None = None
        self.last_answer: float | None = None
        self._lock = threading.Lock()
        self._free = threading.BoundedSemaphore(slots)
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> CapacityLimitedGrobid:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stats(self) -> dict[str, float | int | None]:
        with self._lock:
            return {
                "calls": self.calls,
                "busy_answers": self.busy_answers,
                "in_flight": self.in_flight,
                "first_request": self.first_request,
                "last_answer": self.last_answer,
            }

    def process(self, pdf: bytes | None, reply: Callable[[int, bytes], None]) -> None:
        """Answer one processing request through `reply(status, body)`: the TEI after `latency_s`, holding one
        of the slots until the answer is written; 503 at once when none is free."""
        with self._lock:
            self.calls += 1
            self.first_request = self.first_request or time.monotonic()
        if not self._free.acquire(blocking=False):
            with self._lock:
                self.busy_answers += 1
            reply(503, BUSY)
            return
        with self._lock:
            self.in_flight += 1
        try:
            time.sleep(self.latency_s)
            tei = self.tei_by_hash.get(pdf_hash(pdf)) if pdf is not None else None
            reply(*((200, tei) if tei is not None else (500, BAD_INPUT_DATA)))
        finally:
            with self._lock:
                self.in_flight -= 1
                self.last_answer = time.monotonic()
            self._free.release()

    def start(self) -> None:
        grobid = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def send(self, status: int, body: bytes, content_type: str | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type or ("application/xml" if status == 200 else "text/plain"))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.startswith("/api/isalive"):
                    self.send(200, b"true", "text/plain")
                elif self.path.startswith("/api/version"):
                    self.send(200, VERSION.encode(), "text/plain")
                elif self.path.startswith("/stats"):
                    self.send(200, json.dumps(grobid.stats()).encode(), "application/json")
                else:
                    self.send(404, b"not found")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.startswith("/api/processFulltextDocument"):
                    self.send(404, b"not found")
                    return
                grobid.process(multipart_field(self.headers.get("Content-Type", ""), body, "input"), self.send)

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 resets connections under a burst of clients
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def serve_in_subprocess(shared: Path, *, slots: int, latency_s: float) -> tuple[str, Callable[[], None]]:
    """A stand-in for the PDFs under `shared` in a child process: (url, stop)."""
    parent, child = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(str(shared), slots, latency_s, child), daemon=True
    )
    process.start()
    url = parent.recv()

    def stop() -> None:
        parent.send("stop")
        process.join(timeout=10)

    return url, stop


def _serve(shared: str, slots: int, latency_s: float, conn: Connection) -> None:
    tei_by_hash, _ = real_pairs(Path(shared))
    with CapacityLimitedGrobid(tei_by_hash, slots=slots, latency_s=latency_s) as server:
        conn.send(server.url)
        conn.recv()


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.shared import shared_data_dir

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slots", type=int, default=4, help="requests served at once (default %(default)s)")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per answer (default %(default)s)")
    parser.add_argument("--shared", type=Path, default=None, help="the real data (default ../shared/data)")
    args = parser.parse_args()
    tei_by_hash, pdfs = real_pairs(args.shared or shared_data_dir())
    with CapacityLimitedGrobid(tei_by_hash, slots=args.slots, latency_s=args.latency) as server:
        capacity = args.slots / args.latency
        print(f"GROBID stand-in at {server.url}: {len(pdfs)} real PDFs, {capacity:g} PDFs/s", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
