"""The per-form title measurement (`bench.citationr.title_forms`) on hand-written reviews whose forms were read by
hand: where a title is written, which forms it has, which numbered lines are comments and why a title was missed."""

from __future__ import annotations

import pytest

from bench.citationr.fit_decision import Case
from bench.citationr.title_forms import (
    comment_titles,
    forms_at,
    is_comment_line,
    locate,
    miss_reason,
    title_records,
)
from extractors.reviews.records import RECOMMENDED, PaperMention, Review

pytestmark = pytest.mark.unit

REVIEW = (
    "Summary: the paper proposes a sampler.\n"
    "1. The ablation in Table 2 lacks a baseline.\n"
    "2. Why is the learning rate so small?\n"
    'The authors should discuss "Deep Residual Learning for Image Recognition" and compare.\n'
    "Missing references:\n"
    "[1] Kingma, D. P. and Ba, J. (2015). Adam: A Method for Stochastic\n"
    "Optimization. In ICLR.\n"
    "[2] Attention Is All You Need. Vaswani, A. et al., NeurIPS 2017.\n"
    "- Denoising Diffusion Probabilistic Models\n"
    "@inproceedings{song2021score,\n"
    "  title     = {Score-Based Generative Modeling through Stochastic Differential Equations},\n"
    "  author={Song, Yang},\n"
    "}\n"
    "It also relates to layer normalization by Ba et al. in spirit.\n"
)


def _span(title: str) -> tuple[int, int]:
    span = locate(REVIEW, title, exact_only=False)
    assert span is not None, title
    return span


def test_a_title_is_located_across_a_line_end_and_in_any_case():
    start, end = _span("Adam: a method for stochastic optimization")
    assert REVIEW[start:end] == "Adam: A Method for Stochastic\nOptimization"
    assert locate(REVIEW, "Adam: a method for stochastic optimization", exact_only=True) == (start, end)


def test_a_hand_corrected_title_is_located_fuzzily_but_not_when_exact_is_asked():
    corrected = "Score-based generative modelling through stochastic differential equations"  # "modelling"
    assert locate(REVIEW, corrected, exact_only=True) is None
    start, end = locate(REVIEW, corrected, exact_only=False)
    assert "Score-Based Generative Modeling" in REVIEW[start:end]
    assert locate(REVIEW, "Neural Ordinary Differential Equations for Sampling") is None


@pytest.mark.parametrize(
    "title, forms",
    [
        ("Adam: A Method for Stochastic\nOptimization", {"across_line_end", "author_year_then_title", "numbered_list"}),
        ("Attention Is All You Need", {"title_then_authors_year", "numbered_list"}),
        ("Denoising Diffusion Probabilistic Models", {"bulleted_list"}),
        ("Score-Based Generative Modeling through Stochastic Differential Equations", {"bibtex"}),
        ("Deep Residual Learning for Image Recognition", {"quoted"}),
        ("layer normalization", {"prose"}),
    ],
)
def test_each_form_is_read_from_the_text_around_the_title(title, forms):
    start = REVIEW.index(title)
    assert set(forms_at(REVIEW, start, start + len(title))) == forms


def test_numbered_comment_lines_are_told_from_numbered_references():
    assert is_comment_line("1. The ablation in Table 2 lacks a baseline.")
    assert is_comment_line("(3) Why not compare with GPT-2?")
    assert not is_comment_line("[1] Kingma, D. P. and Ba, J. (2015). Adam: A Method for Stochastic")
    assert not is_comment_line("[2] Attention Is All You Need. Vaswani, A. et al., NeurIPS 2017.")
    assert not is_comment_line("The ablation in Table 2 lacks a baseline.")


def _mention(text: str, title: str | None, kind: str = RECOMMENDED, source: str = "reference_entry") -> PaperMention:
    start = REVIEW.index(text)
    return PaperMention(start=start, end=start + len(text), text=text, source=source, title=title, kind=kind)


def _case(titles: tuple[str, ...]) -> Case:
    review = Review("r1", "s1", REVIEW, (), "official", 2024, "test")
    return Case("neurips-2023-2025", "test", review, True, (), titles)


def test_a_missed_title_is_put_down_to_its_cause():
    title = "Attention Is All You Need"
    span = _span(title)
    whole = _mention("Attention Is All You Need. Vaswani", title, kind="discussed")
    truncated = _mention("Attention Is All", "Attention Is All")
    elsewhere = _mention("Denoising Diffusion Probabilistic Models", "Denoising Diffusion Probabilistic Models")
    assert miss_reason(title, span, [whole, elsewhere]) == "decided_against"
    assert miss_reason(title, span, [truncated, elsewhere]) == "cut_wrong"
    assert miss_reason(title, span, [elsewhere]) == "no_candidate"
    assert miss_reason(title, None, [whole]) == "not_located"


def test_title_records_count_a_hit_only_for_a_recommended_title():
    titles = ("Attention Is All You Need", "Denoising Diffusion Probabilistic Models", "A Title Nobody Wrote Here")
    recommended = _mention("Attention Is All You Need. Vaswani", "Attention Is All You Need")
    discussed = _mention(
        "Denoising Diffusion Probabilistic Models", "Denoising Diffusion Probabilistic Models", kind="discussed"
    )
    records = title_records(_case(titles), [recommended, discussed], [discussed], [recommended, discussed])
    assert [(r.model, r.rules) for r in records] == [(True, False), (False, False), (False, False)]
    assert [r.model_miss for r in records] == ["", "decided_against", "not_located"]
    assert records[2].forms == ("not_located",)


def test_a_title_cut_from_a_numbered_comment_is_false_unless_labelled():
    from_comment = _mention("1. The ablation in Table 2 lacks a baseline.", "The ablation in Table 2 lacks a baseline")
    from_reference = _mention("Attention Is All You Need. Vaswani", "Attention Is All You Need")
    lines, cut, false = comment_titles(_case(("Attention Is All You Need",)), [from_comment, from_reference])
    assert (lines, cut, false) == (2, 1, ["reference_entry"])
    labelled = _case(("The ablation in Table 2 lacks a baseline",))
    assert comment_titles(labelled, [from_comment]) == (2, 1, [])
