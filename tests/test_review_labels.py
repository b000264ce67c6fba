"""The scoring of the project's labelled reviews (`extractors.reviews.labels.labelled_level`, `label_agreement`),
on a hand-made review file and label file with figures counted by hand; and the real label file read against the
shared NeurIPS reviews (skipped without ../shared)."""

from __future__ import annotations

import csv
import json

import pytest

from extractors.reviews.labels import (
    LABELLED_SAMPLES,
    NEURIPS_HELD_OUT,
    NEURIPS_SAMPLES,
    WORK_FORMS,
    find_labelled_review,
    gold_review_labels,
    label_agreement,
    labelled_level,
    own_text_of,
    part,
    read_review_labels,
)
from extractors.reviews.records import RECOMMENDED, PaperMention

FIRST = (
    'Missing work: the authors should cite "Deep Residual Learning for Image Recognition" and compare with LoRA. '
    "See also Attention Is All You Need."
)
SECOND = "A clear paper. The method is compared with BERT in Table 2."
THIRD = "Related: Neural Ordinary Differential Equations, and https://arxiv.org/abs/1234.5678 ."
COLUMNS = ("annotator", "index", "file", "review_id", "submission_id", "suggests", "mention", "form", "note")


def _write(tmp_path, rows):
    (tmp_path / "reviews").mkdir()
    submission = {"id": "sub", "title": "T", "reviews": [{"comments": t} for t in (FIRST, SECOND, THIRD)]}
    (tmp_path / "reviews" / "sub.json").write_text(json.dumps(submission))
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for annotator, index, suggests, mention, form in rows:
            writer.writerow([annotator, index, "reviews/sub.json", f"sub/r{index}", "sub", suggests, mention, form, ""])
    return path


ROWS = [
    ("A", 0, 1, "Deep Residual Learning for Image Recognition", "title"),
    ("A", 0, 1, "LoRA", "name"),
    ("A", 0, 1, "Attention Is All You Need", "title"),
    ("A", 1, 0, "", ""),
    ("A", 2, 1, "Neural Ordinary Differential Equations", "title"),
    ("A", 2, 1, "https://arxiv.org/abs/1234.5678", "link"),
    # B labelled reviews 1 and 2 too: agrees on 1, finds one title of review 2 and adds one A did not
    ("B", 1, 0, "", ""),
    ("B", 2, 1, "Neural Ordinary Differential Equations", "title"),
    ("B", 2, 1, "Augmented Neural ODEs", "title"),
]


def _mention(text, words, title=None, kind=RECOMMENDED):
    start = text.index(words)
    return PaperMention(start, start + len(words), words, "quoted_title", title=title, kind=kind)


def _extract(review):
    """Hand-made mentions: review 0 gets the quoted title and a wrong title; review 1 a recommended mention (a
    false positive at review level); review 2 the link only (no title)."""
    if review.text.startswith("Missing"):
        return [
            _mention(
                review.text,
                "Deep Residual Learning for Image Recognition",
                "Deep Residual Learning for Image Recognition",
            ),
            _mention(review.text, "the authors should cite", "the authors should cite"),
            _mention(review.text, "LoRA", None, kind="discussed"),
        ]
    if review.text.startswith("A clear"):
        return [_mention(review.text, "BERT", "BERT")]
    return [_mention(review.text, "https://arxiv.org/abs/1234.5678")]


