"""GROBID TEI parsing, on every real TEI file in ../shared/data/grobid and on hand-made variants."""

from __future__ import annotations

import pytest
from lxml import etree

from extractors.documents.files import parse_document
from extractors.documents.tei import parse_tei
from mapping.records import DeadLetter, ParsedDocument
from tests.support.documents import SEGMENTED_TEI
from tests.support.tei_markers import (
    PLAIN,
    WITH_MARKERS,
    heading_markers,
    marker_tei,
    markers,
    nested_markers,
    with_uncut_markers,
)

NS = {"t": "http://www.tei-c.org/ns/1.0"}


def real_tei_files(shared):
    files = sorted((shared / "grobid").glob("*/*.tei.xml"))
    assert len(files) >= 37, "expected the 37 real GROBID TEI files listed in MANIFEST.md"
    return files


def test_every_real_tei_parses_and_counts_match_xpath(shared):
    for path in real_tei_files(shared):
        data = path.read_bytes()
        document = parse_document(data, str(path), "tei")
        assert isinstance(document, ParsedDocument), f"{path.name}: {document}"
        tree = etree.fromstring(data)
        bib_xpath = len(tree.xpath("//t:listBibl/t:biblStruct", namespaces=NS))
        linked_xpath = len(tree.xpath('//t:ref[@type="bibr"][@target]', namespaces=NS))
        all_xpath = len(tree.xpath('//t:ref[@type="bibr"]', namespaces=NS))
        mentions = [m for p in document.paragraphs for m in p.mentions]
        assert len(document.bib_entries) == bib_xpath, path.name
        assert sum(1 for m in mentions if m.bib_id) == linked_xpath, path.name
        assert len(mentions) == all_xpath, path.name


def test_mention_offsets_point_at_the_marker_text(shared):
    for path in real_tei_files(shared):
        document = parse_tei(path.read_bytes(), str(path))
        for paragraph in document.paragraphs:
            for mention in paragraph.mentions:
                assert paragraph.text[mention.start : mention.end] == mention.text
            for start, end in paragraph.sentences:
                assert 0 <= start < end <= len(paragraph.text)


def test_ids_categories_and_dates_from_the_header(shared):
    document = parse_tei((shared / "grobid/os-ia-pipegrobid/paper01.tei.xml").read_bytes(), "paper01")
    assert document.paper_id == "2605.16205"  # arXiv id without version wins over the DOI
    assert document.doi == "10.1145/3786335.3813149"
    assert document.categories == ("cs.AI",)
    assert document.date.isoformat() == "2026-05-15"
    no_ids = parse_tei((shared / "grobid/s2orc-doc2json/N18-3011.tei.xml").read_bytes(), "x/N18-3011.tei.xml")
    assert no_ids.paper_id == "N18-3011"  # the file stem
    assert no_ids.title == "Construction of the Literature Graph in Semantic Scholar"


def test_bib_entry_fields(shared):
    document = parse_tei((shared / "grobid/colrev/WagnerLukyanenkoParEtAl2022.tei.xml").read_bytes(), "colrev")
    first = document.bib_entries[0]
    assert first.bib_id == "b0"
    assert first.title == "Systematic reviews: work that needs to be done and not to be done"
    assert first.venue == "Journal of Evidence-Based Medicine"
    assert first.year == 2013
    assert first.authors == ("C E Adams", "S Polzmacher", "A Wolff")


def test_grobid_sentences_are_used_and_attribute_order_does_not_matter():
    document = parse_tei(SEGMENTED_TEI, "mem://segmented.tei.xml")
    [paragraph] = document.paragraphs
    assert [paragraph.text[a:b] for a, b in paragraph.sentences] == [
        "First sentence cites [1].",
        "Second one, by J. Smith et al. in Fig. 2, cites [2] again.",
    ]
    assert [(m.text, m.bib_id) for m in paragraph.mentions] == [("[1]", "b0"), ("[2]", "b1")]
    assert document.paper_id == "2101.00001"
    assert document.bib_entries[1].doi == "10.1000/abc"
    assert document.bib_entries[0].year == 2019


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty_file"),
        (SEGMENTED_TEI[: len(SEGMENTED_TEI) // 2], "malformed_xml"),
        (b"\xff\xfe\x00garbage\x80\x81", "malformed_xml"),
        (b"<root>not tei</root>", "not_tei"),
        (
            b'<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title>'
            b"</titleStmt></fileDesc></teiHeader><text><body/></text></TEI>",
            "no_body",
        ),
    ],
)
def test_bad_tei_becomes_a_dead_letter_with_a_reason(data, reason):
    letter = parse_document(data, "mem://bad.tei.xml", "tei")
    assert isinstance(letter, DeadLetter)
    assert (letter.source, letter.stage, letter.reason) == ("mem://bad.tei.xml", "parse", reason)


