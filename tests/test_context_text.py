"""Context text as ACL-200 writes it: single spaces around TARGETCIT and OTHERCIT, a plain 200-character cut
each side (words cut where the count ends), checked by hand, on real documents, and on ACL-200's own contexts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from extractors.contexts import ContextConfig, cut_contexts, non_overlapping_mentions
from extractors.documents.files import parse_document_file
from mapping.records import Paragraph, ParsedDocument
from tests.support.counters import counter_dict
from tests.support.documents import document
from tests.support.documents import paragraph as cited_paragraph

TARGET = " TARGETCIT "
DEFAULT = ContextConfig()
WINDOW = DEFAULT.char_window


def paragraph(text: str, markers: tuple[str, ...], section: int = 0) -> Paragraph:
    """A paragraph whose markers (found in order in `text`) cite b0, b1, ... in turn."""
    return cited_paragraph(text, [(marker, f"b{k}") for k, marker in enumerate(markers)], section)


def contexts_of(*paragraphs: Paragraph, config: ContextConfig = DEFAULT) -> list[tuple[str, str]]:
    """(char_context, sentence_context) of every marker, in order (every bib id resolves to its own paper)."""
    resolved = {f"b{k}": f"P{k}" for k in range(10)}
    citing = document(paragraphs, date=None)
    return [(c.char_context, c.sentence_context) for c in cut_contexts(citing, resolved, config)]


# ------------------------------------------------------------------------------------------ by hand


@pytest.mark.parametrize(
    "text, markers, want",
    [
        ("We use BERT [1] here.", ("[1]",), "We use BERT TARGETCIT here."),  # space before and after
        ("We use BERT[1] here.", ("[1]",), "We use BERT TARGETCIT here."),  # no space before
        ("We use BERT [1], here.", ("[1]",), "We use BERT TARGETCIT , here."),  # punctuation after
        ("as shown by [1].", ("[1]",), "as shown by TARGETCIT ."),  # ACL-200: "word TARGETCIT .", not "word TARGETCIT."
        ("BERT  [1]\n\tdid\u00a0it.", ("[1]",), "BERT TARGETCIT did it."),  # whitespace runs of any kind
        # ACL-200's own: "the Pyramid ( TARGETCIT ; OTHERCIT) and"
        (
            "the Pyramid (Nenkova, 2004; Lee, 2005) and",
            ("Nenkova, 2004", "Lee, 2005"),
            "the Pyramid ( TARGETCIT ; OTHERCIT) and",
        ),
    ],
)
def test_targetcit_has_one_space_each_side_whatever_stood_beside_the_marker(text, markers, want):
    (char, sentence), *_ = contexts_of(paragraph(text, markers))
    assert char == sentence == want


def test_adjacent_markers_stay_apart_as_tokens_with_single_spaces():
    glued = paragraph("Both [3][4] agree.", ("[3]", "[4]"))
    spaced = paragraph("Both [3] [4] agree.", ("[3]", "[4]"))
    want = ["Both TARGETCIT OTHERCIT agree.", "Both OTHERCIT TARGETCIT agree."]
    assert [c for c, _ in contexts_of(glued)] == [c for c, _ in contexts_of(spaced)] == want
    # other markers keep the punctuation beside them and get a space only where they would touch a word
    [(char, _), *_] = contexts_of(paragraph("See [1], and CoNLL[2] (Lee, 2005).", ("[1]", "[2]", "Lee, 2005")))
    assert char == "See TARGETCIT , and CoNLL OTHERCIT (OTHERCIT)."


def test_marker_at_a_paragraph_start_or_end_joins_the_neighbour_with_one_space():
    first = paragraph("Intro ends here [1]", ("[1]",))
    second = paragraph("[1] opens this one.", ("[1]",))
    (end_char, end_sentence), (start_char, start_sentence) = contexts_of(first, second)
    assert end_char == "Intro ends here TARGETCIT OTHERCIT opens this one."
    assert start_char == "Intro ends here OTHERCIT TARGETCIT opens this one."
    # sentences are whole: no outer whitespace, TARGETCIT may open or close one
    assert end_sentence == "Intro ends here TARGETCIT OTHERCIT opens this one."
    assert start_sentence == "Intro ends here OTHERCIT TARGETCIT opens this one."
    [(alone_char, alone_sentence)] = contexts_of(paragraph("[1] opens the document.", ("[1]",)))
    assert alone_char == " TARGETCIT opens the document."  # as DualLCR's text[:600] + ' TARGETCIT ' writes it
    assert alone_sentence == "TARGETCIT opens the document."
    [(last_char, last_sentence)] = contexts_of(paragraph("It closes with [1]", ("[1]",)))
    assert (last_char, last_sentence) == ("It closes with TARGETCIT ", "It closes with TARGETCIT")


@pytest.mark.parametrize(
    "window, want",
    [
        # "one two three four" is 18 characters, "five six seven eight" 20: the cut keeps part of a word
        (12, "o three four TARGETCIT five six sev"),
        (9, "hree four TARGETCIT five six "),  # a cut just after a space keeps that space
        (15, " two three four TARGETCIT five six seven "),  # both cuts fall on a space: one kept each side
        (40, "one two three four TARGETCIT five six seven eight"),  # the text runs out first: no spaces added
    ],
)
def test_the_window_is_a_plain_character_count_cutting_words(window, want):
    [(char, _)] = contexts_of(
        paragraph("one two  three four [1] five six seven\neight", ("[1]",)), config=ContextConfig(window)
    )
    assert char == want


def test_the_200_character_window_cuts_a_word_on_both_sides():
    left = " ".join(f"left{k:02d}" for k in range(40))  # 40 x 7 - 1 = 279 characters
    right = " ".join(f"right{k:03d}" for k in range(30))  # 30 x 9 - 1 = 269 characters
    [(char, _)] = contexts_of(paragraph(f"{left} [1] {right}", ("[1]",)))
    before, after = char.split(TARGET)
    assert len(before) == len(after) == 200
    # 279 - 200 = 79 = 11 x 7 + 2: "left11" loses "le"; 200 = 22 x 9 + 2: "right022" keeps "ri"
    assert before.startswith("ft11 left12") and before.endswith("left39")
    assert after.startswith("right000") and after.endswith("right021 ri")


# ------------------------------------------------------------------------------------------ properties


def check_context_text(char: str, sentence: str, window: int = WINDOW) -> None:
    """What every context must look like (the rule in extractors/contexts.py's docstring)."""
    for text in (char, sentence):
        assert not re.search(r"\s\s", text), f"a run of whitespace: {text!r}"
        assert not re.search(r"[^\S ]", text), f"whitespace other than a space: {text!r}"
        assert text.count("TARGETCIT") == 1, text
        assert not re.search(r"[^\W_](TARGETCIT|OTHERCIT)|(TARGETCIT|OTHERCIT)[^\W_]", text), text
    assert char.count(TARGET) == 1, char
    before, after = char.split(TARGET)
    assert len(before) <= window and len(after) <= window, char
    # the spaces beside TARGETCIT are its own; outer whitespace only where a full window was cut on a space
    assert before == before.rstrip() and after == after.lstrip(), char
    assert before == before.lstrip() or len(before) == window, char
    assert after == after.rstrip() or len(after) == window, char
    # the sentence view has no outer whitespace at all, TARGETCIT included
    assert sentence == sentence.strip(), sentence
    assert re.search(r"(^| )TARGETCIT( |$)", sentence), sentence


def real_documents(shared: Path) -> list[ParsedDocument]:
    files = [(p, "tei") for p in sorted((shared / "grobid").rglob("*.xml"))]
    files += [(p, "s2orc") for p in sorted((shared / "s2orc").rglob("*.json"))]
    files += [(p, "s2orc") for p in sorted((shared / "grobid").rglob("*.json"))]
    documents = [d for p, kind in files for d in parse_document_file(p.read_bytes(), str(p), kind)]
    assert all(isinstance(d, ParsedDocument) for d in documents), [
        d for d in documents if not isinstance(d, ParsedDocument)
    ]
    return documents


def _unmasked_words(paragraphs: list[Paragraph]) -> str:
    """The document's text outside the markers cut_contexts keeps, without whitespace: what a context may show."""
    out = []
    for par in paragraphs:
        kept, _ = non_overlapping_mentions(par.mentions)
        covered = {i for m in kept for i in range(m.start, m.end)}
        out.append("".join(ch for i, ch in enumerate(par.text) if i not in covered))
    return re.sub(r"\s+", "", "".join(out))


def _without_tokens(text: str) -> str:
    return re.sub(r"\s+|OTHERCIT", "", text)


def test_every_context_of_the_real_documents_has_the_published_spacing(shared):
    documents = real_documents(shared)
    assert len(documents) >= 45, "the TEI and S2ORC papers of ../shared/data"
    total = 0
    for doc in documents:
        resolved = {entry.bib_id: f"P{k}" for k, entry in enumerate(doc.bib_entries)}  # every link a context
        count, counts = counter_dict()
        contexts = cut_contexts(doc, resolved, count=count)
        dropped = sum(v for k, v in counts.items() if k.startswith("dropped_"))
        assert counts.get("mentions", 0) == len(contexts) + dropped, doc.paper_id
        words = _unmasked_words(list(doc.paragraphs))
        for c in contexts:
            check_context_text(c.char_context, c.sentence_context)
            before, after = c.char_context.split(TARGET)
            # no text lost or doubled: the window is the document's text, cut only where the count ends (where
            # it may cut an OTHERCIT: 8 characters off each end still leave a substring to find)
            before_words, after_words = _without_tokens(before), _without_tokens(after)
            assert (before_words[8:] + after_words[:-8]) in words, c.context_id
            if len(before) < WINDOW:
                assert words.startswith(before_words + after_words[:-8]), c.context_id
            if len(after) < WINDOW:
                assert words.endswith(before_words[8:] + after_words), c.context_id
        total += len(contexts)
    assert total > 2000, "every linked mention of the real papers should give a context"


# ------------------------------------------------------------------------------------------ ACL-200 itself


@pytest.fixture(scope="module")
def acl200(shared: Path) -> list[str]:
    examples = json.loads((shared / "peers/hatten-acl200/contexts_papers_examples_from_README.json").read_text())
    texts = [c["masked_text"] for c in examples["contexts"].values()] + [examples["context_test_set_100_masked_text"]]
    assert len(texts) == 2
    return texts


def test_acl200_contexts_have_the_properties_we_check_on_ours(acl200):
    for text in acl200:
        # ACL-200 has no sentence view; its context must pass every check on char_context
        check_context_text(text, text.strip())
        before, after = text.split(TARGET)
        assert len(before) == len(after) == WINDOW  # a plain count, both sides full
    # a cut word is kept, a cut on a space keeps the space; OTHERCIT keeps its brackets; "( TARGETCIT ;"
    assert acl200[0].endswith("the results are s") and acl200[0].startswith(" retaining")
    assert acl200[1].startswith(" score of the last")
    assert "Pyramid ( TARGETCIT ; OTHERCIT) and" in acl200[0] and "metrics (OTHERCIT)." in acl200[0]


@pytest.mark.parametrize("spacing", ["", " "], ids=["marker-glued", "marker-spaced"])
def test_our_cut_reproduces_acl200_contexts_from_their_running_text(acl200, spacing):
    """Put the text back around a marker (each OTHERCIT back as a marker too), cut it: we get their context."""
    for text in acl200:
        before, after = text.split(TARGET)
        pieces = re.split(r"(OTHERCIT)", f"Earlier words{before}{spacing}[T]{spacing}{after}ummary and more words")
        raw = "".join("Lee et al., 2005" if p == "OTHERCIT" else p for p in pieces)
        other = "Lee et al., 2005"
        markers = [other] * before.count("OTHERCIT") + ["[T]"] + [other] * after.count("OTHERCIT")
        contexts = contexts_of(paragraph(raw, tuple(markers)))
        assert contexts[before.count("OTHERCIT")][0] == text
