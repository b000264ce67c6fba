"""The learned name decision (`extractors/reviews/mentions/learned.py`) on hand-written reviews, with hand-set
weights whose scores are worked out by hand, model files written by hand, and the shipped model against the
features the rules produce on real reviews."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from extractors.reviews.mentions import MentionConfig, extract_review_mentions
from extractors.reviews.mentions.learned import (
    _CUES,
    ALL_SOURCES,
    MODEL_PATH,
    NameModel,
    add_free_names,
    candidates_with_features,
    free_name_spans,
    load_model,
    name_features,
    strictly_coined,
)
from extractors.reviews.mentions.shapes import ReviewText
from extractors.reviews.records import RECOMMENDED
from tests.support.labelled_reviews import labelled_reviews


def _spans(text: str, taken=()) -> list[str]:
    review = ReviewText(text, (), MentionConfig())
    return [text[s:e] for s, e in free_name_spans(review, list(taken))]


def test_strictly_coined_tokens_by_hand():
    assert [t for t in ("SinSR", "GPT-2", "BYOL", "Word2Vec", "ResNet") if strictly_coined(t)] == [
        "SinSR",
        "GPT-2",
        "BYOL",
        "Word2Vec",
        "ResNet",
    ]
    # a plain capitalised word, a class plural, a quantity, a lower-case word: no free candidate
    assert not any(strictly_coined(t) for t in ("Table", "However", "LLMs", "7B", "method"))


def test_free_candidates_are_coined_runs_outside_other_mentions():
    text = "The results of BYOL and GPT-2 matter. However, LLMs with Qwen2.5 3B or Qwen 2 differ. Table 3 lists SinSR."
    # "Qwen2.5 3B": a coined token and the version after it; "Qwen 2": a plain word starts it, no free candidate
    assert _spans(text) == ["BYOL", "GPT-2", "Qwen2.5 3B", "SinSR"]
    start = text.index("GPT-2")
    assert _spans(text, [(start, start + 5)]) == ["BYOL", "Qwen2.5 3B", "SinSR"]  # a mention found before


def _model(tmp_path: Path, weights: dict[str, float], threshold: float = 0.5, sources: tuple = ()) -> str:
    """A model file as the lab writes one: threshold, weights, and `sources` for a model deciding more than names."""
    data: dict[str, object] = {"threshold": threshold, "weights": weights}
    if sources:
        data["sources"] = list(sources)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_model_decides_names_found_in_slots_and_anywhere(tmp_path):
    """bias -2 and "missing" +4: a name in a sentence with "missing" scores sigmoid(2) = 0.88, recommended; one
    without scores sigmoid(-2) = 0.12: a name the rules found stays (discussed), a free candidate is dropped."""
    text = (
        "Weaknesses: BYOL is missing from the comparison. "
        "The method is compared with SimCLR in Table 2. We also see ResNet-50 features."
    )
    config = MentionConfig(name_model=_model(tmp_path, {"bias": -2.0, "w=missing": 4.0}))
    found = {m.text: m for m in extract_review_mentions(text, config=config)}
    assert found["BYOL"].kind == RECOMMENDED and found["BYOL"].reason == "learned_name"
    assert found["SimCLR"].kind != RECOMMENDED and found["SimCLR"].reason == "learned_name_below"
    assert "ResNet-50" not in found
    rules = {m.text: m for m in extract_review_mentions(text)}
    assert "BYOL" not in rules  # the rules' slots never see it: no lead before it


def test_a_model_over_every_source_decides_titles_too(tmp_path):
    """A model that says it decides every source (`ALL_SOURCES`): bias -2, a quoted title +1 (sigmoid(-1) = 0.27,
    below 0.5), "missing" +4. The rules recommend both quoted titles (each after a request cue); the model keeps the
    one in a sentence with "missing" (sigmoid(3) = 0.95) and makes the other discussed (reason `learned_below`); a
    names-only model (no `sources` in its file) leaves titles to the rules."""
    text = (
        'The paper misses "Deep Residual Learning for Image Recognition" entirely. '
        'Please also cite "Attention Is All You Need".'
    )
    rules = {m.title: m for m in extract_review_mentions(text) if m.source == "quoted_title"}
    assert {t for t, m in rules.items() if m.kind == RECOMMENDED} == set(rules) and len(rules) == 2
    weights = {"bias": -2.0, "source=quoted_title": 1.0, "w=misses": 4.0}
    every = MentionConfig(name_model=_model(tmp_path, weights, sources=ALL_SOURCES))
    found = {m.title: m for m in extract_review_mentions(text, config=every) if m.source == "quoted_title"}
    residual, attention = found["Deep Residual Learning for Image Recognition"], found["Attention Is All You Need"]
    assert residual.kind == RECOMMENDED and residual.reason == "learned"
    assert attention.kind != RECOMMENDED and attention.reason == "learned_below"
    (tmp_path / "names").mkdir()
    names = MentionConfig(name_model=_model(tmp_path / "names", weights))
    kept = {m.title: m.kind for m in extract_review_mentions(text, config=names) if m.source == "quoted_title"}
    assert kept == {t: m.kind for t, m in rules.items()}
    assert NameModel.from_json(Path(_model(tmp_path, weights, sources=ALL_SOURCES)).read_text()).sources == (
        ALL_SOURCES
    )


def test_features_and_probability_by_hand():
    model = NameModel({"bias": -1.0, "shape=caps": 0.5, "b1=with": 2.0}, 0.5)
    text = "Please compare with BYOL."
    from extractors.reviews.records import PaperMention

    mention = PaperMention(20, 24, "BYOL", "name", context="Please compare with BYOL. || ", kind="discussed")
    features = name_features(text, mention, {"BYOL": 1}, set())
    assert {"bias", "shape=caps", "b1=with", "b2=compare", "w=please", "count=1", "in_slot", "length=1"} <= set(
        features
    )
    assert model.probability(features) == pytest.approx(1 / (1 + math.exp(-1.5)))
    written = '{"threshold": 0.5, "weights": {"bias": -1.0, "shape=caps": 0.5, "b1=with": 2.0}}'
    assert NameModel.from_json(written) == model


def test_an_unreadable_model_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="name model"):
        load_model(str(bad))
    with pytest.raises(ValueError, match="cannot read"):
        load_model(str(tmp_path / "absent.json"))
    assert load_model("builtin").weights  # the shipped one reads


def test_a_model_file_travels_in_the_config_to_workers_that_cannot_see_it(tmp_path):
    """`--name_model PATH`: the pipeline reads the file where it is built and puts its text into the config, so a
    worker without the file (Dataflow, Flink, Spark) decides with the same weights; stats record its SHA-256."""
    import hashlib

    from pipelines.citationr.cli import _mention_config

    text = "Weaknesses: BYOL is missing from the comparison. The method is compared with SimCLR in Table 2."
    path = Path(_model(tmp_path, {"bias": -2.0, "w=missing": 4.0}))
    config = _mention_config(str(path))
    weights = path.read_text()
    assert config.name_model == str(path) and config.name_model_weights == weights
    before = [(m.text, m.kind, m.reason) for m in extract_review_mentions(text, config=config)]
    path.unlink()  # the worker's view: no such file
    load_model.cache_clear()
    assert [(m.text, m.kind, m.reason) for m in extract_review_mentions(text, config=config)] == before
    assert ("BYOL", RECOMMENDED, "learned_name") in before
    with pytest.raises(ValueError, match="cannot read"):  # without the weights, the path alone fails there
        extract_review_mentions(text, config=MentionConfig(name_model=str(path)))
    metadata = config.as_metadata()
    assert "name_model_weights" not in metadata
    assert metadata["name_model_sha256"] == hashlib.sha256(weights.encode()).hexdigest()
    assert _mention_config("builtin") == MentionConfig(name_model="builtin")  # shipped in the package
    assert "name_model_sha256" not in MentionConfig(name_model="builtin").as_metadata()
    with pytest.raises(SystemExit):
        _mention_config(str(path))  # checked before the run: one clear error


def test_the_shipped_model_still_reads_features_the_rules_produce(shared):
    """Drift between the shipped `builtin` model and the code: every rule decision it weighs (`rule=kind:reason`) is
    one the rules still give some name in two labelled NeurIPS samples (the read ones, `bench/labels/`), and every
    cue feature names a cue pattern the code still has. A renamed reason or cue would leave the model's weight for it
    unused."""
    seen: set[str] = set()
    for name in ("neurips-2023-2025-read.csv", "neurips-2023-2025-read2.csv"):
        for review, own in labelled_reviews(shared, name):
            found = extract_review_mentions(review.text, review.sections, own)
            mentions = add_free_names(review.text, review.sections, found, bibliography=own)
            seen.update(f for _, features in candidates_with_features(review.text, mentions) for f in features)
    weights = json.loads(MODEL_PATH.read_text(encoding="utf-8"))["weights"]
    rules = {f for f in weights if f.startswith("rule=")}
    assert rules and rules <= seen, sorted(rules - seen)
    cues = {f for f in weights if f.startswith("cue_")}
    names = {name for name, _ in _CUES}
    assert cues and all(f.split("=")[0][4:] in ("before", "after", "intro") for f in cues)
    assert {f.split("=")[1] for f in cues} <= names, sorted({f.split("=")[1] for f in cues} - names)
