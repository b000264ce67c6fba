"""The lab's learned title tagger (`bench.citationr.tagger`): alignment of gold titles, B/I/O labels, features, a tiny
trained model, its file, and the combination with the rules' mentions."""

from __future__ import annotations

import pytest

pytest.importorskip("pycrfsuite", reason="the lab's title tagger needs python-crfsuite: pip install python-crfsuite")

from bench.citationr.tagger import (  # noqa: E402
    TAGGED_TITLE,
    TaggerConfig,
    TitleTagger,
    _split_at_line_ends,
    bio_labels,
    combine_mentions,
    label_review,
    labelled_reviews,
    locate_title,
    token_features,
    tokenize,
)
from extractors.reviews.records import RECOMMENDED, Review  # noqa: E402

SNIPPET = 'We suggest citing "Deep Residual Learning for Image Recognition" (He et al., 2016) here.'


def _span_text(text: str, tokens, span: tuple[int, int]) -> str:
    return text[tokens[span[0]].start : tokens[span[1] - 1].end]


def _review(text: str, review_id: str = "r") -> Review:
    return Review(review_id, "s", text, ((0, "weaknesses"),), "official", 2023, "test")


@pytest.mark.unit
def test_locate_title_finds_the_exact_words_of_a_quoted_title():
    tokens = tokenize(SNIPPET)
    spans = locate_title(tokens, "Deep residual learning for image recognition")
    assert [_span_text(SNIPPET, tokens, s) for s in spans] == ["Deep Residual Learning for Image Recognition"]


@pytest.mark.unit
def test_locate_title_is_fuzzy_finds_every_occurrence_and_nothing_absent():
    text = "See Atention Is All You Need. Later: Attention is all you need, again."
    tokens = tokenize(text)
    spans = locate_title(tokens, "Attention Is All You Need")
    assert sorted(_span_text(text, tokens, s) for s in spans) == [
        "Atention Is All You Need",
        "Attention is all you need",
    ]
    assert locate_title(tokens, "Generative Adversarial Networks") == []


@pytest.mark.unit
def test_bio_labels_of_a_located_title():
    tokens = tokenize(SNIPPET)
    labels = bio_labels(len(tokens), locate_title(tokens, "Deep Residual Learning for Image Recognition"))
    tagged = [(t.text, label) for t, label in zip(tokens, labels, strict=True) if label != "O"]
    assert tagged == [
        ("Deep", "B"),
        ("Residual", "I"),
        ("Learning", "I"),
        ("for", "I"),
        ("Image", "I"),
        ("Recognition", "I"),
    ]
    assert labels[tokens.index(next(t for t in tokens if t.text == '"'))] == "O"


@pytest.mark.unit
def test_label_review_reports_titles_it_cannot_find():
    labelled = label_review(_review(SNIPPET), ["Deep Residual Learning for Image Recognition", "Batch Normalization"])
    assert labelled.missing == ("Batch Normalization",)
    assert len(labelled.located) == 1


@pytest.mark.unit
def test_features_of_a_hand_checked_token():
    tokens = tokenize(SNIPPET)
    features = token_features(SNIPPET, tokens)
    residual = features[[t.text for t in tokens].index("Residual")]
    for expected in ("cap", "in_quote", "shape=Xxx", "w=residual", "q_caps=hi", "q_before=citing", "q_after=("):
        assert expected in residual, expected
    assert "cue_dist=2" in residual  # "citing" is a cue; "Residual" is two tokens after the end of "citing "
    assert "-1:w=deep" in residual and "1:w=learning" in residual
    assert "lower" not in residual and "year" not in residual
    year = features[[t.text for t in tokens].index("2016")]
    assert "year" in year and "in_quote" not in year and "depth=1" in year
    assert "et_al" in features[[t.text for t in tokens].index("et")]


@pytest.mark.unit
def test_spans_are_cut_at_the_end_of_a_list_line():
    text = "Related:\nGraph Attention Networks\nDeep Sets\n"
    tokens = tokenize(text)
    first = [t.text for t in tokens].index("Graph")
    cut = _split_at_line_ends(text, tokens, [(first, first + 5)])
    assert [_span_text(text, tokens, s) for s in cut] == ["Graph Attention Networks", "Deep Sets"]


