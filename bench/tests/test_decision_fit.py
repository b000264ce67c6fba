"""The fitting of the learned review decision (`bench.citationr.fit_decision`) on hand-made data: the logistic
regression against scikit-learn's (an independent fit of the same objective), the candidate labels, and the
review-level score that the threshold is chosen on."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bench.citationr.fit_decision import (
    Case,
    Table,
    candidate_label,
    fit_head,
    fit_logistic,
    matches_title,
    review_f1,
    review_scores,
)
from extractors.reviews.forms import Review
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, PaperMention

pytestmark = pytest.mark.unit


def test_the_logistic_regression_is_the_one_scikit_learn_finds():
    """The same objective (L2 on the weights, not on the intercept) fitted by scikit-learn's lbfgs."""
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    y = (x @ np.array([1.5, -2.0, 0.0, 0.5]) + 0.3 + rng.normal(size=300) > 0).astype(float)
    weights, bias = fit_logistic(x, y, l2=2.0)
    reference = linear_model.LogisticRegression(C=1 / 2.0, tol=1e-10, max_iter=10_000).fit(x, y)
    assert weights == pytest.approx(reference.coef_[0], abs=1e-4)
    assert bias == pytest.approx(reference.intercept_[0], abs=1e-4)


TEXT = "Weaknesses: compare with LoRA, as in the Table. Also see \u201cAdapters for NLP\u201d (Houlsby 2019).\n"


def mention(text: str, **fields) -> PaperMention:
    start = TEXT.find(text)
    return PaperMention(**{"start": start, "end": start + len(text), "text": text, "source": "name", **fields})


def case(**fields) -> Case:
    review = Review("r1", "s1", TEXT, (), "official", 2023, "mem")
    return Case(**{"venue": "v", "source": "test", "review": review, "suggests": True, **fields})


FIRST = "Weaknesses: compare with LoRA, as in the Table. || "
SECOND = "Also see \u201cAdapters for NLP\u201d (Houlsby 2019). || Weaknesses: compare with LoRA, as in the Table."


def test_a_candidate_is_positive_where_its_sentence_names_a_labelled_work():
    lora, table = mention("LoRA", context=FIRST), mention("Table", context=FIRST)
    adapters = mention("\u201cAdapters for NLP\u201d", title="Adapters for NLP", source="quoted_title", context=SECOND)
    houlsby = mention("Houlsby 2019", source="author_year", context=SECOND)
    free_table = replace(table, reason="free_no_request_cue")
    found = [lora, table, adapters, houlsby]
    only_adapters = case(works=("Adapters for NLP",))
    assert [candidate_label(only_adapters, m, found) for m in found] == [0, 0, 1, 1]  # the author-year beside it
    both = case(works=("LoRA", "Adapters for NLP"))
    assert [candidate_label(both, m, found) for m in found] == [1, 1, 1, 1]
    assert candidate_label(both, free_table, [lora, free_table]) == 0  # a free name: its own span only
    assert candidate_label(case(suggests=False), lora, [lora]) == 0
    assert candidate_label(case(), lora, [lora]) is None  # suggests, but labelled at review level only


def test_hand_corrected_titles_match_by_title_text_or_head_name():
    qbox = mention("LoRA")  # its text is the head of the corrected title below
    assert matches_title(qbox, "LoRA: Low-Rank Adaptation of Large Language Models")
    adapters = mention("\u201cAdapters for NLP\u201d", title="Adapters for NLP", source="quoted_title")
    assert matches_title(adapters, "Parameter-Efficient Transfer Learning: Adapters for NLP") is False
    assert matches_title(adapters, "Adapters for NLP.")
    corrected = case(titles=("Adapters for NLP",), corrected=True)
    link = mention("LoRA", url="https://arxiv.org/abs/2106.09685", arxiv_id="2106.09685", context=FIRST)
    assert candidate_label(corrected, adapters, [adapters]) == 1
    assert candidate_label(corrected, link, [adapters, link]) is None  # a link names no title to match
    table = mention("Table", context="Weaknesses: compare with LoRA, as in the Table. || ")
    assert candidate_label(corrected, table, [replace(adapters, context="Also see ... || "), table]) == 0
    assert candidate_label(corrected, table, [replace(adapters, context=table.context), table]) == 1  # its sentence


def test_a_review_scores_its_best_candidate_and_its_best_rules_proposal():
    cases = [case(), case(suggests=False), case()]
    table = Table(
        embeddings=np.zeros((4, 2), dtype=np.float32),
        features=[["rules=recommended"], [], ["rules=recommended"], []],
        labels=np.array([1, 0, 0, 1]),
        case_of=np.array([0, 0, 1, 2]),
        eligible=np.array([True, True, True, False]),
        cases=cases,
        candidates={},
    )
    best, proposed = review_scores(table, np.array([0.3, 0.8, 0.6, 0.99]))
    assert best.tolist() == [0.8, 0.6, -1.0]  # the third review's only candidate is already cited
    assert proposed.tolist() == [0.3, 0.6, -1.0]
    gold = np.array([True, False, True])
    assert review_f1(best >= 0.5, gold) == pytest.approx(2 * 1 / (2 * 1 + 1 + 1))
    # keep 0.5 / add 0.7 -> predicted [yes, yes, no]: tp 1, fp 1, fn 1; keep 0.7 -> [yes, no, no]: tp 1, fn 1
    assert review_f1((proposed >= 0.5) | (best >= 0.7), gold) == pytest.approx(0.5)
    assert review_f1((proposed >= 0.7) | (best >= 0.7), gold) == pytest.approx(2 / 3)


def test_a_fitted_head_separates_what_it_was_fitted_on():
    cited = PaperMention(0, 1, "x", "name", kind=ALREADY_CITED)
    rng = np.random.default_rng(1)
    embeddings = rng.normal(size=(40, 3)).astype(np.float32)
    labels = (embeddings[:, 0] > 0).astype(int)
    table = Table(
        embeddings,
        [["source=name"]] * 40,
        labels,
        np.arange(40),
        np.ones(40, dtype=bool),
        [case()] * 40,
        {"v|r1": [cited, PaperMention(0, 1, "y", "name", kind=DISCUSSED)]},
    )
    head = fit_head(table, l2=0.1, threshold=0.5)
    predicted = head.probabilities(embeddings, table.features) >= 0.5
    assert (predicted == labels.astype(bool)).mean() >= 0.95
    assert head.features == ("source=name",)  # seen 40 times, at least `MIN_FEATURE_COUNT`