def test_latin1_bytes_in_a_utf8_document_are_undecodable():
    data = SEGMENTED_TEI.replace(b"Second one", b"Second \xe9t\xe9 one")
    letter = parse_document(data, "mem://latin1.tei.xml", "tei")
    assert isinstance(letter, DeadLetter) and letter.reason == "undecodable_bytes"


def test_sections_are_numbered_the_same_on_every_parse(shared):
    """Section numbers once came from id() of lxml proxies, which Python may reuse: parse repeatedly,
    with garbage in between, and the paragraphs' sections must not move."""
    import gc

    for path in sorted((shared / "grobid").glob("*/*.tei.xml"))[:12]:
        data = path.read_bytes()
        first = [(p.section_index, p.section_heading) for p in parse_tei(data, str(path)).paragraphs]
        for _ in range(3):
            junk = [etree.fromstring(data) for _ in range(3)]
            del junk
            gc.collect()
            again = [(p.section_index, p.section_heading) for p in parse_tei(data, str(path)).paragraphs]
            assert again == first, path.name
        # and a paragraph's section index only ever grows with its section (one index per section element)
        headings = {}
        for index, heading in first:
            headings.setdefault(index, heading)
            assert headings[index] == heading, path.name


def test_whitespace_collapsing_equals_the_regex_for_every_code_point():
    """`_collapse` skips the substitution for printable text without a double space and `_clean` splits with
    `str.split()`: both rest on the characters `\\s` matches being exactly `str.isspace()`'s, all of them
    unprintable but the space. Checked for every code point, then on text built from every whitespace."""
    import re
    import sys

    from extractors.documents.tei import _clean, _collapse

    chars = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    regex_spaces = set(re.findall(r"\s", chars))
    assert regex_spaces == {c for c in chars if c.isspace()}
    assert {c for c in regex_spaces if c.isprintable()} == {" "}
    samples = ["", "plain words", "a  b", " lead", "trail ", "\u00a0nbsp\u2009thin", "x\x1cy", "\u3000"]
    samples += [f"a{c}b{c}{c}c {c}" for c in sorted(regex_spaces)] + [f"\u00e9t\u00e9{c}" for c in "\x85\u200b\u2028"]
    for text in samples:
        assert _collapse(text) == re.sub(r"\s+", " ", text), repr(text)
        assert _clean(text) == (re.sub(r"\s+", " ", text).strip() or None), repr(text)


def expected_sections(tree: etree._Element) -> list[tuple[str, str | None, int]]:
    """(kind, heading, section index) of each paragraph, from every container's ancestors, read with XPath: the
    innermost figure or footnote around it (itself included), else its innermost div, else its area."""

    def text(nodes):
        return " ".join(" ".join(nodes).split()) or None

    areas = [(a, "abstract") for a in tree.xpath("t:teiHeader/t:profileDesc/t:abstract", namespaces=NS)]
    for name, kind in (("front", "body"), ("body", "body"), ("back", "back")):
        areas += [(a, kind) for a in tree.xpath(f"t:text/t:{name}", namespaces=NS)]
    containers = "self::t:p or self::t:figDesc or self::t:note or self::t:item or self::t:cell"
    out, numbers = [], {}
    for area, area_kind in areas:
        depth = len(area.xpath("ancestor::*"))
        for container in area.xpath(f".//*[{containers}][not(ancestor::t:listBibl)]", namespaces=NS):
            chain = container.xpath("ancestor-or-self::*", namespaces=NS)[
                depth + 1 :
            ]  # below the area, outermost first
            if any(c.xpath(containers, namespaces=NS) for c in chain[:-1]):
                continue  # not an outermost container
            special = [
                c for c in chain if c.tag.endswith("}figure") or (c.tag.endswith("}note") and c.get("place") == "foot")
            ]
            divs = [c for c in chain if c.tag.endswith("}div")]
            section = special[-1] if special else divs[-1] if divs else area
            head = text(section.xpath("t:head//text()", namespaces=NS)) if section is not area else None
            if special and section.tag.endswith("}figure"):
                label = text(section.xpath("t:label//text()", namespaces=NS))
                kind, heading = "caption", head or (f"Figure {label}" if label else "Figure caption")
            elif special:
                kind, heading = "note", head or "Footnote"
            else:
                kind, heading = area_kind, (head or "Abstract") if area_kind == "abstract" else head
            number = numbers.setdefault(section, len(numbers))
            if "".join(container.itertext()).strip() or container.xpath(".//t:ref[@type='bibr']", namespaces=NS):
                out.append((kind, heading, number))
    return out


