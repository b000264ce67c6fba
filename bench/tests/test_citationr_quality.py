"""The CitationR mention rules measured on the hand labels (`bench.citationr.labels`): floors a few points under the
figures docs/citationr.md reports, so that a change that loses what was measured fails here. Real documents only
(skipped without ../shared); `python bench/eval_citationr.py` prints the figures themselves."""

from __future__ import annotations

from bench.citationr.labels import evaluate, labelled_level, own_text_of, resolution_level
from bench.citationr.samples import LABELLED_SAMPLES
from extractors.reviews.mentions import MentionConfig, extract_review_mentions


def test_labelled_reviews_measure_above_floor(shared):
    """Regression floors under the figures reported in docs/citationr.md, over every labelled part (`all`); the
    figures that matter are the unread part's, printed by bench/eval_citationr.py."""
    result = evaluate(shared)
    reviews, titles = result["bias_reviews"]["all"], result["bias_titles"]["all"]
    # 17/21: the ICLR labels (`citation_suggestions`) do not count two works named by name that the project's
    # guideline counts ("benchmark like Google Research Football", "such as CS [1]"), nor an author-year in a
    # request's sentence ("the authors should show accuracy ... Even Upadhyay et al., 2021 show accuracy").
    assert reviews["precision"]["value"] >= 0.8 and reviews["recall"]["value"] >= 0.9
    assert titles["title_recall"]["value"] >= 0.82 and titles["title_precision"]["value"] >= 0.85
    assert result["bias_resolution"]["all"]["resolution_precision"]["value"] >= 0.97
    assert titles["review_recall"]["value"] >= 0.94  # the 233 reviews of the title files all suggest papers
    assert result["disapere"]["all"]["reviews"] + result["disapere"]["all"]["left_out"] == 506  # every review


def test_spotting_finds_more_gold_papers_on_the_read_labelled_reviews_at_the_same_precision(shared):
    """On the read parts (dev + dev2) of the title files, against the gold database: the rules alone resolve 362 of
    423 gold papers (5 wrong of 367), with spotting 367 (5 wrong of 372). Floors under those figures."""
    without = resolution_level(shared)["read"]
    spotted = resolution_level(shared, spot_titles=True)["read"]
    assert spotted["resolution_recall"]["hits"] >= without["resolution_recall"]["hits"] + 4
    assert spotted["resolution_recall"]["value"] >= 0.86
    assert spotted["resolution_precision"]["value"] >= 0.98


def test_rules_on_the_project_labels_stay_above_floor(shared):
    """Floors under the figures docs/citationr.md reports for the labelled NeurIPS reviews: the read samples, the
    first test sample (`unread`), the second and the third (`test2`, `test3`), each a few points below its figure.
    The rules before works named by name fail the recall floors (0.61, 0.46 and 0.54 on the three test samples)."""
    both = labelled_level(shared)
    read, unread = both["read"], both["unread"]
    assert read["precision"]["value"] >= 0.9 and read["recall"]["value"] >= 0.82  # 0.94, 0.86 (read, read2, read3)
    assert unread["precision"]["value"] >= 0.8 and unread["recall"]["value"] >= 0.85  # 0.86, 0.91
    assert unread["title_recall"]["value"] >= 0.9 and unread["title_precision"]["value"] >= 0.7  # 0.94, 0.77
    assert unread["work_recall"]["value"] >= 0.7  # 0.78
    test2 = labelled_level(shared, paths=[LABELLED_SAMPLES["test2"]])["unread"]
    assert test2["precision"]["value"] >= 0.78 and test2["recall"]["value"] >= 0.65  # 0.83, 0.71
    assert test2["title_recall"]["value"] >= 0.7 and test2["work_recall"]["value"] >= 0.6  # 0.78, 0.68
    test3 = labelled_level(shared, paths=[LABELLED_SAMPLES["test3"]])["unread"]
    assert test3["precision"]["value"] >= 0.85 and test3["recall"]["value"] >= 0.65  # 0.89, 0.71
    assert test3["title_recall"]["value"] >= 0.78 and test3["work_recall"]["value"] >= 0.6  # 0.83, 0.66


