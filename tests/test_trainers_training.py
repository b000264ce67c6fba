"""The HAtten training loop on a small in-memory dataset: refreshes that mine every training query, the log a user
reads, checkpoints that resume exactly, warnings for untrained weights and clear errors."""

from __future__ import annotations

import json
import warnings

import pytest

torch = pytest.importorskip("torch")

from tests.support.trainer_data import topical_dataset  # noqa: E402
from trainers import hatten  # noqa: E402
from trainers.data import EmptySplitError  # noqa: E402
from trainers.hatten_training import (  # noqa: E402
    HAttenTrainConfig,
    MinedRankings,
    SetupError,
    UntrainedCheckpointWarning,
    load_hatten,
    make_model,
    mined_path,
    train_hatten,
    update_moving_average,
)

TINY = {"embed_dim": 16, "num_heads": 2, "hidden_dim": 32, "max_seq_len": 32}
CPU = torch.device("cpu")


def train(tmp_path, dataset=None, **overrides):
    dataset = dataset or topical_dataset()
    torch.manual_seed(0)
    model, vocabulary = make_model(dataset, TINY)
    settings = {"queries_per_batch": 6, "refresh_every": 3, "max_iterations": 9, "checkpoint_every": 2}
    config = HAttenTrainConfig(**{**settings, **overrides})
    summary = train_hatten(dataset, model, vocabulary, tmp_path, config, CPU, progress=False)
    return summary, model


def log_lines(directory):
    return [json.loads(line) for line in (directory / "train_log.jsonl").read_text().splitlines()]


@pytest.mark.train
def test_every_refresh_mines_every_training_query(tmp_path):
    dataset = topical_dataset()
    summary, _ = train(tmp_path, dataset)
    lines = log_lines(tmp_path)
    assert [(r["iteration"], r["mined_queries"]) for r in lines] == [(3, 24), (6, 24), (9, 0)]
    assert len(dataset.queries["train"]) == 24
    assert summary["history"] == lines
    assert all(r["train_loss"] is not None and "mrr" in r["validation"] for r in lines)
    mined = MinedRankings.load(mined_path(tmp_path, 6))  # the refresh at 6; the one at 3 is no longer needed
    assert sorted(mined.context_ids) == sorted(q.context_id for q in dataset.queries["train"])
    assert mined.positions.shape == (24, 12) and (mined.positions >= 0).all()  # 12 candidates, none excluded
    assert not mined_path(tmp_path, 3).exists()


@pytest.mark.train
def test_a_mining_sample_is_what_the_next_interval_trains_on(tmp_path):
    summary, _ = train(tmp_path, mining_queries=5)
    assert [r["mined_queries"] for r in summary["history"]] == [5, 5, 0]


@pytest.mark.train
def test_a_run_resumed_from_a_periodic_checkpoint_ends_where_an_uninterrupted_one_does(tmp_path, monkeypatch):
    _, uninterrupted = train(tmp_path / "whole")
    calls = {"n": 0}

    def crash_at_seventh_step(*args):
        calls["n"] += 1
        if calls["n"] == 7:
            raise RuntimeError("power cut")
        update_moving_average(*args)

    monkeypatch.setattr("trainers.hatten_training.update_moving_average", crash_at_seventh_step)
    with pytest.raises(RuntimeError, match="power cut"):
        train(tmp_path / "cut")
    assert torch.load(tmp_path / "cut" / "last.pt", weights_only=False)["iteration"] == 6  # checkpoint_every 2
    monkeypatch.undo()
    dataset = topical_dataset()
    model, vocabulary, _ = load_hatten(tmp_path / "cut", CPU, which="init")
    config = HAttenTrainConfig(queries_per_batch=6, refresh_every=3, max_iterations=9, checkpoint_every=2)
    summary = train_hatten(dataset, model, vocabulary, tmp_path / "cut", config, CPU, progress=False)
    assert [r["iteration"] for r in summary["history"]] == [3, 6, 9]
    for name, value in uninterrupted.state_dict().items():
        assert torch.allclose(model.state_dict()[name], value, atol=1e-6), name


@pytest.mark.train
def test_untrained_weights_are_announced(tmp_path):
    train(tmp_path / "zero", max_iterations=0)
    with pytest.warns(UntrainedCheckpointWarning, match="untrained"):
        load_hatten(tmp_path / "zero", CPU, which="best")
    train(tmp_path / "some", max_iterations=2, refresh_every=100)
    (tmp_path / "some" / "best.pt").unlink()  # as when training stops before its first validation
    with pytest.warns(UntrainedCheckpointWarning, match="using last.pt"):
        _, _, meta = load_hatten(tmp_path / "some", CPU, which="best")
    assert meta["checkpoint"] == {"file": "last.pt", "iteration": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_hatten(tmp_path / "some", CPU, which="last")  # trained weights: no warning


def test_an_empty_training_split_is_a_clear_error(tmp_path):
    with pytest.raises(EmptySplitError, match="the train split has no contexts and HAtten training needs them"):
        train(tmp_path, topical_dataset(train=False))


def test_a_selection_metric_that_cannot_tell_models_apart_is_refused(tmp_path):
    with pytest.raises(SetupError, match="Recall@20 is the same for every model"):
        train(tmp_path, select_metric="recall@20")  # 12 candidates


def test_smoke_preset_is_a_short_run_that_mines_twice_and_explicit_flags_win():
    args = hatten.parse_args(["train", "--dataset", "d", "--output", "o", "--preset", "smoke", "--embed_dim", "32"])
    assert (args.max_iterations, args.refresh_every, args.embed_dim) == (150, 50, 32)
    assert args.max_iterations // args.refresh_every - 1 == 2  # refreshes at 50 and 100 mine; 150 only validates
    paper = hatten.parse_args(["train", "--dataset", "d", "--output", "o"])
    assert (paper.max_iterations, paper.refresh_every, paper.embed_dim, paper.train_word_vectors) == (
        25000,
        5000,
        200,
        False,
    )
