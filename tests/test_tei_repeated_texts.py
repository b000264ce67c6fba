"""A document's paragraphs without markers that repeat a text (table cells: "-", "0.5", "Yes") have the sentences
the splitter gives that text, found once per document; paragraphs with markers are split around their markers."""

from __future__ import annotations

import extractors.documents.tei
from extractors.documents.sentences import split_sentences
from extractors.documents.tei import parse_tei

TABLE_TEI = b"""<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title type="main">Tables</title>
</titleStmt><sourceDesc><biblStruct><idno type="arXiv">2101.00002</idno></biblStruct></sourceDesc></fileDesc>
</teiHeader><text><body><div><head>Results</head>
<p>Scores are in the table. We follow <ref type="bibr" target="#b0">[1]</ref>. The table is new.</p>
<figure type="table"><head>Table 1</head><figDesc>Scores. Higher is better.</figDesc><table>
<row><cell>Model</cell><cell>F1 e.g. here.</cell><cell>Yes</cell></row>
<row><cell>Ours</cell><cell>F1 e.g. here.</cell><cell>Yes</cell></row>
<row><cell>Theirs</cell><cell>F1 e.g. here.</cell><cell><hi>Yes</hi></cell></row>
</table></figure>
<p>It ends. Yes</p></div></body>
<back><div><listBibl><biblStruct xml:id="b0"><analytic><title>Cited</title></analytic></biblStruct></listBibl></div>
</back></text></TEI>"""


def test_repeated_texts_are_split_once_and_every_paragraph_has_its_sentences(monkeypatch):
    calls: list[str] = []

    def counted(text, marker_spans=()):
        calls.append(text)
        return split_sentences(text, marker_spans)

    monkeypatch.setattr(extractors.documents.tei, "split_sentences", counted)
    document = parse_tei(TABLE_TEI, "mem://tables.tei.xml")
    texts = [p.text for p in document.paragraphs]
    assert texts == [
        "Scores are in the table. We follow [1]. The table is new.",
        "Scores. Higher is better.",
        "Model",
        "F1 e.g. here.",
        "Yes",
        "Ours",
        "F1 e.g. here.",
        "Yes",
        "Theirs",
        "F1 e.g. here.",
        "Yes",
        "It ends. Yes",
    ]
    for paragraph in document.paragraphs:  # what the splitter gives each text, around its markers
        spans = [(m.start, m.end) for m in paragraph.mentions]
        assert paragraph.sentences == split_sentences(paragraph.text, spans), paragraph.text
    assert [p.text[a:b] for p in document.paragraphs[:1] for a, b in p.sentences] == [
        "Scores are in the table.",
        "We follow [1].",
        "The table is new.",
    ]
    assert sorted(calls) == sorted(set(texts)), "each distinct text split once"
