"""Round 6 of the CitationR mention rules (docs/citationr.md, precision): a listed name read from its list's lead,
quoted item labels, request verbs read only as requests, one reading of a name per review, questions about
extending the method. Every expected decision is worked out by hand."""

from __future__ import annotations

from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.classify import settle_names
from extractors.reviews.records import DISCUSSED, RECOMMENDED

WEAKNESSES = ((0, "weaknesses"),)


def _kinds(text: str, source: str = "name") -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in extract_review_mentions(text, WEAKNESSES) if m.source == source]


def test_a_listed_name_is_read_from_its_lists_lead():
    # "The considered LLMs only include" names the submission's own models: the second name too, not only the first
    text = "The considered LLMs only include Llama3-8B and Mistral-7B, which could be insufficient."
    assert _kinds(text) == [("Llama3-8B", DISCUSSED), ("Mistral-7B", DISCUSSED)]
    # a request before the list still reaches every name in it
    text = "The authors should compare with baselines such as DinoV2, BGE or NV-Embed."
    assert _kinds(text) == [("DinoV2", RECOMMENDED), ("BGE", RECOMMENDED), ("NV-Embed", RECOMMENDED)]


def test_a_quoted_item_label_is_not_a_title():
    text = "\u201cW2. Unclear Problem Definition and Missing Justification.\u201d What should the authors discuss?"
    assert [m for m in extract_review_mentions(text, WEAKNESSES) if m.source == "quoted_title"] == []
    # the same words without the label are a quoted title
    text = "The authors should cite \u201cUnclear Problem Definition and Missing Justification\u201d (2021)."
    assert [m.kind for m in extract_review_mentions(text, WEAKNESSES) if m.source == "quoted_title"] == [RECOMMENDED]


def test_request_verbs_count_only_as_requests():
    # "considering", "suggests" describe; "I suggest", "consider" ask
    assert _kinds("GMS is better when considering cost, similar to SN-DDPM in spirit.") == [
        ("SN-DDPM", RECOMMENDED)  # "similar to" before the name: a strong cue, whatever the verbs
    ]
    assert _kinds("Table 1 suggests that the model underperforms baselines such as GPT-4V.") == [("GPT-4V", DISCUSSED)]
    assert _kinds("I suggest comparing against baselines such as GPT-4V.") == [("GPT-4V", RECOMMENDED)]
    assert _kinds("Please consider baselines such as GPT-4V.") == [("GPT-4V", RECOMMENDED)]
    assert _kinds("Why did you not evaluate on benchmarks like BLINK?") == [("BLINK", RECOMMENDED)]


def test_a_name_the_review_says_the_submission_reports_over_is_not_recommended_elsewhere():
    text = (
        "The authors assert that GMS outperforms SN-DDPM when considering computational cost. "
        "How does GMS compare to SN-DDPM with 100 steps?"
    )
    assert _kinds(text) == [("SN-DDPM", DISCUSSED), ("SN-DDPM", DISCUSSED)]
    (_, second) = [m for m in extract_review_mentions(text, WEAKNESSES) if m.source == "name"]
    assert second.reason == "used_elsewhere"
    # a strong cue in its own sentence still recommends it; a name used nowhere else is untouched
    text = "The authors assert that GMS outperforms SN-DDPM. A comparison with SN-DDPM is missing from Table 2."
    assert _kinds(text) == [("SN-DDPM", DISCUSSED), ("SN-DDPM", RECOMMENDED)]
    assert _kinds("How does GMS compare to SN-DDPM with 100 steps?") == [("SN-DDPM", RECOMMENDED)]
    assert settle_names([]) == []


def test_a_question_about_extending_the_method_asks_for_the_models_it_names():
    text = "Could this method extend to encoder-only models like BERT or T5?"
    assert _kinds(text) == [("BERT", RECOMMENDED), ("T5", RECOMMENDED)]
    assert _kinds("The method extends prior models like BERT.") == [("BERT", DISCUSSED)]