def test_sections_and_headings_equal_an_ancestor_reading(shared):
    """Sections are handed down the walk and headings read once per section: every paragraph's kind, heading and
    section number must be what its ancestors say."""
    for path in real_tei_files(shared):
        data = path.read_bytes()
        parsed = [(p.kind, p.section_heading, p.section_index) for p in parse_tei(data, str(path)).paragraphs]
        assert parsed == expected_sections(etree.fromstring(data)), path.name


# ------------------------------------------------------------------------------------------ uncut markers


def test_a_marker_in_a_heading_and_a_nested_marker_come_as_their_own_paragraphs():
    document = parse_tei(WITH_MARKERS, "mem://markers.tei.xml")
    shape = [(p.kind, p.section_index, p.section_heading, p.text) for p in document.paragraphs]
    assert shape == [
        ("body", 0, "Intro", "We build on prior work [1]. It scales."),
        ("heading", 1, "Following Lee [2]", "Following Lee [2]"),
        ("body", 1, "Following Lee [2]", "As in (Kim, 2019) we train. Then [2] helps."),
        ("marker", 1, "Following Lee [2]", "(Kim, 2019)"),
    ]
    mentions = [[(m.start, m.end, m.text, m.bib_id) for m in p.mentions] for p in document.paragraphs]
    assert mentions == [
        [(23, 26, "[1]", "b0")],
        [(10, 17, "Lee [2]", "b1")],
        [(6, 17, "(Kim, 2019)", "b2"), (33, 36, "[2]", "b1")],
        [(6, 10, "2019", "b3")],
    ]
    # the running text is what it is without the two markers
    running = [p for p in document.paragraphs if p.kind == "body"]
    assert running == list(parse_tei(PLAIN, "mem://markers.tei.xml").paragraphs)


def test_markers_nested_thousands_deep_are_each_one_mention_of_the_outer_markers_paragraph():
    depth = 3000
    nested = '<ref type="bibr" target="#b2">' * depth + "[9]" + "</ref>" * depth
    document = parse_tei(marker_tei("Method", nested), "mem://deep.tei.xml")
    [marker] = [p for p in document.paragraphs if p.kind == "marker"]
    assert marker.text == "[9]"
    assert len(marker.mentions) == depth - 1
    assert {(m.start, m.end, m.text) for m in marker.mentions} == {(0, 3, "[9]")}


def test_a_heading_is_no_body():
    data = (
        b'<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title>T</title></titleStmt>'
        b'</fileDesc></teiHeader><text><body><div><head>See <ref type="bibr">[1]</ref></head></div></body></text></TEI>'
    )
    letter = parse_document(data, "mem://heading-only.tei.xml", "tei")
    assert isinstance(letter, DeadLetter) and letter.reason == "no_body"


def test_every_marker_of_the_real_tei_is_a_mention_of_its_kind(shared):
    """On the real TEI, and on each with markers put in its headings and inside its markers (same text): every
    marker is a mention, those of headings in "heading" paragraphs, the nested ones in "marker" paragraphs, as
    XPath counts them; the running paragraphs stay as they were."""
    heading_total = nested_total = 0
    for path in real_tei_files(shared):
        original = path.read_bytes()
        for data in (original, with_uncut_markers(original)):
            document = parse_tei(data, str(path))
            tree = etree.fromstring(data)
            per_kind = {}
            for p in document.paragraphs:
                per_kind[p.kind] = per_kind.get(p.kind, 0) + len(p.mentions)
            assert sum(per_kind.values()) == markers(tree), path.name
            assert per_kind.get("heading", 0) == heading_markers(tree), path.name
            assert per_kind.get("marker", 0) == nested_markers(tree), path.name
            running = [p for p in document.paragraphs if p.kind not in ("heading", "marker")]
            assert running == list(parse_tei(original, str(path)).paragraphs), path.name
            if data is not original:
                heading_total += per_kind.get("heading", 0)
                nested_total += per_kind.get("marker", 0)
    assert heading_total > 100 and nested_total > 500, (heading_total, nested_total)
