"""Citeomatic (`trainers.citeomatic`): the magnitude-direction sum and NNRank's features by hand (the author
cosine too), the author vocabulary, the candidate expansion on training citations only, F1@20 of the means by hand,
and smoke runs on the example dataset, with and without the author feature."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from trainers import citeomatic  # noqa: E402
from trainers.citeomatic import Corpus, PaperQuery, Selector, global_queries, rank_batch  # noqa: E402
from trainers.citeomatic_model import (  # noqa: E402
    CiteomaticConfig,
    MagnitudeDirectionSum,
    NNRank,
    NNSelect,
    author_ids,
    encode_authors,
    fit_author_vocabulary,
    pad_ids,
    triplet_loss,
)
from trainers.data import CitationDataset, ContextQuery, PaperText, load_dataset  # noqa: E402
from trainers.metrics import set_metrics  # noqa: E402
from trainers.tokenization import Vocabulary  # noqa: E402

ALPHA, BETA = 2, 3  # ids of a two-word vocabulary (0 pads, 1 is the unused <unk>)


def two_word_embedder(module: MagnitudeDirectionSum) -> None:
    """alpha: direction (3, 4), magnitude 2; beta: direction (0, -2), magnitude 0.5."""
    with torch.no_grad():
        module.direction.weight[ALPHA] = torch.tensor([3.0, 4.0])
        module.direction.weight[BETA] = torch.tensor([0.0, -2.0])
        module.magnitude.weight[ALPHA] = 2.0
        module.magnitude.weight[BETA] = 0.5


def test_magnitude_direction_sum_by_hand():
    embedder = MagnitudeDirectionSum(4, 2)
    two_word_embedder(embedder)
    embedder.eval()
    # alpha beta alpha: 2 x 2 x (0.6, 0.8) + 0.5 x (0, -1) = (2.4, 2.7), then normalised; padding adds nothing
    ids = pad_ids([[ALPHA, BETA, ALPHA], [ALPHA, BETA, ALPHA, 0, 0]])
    expected = torch.tensor([2.4, 2.7]) / math.sqrt(2.4**2 + 2.7**2)
    assert torch.allclose(embedder(ids), expected.expand(2, 2), atol=1e-6)
    # NNSelect: field weights (2, 1) on title alpha (0.6, 0.8) and abstract beta (0, -1): (1.2, 0.6) normalised
    model = NNSelect(4, CiteomaticConfig(dense_dim=2, dropout_p=0.0))
    two_word_embedder(model.embedder)
    with torch.no_grad():
        model.field_weights.copy_(torch.tensor([2.0, 1.0]))
    model.eval()
    vector = model(torch.tensor([[ALPHA]]), torch.tensor([[BETA]]))
    assert torch.allclose(vector, torch.tensor([[1.2, 0.6]]) / math.sqrt(1.8), atol=1e-6)


def tiny_dataset() -> CitationDataset:
    """q (2021) queries; a, b, c, d, late are the pool; a cites b in training, c only in the test split."""
    day = dt.date(2020, 1, 1)
    papers = {
        "q": PaperText("q", "alpha", "alpha beta", dt.date(2021, 1, 1)),
        "a": PaperText("a", "beta", "beta", day),
        "b": PaperText("b", "gamma", "gamma", day),
        "c": PaperText("c", "delta", "delta", day),
        "d": PaperText("d", "alpha", "alpha", day),
        "late": PaperText("late", "alpha", "alpha", dt.date(2022, 1, 1)),
        "x": PaperText("x", "other", "other", dt.date(2021, 1, 1)),
    }
    train = [
        ContextQuery("t1", "a", "", ("b",), day),
        ContextQuery("t2", "x", "", ("a",), dt.date(2021, 1, 1)),
        ContextQuery("t3", "x", "", ("late", "q"), dt.date(2021, 1, 1)),
    ]
    test = [ContextQuery("s1", "a", "", ("c",), day), ContextQuery("s2", "q", "", ("d", "x"), dt.date(2021, 1, 1))]
    pool = frozenset({"a", "b", "c", "d", "late"})
    return CitationDataset(papers, {"train": train, "validation": [], "test": test}, pool)


def test_nnrank_features_by_hand():
    dataset = tiny_dataset()
    vocabulary = Vocabulary(["alpha", "beta"])
    config = CiteomaticConfig(dense_dim=2, dropout_p=0.0, separate_embeddings=False, use_citations=True)
    corpus = Corpus(dataset, vocabulary, config)
    model = NNRank(len(vocabulary), config)
    two_word_embedder(model.query_embedder)
    with torch.no_grad():
        model.sparse["title"].weight[ALPHA] = 0.2
        model.sparse["abstract"].weight[ALPHA] = 0.3
        model.sparse["abstract"].weight[BETA] = 0.7
    model.eval()
    vectors = torch.zeros((len(corpus.ids), 2))
    vectors[corpus.row["q"]] = torch.tensor([1.0, 0.0])
    vectors[corpus.row["a"]] = torch.tensor([0.6, 0.8])
    queries = {q.citing_id: q for q in global_queries(dataset, "test")}
    assert queries == {
        "a": PaperQuery("a", ("c",), dt.date(2020, 1, 1)),
        "q": PaperQuery("q", ("d",), dt.date(2021, 1, 1)),
    }
    query = queries["q"]  # x is outside the pool
    batch = rank_batch(corpus, [(query, "a")], vectors)
    assert batch.abstract_intersection.tolist() == [[BETA]] and batch.title_intersection.tolist() == [[0]]
    features = model.features(batch)[0]
    # titles alpha vs beta: (0.6, 0.8) . (0, -1); abstracts alpha beta = (1.2, 1.1) normalised vs beta
    # intersections: no shared title word (0), abstract shares beta (0.7); a is cited once in training: log(1);
    # the NNSelect cosine of q and a: 0.6
    expected = [-0.8, -1.1 / math.sqrt(1.2**2 + 1.1**2), 0.0, 0.7, math.log(1), 0.6]
    assert features.tolist() == pytest.approx(expected, abs=1e-6)
    assert corpus.in_citations["a"] == 1 and corpus.in_citations["c"] == 0


# a, b, c, d, late (the pool) and x (a training citing paper) are the training papers; q cites only in the test split
TINY_AUTHORS = {
    "q": ("Grace Hopper", "Alan Turing"),
    "a": ("Ada  Lovelace", "Alan Turing"),
    "b": ("ada lovelace",),
    "c": ("Solo\tAuthor",),
    "x": ("Kurt Godel", "ALAN TURING"),
}


def test_author_vocabulary_holds_the_training_papers_normalised_names_and_unknowns_share_one_id():
    dataset = tiny_dataset()
    assert citeomatic.training_paper_ids(dataset) == ["a", "b", "c", "d", "late", "x"]
    vocabulary = citeomatic.training_authors(dataset, TINY_AUTHORS, min_count=1)
    # grace hopper is only on q, a test citing paper; case and whitespace runs fold together
    assert vocabulary.words == ["<pad>", "<unk>", "ada lovelace", "alan turing", "kurt godel", "solo author"]
    assert author_ids(vocabulary, TINY_AUTHORS["q"]) == [1, 3]
    assert author_ids(vocabulary, ["Alan  Turing", "alan turing", " "]) == [3]  # one name once, blanks dropped
    assert encode_authors(vocabulary, TINY_AUTHORS["q"]) == [3]  # NNRank reads the known authors only
    # at least 2 training papers: ada lovelace (a, b) and alan turing (a, x); the others become <unk> (id 1)
    twice = citeomatic.training_authors(dataset, TINY_AUTHORS, min_count=2)
    assert twice.words == ["<pad>", "<unk>", "ada lovelace", "alan turing"]
    assert author_ids(twice, ("Kurt Godel", "Solo Author", "Grace Hopper", "Ada Lovelace")) == [1, 1, 1, 2]
    assert fit_author_vocabulary([["B b"], ["a", "b  B"]], min_count=2).words == ["<pad>", "<unk>", "b b"]


def test_author_cosine_feature_by_hand():
    dataset = tiny_dataset()
    config = CiteomaticConfig(dense_dim=2, author_dim=2, dropout_p=0.0, use_authors=True, use_selector_confidence=False)
    authors = citeomatic.training_authors(dataset, TINY_AUTHORS, min_count=1)
    corpus = Corpus(dataset, Vocabulary(["alpha", "beta"]), config, (authors, TINY_AUTHORS))
    assert corpus.author_vocab_size == 6
    model = NNRank(corpus.vocab_size, config, author_vocab_size=corpus.author_vocab_size)
    ada, alan = authors.index["ada lovelace"], authors.index["alan turing"]
    with torch.no_grad():  # ada: direction (3, 4), magnitude 1; alan: direction (0, -2), magnitude 2
        model.author_embedder.direction.weight[ada] = torch.tensor([3.0, 4.0])
        model.author_embedder.direction.weight[alan] = torch.tensor([0.0, -2.0])
        model.author_embedder.magnitude.weight[ada] = 1.0
        model.author_embedder.magnitude.weight[alan] = 2.0
    model.eval()
    query = PaperQuery("q", ("d",), dt.date(2021, 1, 1))
    batch = rank_batch(corpus, [(query, "a"), (query, "b"), (query, "d")], None)
    assert batch.query_authors.tolist() == [[alan]] * 3  # grace hopper (unknown) adds nothing
    assert batch.candidate_authors.tolist() == [[ada, alan], [ada, 0], [0, 0]]
    features = model.features(batch)
    assert features.shape == (3, 5)  # title, abstract cosines, two intersections, then the author cosine
    # q: alan = 2 x (0, -1) -> (0, -1). a: 1 x (0.6, 0.8) + 2 x (0, -1) = (0.6, -1.2); b: (0.6, 0.8); d: none
    expected = [1.2 / math.sqrt(0.6**2 + 1.2**2), -0.8, 0.0]
    assert features[:, 4].tolist() == pytest.approx(expected, abs=1e-6)
    without = NNRank(corpus.vocab_size, replace(config, use_authors=False))
    assert without.features(batch).shape == (3, 4) and without.author_embedder is None


def test_candidate_expansion_uses_training_citations_only():
    dataset = tiny_dataset()
    config = CiteomaticConfig(num_ann_nbrs_to_fetch=1)
    corpus = Corpus(dataset, Vocabulary(["alpha", "beta"]), config)
    assert corpus.graph == {"a": ("b",), "x": ("a", "late", "q")}  # the test split's a -> c is not there
    vectors = torch.zeros((len(corpus.ids), 2))
    for paper_id, vector in {"q": [1, 0], "a": [1, 0], "b": [0, 1], "c": [0, 1], "d": [-1, 0], "late": [1, 0]}.items():
        vectors[corpus.row[paper_id]] = torch.tensor(vector, dtype=torch.float32)
    selector = Selector(corpus, torch.nn.functional.normalize(vectors, dim=-1))
    query = PaperQuery("q", ("d",), dt.date(2021, 1, 1))
    assert selector.neighbours(query, 1) == ["a"]  # "late" (cosine 1 too) is published after q
    assert selector.candidates(query, config) == ["a", "b"]  # b from a's training citation; never c
    without = CiteomaticConfig(num_ann_nbrs_to_fetch=1, extend_candidate_citations=False)
    assert selector.candidates(query, without) == ["a"]


def test_training_examples_take_hard_negatives_from_training_citations():
    dataset = tiny_dataset()
    config = CiteomaticConfig(min_citations=1)
    corpus = Corpus(dataset, Vocabulary(["alpha", "beta"]), config)
    queries = {q.citing_id: q for q in global_queries(dataset, "train")}
    assert queries["x"].cited_ids == ("a", "late")  # q is not in the pool
    sampler = citeomatic.ExampleGenerator(corpus, [queries["x"]], config, seed=0)
    papers, labels = sampler.examples(queries["x"], np.arange(len(corpus.pool)))
    # late (2022) is after x (2021): not a positive; b, which a cites in training, is the hard negative
    assert papers[:2] == ["a", "b"] and "late" not in papers and "x" not in papers and "c" not in papers[:2]
    boost = 0.02 / (1 + math.exp(-0.01))  # a and b are each cited once in training
    assert labels[:2] == pytest.approx([0.3 + boost, 0.2 + boost])
    # easy negatives: random pool papers (c is one: its only citation, from a, is a test-split edge)
    assert set(papers[2:]) <= {"c", "d"} and all(label < 0.2 for label in labels[2:])
    query, positive, negative, margin = next(sampler.pairs())
    assert (query.citing_id, positive) == ("x", "a") and margin == pytest.approx(
        0.3 + boost - labels[papers.index(negative)]
    )


def test_f1_at_20_is_the_f1_of_the_mean_precision_and_recall():
    first = [f"n{i}" for i in range(18)] + ["r1", "r2"]  # 2 of its 4 relevant papers in the top 20
    second = ["n0", "n1", "s1"]  # its only relevant paper, at rank 3
    metrics = set_metrics([first, second], [{"r1", "r2", "r3", "r4"}, {"s1"}], 20)
    mean_p, mean_r = (2 / 20 + 1 / 20) / 2, (2 / 4 + 1) / 2
    assert metrics["precision@20"] == pytest.approx(0.075) and metrics["recall@20"] == pytest.approx(0.75)
    assert metrics["f1_of_means@20"] == pytest.approx(2 * mean_p * mean_r / (mean_p + mean_r))  # 0.1364
    per_query = [2 * 0.1 * 0.5 / 0.6, 2 * 0.05 * 1 / 1.05]
    assert metrics["mean_f1@20"] == pytest.approx(sum(per_query) / 2)  # 0.1310: not the same number


def test_triplet_loss_and_labels():
    loss = triplet_loss(torch.tensor([0.9, 0.5]), torch.tensor([0.2, 0.6]), torch.tensor([0.3, 0.3]))
    assert float(loss) == pytest.approx((0.0 + 0.4) / 2)
    # a cited paper against an easy negative, neither cited in training: 0.3 + 0.01 - (0 + 0.01)
    assert citeomatic.label_for(0, 0.3) - citeomatic.label_for(0, 0.0) == pytest.approx(0.3)
    assert citeomatic.label_for(100, 0.0) == pytest.approx(0.02 / (1 + math.exp(-1)))


@pytest.fixture(scope="module")
def example_data(tmp_path_factory):
    from pipelines.arsyta import run

    data = tmp_path_factory.mktemp("arsyta")
    run(["--runner=FnApiRunner", "--output", str(data), "--pool", "cited"])
    return data


def smoke_run(data, runs, *flags: str):
    cpu = ["--device", "cpu", "--no_progress"]
    train = ["train", "--dataset", str(data), "--output", str(runs), "--preset", "smoke", *flags, *cpu]
    summary = citeomatic.main(train)
    splits = ["train", "validation", "test"]
    results = citeomatic.main(["evaluate", "--dataset", str(data), "--checkpoint", str(runs), "--split", *splits, *cpu])
    return data, runs, summary, results


@pytest.fixture(scope="module")
def smoke(example_data, tmp_path_factory):
    return smoke_run(example_data, tmp_path_factory.mktemp("citeomatic"))


@pytest.fixture(scope="module")
def smoke_authors(example_data, tmp_path_factory):
    return smoke_run(example_data, tmp_path_factory.mktemp("citeomatic-authors"), "--use_authors")


@pytest.mark.train
def test_smoke_run_writes_results_whose_recall_never_falls_as_k_grows(smoke):
    check_smoke_results(*smoke)
    assert not (smoke[1] / "authors.txt").exists()
    assert json.loads((smoke[1] / "results_test.json").read_text())["options"]["use_authors"] is False


@pytest.mark.train
def test_smoke_run_with_authors_writes_results_whose_recall_never_falls_as_k_grows(smoke_authors):
    data, runs, _, _ = smoke_authors
    check_smoke_results(*smoke_authors)
    dataset = load_dataset(data)
    paper_authors = citeomatic.read_paper_authors(data)
    names = (runs / "authors.txt").read_text(encoding="utf-8").splitlines()
    expected = citeomatic.training_authors(dataset, paper_authors, min_count=1).words
    assert names == expected and len(names) > 2, "the example papers carry authors, all in the vocabulary"
    saved = torch.load(runs / "citeomatic.pt", weights_only=False)
    assert saved["author_vocab_size"] == len(names) and saved["config"]["use_authors"] is True
    assert saved["nnrank"]["author_embedder.direction.weight"].shape == (len(names), 10)
    for split in ("train", "validation", "test"):
        options = json.loads((runs / f"results_{split}.json").read_text())["options"]
        assert options["use_authors"] is True and options["min_author_count"] == 1


def check_smoke_results(data, runs, summary, results):
    dataset = load_dataset(data)
    assert len(summary["nnselect_history"]) == 4 and len(summary["nnrank_history"]) == 4
    for split in ("train", "validation", "test"):
        queries = global_queries(dataset, split)
        ranked = json.loads((runs / f"ranked_{split}.json").read_text())
        assert list(ranked) == [q.citing_id for q in queries]
        precisions, recalls = [], []
        for query in queries:
            ranking = ranked[query.citing_id]
            assert query.citing_id not in ranking and len(ranking) == len(set(ranking)) <= 100
            assert all(dataset.papers[p].date <= query.citing_date for p in ranking)
            hits = len(set(query.cited_ids) & set(ranking[:20]))
            precisions.append(hits / 20)
            recalls.append(hits / len(query.cited_ids))
        mean_p, mean_r = sum(precisions) / len(queries), sum(recalls) / len(queries)
        for name in ("results", "results_nnselect"):
            metrics = json.loads((runs / f"{name}_{split}.json").read_text())
            points = sorted((int(m.group(1)), v) for k, v in metrics.items() if (m := re.fullmatch(r"recall@(\d+)", k)))
            assert points and max(k for k, _ in points) <= len(dataset.paper_ids())
            values = [v for _, v in points]
            assert values == sorted(values), (name, split, points)
            assert metrics["options"]["num_candidates_to_rank"] == 100 and metrics["task"] == "global"
            assert "dataset_version" in metrics["dataset_versions"]
        assert results[split]["nnrank"]["f1_of_means@20"] == pytest.approx(2 * mean_p * mean_r / (mean_p + mean_r))