def test_labelled_level_counts_reviews_titles_and_works_by_hand(tmp_path):
    path = _write(tmp_path, ROWS)
    labels = read_review_labels(path)
    assert set(labels) == {"A", "B"} and len(gold_review_labels(labels)) == 3
    assert gold_review_labels(labels)["sub/r2"].annotator == "A"
    figures = labelled_level(tmp_path, _extract, [path])["all"]
    # reviews: r0 suggests and is predicted (tp), r1 does not but is predicted (fp), r2 suggests and is (tp)
    assert (figures["precision"]["hits"], figures["precision"]["of"]) == (2, 3)
    assert (figures["recall"]["hits"], figures["recall"]["of"]) == (2, 2)
    # titles (form `title`): 3 gold (Deep Residual, Attention, Neural ODEs); found only Deep Residual
    assert (figures["title_recall"]["hits"], figures["title_recall"]["of"]) == (1, 3)
    # extracted titles: Deep Residual (right), "the authors should cite" (wrong), BERT (wrong: r1 lists no work)
    assert (figures["title_precision"]["hits"], figures["title_precision"]["of"]) == (1, 3)
    # works, every form: Deep Residual (title), the link (overlapped by r2's mention); LoRA's mention is not
    # recommended, Attention and Neural ODEs have none
    assert (figures["work_recall"]["hits"], figures["work_recall"]["of"]) == (2, 5)


def test_label_agreement_by_hand(tmp_path):
    agreement = label_agreement(_write(tmp_path, ROWS))
    # two reviews both labelled, suggests equal on both (0/0, 1/1): kappa 1
    assert agreement["reviews"] == 2 and agreement["suggests_equal"] == 1.0 and agreement["suggests_kappa"] == 1.0
    # titles: A has 1 (Neural ODEs), B 2; A's found in B: 1/1, B's found in A: 1/2 -> F1 = 2 * 1 * 0.5 / 1.5
    assert agreement["titles"] == [1, 2] and agreement["titles_f1"] == pytest.approx(0.667, abs=1e-3)


def test_label_agreement_pools_every_pair_of_annotators(tmp_path):
    """A third annotator C labels review 2 as suggesting nothing: pairs A-B (r1, r2), A-C (r2), B-C (r2) = 4.
    Equal on A-B's two only: 0.5. First of each pair suggests 0, 1, 1, 1 (p1 0.75), second 0, 1, 0, 0 (p2 0.25);
    expected 0.75 * 0.25 + 0.25 * 0.75 = 0.375; kappa (0.5 - 0.375) / 0.625 = 0.2. Titles: A-B as above (1, 2),
    A-C (1, 0), B-C (2, 0): first lists 1 + 1 + 2 = 4, second 2."""
    agreement = label_agreement(_write(tmp_path, [*ROWS, ("C", 2, 0, "", "")]))
    assert agreement["reviews"] == 4 and agreement["suggests_equal"] == 0.5
    assert agreement["suggests_kappa"] == pytest.approx(0.2)
    assert agreement["titles"] == [4, 2]


@pytest.mark.parametrize(
    ("row", "message"),
    [(("A", 0, 1, "LoRA", "acronym"), "form outside"), (("A", 0, 0, "LoRA", "name"), "suggests nothing")],
)
def test_bad_label_files_are_refused(tmp_path, row, message):
    with pytest.raises(ValueError, match=message):
        read_review_labels(_write(tmp_path, [row]))


@pytest.mark.parametrize(
    "name,size,parts",
    [
        ("test", 90, {"test"}),
        ("read", 120, {"dev", "dev2"}),
        ("test2", 90, {"test"}),
        ("read2", 120, {"dev", "dev2"}),
        ("test3", 90, {"test"}),
        ("read3", 120, {"dev", "dev2"}),
        ("test4", 90, {"test"}),
        ("test5", 90, {"test"}),
        ("test6", 145, {"test"}),
        ("disapere_test", 135, {"test"}),
        ("disapere_read", 120, {"dev", "dev2"}),
        ("disapere_check", 120, {"dev", "dev2"}),
        ("disapere_check2", 131, {"dev", "dev2"}),
        ("neurips_check", 150, {"dev", "dev2"}),
        ("neurips_check2", 150, {"dev", "dev2"}),
        ("neurips_check3", 150, {"dev", "dev2"}),
        ("neurips_check4", 150, {"dev", "dev2"}),
    ],
)
def test_project_labels_name_real_reviews_and_words_they_contain(shared, name, size, parts):
    """Every labelled review is in the shared review files (NeurIPS's; DISAPERE's for `disapere_test`), in its
    sample's parts, and every labelled work is written in its review, as the guideline asks."""
    gold = gold_review_labels(read_review_labels(LABELLED_SAMPLES[name]))
    assert len(gold) == size
    for label in gold.values():
        review = find_labelled_review(shared, label)
        assert review is not None and part(label.submission_id) in parts
        for work, form in label.works:
            assert form in WORK_FORMS and work in review.text, (label.review_id, form)


