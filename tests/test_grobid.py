"""PDFs through GROBID: the client against a loopback server that replays the real TEI of the real PDFs
in ../shared/data/grobid, with injected faults; and the whole pipeline from PDFs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.clients.grobid import (
    MAX_ANSWER_BYTES,
    GrobidClient,
    GrobidOptions,
    GrobidResult,
    GrobidUnavailable,
    RetryPolicy,
    grobid_tei_problem,
    is_deterministic_error,
    tei_cache_key,
)
from extractors.documents.files import parse_document
from extractors.documents.tei import parse_tei
from mapping.records import DeadLetter
from pipelines.arsyta import run
from pipelines.inputs import MAX_DOCUMENT_BYTES
from tests.support.grobid_replay import BAD_INPUT_DATA_BODY, HTML_PAGE, FakeGrobid, pdf_hash, real_pairs

FAST = RetryPolicy(retries=3, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=2.0)


@pytest.fixture(scope="module")
def pairs(shared):
    tei_by_hash, pdfs = real_pairs(shared)
    assert len(pdfs) == 10, "MANIFEST.md lists 10 real PDFs with their GROBID TEI"
    return tei_by_hash, pdfs


def test_the_client_gets_the_real_tei_back(pairs):
    tei_by_hash, pdfs = pairs
    with FakeGrobid(tei_by_hash) as server:
        client = GrobidClient(server.url, policy=FAST)
        assert client.check_alive() == "0.8.2"
        for pdf in pdfs:
            result = client.process_fulltext(pdf.read_bytes(), pdf.name)
            assert result.tei == pdf.with_suffix(".tei.xml").read_bytes()
            assert (result.reason, result.attempts) == (None, 1)
        assert server.calls == len(pdfs)


def test_faults_are_retried_within_bounds_and_classified(pairs):
    tei_by_hash, pdfs = pairs
    data = pdfs[0].read_bytes()
    key = pdf_hash(data)
    with FakeGrobid(tei_by_hash, slow_s=1.0) as server:
        client = GrobidClient(server.url, policy=RetryPolicy(retries=3, backoff_base_s=0.01, timeout_s=0.3))
        cases = [
            (["503", "503"], None, 3),  # a burst of busy answers, then the TEI
            (["drop"], None, 2),  # a dropped connection, then the TEI
            (["503"] * 4, "grobid_busy", 4),  # busy beyond the last retry
            (["500"], "grobid_error_500", 1),  # not retried
            (["slow"] * 4, "grobid_timeout", 4),
            (["drop"] * 4, "grobid_connection", 4),
        ]
        for script, reason, attempts in cases:
            server.script[key] = list(script)
            before = server.calls
            result = client.process_fulltext(data)
            assert (result.reason, result.attempts) == (reason, attempts), script
            assert server.calls - before == attempts
            assert (result.tei is None) == (reason is not None)
            assert not result.deterministic, "busy, timeouts, drops and a [GENERAL] 500 may go away"
        unreadable = client.process_fulltext(b"%PDF-1.4 not really a pdf")
        assert (unreadable.reason, unreadable.detail) == ("grobid_error_500", BAD_INPUT_DATA_BODY.decode())
        assert unreadable.deterministic
        calls = server.calls
        not_a_pdf = client.process_fulltext(b"<html>an error page</html>")
        assert (not_a_pdf.reason, not_a_pdf.deterministic) == ("not_a_pdf", True)
        assert server.calls == calls, "bytes that are not a PDF are never sent"


def test_the_servers_concurrency_limit_is_absorbed_by_retries(pairs):
    tei_by_hash, pdfs = pairs
    with FakeGrobid(tei_by_hash, slots=1, latency_s=0.05) as server:
        client = GrobidClient(server.url, policy=RetryPolicy(retries=30, backoff_base_s=0.02, backoff_max_s=0.1))
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda p: client.process_fulltext(p.read_bytes()), pdfs[:6]))
        assert all(r.tei is not None for r in results)
        assert server.busy_answers > 0
        assert server.calls == 6 + server.busy_answers


@pytest.mark.e2e
def test_an_unreachable_grobid_stops_with_one_line_saying_how_to_start_it(tmp_path, pairs):
    with pytest.raises(GrobidUnavailable, match="docker run --rm -p 8070:8070 grobid/grobid"):
        GrobidClient("http://127.0.0.1:9", policy=FAST).check_alive()
    _, pdfs = pairs
    with pytest.raises(SystemExit, match="unreachable at http://127.0.0.1:9.*docker run"):
        run(
            [
                "--runner=FnApiRunner",
                "--pdfs",
                str(pdfs[0]),
                "--grobid_url",
                "http://127.0.0.1:9",
                "--output",
                str(tmp_path / "o"),
            ]
        )


def test_only_failures_that_blame_the_pdf_are_deterministic():
    assert is_deterministic_error(500, BAD_INPUT_DATA_BODY.decode())
    assert is_deterministic_error(500, "[NO_BLOCKS] PDF parsing resulted in empty content")
    assert is_deterministic_error(400, "[BAD_INPUT_DATA] An error occurred while converting pdf")
    for body in (
        "[GENERAL] An exception occurred while running Grobid.",
        "[TIMEOUT] PDF to XML conversion timed out",
        "[PDFALTO_CONVERSION_FAILURE] PDF to XML conversion failed. Cannot find pdfalto executable",
        "[TAGGING_ERROR] tagging failed",
        "java.lang.OutOfMemoryError: Java heap space [BAD_INPUT_DATA]",
        "Internal Server Error",
        "",
    ):
        assert not is_deterministic_error(500, body), body
    assert not is_deterministic_error(503, BAD_INPUT_DATA_BODY.decode())


def test_a_failure_record_gives_back_the_same_dead_letter():
    failure = GrobidResult(None, "grobid_error_500", BAD_INPUT_DATA_BODY.decode(), status=500, deterministic=True)
    record = failure.failure_record("0.8.2")
    assert json.loads(record)["grobid_version"] == "0.8.2"
    assert record == failure.failure_record("0.8.2"), "same failure, same bytes"
    back = GrobidResult.from_failure_record(record)
    assert (back.tei, back.reason, back.detail, back.status) == (None, failure.reason, failure.detail, 500)
    assert back.deterministic and back.attempts == 0
    for junk in (b"not json", b"[]", b"{}", b'{"reason": ""}'):
        with pytest.raises(ValueError):
            GrobidResult.from_failure_record(junk)


def test_the_cache_key_covers_bytes_version_and_options():
    base = tei_cache_key(b"%PDF-1", "0.8.2", GrobidOptions())
    assert base == tei_cache_key(b"%PDF-1", "0.8.2", GrobidOptions())
    assert base != tei_cache_key(b"%PDF-2", "0.8.2", GrobidOptions())
    assert base != tei_cache_key(b"%PDF-1", "0.8.1", GrobidOptions())
    assert base != tei_cache_key(b"%PDF-1", "0.8.2", GrobidOptions(consolidate_header=True))


# ---------------------------------------------------------------------------------------------------------
def write_database(pdfs: list[Path], path: Path) -> None:
    """Metadata that makes the real papers' references resolvable: the citing papers themselves (dated),
    and one database paper per distinct bib title of theirs (dated 2000), as S2ORC metadata lines."""
    lines, titles = [], set()
    for pdf in pdfs:
        document = parse_tei(pdf.with_suffix(".tei.xml").read_bytes(), str(pdf))
        if document.arxiv_id:
            lines.append(
                {
                    "id": document.arxiv_id,
                    "title": document.title or "untitled",
                    "categories": "cs.AI",
                    "versions": [{"version": "v1", "created": "Mon, 2 Feb 2026 10:00:00 GMT"}],
                }
            )
        else:
            lines.append(
                {
                    "paper_id": document.paper_id.removeprefix("doi:"),
                    "doi": document.doi,
                    "title": document.title,
                    "year": 2021,
                }
            )
        for entry in document.bib_entries:
            if entry.title and len(entry.title) > 20 and entry.title.lower() not in titles:
                titles.add(entry.title.lower())
                lines.append({"paper_id": f"bib{len(titles)}", "title": entry.title, "year": 2000})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def table_rows(out: Path, name: str) -> list:
    """A table's rows, read shard by shard (a split or table with no rows may have no file at all)."""
    files = sorted(out.glob(f"{name}/*.parquet"))
    return sorted(repr(sorted(row.items())) for f in files for row in pq.read_table(f).to_pylist())


