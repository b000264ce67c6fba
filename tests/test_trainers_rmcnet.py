"""RMCNet on CitationR: the reference attention and the triplet loss by hand, the data layouts, a smoke run."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from trainers.citationr_data import load_citationr  # noqa: E402
from trainers.rmcnet import evaluate_rankings, main  # noqa: E402
from trainers.rmcnet_model import irrelevance_triplet_loss, reference_attention  # noqa: E402


def test_reference_attention_by_hand():
    content = torch.tensor([[1.0, 0.0]])
    refs = torch.tensor([[[2.0, 0.0], [0.0, 1.0], [9.0, 9.0]]])  # the third is padding
    mask = torch.tensor([[True, True, False]])
    pooled, weights = reference_attention(content, refs, mask)
    e2, e0 = math.exp(2.0), math.exp(0.0)
    expected = torch.tensor([[e2 / (e2 + e0), e0 / (e2 + e0), 0.0]])
    assert torch.allclose(weights, expected)
    assert torch.allclose(pooled, expected[:, 0:1] * refs[0, 0] + expected[:, 1:2] * refs[0, 1])
    # a row with no real reference weighs nothing (no NaN)
    _, none = reference_attention(content, refs, torch.zeros(1, 3, dtype=torch.bool))
    assert torch.equal(none, torch.zeros(1, 3))


def test_triplet_loss_by_hand():
    # query 0: anchor, positive, easy negative (4); query 1: anchor, positive
    emb = torch.tensor([[1.0, 0.0], [0.6, 0.8], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    classes = torch.tensor([0, 0, 0, 1, 1])
    levels = torch.tensor([0, 1, 4, 0, 1])
    loss = irrelevance_triplet_loss(emb, classes, levels, base_margin=0.05)
    cos = torch.nn.functional.normalize(emb, dim=1)
    sim = cos @ cos.T
    # anchor 0, positive 1: negatives 2 (same class, level 4, margin 3 * 0.05) and 4 (other class, margin 0.15);
    # anchor 3 (level 0) is never a negative
    terms = [sim[0, 2] - sim[0, 1] + 0.15, sim[0, 4] - sim[0, 1] + 0.15]
    # anchor 3, positive 4: negatives 1 (other class) and 2 (other class), margin 0.15 each
    terms += [sim[3, 1] - sim[3, 4] + 0.15, sim[3, 2] - sim[3, 4] + 0.15]
    expected = sum(max(0.0, float(t)) for t in terms) / 2
    assert float(loss) == pytest.approx(expected, abs=1e-6)


def test_map_and_full_ndcg():
    metrics = evaluate_rankings([["a", "x", "b", "y"]], [{"a", "b"}], pool=4)
    assert metrics["map"] == pytest.approx((1 + 2 / 3) / 2)
    assert metrics["ndcg"] == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert metrics["recall@1"] == 0.5 and metrics["recall@3"] == 1.0


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = tmp_path_factory.mktemp("citationr")
    command = [sys.executable, "-m", "pipelines.citationr", "--runner=FnApiRunner", "--output", str(out)]
    subprocess.run(command + ["--export", "rmc"], check=True, capture_output=True)
    return out


def test_both_layouts_read_the_same_queries(example):
    parquet = load_citationr(example)
    rmc = load_citationr(example / "export" / "rmc" / "data")
    assert parquet.layout == "parquet" and rmc.layout == "rmc"
    assert {split: sorted(q) for split, q in parquet.queries.items()} == {
        split: sorted(q) for split, q in rmc.queries.items()
    }  # the Parquet rows come in the writer's order, RMC's files by id
    assert parquet.papers["neurips-2023:SUBA01"].references == rmc.papers["neurips-2023:SUBA01"].references
    assert len(parquet.pool) == 4  # the candidate papers; RMC's layout ranks all papers, submissions too
    assert set(parquet.pool) < set(rmc.pool)


@pytest.mark.train
def test_smoke_run_writes_results(example, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "run"
    argv = ["--dataset", str(example), "--preset", "smoke", "--build_tiny_model", str(tmp_path / "tiny")]
    argv += ["--output", str(out), "--split", "train", "validation", "--iterations", "2", "--validate_every", "2"]
    main(argv)
    # the bundled example has 3 train, 1 validation and 1 test query
    for split in ("train", "validation"):
        result = json.loads((out / f"results_{split}.json").read_text())
        assert "dataset_versions" in result and result["options"]["preset"] == "smoke"
        for name in ("rmcnet", "bm25"):
            metrics = result[name]
            recalls = [
                metrics[k] for k in sorted((k for k in metrics if k.startswith("recall@")), key=lambda k: int(k[7:]))
            ]
            assert recalls == sorted(recalls) and len(recalls) >= 2
            assert 0.0 <= metrics["map"] <= 1.0 and 0.0 <= metrics["ndcg"] <= 1.0


@pytest.fixture(scope="module")
def tiny_model(example, tmp_path_factory):
    """`python -m trainers.tiny_model` on the CitationR dataset itself (no ArSyTa dataset needed)."""
    from trainers.tiny_model import main as build

    return build(
        ["--dataset", str(example), "--output", str(tmp_path_factory.mktemp("tiny-rmc")), "--vocab_size", "400"]
    )


@pytest.mark.train
def test_the_tiny_model_reads_a_citationr_dataset(example, tiny_model):
    from trainers.tiny_model import dataset_texts

    data = load_citationr(example)
    texts = dataset_texts(example)
    assert len(texts) == len(data.papers)  # one text a paper: submissions and candidates
    references = [r for p in data.papers.values() for r in p.references]
    assert references, "the example's submissions carry reference titles"
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    for text in [*texts, *references]:  # the word pieces were learnt from these texts: nothing is unknown
        assert tokenizer.unk_token_id not in tokenizer(text)["input_ids"], text
    rmc = example / "export" / "rmc" / "data"
    assert len(dataset_texts(rmc)) == len(load_citationr(rmc).papers)  # RMC's JSON layout too
    with pytest.raises(SystemExit, match="error"):
        from trainers.tiny_model import main as build

        build(["--dataset", str(example / "reviews"), "--output", str(example / "nowhere")])


@pytest.mark.train
def test_rmcnet_stopped_and_resumed_ends_as_an_uninterrupted_run(example, tiny_model, tmp_path, monkeypatch):
    from trainers.checkpoints import Checkpointer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["--dataset", str(example), "--preset", "smoke", "--model", str(tiny_model), "--device", "cpu"]
    argv += ["--split", "train", "validation", "--iterations", "3", "--validate_every", "2", "--checkpoint_every", "0"]
    whole = main([*argv, "--output", str(tmp_path / "whole")])
    original = Checkpointer.step_done

    def ctrl_c_at_step_4(self, step, save):  # mid-loop 2, after the first mining of hard negatives
        self.stop.requested = self.stop.requested or step == 4
        return original(self, step, save)

    monkeypatch.setattr(Checkpointer, "step_done", ctrl_c_at_step_4)
    assert main([*argv, "--output", str(tmp_path / "cut")]) == {}  # stopped: nothing evaluated
    saved = torch.load(tmp_path / "cut" / "last.pt", weights_only=False)
    assert saved["step"] == 4 and saved["prefetched"]  # the loop-1 kNN lists travel with the checkpoint
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resumed = main([*argv, "--output", str(tmp_path / "cut")])
    for split in ("train", "validation"):
        assert resumed[split]["rmcnet"] == whole[split]["rmcnet"]
        assert resumed[split]["training"]["train_losses"] == whole[split]["training"]["train_losses"]
        assert resumed[split]["device"] == "cpu"
    a = torch.load(tmp_path / "whole" / "last.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "cut" / "last.pt", weights_only=False)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
