"""Absence statements in the CitationR mention rules (docs/citationr.md). A negated report or inclusion
with its subject between ("does not report ... such as X", "why does the paper not include a comparison with X")
is a request mood, "lacked" reads as "lacks", and "missing reference to/of" is a lead that names a work. Every
expected mention and decision is worked out by hand."""

from __future__ import annotations

from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.records import RECOMMENDED

WEAKNESSES = ((0, "weaknesses"),)


def _found(text: str) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in extract_review_mentions(text, WEAKNESSES)]


def test_a_negated_report_or_inclusion_asks_for_the_works_it_names():
    text = "The paper does not report results on widely adopted benchmarks such as MMBench, MME, or MM-Vet."
    assert _found(text) == [("MMBench", RECOMMENDED), ("MME", RECOMMENDED), ("MM-Vet", RECOMMENDED)]
    text = "Why does the paper not include a comparison with AlphaFold 3 on the PoseBusters benchmark?"
    assert _found(text) == [("AlphaFold 3", RECOMMENDED)]
    text = "The authors did not evaluate against strong baselines such as DreamBooth."
    assert _found(text) == [("DreamBooth", RECOMMENDED)]
    # the same names where the sentence says what the submission does: not asked for
    for text in (
        "The paper reports results on widely adopted benchmarks such as MMBench, MME, or MM-Vet.",
        "The paper includes a comparison with AlphaFold 3 on the PoseBusters benchmark.",
        "The method does not use LoRA, unlike methods such as DreamBooth.",  # "use" is not an absence of a work
    ):
        assert all(kind != RECOMMENDED for _, kind in _found(text)), text


def test_lacked_reads_as_lacks():
    text = "Then, the comparison with other optimization schemes lacked, such as Momentum, RMSprop, Adadelta."
    assert _found(text) == [("Momentum", RECOMMENDED), ("RMSprop", RECOMMENDED), ("Adadelta", RECOMMENDED)]
    # a lack of something that is not a work stays no cue
    text = "The comparison with methods such as Momentum lacked error bars."
    assert all(kind != RECOMMENDED for _, kind in _found(text))


def test_missing_reference_to_a_name_is_a_work_slot():
    assert _found("minor: L208 missing reference of LoRA") == [("LoRA", RECOMMENDED)]
    assert _found("line 240: missing reference to GLUE benchmark") == [("GLUE", RECOMMENDED)]
    assert _found("Is there a lack of citations for DeepONet?") == [("DeepONet", RECOMMENDED)]
    # without the lead, a lone name in the same line is no mention; a reference to a table or line is none either
    assert _found("minor: L208 typo in LoRA") == []
    assert _found("missing reference to Table 3 in line 20") == []
