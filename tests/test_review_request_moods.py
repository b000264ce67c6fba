"""Request moods and the shapes they reach (docs/citationr.md): author-year citations decided by the request mood
a work named by name is, contractions read as the cues' "did not", single-author citations with a double-barrelled
surname or an apostrophe year, names with non-ASCII capitals, "comparison between"/"differs from" as work slots and
"Authors et al. Title" lines under "... cite:". Every expected mention and decision is worked out by hand."""

from __future__ import annotations

from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.references import authored_title_line
from extractors.reviews.records import RECOMMENDED

WEAKNESSES = ((0, "weaknesses"),)


def _found(text: str) -> list[tuple[str, str, str]]:
    return [(m.source, m.text, m.kind) for m in extract_review_mentions(text, WEAKNESSES)]


def test_an_author_year_in_a_request_mood_is_recommended():
    # asked for: a wish, a question to the authors, "what is the difference"
    for text, work in (
        ("For instance, I would like to see the comparison between DeepCS and SmartHash by Tang et al 2017.", "Tang"),
        ("How does Theorem 4.1 compare with the results of Khemakhem et al. (2020)?", "Khemakhem"),
        ("What is the difference between Theorem 4.3 and the result from (Lacoste-Julien 2016)?", "Lacoste-Julien"),
    ):
        (mention,) = [m for m in extract_review_mentions(text, WEAKNESSES) if m.source == "author_year"]
        assert mention.text.startswith(work) and mention.kind == RECOMMENDED, text
        assert mention.reason == "request_mood", text


def test_an_author_year_the_submission_uses_or_only_mentions_is_not():
    for text in (
        # no request mood at all
        "The overall error model in this paper is borrowed from Roy et al. (2019).",
        # what the submission does with it comes last before it
        "The authors use the sampler of Smith et al. (2020), and they should explain why.",
        # a result over it
        "Could the gains be noise? The method outperforms Smith et al. (2020) by 0.1 only.",
    ):
        (mention,) = [m for m in extract_review_mentions(text, WEAKNESSES) if m.source == "author_year"]
        assert mention.kind != RECOMMENDED, text


def test_contractions_read_as_did_not_but_a_modal_question_asks_nothing():
    text = "I wonder why the authors didn\u2019t compare or mention optimizers such as ADAM and ADAGRAD."
    assert _found(text) == [("name", "ADAM", RECOMMENDED), ("name", "ADAGRAD", RECOMMENDED)]
    # without the contraction read, neither is asked for: the same sentence with "did" alone
    assert all(kind != RECOMMENDED for _, _, kind in _found("I wonder why the authors did compare ADAM."))
    (mention,) = extract_review_mentions('Figure 2: shouldn\'t the caption be "Top - PC, Bottom - NAM"?', WEAKNESSES)
    assert mention.kind != RECOMMENDED


def test_single_author_citations_with_double_surnames_and_apostrophe_years():
    found = _found("For Bloom filters this has already been done by Mitzenmacher\u201918.")
    assert found == [("author_year", "Mitzenmacher\u201918", RECOMMENDED)]
    (mention,) = extract_review_mentions("This bound is in (Lacoste-Julien 2016).", WEAKNESSES)
    assert (mention.source, mention.authors, mention.year) == ("author_year", "Lacoste-Julien", 2016)
    # not a surname and year: a contraction, a lower-case word
    assert _found("It's 20 points lower; the model'18 variant is fine.") == []


def test_comparison_between_and_differs_from_are_work_slots():
    assert _found("There is no comparison between Reflexion and these methods in the experiments.") == [
        ("name", "Reflexion", RECOMMENDED)
    ]
    found = _found("It is unclear how the proposed loss differs from CDVAE and should be discussed.")
    assert found == [("name", "CDVAE", RECOMMENDED)]


def test_an_authored_title_line_under_a_cite_lead_in_is_a_reference_entry():
    text = (
        "There are papers analyzing novelty detection with generative models -- should analyze or at least cite:\n"
        "V\u00edt \u0160kv\u00e1ra et al. Are generative deep models for novelty detection truly better?\n"
        "At first glance, their AUROC is never under 0.5.\n"
    )
    (mention,) = extract_review_mentions(text, WEAKNESSES)
    assert mention.source == "reference_entry" and mention.kind == RECOMMENDED
    assert mention.title == "Are generative deep models for novelty detection truly better?"
    # the authors' non-ASCII capitals read as names: "\u0160kv\u00e1ra" as "Smith" is
    assert authored_title_line("\u0160kv\u00e1ra et al. Are generative deep models truly better?")
    assert authored_title_line("Smith et al. Are generative deep models truly better?")
    # not such a line: a sentence after the authors, no "et al.", a one-word title
    assert not authored_title_line("Smith et al. This is what we should have done in the paper.")
    assert not authored_title_line("Smith and Jones. Are generative deep models truly better?")
    assert not authored_title_line("Smith et al. Transformers.")
    # the same line with no lead-in into a list of works is not an entry
    plain = "V\u00edt \u0160kv\u00e1ra et al. Are generative deep models for novelty detection truly better?\n"
    assert all(m.source != "reference_entry" for m in extract_review_mentions("Some text.\n" + plain, WEAKNESSES))
