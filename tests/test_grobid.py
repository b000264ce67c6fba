"""PDFs through GROBID: the client against a loopback server that replays the real TEI of the real PDFs
in ../shared/data/grobid, with injected faults; and the whole pipeline from PDFs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from extractors.grobid import GrobidClient, GrobidOptions, GrobidUnavailable, RetryPolicy, tei_cache_key
from extractors.tei import parse_tei
from pipelines.arsyta import run
from tests.grobid_server import FakeGrobid, pdf_hash, real_pairs

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
        assert client.process_fulltext(b"%PDF-1.4 not really a pdf").reason == "grobid_error_500"
        calls = server.calls
        assert client.process_fulltext(b"<html>an error page</html>").reason == "not_a_pdf"
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
    return sorted(repr(sorted(row.items())) for row in pq.read_table(out / name).to_pylist())


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


def test_under_faults_every_pdf_ends_parsed_or_dead_lettered_once(pairs, tmp_path):
    tei_by_hash, pdfs = pairs
    folder = tmp_path / "pdfs"
    folder.mkdir()
    for pdf in pdfs:
        (folder / f"{pdf.parent.name}-{pdf.name}").write_bytes(pdf.read_bytes())
    (folder / "html-error-page.pdf").write_bytes(b"<html>502 Bad Gateway</html>")
    (folder / "unparseable.pdf").write_bytes(b"%PDF-1.4\n%%EOF broken")
    keys = [pdf_hash(pdf.read_bytes()) for pdf in pdfs]
    with FakeGrobid(tei_by_hash, slots=3, slow_s=1.5) as server:
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
    funnel = stats["funnel"]
    assert funnel["documents_in"] == len(pdfs) + 2
    assert funnel["documents_parsed"] == len(pdfs) - 3
    assert funnel["documents_in"] == funnel["documents_parsed"] + funnel["documents_dead_lettered"]
    assert stats["other_counts"]["grobid_parsed"] == len(pdfs) - 3


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
    from types import SimpleNamespace

    from extractors.records import DeadLetter
    from pipelines.grobid import GrobidConfig, GrobidParseFn

    def failing(error):
        def read():
            raise error

        return SimpleNamespace(metadata=SimpleNamespace(path="mem://x.pdf"), read=read)

    fn = GrobidParseFn(GrobidConfig(url="http://127.0.0.1:9", version="0.8.2"))
    fn.setup()
    try:
        _, unreadable, _ = fn._fetch(failing(OSError("gone")))
        _, unexpected, _ = fn._fetch(failing(RuntimeError("boom")))
    finally:
        fn.teardown()
    assert isinstance(unreadable, DeadLetter) and unreadable.reason == "unreadable_file"
    assert isinstance(unexpected, DeadLetter) and unexpected.reason == "unexpected_error"
    assert "RuntimeError: boom" in unexpected.detail
