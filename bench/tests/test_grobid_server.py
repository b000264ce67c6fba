"""The benchmark's GROBID stand-in (`bench/grobid_server.py`): the real TEI for a copy of a real PDF, GROBID's
answers to an unknown PDF and to a request beyond its slots, and the counts the throughput benchmark reads."""

from __future__ import annotations

import threading

import pytest
import requests

from bench.grobid_server import COPY_MARKER, CapacityLimitedGrobid, multipart_field, pdf_hash, real_pairs


@pytest.mark.unit
def test_a_request_beyond_the_slots_is_answered_busy_while_the_others_hold_theirs():
    pdf = b"%PDF-1.4 hand-made"
    grobid = CapacityLimitedGrobid({pdf_hash(pdf): b"<TEI/>"}, slots=2, latency_s=0.0)
    release, holding, answers = threading.Event(), threading.Barrier(3), []

    def hold(status: int, body: bytes) -> None:  # called inside the slot: keeps it until released
        answers.append((status, body))
        holding.wait(timeout=10)
        release.wait(timeout=10)

    threads = [threading.Thread(target=grobid.process, args=(pdf, hold)) for _ in range(2)]
    for thread in threads:
        thread.start()
    holding.wait(timeout=10)  # both slots taken
    busy = []
    grobid.process(pdf + COPY_MARKER + b"7\n", lambda status, body: busy.append(status))
    release.set()
    for thread in threads:
        thread.join(timeout=10)
    assert busy == [503] and answers == [(200, b"<TEI/>")] * 2
    grobid.process(b"%PDF-1.4 unknown", lambda status, body: busy.append((status, body)))
    assert busy[-1] == (500, b"[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1")
    stats = grobid.stats()
    assert (stats["calls"], stats["busy_answers"], stats["in_flight"]) == (4, 1, 0)
    assert stats["first_request"] <= stats["last_answer"]


@pytest.mark.unit
def test_the_input_field_is_cut_from_the_body_requests_writes():
    prepared = requests.Request(
        "POST",
        "http://x/api/processFulltextDocument",
        files={"input": ("a.pdf", b"%PDF\r\n--x\r\nbody")},
        data={"consolidateHeader": "0"},
    ).prepare()
    content_type = prepared.headers["Content-Type"]
    assert multipart_field(content_type, prepared.body, "input") == b"%PDF\r\n--x\r\nbody"
    assert multipart_field(content_type, prepared.body, "consolidateHeader") == b"0"
    assert multipart_field(content_type, prepared.body, "missing") is None
    assert multipart_field("application/x-www-form-urlencoded", b"input=1", "input") is None


def test_a_copy_of_a_real_pdf_gets_the_tei_grobid_wrote_for_it(shared):
    tei_by_hash, pdfs = real_pairs(shared)
    assert len(pdfs) >= 5 and len(tei_by_hash) == len(pdfs)
    pdf = pdfs[0]
    with CapacityLimitedGrobid(tei_by_hash, slots=1, latency_s=0.0) as grobid:
        assert requests.get(f"{grobid.url}/api/isalive", timeout=10).text == "true"
        assert requests.get(f"{grobid.url}/api/version", timeout=10).text == "0.8.2"
        copy = pdf.read_bytes() + COPY_MARKER + b"12\n"
        answer = requests.post(f"{grobid.url}/api/processFulltextDocument", files={"input": copy}, timeout=10)
        assert answer.status_code == 200 and answer.content == pdf.with_suffix(".tei.xml").read_bytes()
        unknown = requests.post(f"{grobid.url}/api/processFulltextDocument", files={"input": b"%PDF"}, timeout=10)
        assert unknown.status_code == 500 and unknown.text.startswith("[BAD_INPUT_DATA]")
        stats = requests.get(f"{grobid.url}/stats", timeout=10).json()
    assert (stats["calls"], stats["busy_answers"]) == (2, 0)
