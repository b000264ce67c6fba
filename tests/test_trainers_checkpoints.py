"""Every trainer stops and resumes the same way (`trainers.checkpoints`): a run stopped by Ctrl-C (or cut by a
crash after a periodic checkpoint) and started again with the same command ends with the weights and the figures
of a run never interrupted. Deterministic seeds, CPU; the example dataset from `pipelines.arsyta` and the bundled
CitationR example from `pipelines.citationr`, a tiny local BERT."""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.trainer_data import reranker_example  # noqa: E402
from trainers.checkpoints import (  # noqa: E402
    Checkpointer,
    UnsafeCheckpointError,
    add_checkpoint_flags,
    capture_rng,
    load_checkpoint,
    restore_rng,
)

CPU = ["--device", "cpu", "--no_progress"]


# ------------------------------------------------------------------------------------------- the helper itself


def test_a_checkpoint_is_due_by_count_by_time_and_after_a_stop_request(tmp_path):
    checkpoints = Checkpointer(tmp_path / "last.pt", every=3, minutes=60)
    assert [step for step in range(1, 10) if checkpoints.due(step)] == [3, 6, 9]
    saved = []
    with checkpoints:
        assert checkpoints.step_done(3, lambda: saved.append(3)) is False
        assert checkpoints.step_done(4, lambda: saved.append(4)) is False
        checkpoints.stop.requested = True  # what the first Ctrl-C does
        assert checkpoints.step_done(5, lambda: saved.append(5)) is True
    assert saved == [3, 5]
    never_by_count = Checkpointer(tmp_path / "x.pt", every=0, minutes=0)  # 0 minutes: always overdue
    assert never_by_count.due(7)
    assert not Checkpointer(tmp_path / "y.pt", every=0, minutes=60).due(7)


def test_the_checkpoint_flags_set_the_checkpointer_and_a_namespace_without_them_gets_the_defaults(tmp_path):
    parser = argparse.ArgumentParser()
    add_checkpoint_flags(parser, every=50)
    args = parser.parse_args(["--checkpoint_every", "7", "--checkpoint_minutes", "2.5", "--no_resume"])
    checkpoints = Checkpointer.from_flags(args, tmp_path / "last.pt", types=(dt.date,))
    assert (checkpoints.path, checkpoints.every, checkpoints.minutes) == (tmp_path / "last.pt", 7, 2.5)
    assert (checkpoints.resume, checkpoints.types) == (False, (dt.date,))
    flag_defaults = Checkpointer.from_flags(parser.parse_args([]), tmp_path / "last.pt")
    assert (flag_defaults.every, flag_defaults.minutes, flag_defaults.resume) == (50, 10.0, True)
    bare = Checkpointer.from_flags(argparse.Namespace(), tmp_path / "last.pt")  # a trainer called from Python
    assert (bare.every, bare.minutes, bare.resume, bare.types) == (1000, 10.0, True, ())


def test_a_directory_checkpoint_is_swapped_whole_and_found_after_a_cut_swap(tmp_path):
    checkpoints = Checkpointer(tmp_path / "last" / "state.pt", every=1)
    assert checkpoints.load() is None
    checkpoints.write({"step": 1}, files=lambda d: (d.mkdir(parents=True), (d / "w.txt").write_text("one")))
    checkpoints.write({"step": 2}, files=lambda d: (d.mkdir(parents=True), (d / "w.txt").write_text("two")))
    assert checkpoints.load() == {"step": 2} and (tmp_path / "last" / "w.txt").read_text() == "two"
    assert not (tmp_path / "last.partial").exists()
    (tmp_path / "last").rename(tmp_path / "last.partial")  # a crash between removing last/ and the rename
    assert checkpoints.load() == {"step": 2} and checkpoints.directory == tmp_path / "last.partial"
    assert Checkpointer(tmp_path / "last" / "state.pt", resume=False).load() is None


def test_random_generators_are_put_back_exactly():
    local, generator = random.Random(5), np.random.default_rng(5)
    state = capture_rng(local=local, generator=generator)
    first = (random.random(), np.random.rand(), torch.rand(1).item(), local.random(), generator.random())
    restore_rng(state, local=local, generator=generator)
    assert (random.random(), np.random.rand(), torch.rand(1).item(), local.random(), generator.random()) == first


# ------------------------------------------------------------------------------------ loading is weights-only


class WritesAMarker:
    """Unpickled, it would create `marker` (what a malicious checkpoint does with os.system, here harmless)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@dataclass(frozen=True)
class Query:
    query_id: str
    date: dt.date | None = None


def hostile_checkpoint(path: Path, marker: Path) -> Path:
    """A checkpoint that looks like a trainer's (model and optimizer state) with one object that runs code."""
    model = torch.nn.Linear(2, 1)
    state = {"model": model.state_dict(), "optimizer": torch.optim.SGD(model.parameters(), lr=0.1).state_dict()}
    torch.save({**state, "step": 3, "sampler": [WritesAMarker(marker)]}, path)
    return path


