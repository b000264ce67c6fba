"""End to end: every citation linked by an identifier becomes a context when its paper is in the database, and a
TEI whose header lost its title joins its database record through the id in its file name.

The expected contexts are computed from the files themselves, without the parsers: lxml XPath over the TEI
(`idno[@type="arXiv"]`, an untyped `idno` reading "arXiv:…", `ptr` links to arxiv.org/abs, `idno[@type="DOI"]`,
`ptr` links to doi.org) and plain `json` over the S2ORC records (`other_ids` DOIs, `link`/`links`). The database
is written by the test: one record per cited identifier, dated long before the citing papers and titled so that
no title can match it, and one record per citing paper. The contexts compared are those of identifier-linked bib
entries (the `bib_id` column), so a title match elsewhere cannot hide a miss.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from pipelines.arsyta import run
from tests.support.runs import arxiv_record, read_rows, run_arsyta, write_jsonl
from tests.support.tei_xpath import NS, XML_ID, bib_structs, linked_refs, main_title, titleless_paper18

pytestmark = pytest.mark.e2e

NEW_ID = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
ARXIV_ABS = re.compile(r"arxiv\.org/abs/(\d{4}\.\d{4,5})")


def _tei_identifier(struct: etree._Element) -> tuple[str | None, str | None]:
    """(arXiv id, DOI) of a biblStruct, read straight from its `idno` and `ptr` elements."""
    arxiv = None
    for text in struct.xpath(".//t:idno[@type='arXiv']/text()", namespaces=NS):
        match = NEW_ID.search(text)
        arxiv = arxiv or (match.group(1) if match else None)
    for text in struct.xpath(".//t:idno[not(@type)]/text()", namespaces=NS):
        match = NEW_ID.search(text) if text.strip().lower().startswith("arxiv:") else None
        arxiv = arxiv or (match.group(1) if match else None)
    for target in struct.xpath(".//t:ptr/@target", namespaces=NS):
        match = ARXIV_ABS.search(target)
        arxiv = arxiv or (match.group(1) if match else None)
    doi = None
    for text in struct.xpath(".//t:idno[@type='DOI' or @type='doi']/text()", namespaces=NS):
        doi = doi or re.sub(r"\s+", "", text).lower().rstrip(".")
    for target in struct.xpath(".//t:ptr/@target", namespaces=NS):
        if "doi.org/10." in target:
            doi = doi or target.split("doi.org/", 1)[1].lower().rstrip(".")
    return arxiv, doi


def build_tei_inputs(shared: Path, tmp_path: Path):
    """The os-ia-pipegrobid TEI with an arXiv id in their header, a database for every identifier their bib
    entries carry, and the expected contexts: Counter of (citing, cited, bib_id, marker)."""
    tei_dir = tmp_path / "tei"
    tei_dir.mkdir()
    records: dict[str, dict] = {}
    citing: dict[str, dt.date] = {}
    documents = []
    for path in sorted((shared / "grobid" / "os-ia-pipegrobid").glob("*.tei.xml")):
        tree = etree.parse(str(path))
        header = " ".join(tree.xpath("//t:teiHeader//t:sourceDesc//t:idno[@type='arXiv']/text()", namespaces=NS))
        match = NEW_ID.search(header)
        if not match:
            continue  # no id: its date would be unknown to the database
        own = match.group(1)
        citing[own] = dt.date(2000 + int(own[:2]), int(own[2:4]), 1)  # dated as its id says
        records[own] = arxiv_record(own, main_title(tree) or f"Untitled {own}", citing[own])
        shutil.copy(path, tei_dir / path.name)
        documents.append((own, tree))
    cited_day = dt.date(2000, 1, 1)
    linked: dict[tuple[str, str], str] = {}  # (citing id, bib id) -> cited paper id
    doi_records = []
    for own, tree in documents:
        for struct in bib_structs(tree):
            arxiv, doi = _tei_identifier(struct)
            if arxiv:
                records.setdefault(arxiv, arxiv_record(arxiv, f"Identifier record {arxiv} zqj", cited_day))
                linked[(own, struct.get(XML_ID))] = arxiv
            elif doi:
                doi_records.append(doi)
                linked[(own, struct.get(XML_ID))] = f"doi:{doi}"
    for n, doi in enumerate(sorted(set(doi_records))):
        records[f"doi:{doi}"] = {
            "paper_id": f"doirec{n}",
            "title": f"Identifier record {n} qzx",
            "doi": doi,
            "year": 2000,
        }
    expected: Counter = Counter()
    for own, tree in documents:
        for bib_id, marker in linked_refs(tree):
            cited = linked.get((own, bib_id))
            if cited is None or cited == own:
                continue
            if cited in citing and citing[cited] > citing[own]:
                continue  # cites a later paper of the set: dropped as cited-after-citing
            expected[(own, cited, bib_id, marker)] += 1
    metadata = write_jsonl(tmp_path / "metadata.jsonl", list(records.values()))
    return tei_dir, metadata, expected, linked


def identifier_contexts(out: Path, linked: dict[tuple[str, str], str]) -> Counter:
    """The contexts written for identifier-linked bib entries: Counter of (citing, cited, bib_id, marker)."""
    return Counter(
        (r["citing_id"], r["cited_id"], r["bib_id"], r["marker"])
        for r in read_rows(out / "contexts")
        if (r["citing_id"], r["bib_id"]) in linked
    )


@pytest.fixture(scope="module")
def tei_run(shared, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("identifier_tei")
    tei_dir, metadata, expected, linked = build_tei_inputs(shared, tmp_path)
    out = tmp_path / "out"
    stats = run_arsyta(tei_dir / "*.tei.xml", metadata, out)
    return expected, linked, stats, out


def test_every_identifier_linked_tei_citation_becomes_a_context(tei_run):
    expected, linked, stats, out = tei_run
    got = identifier_contexts(out, linked)
    assert sum(expected.values()) > 400, "the TEI cite hundreds of works by arXiv id or DOI"
    assert {cited.startswith("doi:") for _, cited, _, _ in expected} == {True, False}
    assert got == expected, (list((expected - got).items())[:5], list((got - expected).items())[:5])
    resolution = stats["resolution"]
    with_arxiv = sum(not cited.startswith("doi:") for cited in linked.values())
    assert resolution["bib_entries_with:arxiv_id"] >= with_arxiv >= resolution["resolved_by:arxiv_id"] > 0
    assert resolution["bib_entries_with:doi"] >= resolution["resolved_by:doi"] > 0
    copied = len(list((out.parent / "tei").glob("*.tei.xml")))  # the TEI with an arXiv id in their header
    funnel = stats["funnel"]
    assert (funnel["documents_in"], funnel["documents_parsed"], funnel["documents_dead_lettered"]) == (
        copied,
        copied,
        0,
    )


# ---------------------------------------------------------------------------------------------- S2ORC


def _s2orc_parse(record: dict) -> dict:
    return record.get("grobid_parse") or record.get("pdf_parse") or record


def build_s2orc_inputs(shared: Path, tmp_path: Path):
    """The s2orc-doc2json records (2019, 2020, 2021 layouts), a database for every DOI in `other_ids` and every
    `link`/`links` (S2ORC paper ids, which are corpus ids), and the expected contexts."""
    files = sorted((shared / "s2orc" / "s2orc-doc2json").glob("*/*.json"))
    records: dict[str, dict] = {}
    linked: dict[tuple[str, str], str] = {}
    mentions = []
    for path in files:
        record = json.loads(path.read_text())
        own = str(record["paper_id"])
        records[own] = {"paper_id": own, "title": f"Citing paper {own}", "year": 2020}
        parse = _s2orc_parse(record)
        for bib_id, entry in parse["bib_entries"].items():
            other_ids = {k.lower(): v for k, v in (entry.get("other_ids") or {}).items()}
            dois = other_ids.get("doi") or []
            link = entry.get("link") or entry.get("links")
            if dois:
                linked[(own, bib_id)] = f"doi:{dois[0].lower()}"
            elif link:
                linked[(own, bib_id)] = str(link)
        blocks = (parse.get("abstract") or []) + (parse.get("body_text") or [])
        blocks += parse.get("back_matter") or record.get("back_matter") or []
        for block in blocks:
            for span in block.get("cite_spans") or []:
                mentions.append((own, span.get("ref_id"), block["text"][span["start"] : span["end"]]))
    for n, cited in enumerate(sorted(set(linked.values()))):
        if cited.startswith("doi:"):
            record = {"paper_id": f"doirec{n}", "title": f"Identifier record {n} qzx", "doi": cited[4:], "year": 1900}
        else:
            url = f"https://api.semanticscholar.org/CorpusID:{cited}"
            record = {"paper_id": cited, "title": f"Identifier record {n} qzx", "year": 1900, "s2_url": url}
        records.setdefault(cited, record)
    expected: Counter = Counter()
    for own, bib_id, marker in mentions:
        cited = linked.get((own, bib_id))
        if cited is not None and cited != own:
            expected[(own, cited, bib_id, marker)] += 1
    metadata = write_jsonl(tmp_path / "metadata.jsonl", list(records.values()))
    return metadata, expected, linked


@pytest.fixture(scope="module")
def s2orc_run(shared, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("identifier_s2orc")
    metadata, expected, linked = build_s2orc_inputs(shared, tmp_path)
    out = tmp_path / "out"
    pattern = str(shared / "s2orc" / "s2orc-doc2json" / "*" / "*.json")
    stats = run(["--runner=FnApiRunner", "--s2orc", pattern, "--metadata", str(metadata), "--output", str(out)])
    return expected, linked, stats, out


def test_every_s2orc_link_and_other_ids_doi_becomes_a_context(s2orc_run):
    expected, linked, stats, out = s2orc_run
    got = identifier_contexts(out, linked)
    assert sum(expected.values()) > 250
    assert {cited.startswith("doi:") for _, cited, _, _ in expected} == {True, False}
    assert got == expected, (list((expected - got).items())[:5], list((got - expected).items())[:5])
    assert stats["resolution"]["resolved_by:s2_corpus_id"] > 0
    assert stats["resolution"]["bib_entries_with:s2_corpus_id"] >= stats["resolution"]["resolved_by:s2_corpus_id"]


# ---------------------------------------------------------------------------------------- titleless TEI

PAPER18 = "2602.14645"  # grobid/os-ia-pipegrobid/paper18.tei.xml


@pytest.fixture(scope="module")
def titleless_run(shared, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("titleless")
    data = titleless_paper18(shared)
    tei_dir = tmp_path / "tei"
    tei_dir.mkdir()
    (tei_dir / f"{PAPER18}v1.tei.xml").write_bytes(data)  # named by its id, with a database record
    (tei_dir / "untitled-draft.tei.xml").write_bytes(data)  # a name that is no id
    (tei_dir / "2602.99999v1.tei.xml").write_bytes(data)  # an id no database record holds
    title = "Conditions for bacterial selection and extinction driven by growth-kill trade-off"
    records = [
        arxiv_record(PAPER18, title, dt.date(2026, 2, 16)),
        arxiv_record("2601.02308", "Identifier record cited by arXiv id zqj", dt.date(2026, 1, 5)),
        {"paper_id": "doirec", "title": "Identifier record cited by DOI zqj", "doi": "10.1111/eva.13513", "year": 2022},
    ]
    metadata = write_jsonl(tmp_path / "metadata.jsonl", records)
    out = tmp_path / "out"
    return title, run_arsyta(tei_dir / "*.tei.xml", metadata, out), out


def test_a_titleless_tei_named_by_its_id_takes_its_title_from_the_database(titleless_run):
    title, stats, out = titleless_run
    papers = {r["paper_id"]: r for r in read_rows(out / "papers")}
    assert papers[PAPER18]["title"] == title
    contexts = [r for r in read_rows(out / "contexts") if r["citing_id"] == PAPER18]
    # refs [7], [8] and "[7," of paper18 cite b6 (DOI 10.1111/eva.13513) and b7 (arXiv:2601.02308)
    assert Counter((r["cited_id"], r["marker"]) for r in contexts) == Counter(
        {("doi:10.1111/eva.13513", "[7]"): 1, ("doi:10.1111/eva.13513", "[7,"): 1, ("2601.02308", "[8]"): 1}
    )


def test_titleless_teis_that_no_record_names_are_dead_lettered_no_title(titleless_run):
    _, stats, out = titleless_run
    dead = {(Path(r["source"]).name, r["stage"], r["reason"]) for r in read_rows(out / "dead_letter")}
    # neither file name finds a database record (the first is no identifier, the second one no record holds)
    assert dead == {
        ("untitled-draft.tei.xml", "merge", "no_title"),
        ("2602.99999v1.tei.xml", "merge", "no_title"),
    }
    funnel = stats["funnel"]
    assert (funnel["documents_in"], funnel["documents_parsed"], funnel["documents_dead_lettered"]) == (3, 1, 2)
    assert stats["dead_letters"] == {"merge:no_title": 2}
    inputs = {Path(r["path"]).name: r for r in read_rows(out / "inputs")}
    for name, parsed in ((f"{PAPER18}v1.tei.xml", 1), ("untitled-draft.tei.xml", 0), ("2602.99999v1.tei.xml", 0)):
        row = inputs[name]
        assert (row["records_read"], row["parsed"], row["dead_lettered"]) == (1, parsed, 1 - parsed), row
