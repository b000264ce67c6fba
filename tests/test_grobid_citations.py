"""Raw reference strings through GROBID's processCitationList: the client against the loopback server, which
answers with GROBID 0.8.2's envelope and, for the raw strings of a real paper (N18-3011), the real biblStructs
GROBID wrote for them; the ParseRawReferences stage; and the arsyta pipeline on a document whose bib entries
have only raw strings, checked against the same document with its bib entries' titles filled in."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.clients.grobid import (
    MAX_RAW_REFERENCE_CHARS,
    GrobidClient,
    GrobidOptions,
    RetryPolicy,
    citation_cache_key,
    merge_parsed_entry,
    sendable_raw_reference,
    split_citation_list,
)
from extractors.documents.tei import DocumentError, bib_entry_from_struct
from mapping.records import BibEntry, ParsedDocument
from pipelines.arsyta import run
from pipelines.grobid import GrobidConfig, ParseRawReferences
from tests.support.grobid_replay import (
    CITATION_LIST_HEAD,
    CITATION_LIST_TAIL,
    FakeGrobid,
    citation_pairs,
    collapse,
)

FAST = RetryPolicy(retries=3, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=2.0)
UNKNOWN = "Anonymous. 1999. A technical report that no reference parser has ever seen. Unpublished manuscript."


@pytest.fixture(scope="module")
def paper(shared) -> dict:
    """N18-3011: its real GROBID TEI and the S2ORC JSON s2orc-doc2json made of it (whose `raw_text`s are the
    TEI's `raw_reference` notes)."""
    folder = shared / "grobid" / "s2orc-doc2json"
    return {
        "tei": (folder / "N18-3011.tei.xml").read_bytes(),
        "json": json.loads((folder / "N18-3011.json").read_text()),
    }


@pytest.fixture(scope="module")
def structs(paper) -> dict[str, bytes]:
    pairs = citation_pairs(paper["tei"])
    assert len(pairs) == 27, "N18-3011's TEI has 27 references, each with its raw string"
    return pairs


def golden_entries(paper) -> dict[str, dict]:
    return paper["json"]["pdf_parse"]["bib_entries"]


# ---------------------------------------------------------------------------------------------------------
# the client


def test_the_client_reads_one_batch_in_the_order_sent(paper, structs):
    golden = golden_entries(paper)
    raws = [golden[f"BIBREF{i}"]["raw_text"] for i in (5, 0, 19)]
    batch = [raws[0], UNKNOWN, raws[1], raws[2]]
    with FakeGrobid({}, citation_structs=structs) as server:
        result = GrobidClient(server.url, policy=FAST).process_citation_list(batch)
        assert (result.reason, result.attempts, server.citation_calls) == (None, 1, 1)
        form = server.citation_forms[0]
    assert form["citations"] == batch, "one `citations` field per string, in order"
    assert (form["includeRawCitations"], form["consolidateCitations"]) == (["1"], ["0"])
    entries = [bib_entry_from_struct(struct, f"x{i}") for i, struct in enumerate(result.structs)]
    expected = [golden["BIBREF5"]["title"], None, golden["BIBREF0"]["title"], golden["BIBREF19"]["title"]]
    assert [entry.title for entry in entries] == expected
    assert [entry.bib_id for entry in entries] == ["x0", "x1", "x2", "x3"]
    assert [entry.year for entry in entries] == [2007, None, 2017, 2014]
    assert entries[1].raw == collapse(UNKNOWN), "GROBID echoes the string it could not parse"


def test_a_bare_listbibl_answer_reads_like_the_tei_envelope(paper, structs):
    raws = [entry["raw_text"] for entry in golden_entries(paper).values()][:5]
    answers = {}
    for envelope in ("tei", "listBibl"):
        with FakeGrobid({}, citation_structs=structs, citation_envelope=envelope) as server:
            structs_back = GrobidClient(server.url, policy=FAST).process_citation_list(raws).structs
            answers[envelope] = [bib_entry_from_struct(struct, "r") for struct in structs_back]
    assert answers["tei"] == answers["listBibl"]
    assert [entry.title for entry in answers["tei"]] == [e["title"] for e in golden_entries(paper).values()][:5]


def test_split_citation_list_reads_both_envelopes_and_rejects_the_rest():
    struct = b'<biblStruct xml:id="b0"><analytic><title level="a" type="main">A title</title></analytic></biblStruct>'
    tei = CITATION_LIST_HEAD + struct + b"\n" + struct.replace(b"b0", b"b1") + CITATION_LIST_TAIL
    bare_without_namespace = b"<listBibl>" + struct + b"</listBibl>"
    for answer in (tei, bare_without_namespace):
        found = split_citation_list(answer)
        assert len(found) == (2 if answer is tei else 1)
        assert bib_entry_from_struct(found[0], "r").title == "A title"
    assert split_citation_list(b'<listBibl xmlns="http://www.tei-c.org/ns/1.0"/>') == []
    for junk in (b"<html><body>502 Bad Gateway</body></html>", b"not xml", b"", struct):
        with pytest.raises(ValueError):
            split_citation_list(junk)
    with pytest.raises(DocumentError, match="not_biblstruct"):
        bib_entry_from_struct(b"<TEI/>", "r")


def test_busy_answers_are_retried_and_a_short_answer_fails_the_batch(paper, structs):
    raws = [entry["raw_text"] for entry in golden_entries(paper).values()][:3]
    cases = [
        (["503", "503"], None, 3),  # busy twice, then the answer
        (["drop"], None, 2),
        (["503"] * 4, "grobid_busy", 4),  # busy beyond the last retry
        (["500"], "grobid_error_500", 1),  # not retried
        (["short"], "grobid_citation_count_mismatch", 1),  # one biblStruct fewer than strings
        (["empty"], "grobid_citation_count_mismatch", 1),  # 204: nothing for three strings
        (["html"], "grobid_citation_malformed_answer", 1),  # a proxy's error page with a 200
    ]
    with FakeGrobid({}, citation_structs=structs) as server:
        client = GrobidClient(server.url, policy=FAST)
        for script, reason, attempts in cases:
            server.citation_script = list(script)
            before = server.citation_calls
            result = client.process_citation_list(raws)
            assert (result.reason, result.attempts) == (reason, attempts), script
            assert server.citation_calls - before == attempts, script
            assert (result.structs is None) == (reason is not None), script
            if reason is None:
                assert len(result.structs) == 3
        server.citation_script = ["short"]
        assert "2 biblStruct for 3 strings" in client.process_citation_list(raws).detail
        calls = server.citation_calls
        assert client.process_citation_list([]).structs == ()
        assert server.citation_calls == calls, "an empty batch is never sent"


def test_a_punctuation_only_string_would_fail_the_whole_batch_so_it_is_never_sent(structs):
    """GROBID 0.8.2 makes a null item of a string with nothing left after its own trimming, and its answer
    is a bare 500 for the whole batch: the loopback server does the same, and `sendable_raw_reference` keeps
    such strings back."""
    with FakeGrobid({}, citation_structs=structs) as server:
        result = GrobidClient(server.url, policy=FAST).process_citation_list(["()", UNKNOWN])
    assert result.reason == "grobid_error_500"
    for raw in ("()", "  .  ", "[1]", "pp. 1-2", None, ""):
        assert sendable_raw_reference(raw, 8) == (None, "too_short"), raw
    assert sendable_raw_reference("x" * (MAX_RAW_REFERENCE_CHARS + 1), 8) == (None, "too_long")
    assert sendable_raw_reference("  A. Author.\n2001.   A title\tof a paper. ", 8) == (
        "A. Author. 2001. A title of a paper.",
        "",
    )


def test_merging_keeps_the_bib_id_the_raw_string_and_what_grobid_did_not_find():
    original = BibEntry("BIBREF3", title="In ISWC", raw="raw text", arxiv_id="1501.00001", s2_corpus_id="42")
    reading = BibEntry("grobid", title="TabEL: entity linking in web tables", authors=("C B",), year=2015, raw="x")
    merged = merge_parsed_entry(original, reading)
    assert merged == BibEntry(
        "BIBREF3",
        title="TabEL: entity linking in web tables",
        authors=("C B",),
        year=2015,
        raw="raw text",
        arxiv_id="1501.00001",
        s2_corpus_id="42",
    )
    assert merge_parsed_entry(original, BibEntry("grobid")) == original
    with_keys = merge_parsed_entry(replace(original, other_ids=("pmid:1",)), replace(reading, other_ids=("pmid:2",)))
    assert with_keys.other_ids == ("pmid:1", "pmid:2")


def test_the_citation_cache_key_covers_string_version_and_citation_options():
    base = citation_cache_key("A raw string", "0.8.2", GrobidOptions())
    assert base == citation_cache_key("A raw string", "0.8.2", GrobidOptions(consolidate_header=True))
    assert base == citation_cache_key("A raw string", "0.8.2", GrobidOptions(segment_sentences=False))
    assert base != citation_cache_key("A raw string.", "0.8.2", GrobidOptions())
    assert base != citation_cache_key("A raw string", "0.8.1", GrobidOptions())
    assert base != citation_cache_key("A raw string", "0.8.2", GrobidOptions(consolidate_citations=True))
    assert base != citation_cache_key("A raw string", "0.8.2", GrobidOptions(include_raw_citations=False))


# ---------------------------------------------------------------------------------------------------------
# the stage


def raw_only_document(source: str, raws: list[str], titled: dict[int, str] | None = None) -> ParsedDocument:
    titled = titled or {}
    entries = tuple(BibEntry(f"b{i}", title=titled.get(i), raw=raw) for i, raw in enumerate(raws))
    return ParsedDocument(source, source, "s2orc-2020", "A citing paper", None, (), (), entries)


@pytest.mark.beam
def test_strings_are_sent_once_across_documents_in_batches_and_merged_back(paper, structs):
    golden = [entry for entry in golden_entries(paper).values()]
    raws = [entry["raw_text"] for entry in golden]
    first = raw_only_document("one.json", raws[:15] + ["()"], titled={0: "A title that is already usable"})
    second = raw_only_document("two.json", raws[10:25])  # 5 strings shared with the first document
    untouched = raw_only_document("three.json", [raws[0]], titled={0: "Its own usable title"})
    with FakeGrobid({}, citation_structs=structs) as server:
        config = GrobidConfig(url=server.url, version="0.8.2", policy=FAST, citation_batch_size=10)
        with TestPipeline(runner="FnApiRunner") as pipeline:
            out = pipeline | beam.Create([first, second, untouched]) | ParseRawReferences(config)
            titles = out["documents"] | beam.Map(lambda d: (d.source, tuple(e.title for e in d.bib_entries)))
            kept = out["documents"] | "Kept" >> beam.Map(
                lambda d: (d.source, [(e.bib_id, e.raw) for e in d.bib_entries])
            )
            tallies = out["tally"] | beam.CombinePerKey(sum)
            expect_titles = [
                ("one.json", ("A title that is already usable", *[g["title"] for g in golden[1:15]], None)),
                ("two.json", tuple(g["title"] for g in golden[10:25])),
                ("three.json", ("Its own usable title",)),
            ]
            assert_that(titles, equal_to(expect_titles))
            inputs = (first, second, untouched)
            expect_kept = [(d.source, [(e.bib_id, e.raw) for e in d.bib_entries]) for d in inputs]
            assert_that(kept, equal_to(expect_kept), label="BibIdsAndRawStringsKept")
            assert_that(
                tallies,
                equal_to(
                    [
                        ("grobid_citation_entries", 14 + 15),
                        ("grobid_citations_skipped:too_short", 1),
                        ("grobid_citation_strings", 24),
                        ("grobid_citation_requests", 3),
                        ("grobid_citations_parsed", 14 + 15),
                    ]
                ),
                label="Tallies",
            )
        sent = [raw for form in server.citation_forms for raw in form["citations"]]
    assert sorted(sent) == sorted(collapse(raw) for raw in raws[1:25]), "each distinct string sent once"
    assert sorted(server.citation_batches) == [4, 10, 10] and server.citation_calls == math.ceil(24 / 10)


# ---------------------------------------------------------------------------------------------------------
# the arsyta pipeline


def write_corpus(paper, folder: Path, *, titled: bool) -> Path:
    """N18-3011 as an S2ORC 2020 release record (`paper_id`, `_pdf_hash`, `body_text`, `bib_entries`, no
    title) whose bib entries carry only `raw_text` (or, `titled`, also the title, authors, year and venue
    s2orc-doc2json read for them), plus a string GROBID cannot parse and one of punctuation only; and S2ORC
    metadata lines for the paper and for every cited paper (their titles and years)."""
    parse = paper["json"]["pdf_parse"]
    entries = {}
    for key, entry in parse["bib_entries"].items():
        entries[key] = {"ref_id": key, "raw_text": entry["raw_text"]}
        if titled:
            entries[key].update({name: entry[name] for name in ("title", "authors", "year", "venue")})
    entries["BIBREF27"] = {"ref_id": "BIBREF27", "raw_text": UNKNOWN}
    entries["BIBREF28"] = {"ref_id": "BIBREF28", "raw_text": "()"}
    record = {
        "paper_id": "N18-3011",
        "_pdf_hash": "",
        "abstract": parse["abstract"],
        "body_text": parse["body_text"],
        "back_matter": parse["back_matter"],
        "bib_entries": entries,
        "ref_entries": parse["ref_entries"],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "N18-3011.json").write_text(json.dumps(record))
    lines = [{"paper_id": "N18-3011", "title": paper["json"]["title"], "year": 2018}]
    for key, entry in parse["bib_entries"].items():
        lines.append({"paper_id": f"cited-{key}", "title": entry["title"], "year": entry["year"]})
    (folder / "meta.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def run_corpus(folder: Path, out: Path, *extra: str) -> dict:
    return run(
        [
            "--runner=FnApiRunner",
            "--s2orc",
            str(folder / "N18-3011.json"),
            "--metadata",
            str(folder / "meta.jsonl"),
            "--output",
            str(out),
            "--validation_from",
            "2022-01-01",
            "--test_from",
            "2026-01-01",
            *extra,
        ]
    )


def table_rows(out: Path, name: str) -> list:
    files = sorted(out.glob(f"{name}/**/*.parquet"))
    return sorted(repr(sorted(row.items())) for f in files for row in pq.read_table(f).to_pylist())


@pytest.mark.e2e
def test_raw_only_references_resolve_by_title_through_grobid(paper, structs, tmp_path):
    """With --grobid_citations the raw-only document gives the dataset its titled twin gives; without, GROBID
    is never asked and no entry resolves by a GROBID title."""
    raw_only = write_corpus(paper, tmp_path / "raw", titled=False)
    twin = write_corpus(paper, tmp_path / "titled", titled=True)
    expected = run_corpus(twin, tmp_path / "twin")
    resolvable = expected["resolution"]["resolved_by:title"]
    assert resolvable >= 25, "nearly every reference of the titled twin resolves by title"
    assert expected["funnel"]["contexts"] > 15
    with FakeGrobid({}, citation_structs=structs) as server:
        without = run_corpus(raw_only, tmp_path / "without", "--grobid_url", server.url)
        assert server.calls == 0, "no GROBID call without --grobid_citations (not even isalive matters)"
        stats = run_corpus(raw_only, tmp_path / "with", "--grobid_url", server.url, "--grobid_citations")
        assert server.citation_calls == 1, "28 distinct strings: one request of at most 50"
        assert sorted(server.citation_forms[0]["citations"]) == sorted(
            collapse(entry["raw_text"]) for entry in [*golden_entries(paper).values(), {"raw_text": UNKNOWN}]
        ), "the punctuation-only string is never sent"
    assert without["resolution"].get("resolved_by:title", 0) == 0
    assert "grobid_citations_parsed" not in without["other_counts"]
    counts = stats["other_counts"]
    assert counts["grobid_citation_entries"] == 28
    assert counts["grobid_citations_parsed"] == 28
    assert counts["grobid_citations_untitled"] == 1, "GROBID's empty biblStruct for the string it cannot parse"
    assert counts["grobid_citations_skipped:too_short"] == 1
    assert counts["grobid_citation_requests"] == 1
    assert "grobid_citations_failed" not in counts
    assert stats["resolution"]["resolved_by:title"] == resolvable
    assert stats["resolution"].get("resolved_by:raw_title", 0) == 0, "GROBID's titles come first"
    assert stats["options"]["grobid"]["citation_batch_size"] == 50
    assert stats["funnel"]["contexts"] == expected["funnel"]["contexts"]
    for name in ("contexts", "citations"):
        assert table_rows(tmp_path / "with", name) == table_rows(tmp_path / "twin", name), name
    funnel = stats["funnel"]  # the one record write_corpus wrote
    assert (funnel["documents_in"], funnel["documents_parsed"], funnel["documents_dead_lettered"]) == (1, 1, 0)


@pytest.mark.e2e
def test_a_refresh_over_the_same_strings_makes_no_citation_request(paper, structs, tmp_path):
    corpus = write_corpus(paper, tmp_path / "corpus", titled=False)
    cache = tmp_path / "cache"
    with FakeGrobid({}, citation_structs=structs) as server:
        common = ("--grobid_url", server.url, "--grobid_citations", "--tei_cache", str(cache))
        first = run_corpus(corpus, tmp_path / "first", *common)
        calls = server.citation_calls
        second = run_corpus(corpus, tmp_path / "second", *common)
        assert server.citation_calls == calls == 1, "the refresh sends nothing"
    cached = [path for path in cache.rglob("*") if path.is_file()]
    assert len(cached) == 28 and all(path.name.endswith(".citation.xml") for path in cached)
    assert not [path for path in cache.rglob("*") if ".tmp-" in path.name], "no temporary file left behind"
    assert second["other_counts"]["grobid_citation_cache_hits"] == 28
    assert "grobid_citation_requests" not in second["other_counts"]
    assert second["other_counts"]["grobid_citations_parsed"] == first["other_counts"]["grobid_citations_parsed"]
    assert first["funnel"] == second["funnel"] and first["resolution"] == second["resolution"]
    for name in ("contexts", "papers", "citations"):
        assert table_rows(tmp_path / "first", name) == table_rows(tmp_path / "second", name), name


@pytest.mark.e2e
def test_a_failed_batch_leaves_its_entries_as_they_were_with_a_dead_letter_each(paper, structs, tmp_path):
    corpus = write_corpus(paper, tmp_path / "corpus", titled=False)
    cache = tmp_path / "cache"
    with FakeGrobid({}, citation_structs=structs) as server:
        server.citation_script = ["500"]
        args = ("--grobid_url", server.url, "--grobid_citations", "--tei_cache", str(cache))
        failed = run_corpus(corpus, tmp_path / "failed", *args)
        assert not list(cache.rglob("*.xml")), "a failure is never cached"
        again = run_corpus(corpus, tmp_path / "again", *args)
        assert server.citation_calls == 2, "the next run sends the strings again"
    letters = pq.read_table(tmp_path / "failed" / "dead_letter").to_pylist()
    source = str(corpus / "N18-3011.json")
    assert sorted(row["source"] for row in letters) == sorted(f"{source}#BIBREF{i}" for i in range(28))
    assert {(row["stage"], row["reason"]) for row in letters} == {("grobid_citations", "grobid_error_500")}
    assert any(golden_entries(paper)["BIBREF3"]["raw_text"][:40] in row["detail"] for row in letters)
    counts = failed["other_counts"]
    assert (counts["grobid_citation_entries"], counts["grobid_citations_failed"]) == (28, 28)
    assert "grobid_citations_parsed" not in counts
    assert failed["dead_letters"] == {"grobid_citations:grobid_error_500": 28}
    assert failed["funnel"]["documents_dead_lettered"] == 0, "entries, not documents"
    assert (failed["funnel"]["documents_in"], failed["funnel"]["documents_parsed"]) == (1, 1)
    assert failed["resolution"].get("resolved_by:title", 0) == 0
    assert again["other_counts"]["grobid_citations_parsed"] == 28
    assert again["resolution"]["resolved_by:title"] > 20
