"""GROBID answers that go wrong on the way: a 200 that is not TEI (empty, an HTML page, cut short), an answer
trickled a byte at a time, a connection reset in the middle of the body, an answer too large to hold. The client
against the loopback server's fault modes (replaying the real TEI of the PDFs in ../shared/data/grobid), the PDF
step on its own, and a whole run with a TEI cache followed by its refresh."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from extractors.clients.grobid import GrobidClient, GrobidOptions, RetryPolicy, tei_cache_key
from mapping.records import DeadLetter
from pipelines.arsyta import run
from pipelines.grobid import GrobidConfig, GrobidParseFn
from pipelines.inputs import ReadTask
from tests.support.grobid_replay import HTML_PAGE, FakeGrobid, pdf_hash, real_pairs

RETRIES = 2
FAST = RetryPolicy(retries=RETRIES, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=2.0)
SHORT = RetryPolicy(retries=RETRIES, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=0.3)
TRICKLE_S = 0.02  # a byte every 20 ms: each socket read waits far less than SHORT's 0.3 s


@pytest.fixture(scope="module")
def pairs(shared):
    tei_by_hash, pdfs = real_pairs(shared)
    assert len(pdfs) == 10, "MANIFEST.md lists 10 real PDFs with their GROBID TEI"
    return tei_by_hash, pdfs


@pytest.fixture(scope="module")
def paper(pairs) -> tuple[bytes, str, bytes]:
    """A real PDF, its hash as the server keys it, and the TEI GROBID wrote for it."""
    _, pdfs = pairs
    data = pdfs[0].read_bytes()
    return data, pdf_hash(data), pdfs[0].with_suffix(".tei.xml").read_bytes()


@pytest.mark.parametrize("fault", ["empty", "html", "truncated"])
def test_a_200_that_is_not_grobid_tei_is_retried_and_never_handed_on_as_the_tei(pairs, paper, fault):
    data, key, real = paper
    with FakeGrobid(pairs[0]) as server:
        client = GrobidClient(server.url, policy=FAST)
        server.script[key] = [fault]
        recovered = client.process_fulltext(data)
        server.script[key] = [fault] * (RETRIES + 1)
        failed = client.process_fulltext(data)
        calls = server.calls_by_hash[key]
    assert (recovered.tei, recovered.reason, recovered.attempts) == (real, None, 2)
    assert (failed.tei, failed.reason, failed.attempts, failed.status) == (None, "grobid_invalid_tei", RETRIES + 1, 200)
    assert not failed.deterministic, "never cached: the next run sends it again"
    assert calls == 2 + RETRIES + 1


def test_a_trickled_answer_ends_at_the_deadline_of_each_attempt_and_is_retried(pairs, paper):
    """A byte every 20 ms never lets a 0.3 s socket timeout expire; each attempt still ends at 0.3 s in all, so
    the client is gone long before the server has trickled its 200 bytes, over all the attempts together."""
    data, key, real = paper
    with FakeGrobid(pairs[0], trickle_s=TRICKLE_S, trickle_bytes=200) as server:
        client = GrobidClient(server.url, policy=SHORT)
        server.script[key] = ["trickle"] * (RETRIES + 1)
        body = client.process_fulltext(data)
        server.settle()
        trickled = server.trickled_bytes
        server.script[key] = ["trickle_head"] * (RETRIES + 1)
        head = client.process_fulltext(data)
        server.script[key] = ["trickle"]
        recovered = client.process_fulltext(data)
        calls = server.calls_by_hash[key]
    assert (body.tei, body.reason, body.attempts) == (None, "grobid_deadline", RETRIES + 1)
    assert trickled < server.trickle_bytes, f"{trickled} bytes trickled in {RETRIES + 1} attempts"
    assert (head.tei, head.reason, head.attempts) == (None, "grobid_timeout", RETRIES + 1), "headers trickled"
    assert not body.deterministic and not head.deterministic
    assert (recovered.tei, recovered.attempts) == (real, 2)
    assert calls == 2 * (RETRIES + 1) + 2


def test_the_deadline_holds_through_an_http_proxy(pairs, paper, monkeypatch):
    """The loopback server stands in for an HTTP proxy in front of a GROBID that cannot be reached directly: the
    connections to the proxy are bounded the same way."""
    data, key, _ = paper
    with FakeGrobid(pairs[0], trickle_s=TRICKLE_S, trickle_bytes=200) as proxy:
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, proxy.url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        client = GrobidClient("http://grobid.invalid:8070", policy=SHORT)
        proxy.script[key] = ["trickle"] * (RETRIES + 1)
        result = client.process_fulltext(data)
        proxy.settle()
        trickled, calls = proxy.trickled_bytes, proxy.calls_by_hash[key]
    assert (result.tei, result.reason, result.attempts) == (None, "grobid_deadline", RETRIES + 1)
    assert calls == RETRIES + 1, "every attempt went through the proxy"
    assert trickled < proxy.trickle_bytes, f"{trickled} bytes trickled in {RETRIES + 1} attempts"


def test_a_connection_reset_mid_body_is_retried_then_a_transient_connection_failure(pairs, paper):
    data, key, real = paper
    with FakeGrobid(pairs[0]) as server:
        client = GrobidClient(server.url, policy=FAST)
        server.script[key] = ["reset"]
        recovered = client.process_fulltext(data)
        server.script[key] = ["reset"] * (RETRIES + 1)
        failed = client.process_fulltext(data)
        calls = server.calls_by_hash[key]
    assert (recovered.tei, recovered.attempts) == (real, 2)
    assert (failed.tei, failed.reason, failed.attempts, failed.deterministic) == (
        None,
        "grobid_connection",
        RETRIES + 1,
        False,
    )
    assert "cut after" in failed.detail, failed.detail
    assert calls == 2 + RETRIES + 1


@pytest.mark.parametrize("fault", ["huge", "huge_chunked"])
def test_a_huge_answer_is_refused_without_being_read_and_not_retried(pairs, paper, fault):
    """Declared by its Content-Length (1 GiB) or only found while reading (chunked): either way the client stops at
    its cap, so the server, which would send 128 MiB, gets a small part of it out (socket buffers included)."""
    data, key, _ = paper
    cap = 2**20
    with FakeGrobid(pairs[0], huge_bytes=128 * 2**20) as server:
        client = GrobidClient(server.url, policy=FAST, max_answer_bytes=cap)
        server.script[key] = [fault]
        result = client.process_fulltext(data)
        server.settle()
        sent = server.body_bytes_sent
        calls = server.calls_by_hash[key]
    assert (result.tei, result.reason, result.attempts, result.deterministic) == (None, "grobid_too_large", 1, False)
    assert calls == 1, "the same PDF would get the same answer: not retried"
    assert sent < server.huge_bytes // 2, f"{sent:,} bytes sent"


def test_the_pdf_step_counts_a_reset_as_a_transient_failure_not_an_unexpected_error(pairs, paper):
    data, key, _ = paper
    with FakeGrobid(pairs[0]) as server:
        fn = GrobidParseFn(GrobidConfig(url=server.url, version="0.8.2", policy=FAST))
        fn.reader = lambda path, cap: data
        fn.setup()
        server.script[key] = ["reset"] * (RETRIES + 1)
        path, letter, counts = fn._fetch(ReadTask("mem://reset.pdf", "pdfs"))
        calls = server.calls_by_hash[key]
    assert isinstance(letter, DeadLetter), letter
    assert (path, letter.source, letter.stage, letter.reason) == (
        "mem://reset.pdf",
        "mem://reset.pdf",
        "grobid",
        "grobid_connection",
    )
    assert counts == Counter(grobid_requests=RETRIES + 1, grobid_transient_failures=1)
    assert calls == RETRIES + 1


def run_folder(folder: Path, server: FakeGrobid, out: Path, *extra: str) -> tuple[dict, dict[str, tuple[str, str]]]:
    """One run over every PDF in `folder`: its stats and its dead letters' (stage, reason) by file name."""
    stats = run(
        ["--runner=FnApiRunner", "--pdfs", str(folder / "*.pdf"), "--grobid_url", server.url, "--output", str(out)]
        + list(extra)
    )
    rows = pq.read_table(out / "dead_letter").to_pylist()
    letters = {Path(row["source"]).name: (row["stage"], row["reason"]) for row in rows}
    assert len(letters) == len(rows), "no PDF dead-lettered twice"
    return stats, letters