def test_a_checkpoint_that_would_run_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    path = hostile_checkpoint(tmp_path / "last.pt", marker)
    with pytest.raises(UnsafeCheckpointError, match="GLOBAL io.open was not an allowed global"):
        Checkpointer(path).load()
    with pytest.raises(UnsafeCheckpointError):
        load_checkpoint(path, types=(Query, dt.date))  # the types a trainer allows do not include it either
    assert not marker.exists()
    # the same file loaded as the trainers used to load it does run the code: the refusal is what protects
    torch.load(path, weights_only=False)
    assert marker.exists()


def test_saved_model_files_are_refused_alike(tmp_path):
    """The loaders of finished models (Citeomatic, HAtten's mined rankings) read weights-only too."""
    from trainers.citeomatic import load_citeomatic
    from trainers.hatten_training import MinedRankings

    marker = tmp_path / "ran"
    hostile_checkpoint(tmp_path / "citeomatic.pt", marker)
    with pytest.raises(UnsafeCheckpointError):
        load_citeomatic(tmp_path, torch.device("cpu"))
    with pytest.raises(UnsafeCheckpointError):
        MinedRankings.load(hostile_checkpoint(tmp_path / "mined-00000001.pt", marker))
    assert not marker.exists()


def test_every_torch_load_in_the_trainers_is_the_weights_only_loader():
    """No trainer calls torch.load itself: `load_checkpoint` is the one place, and it passes weights_only=True."""
    trainers = Path(__file__).resolve().parents[1] / "trainers"
    calls = []
    for source in sorted(trainers.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load":
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
                    keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg == "weights_only"}
                    calls.append((source.name, keywords))
    assert calls == [("checkpoints.py", {"weights_only": True})]


def test_model_optimizer_generators_and_records_round_trip_and_training_continues_identically(tmp_path):
    """Weights, an Adam state, every generator (numpy's legacy state is an array), numpy arrays and a trainer's
    own records, loaded weights-only: the resumed run takes the uninterrupted run's steps."""
    data_rng = np.random.default_rng(3)
    inputs, targets = torch.tensor(data_rng.normal(size=(40, 4)), dtype=torch.float32), torch.randn(40, 1)

    def run(steps: range, model, optimizer, sampler) -> None:
        for _ in steps:
            rows = torch.as_tensor(sampler.choice(40, size=8, replace=False))
            noise = torch.rand(1).item() * 1e-3 + random.random() * 1e-3 + np.random.rand() * 1e-3
            loss = ((model(inputs[rows]) - targets[rows]) ** 2).mean() + noise
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    def fresh():
        torch.manual_seed(0), random.seed(0), np.random.seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        return model, torch.optim.Adam(model.parameters(), lr=0.05), np.random.default_rng(7)

    model, optimizer, sampler = fresh()
    run(range(10), model, optimizer, sampler)
    whole = {k: v.clone() for k, v in model.state_dict().items()}

    model, optimizer, sampler = fresh()
    run(range(6), model, optimizer, sampler)
    checkpoints = Checkpointer(tmp_path / "last.pt", types=(Query, dt.date))
    queries = [Query("q1", dt.date(2020, 5, 1)), Query("q2")]
    checkpoints.write(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": 6,
            "order": np.arange(5, dtype=np.int64),
            "scores": np.array([0.5, 0.25], dtype=np.float32),
            "pending": queries,
            "best": (np.float64(0.75), 4),
            "rng": capture_rng(sampler=sampler),
        }
    )
    model, optimizer, sampler = fresh()  # a new process: everything from the checkpoint
    state = checkpoints.load()
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    restore_rng(state["rng"], sampler=sampler)
    assert state["pending"] == queries and state["best"] == (0.75, 4)
    assert state["order"].tolist() == [0, 1, 2, 3, 4] and state["scores"].dtype == np.float32
    run(range(state["step"], 10), model, optimizer, sampler)
    state_dicts_equal(whole, model.state_dict())
    with pytest.raises(UnsafeCheckpointError, match="Query"):  # a record type only loads where it is named
        Checkpointer(tmp_path / "last.pt").load()


# ------------------------------------------------------------------------------------- every trainer, end to end


def stop_at(monkeypatch, step: int) -> None:
    """The first Ctrl-C arriving during step `step`: the run stops after it, having written its checkpoint."""
    original = Checkpointer.step_done

    def step_done(self, done, save):
        if done == step:
            self.stop.requested = True
        return original(self, done, save)

    monkeypatch.setattr(Checkpointer, "step_done", step_done)


def state_dicts_equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name, value in a.items():
        assert torch.equal(value, b[name]), name


def safetensors(directory) -> dict:
    from safetensors.torch import load_file

    return load_file(str(directory / "model.safetensors"))


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    return reranker_example(tmp_path_factory.mktemp("resume"))


