"""Kieu et al.'s SBERT + submodular selection (`trainers.submodular`): the greedy step against brute force, the
objective monotone submodular on random instances, the Siamese targets from the training graph only, and a smoke
run on the example dataset (`--pool cited`) through the command line."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import random

import numpy as np
import pytest

from tests.support.results import recall_curves

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from trainers import submodular, tiny_model  # noqa: E402
from trainers.data import CitationDataset, ContextQuery, PaperText, load_dataset  # noqa: E402
from trainers.submodular import (  # noqa: E402
    SubmodularObjective,
    citation_graph,
    graph_distances,
    greedy_select,
    siamese_pairs,
    siamese_target,
    to_unit_similarity,
    triplets,
)

CPU = ["--device", "cpu", "--no_progress"]


def random_objective(n: int, seed: int, **weights) -> SubmodularObjective:
    """Candidates from random unit vectors (cosines of both signs), clusters at random."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 4))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = rng.normal(size=4)
    query /= np.linalg.norm(query)
    settings = {"alpha": float(rng.uniform(0.05, 0.6)), **weights}
    return SubmodularObjective(
        relevance=to_unit_similarity(vectors @ query),
        similarity=to_unit_similarity(vectors @ vectors.T),
        labels=rng.integers(0, 3, size=n),
        **settings,
    )


def gain(objective: SubmodularObjective, subset: tuple[int, ...], x: int) -> float:
    return objective.value([*subset, x]) - objective.value(subset)