@pytest.mark.parametrize("name", list(LABELLED_SAMPLES))
def test_project_labels_hold_exactly_the_seeded_sample(shared, name):
    """Each label file is the sample `bench/labels/sample_reviews.py` draws: the test one (seed, test part, 90
    official reviews, A 0-49, B 40-89), the read one (read parts, 120, A 0-64, B 55-119) and test2 (the test part
    less the test sample's reviews, 90; none of them in the test sample), ..., and DISAPERE's (every one of its 135
    test-part reviews, counted here independently of the sampler)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "labels" / "sample_reviews.py"
    spec = importlib.util.spec_from_file_location("sample_reviews", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    chosen = module.SAMPLES[name]
    assert chosen.labels == LABELLED_SAMPLES[name]
    sample = module.draw(shared, chosen)
    assert len(sample) == chosen.size and {part(r.submission_id) for _, r in sample} <= set(chosen.parts)
    labels = read_review_labels(chosen.labels)
    assert set(labels) == set(chosen.batches) and module.mismatched(sample, labels, chosen) == []
    assert module.mismatched(sample[1:] + sample[:1], labels, chosen) == sorted(chosen.batches)  # a shifted sample
    if name == "disapere_test":
        everyone = [
            record["metadata"]["review_id"]
            for path in sorted((shared / "reviews" / "disapere-iclr-2019-2020" / "final_dataset").glob("*/*.json"))
            for record in [json.loads(path.read_text())]
            if part(record["metadata"]["forum_id"]) == "test"
        ]
        assert len(everyone) == 135 and sorted(everyone) == sorted(r.review_id for _, r in sample)
    for earlier in chosen.after:
        assert not {r.review_id for _, r in sample} & {
            r.review_id for _, r in module.draw(shared, module.SAMPLES[earlier])
        }


def test_rules_on_the_project_labels_stay_above_floor(shared):
    """Floors under the figures docs/citationr.md reports for the labelled NeurIPS reviews: the read samples, the
    first test sample (`unread`), the second and the third (`NEURIPS_HELD_OUT`), each a few points below its figure.
    The rules before works named by name fail the recall floors (0.61, 0.46 and 0.54 on the three test samples)."""
    both = labelled_level(shared)
    read, unread = both["read"], both["unread"]
    assert read["precision"]["value"] >= 0.9 and read["recall"]["value"] >= 0.82  # 0.94, 0.86 (read, read2, read3)
    assert unread["precision"]["value"] >= 0.8 and unread["recall"]["value"] >= 0.85  # 0.86, 0.91
    assert unread["title_recall"]["value"] >= 0.9 and unread["title_precision"]["value"] >= 0.7  # 0.94, 0.77
    assert unread["work_recall"]["value"] >= 0.7  # 0.78
    test2 = labelled_level(shared, paths=[NEURIPS_HELD_OUT["neurips_test2"]])["unread"]
    assert test2["precision"]["value"] >= 0.78 and test2["recall"]["value"] >= 0.65  # 0.83, 0.71
    assert test2["title_recall"]["value"] >= 0.7 and test2["work_recall"]["value"] >= 0.6  # 0.78, 0.68
    test3 = labelled_level(shared, paths=[NEURIPS_HELD_OUT["neurips_test3"]])["unread"]
    assert test3["precision"]["value"] >= 0.85 and test3["recall"]["value"] >= 0.65  # 0.89, 0.71
    assert test3["title_recall"]["value"] >= 0.78 and test3["work_recall"]["value"] >= 0.6  # 0.83, 0.66


def test_rules_and_the_name_model_on_the_unread_samples_stay_above_floor(shared):
    """Floors under the first looks: the rules on test5 and test6 (235 reviews, pooled: 0.81 / 0.76, title recall
    0.85), and on disapere_test (135 ICLR 2019-2020 reviews, another venue) the rules (0.84 / 0.62, title recall
    0.73) and the learned name model refit on the nine NeurIPS samples (`--name_model builtin`: 0.89 / 0.64); on
    disapere_check (120 more ICLR reviews, held out for round 4) the rules 0.82 / 0.62 and the model 0.86 / 0.62; on
    disapere_check2 (131, held out for round 5) the rules at round 5 0.89 / 0.70 and the model 0.88 / 0.67; on the
    NeurIPS read-part samples labelled after round 5, neurips_check (rules 0.75 / 0.76, model 0.77 / 0.80) and
    neurips_check2 (rules 0.83 / 0.66, model 0.80 / 0.68); neurips_check3 (held out for round 7: rules 0.86 / 0.72,
    title recall 0.91, model 0.86 / 0.74); neurips_check4 (held out for round 8: rules 0.84 / 0.64, title recall 0.77,
    model 0.78 / 0.64).
    The model was trained on test5 and test6 since, so its figures there are not a floor of anything."""
    from extractors.reviews.mentions import MentionConfig, extract_review_mentions

    config = MentionConfig(name_model="builtin")

    def learned(review):
        return extract_review_mentions(review.text, review.sections, own_text_of(review), config=config)

    rules = labelled_level(shared, paths=[NEURIPS_SAMPLES["test5"], NEURIPS_SAMPLES["test6"]])["unread"]
    assert rules["precision"]["value"] >= 0.78 and rules["recall"]["value"] >= 0.73  # 0.81 (67/83), 0.76 (67/88)
    assert rules["title_recall"]["value"] >= 0.82  # 0.85 (94/110)
    iclr = [LABELLED_SAMPLES["disapere_test"]]
    rules, model = labelled_level(shared, paths=iclr)["unread"], labelled_level(shared, learned, iclr)["unread"]
    assert rules["precision"]["value"] >= 0.8 and rules["recall"]["value"] >= 0.58  # 0.84 (38/45), 0.62 (38/61)
    assert model["precision"]["value"] >= 0.85 and model["recall"]["value"] >= 0.6  # 0.89 (39/44), 0.64 (39/61)
    # the model finds what the rules find (more before round 5 taught the rules the request mood for author-years)
    assert model["recall"]["hits"] >= rules["recall"]["hits"]
    assert model["title_recall"]["value"] == rules["title_recall"]["value"] >= 0.7  # 0.73 (48/66): titles are rules'
    check = [LABELLED_SAMPLES["disapere_check"]]  # held out for round 4 (bare markers), labelled before it ran
    rules, model = labelled_level(shared, paths=check)["all"], labelled_level(shared, learned, check)["all"]
    assert rules["precision"]["value"] >= 0.78 and rules["recall"]["value"] >= 0.57  # 0.82 (32/39), 0.62 (32/52)
    assert model["precision"]["value"] >= 0.82 and model["recall"]["value"] >= 0.57  # 0.86 (32/37), 0.62 (32/52)
    assert rules["title_recall"]["value"] >= 0.76  # 0.81 (38/47)
    check2 = [LABELLED_SAMPLES["disapere_check2"]]  # held out for round 5 (request moods), labelled before it ran
    rules, model = labelled_level(shared, paths=check2)["all"], labelled_level(shared, learned, check2)["all"]
    assert rules["precision"]["value"] >= 0.85 and rules["recall"]["value"] >= 0.65  # 0.89 (48/54), 0.70 (48/69)
    assert model["precision"]["value"] >= 0.84 and model["recall"]["value"] >= 0.62  # 0.88 (46/52), 0.67 (46/69)
    assert rules["title_recall"]["value"] >= 0.73  # 0.78 (36/46)
    for name, floors in (  # NeurIPS read-part samples (rules, then model): first looks at round 5, then at round 7
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