@pytest.mark.train
@pytest.mark.parametrize("module", ["rerank", "symtax_rerank"])
def test_a_reranker_stopped_and_resumed_ends_as_an_uninterrupted_one(example, monkeypatch, module):
    import importlib

    trainer = importlib.import_module(f"trainers.{module}")
    common = ["train", "--dataset", str(example / "data"), "--prefetched", str(example / "prefetched"), *CPU]
    common += ["--model", str(example / "tiny-bert"), "--preset", "smoke", "--max_steps", "12", "--validate_every", "5"]
    whole = trainer.main([*common, "--output", str(example / f"{module}-whole")])
    stop_at(monkeypatch, 7)  # between two validations, and not at a periodic checkpoint
    cut = example / f"{module}-cut"
    stopped = trainer.main([*common, "--output", str(cut)])
    assert stopped["stopped"] and stopped["steps"] == 7
    assert load_checkpoint(cut / "last" / "state.pt")["step"] == 7
    monkeypatch.undo()
    resumed = trainer.main([*common, "--output", str(cut)])
    assert not resumed["stopped"] and resumed["steps"] == 12
    assert resumed["history"] == whole["history"]  # losses and validation figures, 5, 10 and 12
    assert [r["step"] for r in whole["history"]] == [5, 10, 12]
    state_dicts_equal(safetensors(example / f"{module}-whole" / "last"), safetensors(cut / "last"))
    head = "head.pt" if module == "rerank" else "symtax.pt"
    a = load_checkpoint(example / f"{module}-whole" / "last" / head)
    b = load_checkpoint(cut / "last" / head)
    state_dicts_equal(a if module == "rerank" else a["state"], b if module == "rerank" else b["state"])
    fresh = trainer.main([*common, "--output", str(cut), "--no_resume", "--max_steps", "3"])
    assert fresh["steps"] == 3  # --no_resume starts afresh


def stop_at_call(monkeypatch, call: int) -> None:
    """The first Ctrl-C arriving during the `call`-th step of the whole run (phases counted together)."""
    original, calls = Checkpointer.step_done, {"n": 0}

    def step_done(self, done, save):
        calls["n"] += 1
        if calls["n"] == call:
            self.stop.requested = True
        return original(self, done, save)

    monkeypatch.setattr(Checkpointer, "step_done", step_done)


def without_seconds(history: list[dict]) -> list[dict]:
    return [{k: v for k, v in record.items() if k != "seconds"} for record in history]


@pytest.mark.train
@pytest.mark.parametrize("call", [10, 17])  # the Siamese phase's second epoch; the triplet phase's second epoch
def test_sbert_fine_tuning_stopped_and_resumed_ends_as_an_uninterrupted_one(example, monkeypatch, call):
    from trainers import submodular

    common = ["train", "--dataset", str(example / "data"), "--model", str(example / "tiny-bert"), *CPU]
    common += ["--preset", "smoke", "--batch_size", "16", "--max_steps", "12", "--negatives", "nearest"]
    whole = example / "sbert-whole"
    if not (whole / "model.safetensors").is_file():
        submodular.main([*common, "--output", str(whole)])
    expected = without_seconds(submodular.read_json(whole / "train_history.json"))
    assert [r["objective"] for r in expected].count("siamese") >= 2  # the run crosses epochs and both phases
    cut = example / f"sbert-cut-{call}"
    stop_at_call(monkeypatch, call)
    stopped = submodular.main([*common, "--output", str(cut)])
    assert stopped["stopped"] and not (cut / "model.safetensors").exists()
    monkeypatch.undo()
    resumed = submodular.main([*common, "--output", str(cut)])
    assert not resumed["stopped"] and without_seconds(resumed["history"]) == expected
    state_dicts_equal(safetensors(whole), safetensors(cut))


@pytest.mark.train
@pytest.mark.parametrize("call", [20, 83])  # NNSelect's second epoch (NN negatives in use); NNRank's second epoch
def test_citeomatic_stopped_and_resumed_ends_as_an_uninterrupted_one(example, monkeypatch, call):
    from trainers import citeomatic
    from trainers.citeomatic import PaperQuery

    # with the author feature, whose embedder is part of NNRank's state (the vocabulary is refitted on resume)
    common = ["train", "--dataset", str(example / "data"), "--preset", "smoke", "--use_authors", *CPU]
    whole = example / "citeomatic-whole"
    if not (whole / "citeomatic.pt").is_file():
        citeomatic.main([*common, "--output", str(whole)])
    cut = example / f"citeomatic-cut-{call}"
    stop_at_call(monkeypatch, call)  # 16 steps an epoch, 4 epochs per network at --preset smoke
    assert citeomatic.main([*common, "--output", str(cut)])["stopped"]
    assert not (cut / "citeomatic.pt").exists()
    phase = load_checkpoint(cut / "last.pt", types=(PaperQuery, dt.date))["phase"]
    assert phase == ("nnselect" if call <= 64 else "nnrank")
    monkeypatch.undo()
    resumed = citeomatic.main([*common, "--output", str(cut)])
    expected = json.loads((whole / "train_summary.json").read_text())
    for network in ("nnselect_history", "nnrank_history"):
        assert without_seconds(resumed[network]) == without_seconds(expected[network])
    a, b = (load_checkpoint(d / "citeomatic.pt") for d in (whole, cut))
    state_dicts_equal(a["nnselect"], b["nnselect"])
    state_dicts_equal(a["nnrank"], b["nnrank"])
    assert "author_embedder.direction.weight" in b["nnrank"]