@pytest.mark.parametrize("seed", range(20))
def test_greedy_takes_the_brute_force_argmax_of_the_marginal_gain_at_every_step(seed):
    weights = np.random.default_rng(100 + seed).uniform(0.1, 3.0, size=3)
    objective = random_objective(7, seed, relevance_weight=weights[0], coverage_weight=weights[1])
    objective.diversity_weight = float(weights[2])
    chosen = greedy_select(objective, 7)
    assert sorted(chosen) == list(range(7))
    for step in range(7):
        before = tuple(chosen[:step])
        gains = {x: gain(objective, before, x) for x in range(7) if x not in before}
        best = max(gains.values())
        assert gains[chosen[step]] == pytest.approx(best, abs=1e-12)
        assert chosen[step] == min(x for x, g in gains.items() if g >= best - 1e-12)  # ties: the better plain rank
        covered = objective.similarity[:, list(before)].sum(axis=1)
        reward = np.bincount(objective.labels[list(before)], objective.relevance[list(before)], minlength=3)
        fast = objective.gains(covered, reward)
        assert [fast[x] for x in gains] == pytest.approx(list(gains.values()), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_greedy_reaches_the_nemhauser_bound_of_the_best_subset(seed):
    objective = random_objective(8, seed)
    for k in (1, 2, 3, 4):
        best = max(objective.value(subset) for subset in itertools.combinations(range(8), k))
        assert objective.value(greedy_select(objective, k)) >= (1 - 1 / math.e) * best - 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_the_objective_is_monotone_submodular(seed):
    n = 6
    objective = random_objective(n, seed, relevance_weight=0.7, coverage_weight=1.3, diversity_weight=2.0)
    for assignment in itertools.product((0, 1, 2), repeat=n):  # 0: outside B, 1: in B only, 2: in A (and B)
        a = tuple(i for i in range(n) if assignment[i] == 2)
        b = tuple(i for i in range(n) if assignment[i] >= 1)
        for x in range(n):
            if assignment[x]:
                continue
            assert gain(objective, b, x) >= -1e-12  # monotone
            assert gain(objective, a, x) >= gain(objective, b, x) - 1e-12  # diminishing returns, A within B


def test_vectorised_gains_equal_the_differences_of_the_definition():
    objective = random_objective(9, 11)
    chosen = [4, 0, 7]
    covered = objective.similarity[:, chosen].sum(axis=1)
    reward = np.zeros(3)
    for j in chosen:
        reward[objective.labels[j]] += objective.relevance[j]
    fast = objective.gains(covered, reward)
    for x in range(9):
        if x not in chosen:
            assert fast[x] == pytest.approx(gain(objective, tuple(chosen), x), abs=1e-12)


def test_diversity_passes_over_a_near_duplicate_that_plain_ranking_keeps():
    # 0 and 1 are near-duplicates, both most relevant; 2 is less relevant and on another topic
    relevance = np.array([0.95, 0.94, 0.80])
    similarity = np.array([[1.0, 0.99, 0.3], [0.99, 1.0, 0.3], [0.3, 0.3, 1.0]])
    objective = SubmodularObjective(relevance, similarity, labels=np.array([0, 0, 1]), alpha=0.5)
    assert greedy_select(objective, 2) == [0, 2]
    relevance_only = SubmodularObjective(
        relevance, similarity, np.array([0, 0, 1]), coverage_weight=0.0, diversity_weight=0.0
    )
    assert greedy_select(relevance_only, 2) == [0, 1]


def test_negative_similarities_are_refused():
    with pytest.raises(ValueError, match="nonnegative"):
        SubmodularObjective(np.array([0.5, -0.1]), np.ones((2, 2)), np.array([0, 1]))


def graph_dataset() -> CitationDataset:
    """Training: c0 -> p0, c0 -> p1, c1 -> p1, c1 -> p2. Test: c0 -> p2 (an edge that would make p2 a neighbour)."""
    day = dt.date(2020, 1, 1)
    papers = {p: PaperText(p, f"title {p}", f"abstract {p}", day) for p in ("p0", "p1", "p2", "p3", "c0", "c1")}

    def context(cid: str, citing: str, cited: str) -> ContextQuery:
        return ContextQuery(cid, citing, f"context {cid} TARGETCIT", (cited,), dt.date(2021, 1, 1))

    train = [context("t0", "c0", "p0"), context("t1", "c0", "p1"), context("t2", "c1", "p1"), context("t3", "c1", "p2")]
    return CitationDataset(
        papers,
        {"train": train, "validation": [], "test": [context("x0", "c0", "p2")]},
        frozenset({"p0", "p1", "p2", "p3"}),
    )


def test_siamese_targets_by_hand_from_the_training_graph_only():
    dataset = graph_dataset()
    graph = citation_graph(dataset.queries["train"])
    distances = graph_distances(graph, "c0", 3)
    # c0 - p0, c0 - p1 (1); c0 - p1 - c1 (2); c0 - p1 - c1 - p2 (3): the test edge c0 -> p2 is not in the graph
    assert distances == {"p0": 1, "p1": 1, "c1": 2, "p2": 3}
    theta = 0.4
    assert {p: siamese_target(distances.get(p), theta, 3) for p in ("p0", "p1", "p2", "p3")} == {
        "p0": 1.0,
        "p1": 1.0,
        "p2": pytest.approx(0.16),  # theta^(3-1)
        "p3": 0.0,  # unconnected
    }
    assert siamese_target(4, theta, 3) == 0.0
    with_test_edge = graph_distances(citation_graph(dataset.queries["train"] + dataset.queries["test"]), "c0", 3)
    assert with_test_edge["p2"] == 1  # what a leak would do


def test_siamese_pairs_carry_the_hand_targets():
    dataset = graph_dataset()
    train = dataset.queries["train"]
    graph = citation_graph(train)
    pairs = siamese_pairs(
        train, graph, dataset.paper_ids(), theta=0.4, max_distance=3, negatives=2, rng=random.Random(0)
    )
    expected = {"c0": {"p0": 1.0, "p1": 1.0, "p2": 0.16, "p3": 0.0}, "c1": {"p1": 1.0, "p2": 1.0, "p0": 0.16}}
    expected["c1"]["p3"] = 0.0
    for pair in pairs:
        assert pair.target == pytest.approx(expected[pair.query.citing_id][pair.paper_id]), pair
    for query in train:  # each query's own cited paper is a target-1 pair, and its negatives are p3 (unconnected)
        own = [p for p in pairs if p.query == query]
        assert any(p.paper_id == query.cited_ids[0] and p.target == 1.0 for p in own)
        assert [p.paper_id for p in own if p.target == 0.0] == ["p3", "p3"]


def test_triplet_negatives_are_neither_cited_by_the_context_nor_the_citing_paper():
    dataset = graph_dataset()
    train = dataset.queries["train"]
    graph = citation_graph(train)
    for seed in range(5):
        drawn = triplets(train, graph, dataset.paper_ids(), random.Random(seed))
        assert sorted(q.context_id for q, _, _ in drawn) == ["t0", "t1", "t2", "t3"]
        for query, positive, negative in drawn:
            assert positive in query.cited_ids
            assert negative not in query.cited_ids and negative != query.citing_id
        nearest = {q.context_id: ["c0", "p1", "p0", "p2", "p3"] for q in train}
        hard = {
            q.context_id: n for q, _, n in triplets(train, graph, dataset.paper_ids(), random.Random(seed), nearest, 1)
        }
        assert hard == {"t0": "p1", "t1": "p0", "t2": "p0", "t3": "p1"}  # the nearest one the context does not cite


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """The example dataset, a tiny BERT, `train --preset smoke` (shortened) and `evaluate --preset smoke`."""
    from pipelines.arsyta import run

    dataset = tmp_path_factory.mktemp("arsyta")
    run(["--runner=FnApiRunner", "--output", str(dataset), "--pool", "cited"])
    runs = tmp_path_factory.mktemp("runs")
    data = ["--dataset", str(dataset)]
    tiny_model.main([*data, "--output", str(runs / "tiny-bert"), "--vocab_size", "600"])
    summary = submodular.main(
        ["train", *data, "--output", str(runs / "sbert"), "--model", str(runs / "tiny-bert"), "--preset", "smoke"]
        + ["--max_steps", "6", *CPU]
    )
    results = submodular.main(
        ["evaluate", *data, "--checkpoint", str(runs / "sbert"), "--preset", "smoke", *CPU]
        + ["--split", "validation", "test"]
    )
    return dataset, runs, summary, results


@pytest.mark.train
def test_smoke_run_writes_results_whose_recall_never_falls_as_k_grows(smoke_run):
    dataset_dir, runs, summary, results = smoke_run
    history = summary["history"]
    assert [r["objective"] for r in history][0] == "siamese" and history[-1]["objective"] == "triplet"
    assert summary["steps"] == 12  # --max_steps 6 for each objective
    for split in ("validation", "test"):
        written = json.loads((runs / "sbert" / f"results_{split}.json").read_text())
        assert written["num_queries"] == len(load_dataset(dataset_dir).queries[split])
        assert written["dataset_versions"]["schema_version"]
        assert written["options"]["candidates"] == 15 and written["options"]["ks"] == [1, 3, 5, 10]
        curves = recall_curves(written)
        assert set(curves) == {"", "_submodular"}
        assert [k for k, _ in curves["_submodular"]] == [1, 3, 5, 10]
        for points in curves.values():
            assert max(k for k, _ in points) <= 15
            values = [v for _, v in points]
            assert values == sorted(values), (split, points)
        for k in (1, 3, 5, 10):
            assert f"f1_of_means@{k}_submodular" in written and f"mean_f1@{k}" in written
        assert 0.0 <= written["mrr@10_submodular"] <= 1.0 and written["mrr@10"] <= written["mrr"]
        assert results[split]["recall@10_submodular"] == written["recall@10_submodular"]


@pytest.mark.train
def test_selections_respect_the_citing_paper_and_date_exclusions(smoke_run):
    dataset_dir, runs, _, _ = smoke_run
    dataset = load_dataset(dataset_dir)
    args = submodular.parse_args(["evaluate", "--dataset", str(dataset_dir), "--checkpoint", "x", "--preset", "smoke"])
    encoder, tokenizer = submodular.load_sbert(runs / "sbert", torch.device("cpu"))
    paper_ids = dataset.paper_ids()
    texts = [submodular.paper_text(dataset.papers[p]) for p in paper_ids]
    vectors = submodular.embed_texts(encoder, tokenizer, texts, torch.device("cpu"), max_length=128)
    index = submodular.PaperIndex.build(paper_ids, vectors, [dataset.papers[p].date for p in paper_ids])
    queries = dataset.queries["train"] + dataset.queries["test"]
    query_vectors = submodular.embed_texts(
        encoder, tokenizer, [submodular.query_text(dataset, q) for q in queries], torch.device("cpu"), max_length=128
    )
    plain, chosen = submodular.select_for_queries(query_vectors, index, queries, args)
    for query, ranking, selection in zip(queries, plain, chosen, strict=True):
        assert len(selection) == min(10, len(ranking)) and set(selection) <= set(ranking)
        assert query.citing_id not in ranking
        assert all((dataset.papers[p].date or dt.date.min) <= query.citing_date for p in ranking)


@pytest.mark.train
def test_a_missing_model_stops_with_one_line(smoke_run, tmp_path):
    dataset_dir = smoke_run[0]
    with pytest.raises(SystemExit, match=r"^error: .*no such directory"):
        submodular.main(["train", "--dataset", str(dataset_dir), "--output", str(tmp_path), "--model", "./nowhere"])


def test_pooling_is_the_mean_of_the_real_tokens_or_the_cls_state():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    encoder = BertModel(config).eval()
    batch = {"input_ids": torch.tensor([[2, 7, 9, 0], [2, 5, 0, 0]])}
    batch["attention_mask"] = (batch["input_ids"] != 0).long()
    with torch.no_grad():
        states = encoder(**batch).last_hidden_state
        mean = submodular.pool(encoder, batch, "mean")
        cls = submodular.pool(encoder, batch, "cls")
    assert torch.allclose(mean[0], states[0, :3].sum(0) / 3, atol=1e-6)  # padding left out
    assert torch.allclose(mean[1], states[1, :2].sum(0) / 2, atol=1e-6)
    assert torch.equal(cls, states[:, 0])


def test_the_pooling_a_model_was_saved_with_is_read_back(tmp_path):
    assert submodular.model_pooling(tmp_path) == "mean"  # a plain BERT directory
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert submodular.model_pooling(tmp_path) == "cls"  # a sentence-transformers layout
    (tmp_path / "sbert_config.json").write_text(json.dumps({"pooling": "mean"}))
    assert submodular.model_pooling(tmp_path) == "mean"  # ours wins: what the fine-tuning used


@pytest.mark.train
def test_cls_pooling_trains_and_is_what_evaluate_uses(smoke_run, tmp_path):
    dataset_dir, runs, _, _ = smoke_run
    data = ["--dataset", str(dataset_dir)]
    submodular.main(
        ["train", *data, "--output", str(tmp_path / "cls"), "--model", str(runs / "tiny-bert"), "--preset", "smoke"]
        + ["--max_steps", "2", "--objective", "siamese", "--pooling", "cls", *CPU]
    )
    assert json.loads((tmp_path / "cls" / "sbert_config.json").read_text())["pooling"] == "cls"
    results = submodular.main(["evaluate", *data, "--checkpoint", str(tmp_path / "cls"), "--preset", "smoke", *CPU])
    written = json.loads((tmp_path / "cls" / "results_test.json").read_text())
    assert written["options"]["pooling"] == "cls" and results["test"]["mrr"] == written["mrr"]
