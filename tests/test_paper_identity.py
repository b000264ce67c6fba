"""One paper is one paper: copies of a paper that share no identifier merge by title, first author and year where
their identifiers agree; an ACL Anthology id in a file name joins the database record that knows it."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from mapping.duplicates import Copy, first_author_surname, merge_copies, title_key
from mapping.ids import identifiers_in_file_stem

TEI = "{http://www.tei-c.org/ns/1.0}"


# ------------------------------------------------------------------------------------------------ file names


@pytest.mark.parametrize(
    ("stem", "acl"),
    [
        ("P17-1055", "acl:P17-1055"),
        ("D16-1041", "acl:D16-1041"),
        ("w18-5401", "acl:W18-5401"),
        ("2020.acl-main.207", "acl:2020.acl-main.207"),
        ("2021.Findings-ACL.12", "acl:2021.findings-acl.12"),
        ("paper18", None),
        ("2020", None),
        ("1906.00202", None),  # an arXiv id, not an ACL one
    ],
)
def test_a_file_named_for_an_acl_anthology_paper_carries_its_id(stem, acl):
    found = identifiers_in_file_stem(stem)
    assert found.other_ids == ((acl,) if acl else ())


# ---------------------------------------------------------------------------------------------------- the key


def test_the_title_key_needs_a_title_that_names_a_paper_and_an_author_or_a_year():
    key = title_key("SPECTER: Document-level Representation Learning", ("Arman Cohan", "S. Feldman"), None)
    assert key == "specter document level representation learning|cohan|"
    assert title_key("SPECTER: Document-Level  Representation learning.", ("Cohan, Arman",), None) != key  # surname
    assert title_key("Specter: document-level representation learning", ("A. Cohan",), None) == key
    assert title_key("Introduction", ("A. Cohan",), 2020) is None
    assert title_key("SPECTER: Document-level Representation Learning", (), None) is None
    assert title_key("SPECTER: Document-level Representation Learning", (), 2020).endswith("||2020")
    assert first_author_surname(("Jörg Müller",)) == "muller"


# -------------------------------------------------------------------------------------------------- the merge


def test_a_copy_without_identifiers_joins_the_copy_that_has_them():
    copies = [Copy("a.tei.xml", "a", ()), Copy("2101.00001.tei.xml", "2101.00001", ("arxiv:2101.00001",))]
    assert merge_copies(copies) == ({"a.tei.xml": "2101.00001"}, 0)


def test_copies_whose_identifiers_agree_merge_into_the_strongest():
    copies = [
        Copy("x.json", "12345", ("s2:12345",)),
        Copy("y.tei.xml", "doi:10.1/x", ("doi:10.1/x",)),
        Copy("z.tei.xml", "z", ()),
    ]
    assert merge_copies(copies) == ({"x.json": "doi:10.1/x", "z.tei.xml": "doi:10.1/x"}, 0)


def test_two_arxiv_ids_are_two_papers_whatever_their_titles():
    copies = [
        Copy("a", "2101.00001", ("arxiv:2101.00001",)),
        Copy("b", "2101.00002", ("arxiv:2101.00002",)),
        Copy("c", "c", ()),  # cannot be told which of the two it is: left alone, counted
    ]
    assert merge_copies(copies) == ({}, 2)


def test_copies_without_any_identifier_merge_into_one():
    renames, apart = merge_copies([Copy("b.tei.xml", "b", ()), Copy("a.tei.xml", "a", ())])
    assert (renames, apart) == ({"b.tei.xml": "a"}, 0)


@given(st.permutations(range(5)))
def test_the_merge_does_not_depend_on_the_order_of_the_copies(order):
    copies = [
        Copy("p1", "2101.00001", ("arxiv:2101.00001", "doi:10.1/a")),
        Copy("p2", "doi:10.1/a", ("doi:10.1/a",)),
        Copy("p3", "2101.00009", ("arxiv:2101.00009",)),
        Copy("p4", "p4", ()),
        Copy("p5", "s2x", ("s2:77",)),
    ]
    expected = merge_copies(copies)
    assert merge_copies([copies[i] for i in order]) == expected
    assert expected[0]["p2"] == "2101.00001" and "p3" not in expected[0] and "p4" not in expected[0]


# ------------------------------------------------------------------------------------------------ pipelines


def _table(out: Path, name: str) -> list[dict]:
    return [r for p in sorted((out / name).glob("*.parquet")) for r in pq.read_table(p).to_pylist()]


def _without_header_ids(source: Path, target: Path) -> None:
    """`source` (a real GROBID TEI) saved as `target` with every identifier of its header removed: what a copy
    downloaded from elsewhere, under another name, looks like."""
    tree = etree.parse(str(source))
    for idno in tree.iter(f"{TEI}idno"):
        if any(a.tag == f"{TEI}teiHeader" for a in idno.iterancestors()):
            idno.getparent().remove(idno)
    tree.write(str(target))


@pytest.mark.e2e
def test_a_copy_whose_arxiv_id_is_missing_is_the_same_paper(shared, tmp_path):
    from pipelines.arsyta import run

    real = shared / "grobid/os-ia-pipegrobid/paper18.tei.xml"  # arXiv 2602.14645
    single, double = tmp_path / "single", tmp_path / "double"
    single.mkdir()
    double.mkdir()
    shutil.copy(real, single / "paper18.tei.xml")
    shutil.copy(real, double / "paper18.tei.xml")
    _without_header_ids(real, double / "downloaded-copy.tei.xml")
    one = run(["--runner=FnApiRunner", "--tei", str(single / "*.xml"), "--output", str(tmp_path / "one")])
    two = run(["--runner=FnApiRunner", "--tei", str(double / "*.xml"), "--output", str(tmp_path / "two")])
    assert two["funnel"]["documents_in"] == 2 and two["funnel"]["documents_parsed"] == 1
    assert two["funnel"]["mentions"] == one["funnel"]["mentions"]  # one set of mentions, not two
    assert two["other_counts"]["documents_merged_by_title"] == 1
    assert two["other_counts"]["documents_merged"] == 1
    assert _table(tmp_path / "two", "papers") == _table(tmp_path / "one", "papers")
    letters = _table(tmp_path / "two", "dead_letter")
    assert [(Path(d["source"]).name, d["reason"]) for d in letters] == [("downloaded-copy.tei.xml", "duplicate_id")]


@pytest.mark.e2e
def test_the_same_pdf_as_tei_and_as_s2orc_json_is_one_paper(shared, tmp_path):
    """s2orc-doc2json's TEI and JSON of one ACL paper, saved under unrelated names: one paper, one set of
    mentions (the TEI's, as many as either copy alone gives)."""
    from pipelines.arsyta import run

    pair = shared / "grobid/s2orc-doc2json"
    (tmp_path / "tei").mkdir()
    (tmp_path / "json").mkdir()
    shutil.copy(pair / "N18-3011.tei.xml", tmp_path / "tei" / "literature-graph.tei.xml")
    shutil.copy(pair / "N18-3011.json", tmp_path / "json" / "s2-copy.json")
    both = run(
        ["--runner=FnApiRunner", "--tei", str(tmp_path / "tei" / "*.xml"), "--s2orc", str(tmp_path / "json" / "*.json"),
         "--output", str(tmp_path / "both")]
    )
    alone = run(["--runner=FnApiRunner", "--tei", str(tmp_path / "tei" / "*.xml"), "--output", str(tmp_path / "t")])
    assert both["funnel"]["documents_in"] == 2 and both["funnel"]["documents_parsed"] == 1
    assert both["other_counts"]["documents_merged_by_title"] == 1
    titles = [p["title"] for p in _table(tmp_path / "both", "papers")]
    assert titles.count("Construction of the Literature Graph in Semantic Scholar") == 1
    assert both["funnel"]["mentions"] in (alone["funnel"]["mentions"],)


def _s2orc_metadata(paper_id: str, title: str, year: int, **ids) -> dict:
    return {
        "paper_id": paper_id, "title": title, "authors": [{"first": "A.", "middle": [], "last": "Author", "suffix": ""}],
        "abstract": "An abstract.", "year": year, "arxiv_id": None, "acl_id": None, "pmc_id": None, "pubmed_id": None,
        "doi": None, "venue": None, "journal": None, "mag_id": None, "outbound_citations": [],
        "inbound_citations": [], "has_outbound_citations": False, "has_inbound_citations": False,
        "has_pdf_parse": False, "s2_url": None, **ids,
    }


@pytest.mark.e2e
def test_a_tei_named_for_its_acl_id_joins_the_record_that_knows_it(shared, tmp_path):
    from pipelines.arsyta import run

    pair = shared / "grobid/s2orc-doc2json"
    (tmp_path / "tei").mkdir()
    for name in ("N18-3011", "2020.acl-main.207"):
        _without_header_ids(pair / f"{name}.tei.xml", tmp_path / "tei" / f"{name}.tei.xml")
    metadata = tmp_path / "metadata.jsonl"
    records = [
        _s2orc_metadata("19170988", "Construction of the Literature Graph in Semantic Scholar", 2018,
                        acl_id="N18-3011", doi="10.18653/v1/N18-3011"),
        _s2orc_metadata("215768677", "SPECTER: Document-level Representation Learning using "
                        "Citation-informed Transformers", 2020, acl_id="2020.acl-main.207", arxiv_id="2004.07180"),
    ]
    metadata.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out"
    stats = run(["--runner=FnApiRunner", "--tei", str(tmp_path / "tei" / "*.xml"), "--metadata", str(metadata),
                 "--output", str(out)])
    assert stats["other_counts"]["documents_renamed_to_database_id"] == 2
    papers = {p["paper_id"]: p for p in _table(out, "papers")}
    assert {"doi:10.18653/v1/n18-3011", "2004.07180"} <= set(papers)
    assert papers["2004.07180"]["year"] == 2020
    assert not {"N18-3011", "2020.acl-main.207"} & set(papers)


def test_every_copy_pair_of_the_merge_is_symmetric():
    """Whichever of two agreeing copies comes first, both end with the same id."""
    a = Copy("a", "doi:10.1/a", ("doi:10.1/a",))
    b = Copy("b", "77", ("s2:77",))
    for first, second in itertools.permutations((a, b)):
        renames, _ = merge_copies([first, second])
        ids = {c.source: renames.get(c.source, c.paper_id) for c in (a, b)}
        assert ids == {"a": "doi:10.1/a", "b": "doi:10.1/a"}


@pytest.mark.e2e
def test_a_titleless_tei_named_by_a_records_s2_id_joins_that_record(shared, tmp_path):
    """S2ORC metadata names papers by their S2 id; a record that also has an arXiv id is the paper of that arXiv id.
    A TEI whose header lost its title and ids, saved as `<S2 id>.tei.xml`, is that paper (it used to be dead-lettered
    `no_title`); one under a name no record holds is dead-lettered `no_title` at the merge."""
    from pipelines.arsyta import run

    (tmp_path / "tei").mkdir()
    tree = etree.parse(str(shared / "grobid/os-ia-pipegrobid/paper18.tei.xml"))
    header = next(tree.iter(f"{TEI}teiHeader"))
    for node in list(header.iter(f"{TEI}title")) + list(header.iter(f"{TEI}idno")):
        node.getparent().remove(node)
    tree.write(str(tmp_path / "tei" / "77490025.tei.xml"))
    tree.write(str(tmp_path / "tei" / "no-record.tei.xml"))
    record = _s2orc_metadata("77490025", "Conditions for bacterial selection and extinction", 2026,
                             arxiv_id="2602.14645")
    metadata = tmp_path / "metadata.jsonl"
    metadata.write_text(json.dumps(record) + "\n")
    out = tmp_path / "out"
    stats = run(["--runner=FnApiRunner", "--tei", str(tmp_path / "tei" / "*.xml"), "--metadata", str(metadata),
                 "--output", str(out)])
    papers = {p["paper_id"]: p for p in _table(out, "papers")}
    assert papers["2602.14645"]["title"] == "Conditions for bacterial selection and extinction"
    assert stats["funnel"]["documents_parsed"] == 1
    letters = [(Path(d["source"]).name, d["stage"], d["reason"]) for d in _table(out, "dead_letter")]
    assert letters == [("no-record.tei.xml", "merge", "no_title")]
