"""Hand-made documents for the context and transform tests: paragraphs whose mention offsets are found in their
text, a document around them, and a small GROBID TEI with GROBID's own `<s>` sentences."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from extractors.documents.sentences import split_sentences
from mapping.records import BibEntry, Mention, Paragraph, ParsedDocument

CITING = "2001.00001"


def paragraph(
    text: str,
    cites: Sequence[tuple[str, str | None]] = (),
    section: int = 0,
    heading: str | None = "Intro",
    sentences: Sequence[tuple[int, int]] | None = None,
) -> Paragraph:
    """`cites` are (marker text, bib id) in order of appearance; offsets are found in `text`. Sentences, unless
    given, are the splitter's (which keeps a marker inside its sentence)."""
    mentions, cursor = [], 0
    for marker, bib in cites:
        start = text.index(marker, cursor)
        mentions.append(Mention(start, start + len(marker), marker, bib))
        cursor = start + len(marker)
    if sentences is None:
        sentences = split_sentences(text, [(m.start, m.end) for m in mentions])
    return Paragraph(text, section, heading, tuple(sentences), tuple(mentions))


def document(
    paragraphs: Sequence[Paragraph] = (),
    bibs: Sequence[str] | None = None,
    *,
    paper_id: str = CITING,
    source: str = "mem",
    source_format: str = "tei",
    title: str | None = "T",
    date: dt.date | None = dt.date(2020, 1, 5),
    year: int | None = 2020,
    **fields,
) -> ParsedDocument:
    """A parsed document of `paragraphs`; its bib entries are `bibs` (ids only), by default every bib id its
    mentions name."""
    if bibs is None:
        bibs = sorted({m.bib_id for p in paragraphs for m in p.mentions if m.bib_id})
    return ParsedDocument(
        paper_id=paper_id,
        source=source,
        source_format=source_format,
        title=title,
        abstract=None,
        authors=(),
        paragraphs=tuple(paragraphs),
        bib_entries=tuple(b if isinstance(b, BibEntry) else BibEntry(b) for b in bibs),
        date=date,
        year=year,
        **fields,
    )


# A GROBID 0.8 TEI with `<s>` sentences and `coords` attributes, an arXiv id with a version, two linked markers.
SEGMENTED_TEI = b"""<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0" xml:space="preserve"><teiHeader><fileDesc><titleStmt>
<title type="main" level="a">A Segmented Paper</title></titleStmt><sourceDesc><biblStruct>
<idno type="arXiv">arXiv:2101.00001v3</idno></biblStruct></sourceDesc></fileDesc></teiHeader>
<text><body><div><head n="1">Intro</head>
<p coords="1,2,3,4,5"><s coords="1,2,3,4,5">First sentence cites <ref target="#b0" type="bibr" coords="1,1,1,1,1">[1]</ref>.</s><s>Second one, by
   J. Smith et al. in Fig. 2, cites <ref type="bibr" target="#b1">[2]</ref> again.</s></p>
</div></body><back><div type="references"><listBibl>
<biblStruct xml:id="b0"><analytic><title type="main" level="a">Cited One</title></analytic>
<monogr><imprint><date when="2019" type="published">2019</date></imprint></monogr></biblStruct>
<biblStruct xml:id="b1"><analytic><title level="a" type="main">Cited Two</title></analytic>
<monogr><title level="j">Journal</title><imprint/></monogr>
<idno type="DOI">10.1000/ABC</idno><note type="raw_reference">Cited Two. Journal.</note></biblStruct>
</listBibl></div></back></text></TEI>"""