@pytest.mark.e2e
def test_answers_that_are_not_a_whole_tei_are_dead_lettered_uncached_and_sent_again(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    names = ["good", "empty", "truncated", "reset", "huge", "trickle", "poisoned"]
    folder, cache = tmp_path / "pdfs", tmp_path / "cache"
    folder.mkdir()
    pdf_of = dict(zip(names, pdfs, strict=False))
    for name, pdf in pdf_of.items():
        (folder / f"{name}.pdf").write_bytes(pdf.read_bytes())
    keys = {name: pdf_hash(pdf.read_bytes()) for name, pdf in pdf_of.items()}
    cache_keys = {name: tei_cache_key(pdf.read_bytes(), "0.8.2", GrobidOptions()) for name, pdf in pdf_of.items()}
    poisoned = cache / cache_keys["poisoned"][:2] / f"{cache_keys['poisoned']}.tei.xml"
    poisoned.parent.mkdir(parents=True)
    poisoned.write_bytes(HTML_PAGE)  # what a 200 from a proxy left in the cache before answers were checked
    script = {
        "empty": ["empty"] * (RETRIES + 1),
        "truncated": ["truncated"],  # recovers
        "reset": ["reset"] * (RETRIES + 1),
        "huge": ["huge"],
        "trickle": ["trickle"] * (RETRIES + 1),
    }
    args = ["--tei_cache", str(cache), "--grobid_retries", str(RETRIES), "--grobid_timeout", "0.5"]
    args += ["--max_document_bytes", str(4 * 2**20)]  # the answer cap: above every real TEI (0.4 MB at most)
    with FakeGrobid(tei_by_hash, trickle_s=TRICKLE_S, trickle_bytes=200, huge_bytes=32 * 2**20) as server:
        server.script = {keys[name]: list(actions) for name, actions in script.items()}
        first, first_letters = run_folder(folder, server, tmp_path / "first", *args)
        first_calls = {name: server.calls_by_hash[keys[name]] for name in names}
        server.settle()
        sent = server.body_bytes_sent
        cached = {path.name: path.read_bytes() for path in cache.rglob("*") if path.is_file()}
        second, second_letters = run_folder(folder, server, tmp_path / "second", *args, "--retry_failed")
        second_calls = {name: server.calls_by_hash[keys[name]] - first_calls[name] for name in names}

    assert first_letters == {
        "empty.pdf": ("grobid", "grobid_invalid_tei"),
        "reset.pdf": ("grobid", "grobid_connection"),
        "huge.pdf": ("grobid", "grobid_too_large"),
        "trickle.pdf": ("grobid", "grobid_deadline"),
    }
    attempts = {"good": 1, "empty": 3, "truncated": 2, "reset": 3, "huge": 1, "trickle": 3, "poisoned": 1}
    assert first_calls == attempts, "the poisoned cache entry is sent again"
    counts = first["other_counts"]
    assert counts["grobid_requests"] == sum(attempts.values()), "every attempt counted, the reset ones included"
    assert (counts["grobid_transient_failures"], counts["grobid_cache_invalid"]) == (4, 1)
    assert "grobid_failures_cached" not in counts and "dead:grobid:unexpected_error" not in counts
    assert first["funnel"]["documents_in"] == len(names)
    assert first["funnel"]["documents_parsed"] == 3
    assert sent < server.huge_bytes // 2, "the huge answer was refused unread"
    parsed = {"good", "truncated", "poisoned"}
    assert cached == {f"{cache_keys[n]}.tei.xml": pdf_of[n].with_suffix(".tei.xml").read_bytes() for n in parsed}

    assert second_letters == {}
    assert second_calls == {name: int(name not in parsed) for name in names}, "only the failures are sent again"
    assert second["other_counts"]["grobid_cache_hits"] == len(parsed)
    assert second["funnel"]["documents_parsed"] == len(names)