TRAINING = [
    (
        'Please cite "Neural Machine Translation by Jointly Learning to Align" (Bahdanau et al., 2015).',
        ["Neural Machine Translation by Jointly Learning to Align"],
    ),
    (
        'The authors should compare with "Sequence to Sequence Learning with Neural Networks" by Sutskever et al.',
        ["Sequence to Sequence Learning with Neural Networks"],
    ),
    (
        'Missing related work: "Convolutional Sequence to Sequence Learning" (Gehring et al., 2017).',
        ["Convolutional Sequence to Sequence Learning"],
    ),
    (
        'I would suggest discussing "Layer Normalization" (Ba et al., 2016) and the results in Table 2.',
        ["Layer Normalization"],
    ),
    (
        'See also "Dropout: A Simple Way to Prevent Neural Networks from Overfitting" (Srivastava et al., 2014).',
        ["Dropout: A Simple Way to Prevent Neural Networks from Overfitting"],
    ),
    (
        'The experiments are weak. Consider "Adam: A Method for Stochastic Optimization" (Kingma and Ba, 2015).',
        ["Adam: A Method for Stochastic Optimization"],
    ),
    ("The writing is clear and the figures are good. The proofs in Section 3 are correct.", []),
    ("Table 1 is hard to read; please report the standard deviations over five seeds.", []),
]
HELD_OUT = 'It is worth citing "Neural Ordinary Differential Equations" (Chen et al., 2018) in Section 2.'


@pytest.fixture(scope="module")
def tiny_tagger() -> TitleTagger:
    examples = [label_review(_review(text, f"r{i}"), titles) for i, (text, titles) in enumerate(TRAINING)]
    assert all(not e.missing for e in examples)
    return TitleTagger.train(examples, TaggerConfig(max_iterations=100))


@pytest.mark.unit
def test_a_tiny_model_tags_an_obvious_held_out_title(tiny_tagger):
    spans = tiny_tagger.tag(HELD_OUT)
    assert [s.title for s in spans] == ["Neural Ordinary Differential Equations"]
    assert HELD_OUT[spans[0].start : spans[0].end] == "Neural Ordinary Differential Equations"
    assert tiny_tagger.tag("The proofs are correct and the tables are clear.") == []


@pytest.mark.unit
def test_saved_and_loaded_model_tags_the_same(tiny_tagger, tmp_path):
    path = tmp_path / "tagger.crf"
    tiny_tagger.save(path)
    loaded = TitleTagger.load(path)
    assert loaded.config == tiny_tagger.config
    for text in (HELD_OUT, *(t for t, _ in TRAINING)):
        tokens = tokenize(text)
        assert loaded.tag_tokens(text, tokens) == tiny_tagger.tag_tokens(text, tokens)


@pytest.mark.unit
def test_combination_adds_a_title_the_rules_missed_classified_by_the_rules(tiny_tagger):
    review = _review(HELD_OUT)
    combined = combine_mentions(review.text, review.sections, [], tiny_tagger)
    assert [(m.source, m.title, m.kind) for m in combined] == [
        (TAGGED_TITLE, "Neural Ordinary Differential Equations", RECOMMENDED)
    ]


@pytest.mark.unit
def test_combination_keeps_a_rule_mention_with_the_same_title(tiny_tagger):
    from extractors.reviews.mentions import extract_review_mentions

    rules = extract_review_mentions(HELD_OUT, ((0, "weaknesses"),))
    assert [m.title for m in rules] == ["Neural Ordinary Differential Equations"]
    assert combine_mentions(HELD_OUT, ((0, "weaknesses"),), rules, tiny_tagger) == rules


def test_gold_titles_of_dev_are_located_in_the_review_text(shared):
    examples = labelled_reviews(shared, ("dev",))
    total = sum(len(e.titles) for e in examples)
    located = total - sum(len(e.missing) for e in examples)
    assert len(examples) > 50 and located / total >= 0.85


def test_training_data_never_comes_from_the_test_part(shared):
    with pytest.raises(ValueError):
        labelled_reviews(shared, ("dev", "test"))