def test_rules_and_the_name_model_on_the_unread_samples_stay_above_floor(shared):
    """Floors under the first looks at the held-out samples (the figures, review-level precision / recall, in the
    comments): the rules on test5 and test6 pooled; on disapere_test, disapere_check, disapere_check2 (ICLR
    2019-2020, another venue) and the NeurIPS read-part checks, the rules and the learned name model refit on the
    nine NeurIPS samples (`--name_model builtin`). The model was trained on test5 and test6 since, so its figures
    there are not a floor of anything."""
    config = MentionConfig(name_model="builtin")

    def learned(review):
        return extract_review_mentions(review.text, review.sections, own_text_of(review), config=config)

    rules = labelled_level(shared, paths=[LABELLED_SAMPLES["test5"], LABELLED_SAMPLES["test6"]])["unread"]
    assert rules["precision"]["value"] >= 0.78 and rules["recall"]["value"] >= 0.73  # 0.81 (67/83), 0.76 (67/88)
    assert rules["title_recall"]["value"] >= 0.82  # 0.85 (94/110)
    iclr = [LABELLED_SAMPLES["disapere_test"]]
    rules, model = labelled_level(shared, paths=iclr)["unread"], labelled_level(shared, learned, iclr)["unread"]
    assert rules["precision"]["value"] >= 0.8 and rules["recall"]["value"] >= 0.58  # 0.84 (38/45), 0.62 (38/61)
    assert model["precision"]["value"] >= 0.85 and model["recall"]["value"] >= 0.6  # 0.89 (39/44), 0.64 (39/61)
    # the model finds what the rules find
    assert model["recall"]["hits"] >= rules["recall"]["hits"]
    assert model["title_recall"]["value"] == rules["title_recall"]["value"] >= 0.7  # 0.73 (48/66): titles are rules'
    check = [LABELLED_SAMPLES["disapere_check"]]  # labelled before the rules it measures
    rules, model = labelled_level(shared, paths=check)["all"], labelled_level(shared, learned, check)["all"]
    assert rules["precision"]["value"] >= 0.78 and rules["recall"]["value"] >= 0.57  # 0.82 (32/39), 0.62 (32/52)
    assert model["precision"]["value"] >= 0.82 and model["recall"]["value"] >= 0.57  # 0.86 (32/37), 0.62 (32/52)
    assert rules["title_recall"]["value"] >= 0.76  # 0.81 (38/47)
    check2 = [LABELLED_SAMPLES["disapere_check2"]]  # labelled before the rules it measures
    rules, model = labelled_level(shared, paths=check2)["all"], labelled_level(shared, learned, check2)["all"]
    assert rules["precision"]["value"] >= 0.85 and rules["recall"]["value"] >= 0.65  # 0.89 (48/54), 0.70 (48/69)
    assert model["precision"]["value"] >= 0.84 and model["recall"]["value"] >= 0.62  # 0.88 (46/52), 0.67 (46/69)
    assert rules["title_recall"]["value"] >= 0.73  # 0.78 (36/46)
    for name, floors in (  # NeurIPS read-part checks: (rules, model, title recall)
        ("neurips_check", ((0.7, 0.7), (0.72, 0.75), 0.86)),  # 0.75 (38/51), 0.76; 0.77, 0.80; title 0.91
        ("neurips_check2", ((0.78, 0.6), (0.75, 0.62), 0.7)),  # 0.83 (39/47), 0.66; 0.80, 0.68; title 0.76
        ("neurips_check3", ((0.8, 0.68), (0.8, 0.7), 0.85)),  # 0.86 (42/49), 0.72 (42/58); 0.86, 0.74; title 0.91
        ("neurips_check4", ((0.78, 0.58), (0.72, 0.58), 0.7)),  # 0.84 (38/45), 0.64 (38/59); 0.78, 0.64; title 0.77
    ):
        (rule_floor, model_floor, title_floor) = floors
        path = [LABELLED_SAMPLES[name]]
        rules, model = labelled_level(shared, paths=path)["all"], labelled_level(shared, learned, path)["all"]
        assert rules["precision"]["value"] >= rule_floor[0] and rules["recall"]["value"] >= rule_floor[1], name
        assert model["precision"]["value"] >= model_floor[0] and model["recall"]["value"] >= model_floor[1], name
        assert rules["title_recall"]["value"] >= title_floor, name