@pytest.mark.e2e
def test_pdfs_through_grobid_give_the_same_dataset_as_their_tei(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    write_database(pdfs, tmp_path / "meta.jsonl")
    tei_args = [arg for pdf in pdfs for arg in ("--tei", str(pdf.with_suffix(".tei.xml")))]
    from_tei = run(
        [
            "--runner=FnApiRunner",
            *tei_args,
            "--metadata",
            str(tmp_path / "meta.jsonl"),
            "--output",
            str(tmp_path / "tei"),
            "--validation_from",
            "2022-01-01",
            "--test_from",
            "2026-01-01",
        ]
    )
    with FakeGrobid(tei_by_hash) as server:
        pdf_args = [arg for pdf in pdfs for arg in ("--pdfs", str(pdf))]
        from_pdf = run(
            [
                "--runner=FnApiRunner",
                *pdf_args,
                "--grobid_url",
                server.url,
                "--metadata",
                str(tmp_path / "meta.jsonl"),
                "--output",
                str(tmp_path / "pdf"),
                "--validation_from",
                "2022-01-01",
                "--test_from",
                "2026-01-01",
            ]
        )
        assert server.calls == len(pdfs)
    assert from_tei["funnel"]["contexts"] > 100
    assert from_pdf["funnel"] == from_tei["funnel"]
    for name in ("contexts", "papers", "citations"):
        assert table_rows(tmp_path / "pdf", name) == table_rows(tmp_path / "tei", name), name
    assert from_pdf["options"]["grobid"]["version"] == "0.8.2"


@pytest.mark.e2e
def test_under_faults_every_pdf_ends_parsed_or_dead_lettered_once(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for pdf in pdfs:
        (folder / f"{pdf.parent.name}-{pdf.name}").write_bytes(pdf.read_bytes())
    (folder / "html-error-page.pdf").write_bytes(b"<html>502 Bad Gateway</html>")
    (folder / "unparseable.pdf").write_bytes(b"%PDF-1.4\n%%EOF broken")
    keys = [pdf_hash(pdf.read_bytes()) for pdf in pdfs]
    # More slots than the client's concurrency: every busy answer is a scripted one, so each PDF's last failure, and
    # with it its dead letter's reason, does not depend on how requests interleave (with 3 slots for 4 workers an
    # unscripted busy answer could take a drop's place; the concurrency limit has its own test above).
    with FakeGrobid(tei_by_hash, slots=10, slow_s=1.5) as server:
        server.script = {
            keys[0]: ["503", "503", "503"],  # recovers
            keys[1]: ["500"],  # dead: grobid_error_500
            keys[2]: ["slow"] * 5,  # dead: grobid_timeout
            keys[3]: ["drop"],  # recovers
            keys[4]: ["drop"] * 5,  # dead: grobid_connection
        }
        stats = run(
            [
                "--runner=FnApiRunner",
                "--pdfs",
                str(folder / "*.pdf"),
                "--grobid_url",
                server.url,
                "--grobid_concurrency",
                "4",
                "--grobid_timeout",
                "0.4",
                "--grobid_retries",
                "4",
                "--output",
                str(tmp_path / "out"),
            ]
        )
    letters = pq.read_table(tmp_path / "out/dead_letter").to_pylist()
    reasons = {Path(row["source"]).name: (row["stage"], row["reason"]) for row in letters}
    names = {key: f"{pdfs[i].parent.name}-{pdfs[i].name}" for i, key in enumerate(keys)}
    assert reasons == {
        names[keys[1]]: ("grobid", "grobid_error_500"),
        names[keys[2]]: ("grobid", "grobid_timeout"),
        names[keys[4]]: ("grobid", "grobid_connection"),
        "html-error-page.pdf": ("grobid", "not_a_pdf"),
        "unparseable.pdf": ("grobid", "grobid_error_500"),
    }
    assert len(letters) == len(reasons), "no PDF dead-lettered twice"
    assert server.busy_answers == 0
    funnel = stats["funnel"]
    assert funnel["documents_in"] == len(pdfs) + 2
    assert funnel["documents_parsed"] == len(pdfs) - 3
    assert funnel["documents_in"] == funnel["documents_parsed"] + funnel["documents_dead_lettered"]
    assert stats["other_counts"]["grobid_parsed"] == len(pdfs) - 3


@pytest.mark.e2e
def test_a_refresh_over_the_same_pdfs_makes_no_grobid_call(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    args = [arg for pdf in pdfs for arg in ("--pdfs", str(pdf))]
    with FakeGrobid(tei_by_hash) as server:
        common = ["--runner=FnApiRunner", *args, "--grobid_url", server.url, "--tei_cache", str(tmp_path / "cache")]
        first = run([*common, "--output", str(tmp_path / "first")])
        calls = server.calls
        second = run([*common, "--output", str(tmp_path / "second")])
        assert server.calls == calls == len(pdfs), "the refresh sends nothing"
    cached = sorted((tmp_path / "cache").rglob("*"))
    assert len([p for p in cached if p.is_file()]) == len(pdfs)
    assert not [p for p in cached if ".tmp-" in p.name], "no temporary file left behind"
    assert second["other_counts"]["grobid_cache_hits"] == len(pdfs)
    assert "grobid_requests" not in second["other_counts"]
    assert first["funnel"] == second["funnel"]
    for name in ("contexts", "papers", "citations", "dead_letter"):
        assert table_rows(tmp_path / "first", name) == table_rows(tmp_path / "second", name)


def test_one_pdfs_unexpected_failure_is_its_own_dead_letter():

    from mapping.records import DeadLetter
    from pipelines.grobid import GrobidConfig, GrobidParseFn
    from pipelines.inputs import ReadTask

    def failing(error):
        def read(path, cap):
            raise error

        return read

    fn = GrobidParseFn(GrobidConfig(url="http://127.0.0.1:9", version="0.8.2"))
    fn.setup()
    try:
        fn.reader = failing(OSError("gone"))
        _, unreadable, _ = fn._fetch(ReadTask("mem://x.pdf", "pdfs"))
        fn.reader = failing(RuntimeError("boom"))
        _, unexpected, _ = fn._fetch(ReadTask("mem://x.pdf", "pdfs"))
    finally:
        fn.teardown()
    assert isinstance(unreadable, DeadLetter) and unreadable.reason == "unreadable_file"
    assert isinstance(unexpected, DeadLetter) and unexpected.reason == "unexpected_error"
    assert "RuntimeError: boom" in unexpected.detail


def run_on_folder(folder: Path, server: FakeGrobid, out: Path, *extra: str) -> tuple[dict, dict[str, tuple]]:
    """One run over every PDF in `folder`; its stats and its dead letters by file name."""
    stats = run(
        ["--runner=FnApiRunner", "--pdfs", str(folder / "*.pdf"), "--grobid_url", server.url, "--output", str(out)]
        + list(extra)
    )
    rows = pq.read_table(out / "dead_letter").to_pylist()
    letters = {Path(row["source"]).name: (row["stage"], row["reason"], row["detail"]) for row in rows}
    assert len(letters) == len(rows), "no PDF dead-lettered twice"
    return stats, letters


@pytest.mark.e2e
def test_deterministic_failures_are_cached_and_only_retry_failed_sends_them_again(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    folder, cache = tmp_path / "pdfs", tmp_path / "cache"
    folder.mkdir()
    corrupt = b"%PDF-1.4\n%%EOF truncated"
    (folder / "good.pdf").write_bytes(pdfs[0].read_bytes())
    (folder / "corrupt.pdf").write_bytes(corrupt)
    (folder / "error-page.pdf").write_bytes(b"<html>404 Not Found</html>")
    cached = ["--tei_cache", str(cache)]
    expected = {
        "corrupt.pdf": ("grobid", "grobid_error_500", BAD_INPUT_DATA_BODY.decode()),
        "error-page.pdf": ("grobid", "not_a_pdf", "the file does not start with %PDF-"),
    }
    with FakeGrobid(dict(tei_by_hash)) as server:
        first, first_letters = run_on_folder(folder, server, tmp_path / "first", *cached)
        assert server.calls == 2, "the good PDF and the corrupt one; never the error page"
        assert first_letters == expected
        assert first["other_counts"]["grobid_failures_cached"] == 2
        records = {path.name: json.loads(path.read_bytes()) for path in cache.rglob("*.failed.json")}
        assert sorted((r["reason"], r["detail"], r["grobid_version"]) for r in records.values()) == sorted(
            (reason, detail, "0.8.2") for _, reason, detail in expected.values()
        )
        assert not [p for p in cache.rglob("*") if ".tmp-" in p.name], "no temporary file left behind"

        second, second_letters = run_on_folder(folder, server, tmp_path / "second", *cached)
        assert server.calls == 2, "the refresh sends nothing: not the good PDF, not the failures"
        assert second_letters == first_letters
        assert second["funnel"] == first["funnel"]
        counts = second["other_counts"]
        assert (counts["grobid_failure_cache_hits"], counts["grobid_cache_hits"]) == (2, 1)
        assert "grobid_requests" not in counts and "grobid_failures_cached" not in counts

        server.tei_by_hash[pdf_hash(corrupt)] = pdfs[1].with_suffix(".tei.xml").read_bytes()  # GROBID reads it now
        third, third_letters = run_on_folder(folder, server, tmp_path / "third", *cached, "--retry_failed")
        assert server.calls == 3 and server.calls_by_hash[pdf_hash(corrupt)] == 2, "only the corrupt PDF is resent"
        assert third_letters == {"error-page.pdf": expected["error-page.pdf"]}, "decided locally, fails again"
        assert third["options"]["grobid"]["retry_failed"] is True
    corrupt_key = tei_cache_key(corrupt, "0.8.2", GrobidOptions())
    assert (cache / corrupt_key[:2] / f"{corrupt_key}.tei.xml").is_file()
    remaining = [path.name for path in cache.rglob("*.failed.json")]
    assert len(remaining) == 1 and corrupt_key not in remaining[0], "the success deleted its failure record"


@pytest.mark.e2e
def test_transient_failures_are_never_cached_and_are_sent_again_next_run(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    folder, cache = tmp_path / "pdfs", tmp_path / "cache"
    folder.mkdir()
    (folder / "busy.pdf").write_bytes(pdfs[0].read_bytes())
    (folder / "general-error.pdf").write_bytes(pdfs[1].read_bytes())
    args = ["--tei_cache", str(cache), "--grobid_retries", "1"]
    with FakeGrobid(tei_by_hash) as server:
        server.script = {pdf_hash(pdfs[0].read_bytes()): ["503", "503"], pdf_hash(pdfs[1].read_bytes()): ["500"]}
        first, first_letters = run_on_folder(folder, server, tmp_path / "first", *args)
        assert {name: reason for name, (_, reason, _) in first_letters.items()} == {
            "busy.pdf": "grobid_busy",
            "general-error.pdf": "grobid_error_500",
        }
        assert first["other_counts"]["grobid_transient_failures"] == 2
        assert "grobid_failures_cached" not in first["other_counts"]
        assert not list(cache.rglob("*.failed.json"))
        calls = server.calls
        assert calls == 3

        second, second_letters = run_on_folder(folder, server, tmp_path / "second", *args)
        assert server.calls == calls + 2, "both are sent again"
    assert second_letters == {}
    assert second["funnel"]["documents_parsed"] == 2
    assert "grobid_failure_cache_hits" not in second["other_counts"]


def deep_tei(depth: int) -> bytes:
    """A well-formed TEI whose paragraph nests `depth` elements, deeper than Python's recursion limit: a
    parser that walks it recursively raises RecursionError, not DocumentError."""
    header = '<teiHeader><fileDesc><titleStmt><title level="a" type="main">Deep</title></titleStmt></fileDesc>'
    body = "<p>" + "<hi>" * depth + "text" + "</hi>" * depth + "</p>"
    tei = f'<TEI xmlns="http://www.tei-c.org/ns/1.0">{header}</teiHeader><text><body><div>{body}</div></body></text></TEI>'
    return tei.encode()


@pytest.mark.e2e
def test_tei_from_grobid_ends_as_the_tei_input_would_end_it(pairs, tmp_path):
    """Whatever TEI GROBID returns, the PDF path gives the outcome `parse_document` (the --tei input's
    parsing) gives the same bytes: the same dead letter, or a document; never a failed bundle. An answer that
    is not GROBID TEI at all (cut short, an HTML page) is GROBID's failure, not the document's."""
    tei_by_hash, pdfs = pairs
    real = pdfs[0].with_suffix(".tei.xml").read_bytes()
    teis = {
        "deep.pdf": deep_tei(1500),
        "bodiless.pdf": real[: real.index(b"<text ")] + b"<text/></TEI>",
    }
    not_tei = {
        "truncated.pdf": real[: len(real) // 2],
        "html.pdf": b"<html><body>GROBID behind a proxy error page</body></html>",
    }
    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / "good.pdf").write_bytes(pdfs[0].read_bytes())
    served = dict(tei_by_hash)
    for name, tei in {**teis, **not_tei}.items():
        pdf = f"%PDF-1.4 {name}".encode()
        (folder / name).write_bytes(pdf)
        served[pdf_hash(pdf)] = tei
    with FakeGrobid(served) as server:
        stats, letters = run_on_folder(folder, server, tmp_path / "out", "--grobid_retries", "0")
    from_tei = {name: parse_document(tei, str(folder / name), "tei") for name, tei in teis.items()}
    expected = {name: outcome for name, outcome in from_tei.items() if isinstance(outcome, DeadLetter)}
    assert {"no_body"} <= {letter.reason for letter in expected.values()}
    assert set(letters) == set(expected) | set(not_tei)
    for name, letter in expected.items():
        stage, reason, detail = letters[name]
        assert (stage, reason) == (letter.stage, letter.reason), name
        assert detail.startswith(letter.detail[:30]), name  # a RecursionError's wording depends on the stack
    for name in not_tei:
        assert letters[name][:2] == ("grobid", "grobid_invalid_tei"), name
    documents = 1 + len(teis) + len(not_tei)
    assert stats["funnel"]["documents_in"] == documents
    assert stats["funnel"]["documents_parsed"] == documents - len(expected) - len(not_tei)


@pytest.fixture(scope="module")
def real_teis(shared) -> list[bytes]:
    """Every real GROBID TEI under ../shared/data/grobid (with or without its PDF)."""
    teis = [path.read_bytes() for path in sorted((shared / "grobid").glob("*/*.tei.xml"))]
    assert len(teis) >= 10
    return teis


def test_only_an_answer_that_is_grobid_tei_passes(pairs, real_teis):
    """Every real TEI passes, and so do a TEI without a body and one deeper than libxml2 allows (GROBID's own
    reading of a PDF, which the parser dead-letters alike every run); an empty answer, an HTML page, a TEI cut
    short, out of TEI's namespace or without its header do not."""
    _, pdfs = pairs
    for tei in real_teis:
        assert grobid_tei_problem(tei) is None, tei[:300]
    real = pdfs[0].with_suffix(".tei.xml").read_bytes()
    assert grobid_tei_problem(real[: real.index(b"<text ")] + b"<text/></TEI>") is None
    for depth in (1500, 3000):
        assert grobid_tei_problem(deep_tei(depth)) is None, depth
    refused = {
        b"": "empty answer",
        b" \n\t": "empty answer",
        HTML_PAGE: "root element is 'html', not TEI",
        real[: len(real) // 2]: "not well-formed XML",
        real[: real.rindex(b"</TEI>")]: "not well-formed XML",
        deep_tei(3000)[:-8]: "not well-formed XML",
        b"<TEI><teiHeader/><text/></TEI>": "root element is 'TEI', not TEI",
        b'<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body/></text></TEI>': "a TEI without a teiHeader",
        deep_tei(3000).replace(b"teiHeader", b"header"): "a TEI without a teiHeader",
        b'{"error": "bad gateway"}': "not well-formed XML",
    }
    for answer, why in refused.items():
        problem = grobid_tei_problem(answer)
        assert problem is not None and problem.startswith(why), (answer[:60], problem)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_real_tei_cut_anywhere_before_its_end_is_refused(real_teis, data):
    tei = data.draw(st.sampled_from(real_teis))
    cut = data.draw(st.integers(0, tei.rindex(b"</TEI>") + len(b"</TEI>") - 1))
    assert grobid_tei_problem(tei[:cut]) is not None, cut


def test_grobid_answers_are_capped_like_any_document():
    assert MAX_ANSWER_BYTES == MAX_DOCUMENT_BYTES
