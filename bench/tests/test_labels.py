"""The scoring of the labelled reviews (`bench.citationr.labels`: `labelled_level`, `label_agreement`, the Wilson
interval), on a hand-made review file and label file with figures counted by hand; and every real label file read
against the shared reviews it names (skipped without ../shared)."""

from __future__ import annotations

import csv
import json

import pytest

from bench.citationr.labels import (
    WORK_FORMS,
    Rate,
    find_labelled_review,
    gold_review_labels,
    label_agreement,
    labelled_level,
    rate_cell,
    read_review_labels,
    wilson,
)
from bench.citationr.samples import LABELLED_SAMPLES, SAMPLES, part
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


@pytest.mark.unit
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


@pytest.mark.unit
def test_label_agreement_by_hand(tmp_path):
    agreement = label_agreement(_write(tmp_path, ROWS))
    # two reviews both labelled, suggests equal on both (0/0, 1/1): kappa 1
    assert agreement["reviews"] == 2 and agreement["suggests_equal"] == 1.0 and agreement["suggests_kappa"] == 1.0
    # titles: A has 1 (Neural ODEs), B 2; A's found in B: 1/1, B's found in A: 1/2 -> F1 = 2 * 1 * 0.5 / 1.5
    assert agreement["titles"] == [1, 2] and agreement["titles_f1"] == pytest.approx(0.667, abs=1e-3)


@pytest.mark.unit
def test_label_agreement_pools_every_pair_of_annotators(tmp_path):
    """A third annotator C labels review 2 as suggesting nothing: pairs A-B (r1, r2), A-C (r2), B-C (r2) = 4.
    Equal on A-B's two only: 0.5. First of each pair suggests 0, 1, 1, 1 (p1 0.75), second 0, 1, 0, 0 (p2 0.25);
    expected 0.75 * 0.25 + 0.25 * 0.75 = 0.375; kappa (0.5 - 0.375) / 0.625 = 0.2. Titles: A-B as above (1, 2),
    A-C (1, 0), B-C (2, 0): first lists 1 + 1 + 2 = 4, second 2."""
    agreement = label_agreement(_write(tmp_path, [*ROWS, ("C", 2, 0, "", "")]))
    assert agreement["reviews"] == 4 and agreement["suggests_equal"] == 0.5
    assert agreement["suggests_kappa"] == pytest.approx(0.2)
    assert agreement["titles"] == [4, 2]


@pytest.mark.unit
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
    assert (SAMPLES[name].size, set(SAMPLES[name].parts)) == (size, parts)  # the manifest says the same
    gold = gold_review_labels(read_review_labels(LABELLED_SAMPLES[name]))
    assert len(gold) == size
    for label in gold.values():
        review = find_labelled_review(shared, label)
        assert review is not None and part(label.submission_id) in parts
        for work, form in label.works:
            assert form in WORK_FORMS and work in review.text, (label.review_id, form)


@pytest.mark.unit
def test_wilson_interval_matches_the_closed_form_and_its_edges():
    low, high = wilson(16, 17)
    assert round(low, 3) == 0.730 and round(high, 3) == 0.990
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(5, 5)[1] == pytest.approx(1.0) and wilson(0, 5)[0] == pytest.approx(0.0)
    assert Rate(3, 4).as_dict() == {"value": 0.75, "hits": 3, "of": 4, "ci95": [0.301, 0.954]}


@pytest.mark.unit
def test_a_rate_cell_reads_as_the_tables_print_it():
    # 38 of 45, the Wilson 95% interval [0.71, 0.92]: the held-out NeurIPS precision docs/citationr.md prints
    assert rate_cell(Rate(38, 45).as_dict()) == "0.84 [0.71, 0.92] (38/45)"
    assert rate_cell(Rate(0, 0).as_dict()) == "n/a"
    assert rate_cell(None) == "n/a"
