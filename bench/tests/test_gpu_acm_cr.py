"""`bench.gpu_acm_cr`, the paper-size GPU command, run at its CPU size (`--small`) on a hand-made ACM-CR-like
dataset (every context in `test`), and its leave-citing-papers-out split checked against the files it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.gpu_acm_cr import candidate_pool, split_by_citing_paper
from trainers.data import CitationDataset, ContextQuery, PaperText

TOPICS = ["graph neural network", "citation recommendation", "query expansion", "image segmentation",
          "speech recognition", "topic model"]  # fmt: skip


def write_acm_cr_like(directory: Path) -> None:
    """Sixty candidates (titles by topic), six citing papers with four contexts each, all in `test` as in ACM-CR:
    citing paper c cites p(c), p(c + 6), p(c + 12), p(c + 18): 24 distinct cited papers."""
    directory.mkdir(parents=True)
    papers = {
        f"p{i:02d}": {"title": f"{TOPICS[i % 6]} study {i}", "abstract": f"on {TOPICS[i % 6]}", "date": "2015-01-01"}
        for i in range(60)
    }
    contexts, test = {}, []
    for c in range(6):
        papers[f"c{c}"] = {"title": f"citing {TOPICS[c]}", "abstract": f"about {TOPICS[c]}", "date": "2020-01-01"}
        for k in range(4):
            cited, context_id = f"p{c + 6 * k:02d}", f"c{c}_p{c + 6 * k:02d}_0"
            contexts[context_id] = {"masked_text": f"work on {TOPICS[c]} TARGETCIT shows", "citing_id": f"c{c}"}
            contexts[context_id] |= {"context_id": context_id, "refid": cited}
            test.append({"context_id": context_id, "positive_ids": [cited]})
    for name, value in (("papers", papers), ("contexts", contexts), ("train", []), ("val", []), ("test", test)):
        (directory / f"{name}.json").write_text(json.dumps(value))


def _queries(citing: list[int]) -> list[ContextQuery]:
    return [ContextQuery(f"q{i}", f"c{c}", "text TARGETCIT", (f"p{i}",)) for i, c in enumerate(citing)]


@pytest.mark.unit
@given(st.lists(st.integers(0, 12), min_size=1, max_size=60), st.integers(3, 6), st.integers(0, 3))
def test_a_citing_paper_is_in_one_split_and_every_context_in_some_split(citing, folds, seed):
    queries = _queries(citing)
    split = split_by_citing_paper(queries, folds, seed)
    assert sorted(q.context_id for qs in split.values() for q in qs) == sorted(q.context_id for q in queries)
    owners = [{q.citing_id for q in qs} for qs in split.values()]
    assert all(not (a & b) for i, a in enumerate(owners) for b in owners[i + 1 :])
    if len(set(citing)) >= folds:  # each fold holds a citing paper: test and validation are not empty
        assert split["test"] and split["validation"]


@pytest.mark.unit
def test_fewer_than_three_folds_are_refused():
    with pytest.raises(ValueError, match="at least 3"):
        split_by_citing_paper(_queries([0, 1, 2]), 2, 0)


@pytest.mark.unit
def test_the_pool_keeps_every_cited_paper_and_is_the_size_asked():
    papers = {f"p{i}": PaperText(f"p{i}", "t", "a") for i in range(10)} | {"c0": PaperText("c0", "t", "a")}
    dataset = CitationDataset(papers, {"test": _queries([0, 0, 1])})  # c0 and c1 cite p0, p1, p2
    for seed in range(20):
        pool = candidate_pool(dataset, dataset.queries["test"], 5, seed=seed)
        assert len(pool) == 5 and {"p0", "p1", "p2"} <= set(pool) and set(pool) <= set(papers) - {"c0"}
    assert sorted(candidate_pool(dataset, dataset.queries["test"], 0, seed=0)) == sorted(papers)


@pytest.mark.train
def test_the_small_run_writes_one_results_file(tmp_path):
    pytest.importorskip("torch")
    from trainers.pretrained import PretrainedUnavailableError, resolve_encoder

    try:
        resolve_encoder("all-minilm-l6-v2")
    except PretrainedUnavailableError as error:
        pytest.skip(f"the reranker's packaged encoder is absent: {error}")
    from bench.gpu_acm_cr import main

    write_acm_cr_like(tmp_path / "acm-cr")
    output = tmp_path / "gpu.json"
    argv = ["--dataset", str(tmp_path / "acm-cr"), "--output", str(output), "--small", "--device", "cpu"]
    main(argv + ["--glove", "none", "--pool", "30", "--synthetic_papers", "300"])

    results = json.loads(output.read_text())
    assert sorted(results["steps"]) == ["hatten", "prefetch_throughput", "rerank"]
    data = tmp_path / "gpu.work" / "data"
    papers = json.loads((data / "papers.json").read_text())
    assert len(papers) == 30 + 6  # the pool (24 cited + 6 sampled) and the six citing papers, as text
    assert {f"p{c + 6 * k:02d}" for c in range(6) for k in range(4)} <= set(papers)
    contexts = json.loads((data / "contexts.json").read_text())
    citing = {
        name: {contexts[item["context_id"]]["citing_id"] for item in json.loads((data / f"{name}.json").read_text())}
        for name in ("train", "val", "test")
    }
    assert not (citing["train"] & citing["test"]) and not (citing["val"] & citing["test"])
    assert not (citing["train"] & citing["val"])
    # six citing papers dealt into five folds: fold 0 (test) gets two, fold 1 (validation) one, train the other three
    assert (len(citing["test"]), len(citing["val"]), len(citing["train"])) == (2, 1, 3)
    split = {"papers": 36, "candidates": 30, "contexts_train": 12, "contexts_validation": 4, "contexts_test": 8}
    assert results["split"] == split
    hatten = results["steps"]["hatten"]["metrics"]["test"]
    assert hatten["num_queries"] == 8 and 0 <= hatten["mrr"] <= 1
    assert 0 <= results["steps"]["rerank"]["metrics"]["test"]["recall@10_rerank_top10"] <= 1
    assert results["steps"]["prefetch_throughput"]["metrics"]["papers"] == 300
    assert results["options"]["sizes"]["hatten_iterations"] == 12  # --small's, not the H100's 2,000
