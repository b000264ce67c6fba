"""Markers no context is cut from, read straight from a TEI's XML (without `extractors.documents.tei`): those in a
section heading and those nested in another marker; a real TEI given some of each without changing its text; and a
small hand-made TEI with one of each (`WITH_MARKERS`), beside the same TEI without them (`PLAIN`)."""

from __future__ import annotations

from lxml import etree

NS = {"t": "http://www.tei-c.org/ns/1.0"}
TEI = "{http://www.tei-c.org/ns/1.0}"
# where a GROBID TEI's text is: the abstract, the front, the body and the back, less the bibliography
AREAS = "(//t:teiHeader/t:profileDesc/t:abstract | //t:text/t:front | //t:text/t:body | //t:text/t:back)"
OUTSIDE = "not(ancestor::t:listBibl)"
IN_A_PARAGRAPH = "ancestor::t:p or ancestor::t:figDesc or ancestor::t:note or ancestor::t:item or ancestor::t:cell"
MARKER = 't:ref[@type="bibr"]'


def markers(tree: etree._Element) -> int:
    """Every marker of the text."""
    return len(tree.xpath(f"{AREAS}//{MARKER}[{OUTSIDE}]", namespaces=NS))


def heading_markers(tree: etree._Element) -> int:
    """Markers in a section `head` (one outside any paragraph), not inside another marker."""
    path = f"{AREAS}//t:head[{OUTSIDE} and not({IN_A_PARAGRAPH})]//{MARKER}[not(ancestor::{MARKER})]"
    return len(tree.xpath(path, namespaces=NS))


def nested_markers(tree: etree._Element) -> int:
    """Markers inside another marker, at any depth."""
    return len(tree.xpath(f"{AREAS}//{MARKER}[{OUTSIDE}]//{MARKER}", namespaces=NS))


def with_uncut_markers(data: bytes, every: int = 4) -> bytes:
    """The TEI with the last word of each section heading (of two words or more) made a marker, and the text of
    every `every`-th marker made a marker inside it: the same text everywhere, headings included, so the same
    contexts, with markers that give none."""
    root = etree.fromstring(data)
    heads = root.xpath(f"{AREAS}//t:div/t:head[{OUTSIDE}]", namespaces=NS)
    for head in heads:
        words = (head.text or "").rsplit(" ", 1)
        if len(head) == 0 and len(words) == 2 and words[1].strip():
            head.text = words[0] + " "
            ref = etree.SubElement(head, f"{TEI}ref", type="bibr", target="#b0")
            ref.text = words[1]
    plain = [ref for ref in root.xpath(f"{AREAS}//{MARKER}[{OUTSIDE}]", namespaces=NS) if len(ref) == 0 and ref.text]
    for ref in plain[::every]:
        inner = etree.SubElement(ref, f"{TEI}ref", type="bibr")
        if ref.get("target"):
            inner.set("target", ref.get("target"))
        inner.text, ref.text = ref.text, None
    return etree.tostring(root)


def marker_tei(heading: str, cited: str) -> bytes:
    """A TEI whose second section's heading is `heading` and whose second paragraph cites with `cited`."""
    bibs = "".join(
        f'<biblStruct xml:id="b{k}"><analytic><title>Cited {k}</title></analytic></biblStruct>' for k in range(4)
    )
    return (
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title type="main">Heads</title>'
        "</titleStmt></fileDesc></teiHeader><text><body>"
        '<div><head n="1">Intro</head><p>We build on prior work <ref type="bibr" target="#b0">[1]</ref>. It scales.</p>'
        f'</div><div><head n="2">{heading}</head><p>As in {cited} we train. Then <ref type="bibr" target="#b1">[2]</ref>'
        f" helps.</p></div></body><back><div><listBibl>{bibs}</listBibl></div></back></text></TEI>"
    ).encode()


# a marker in the heading; a marker nested in another, whose text (all of it) is the outer marker's
WITH_MARKERS = marker_tei(
    'Following <ref type="bibr" target="#b1">Lee [2]</ref>',
    '<ref type="bibr" target="#b2">(Kim, <ref type="bibr" target="#b3"> 2019</ref>)</ref>',
)
PLAIN = marker_tei("Following Lee [2]", '<ref type="bibr" target="#b2">(Kim, 2019)</ref>')
