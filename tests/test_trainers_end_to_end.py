"""End to end on the CPU, as a user without hub access runs it: the example dataset from `pipelines.arsyta`, then
`hatten train --preset smoke`, prefetch, evaluate, BM25, `tiny_model`, `rerank train --preset smoke` and evaluate
on HAtten's and on BM25's candidates. The pipeline only builds the fixture; `trainers` never imports Beam.

The example dataset (`--pool cited`: the papers in use, not the three uncited near-duplicate distractors the
default pool adds) has 34 training, 7 validation and 8 test contexts over 20 papers. Validation alone is too
small for a reliable comparison, so "trained beats untrained" is measured on the training and validation
queries together (41 queries), with fixed seeds.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import warnings

import pytest

from tests.support.results import recall_curves

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.example_corpus import contexts_per_split, expected_spec  # noqa: E402
from trainers import bm25, hatten, rerank, tiny_model  # noqa: E402
from trainers.data import citing_paper, load_dataset  # noqa: E402
from trainers.documents import query_document  # noqa: E402
from trainers.hatten_training import (  # noqa: E402
    CITED,
    NEGATIVE,
    HAttenTrainConfig,
    evaluate_prefetch,
    load_hatten,
    training_loss,
)

SPLITS = ("train", "validation", "test")
CPU = ["--device", "cpu", "--no_progress"]


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    from pipelines.arsyta import run

    out = tmp_path_factory.mktemp("arsyta")
    run(["--runner=FnApiRunner", "--output", str(out), "--export_json", "--pool", "cited"])
    return out


@pytest.fixture(scope="module")
def smoke_run(dataset_dir, tmp_path_factory):
    """The whole smoke path, each step through its command-line entry point."""
    runs = tmp_path_factory.mktemp("runs")
    data = ["--dataset", str(dataset_dir)]
    summary = hatten.main(["train", *data, "--output", str(runs / "hatten"), "--preset", "smoke", *CPU])
    checkpoint = ["--checkpoint", str(runs / "hatten"), *CPU]
    hatten.main(["prefetch", *data, *checkpoint, "--split", "train", "validation", "test"])
    hatten.main(["evaluate", *data, *checkpoint, "--split", "train", "validation", "test"])
    bm25.main([*data, "--split", "train", "validation", "test", "--output", str(runs / "bm25")])
    tiny_model.main([*data, "--output", str(runs / "tiny-bert"), "--vocab_size", "600"])
    rerank.main(
        ["train", *data, "--prefetched", str(runs / "hatten"), "--output", str(runs / "rerank"), *CPU]
        + ["--model", str(runs / "tiny-bert"), "--preset", "smoke"]
    )
    for prefetcher in ("hatten", "bm25"):
        rerank.main(
            ["evaluate", *data, "--prefetched", str(runs / prefetcher), "--checkpoint", str(runs / "rerank"), *CPU]
            + ["--max_length", "128"]
        )
        (runs / "rerank" / "results_rerank_test.json").rename(
            runs / "rerank" / f"results_rerank_test_{prefetcher}.json"
        )
    return runs, summary


@pytest.mark.train
def test_smoke_path_writes_results_whose_recall_never_falls_as_k_grows(smoke_run, dataset_dir):
    runs, summary = smoke_run
    dataset = load_dataset(dataset_dir)
    candidates = len(dataset.paper_ids())
    files = [runs / "hatten" / f"results_{s}.json" for s in SPLITS] + [
        runs / "bm25" / f"results_{s}.json" for s in SPLITS
    ]
    files += [runs / "rerank" / f"results_rerank_test_{p}.json" for p in ("hatten", "bm25")]
    for path in files:
        curves = recall_curves(json.loads(path.read_text()))
        assert curves, path
        for suffix, points in curves.items():
            ks = [k for k, _ in points]
            pool = int(suffix.rsplit("top", 1)[1]) if "top" in suffix else candidates
            assert max(ks) <= pool, (path, suffix, ks)  # no Recall@K beyond what was ranked
            values = [v for _, v in points]
            assert values == sorted(values), (path, suffix, points)
    # the log: two mining refreshes over all 34 training queries, then the final validation
    log = [json.loads(line) for line in (runs / "hatten" / "train_log.jsonl").read_text().splitlines()]
    assert [(r["iteration"], r["mined_queries"]) for r in log] == [(50, 34), (100, 34), (150, 0)]
    assert summary["history"] == log and summary["iterations"] == 150
    rerank_history = json.loads((runs / "rerank" / "train_history.json").read_text())
    assert [r["step"] for r in rerank_history] == [20, 34]  # --preset smoke validates every 20 steps; 34 queries


@pytest.mark.train
def test_prefetched_lists_respect_the_exclusions(smoke_run, dataset_dir):
    runs, _ = smoke_run
    dataset = load_dataset(dataset_dir)
    for prefetcher in ("hatten", "bm25"):
        for split in SPLITS:
            prefetched = json.loads((runs / prefetcher / f"prefetched_{split}.json").read_text())
            assert set(prefetched) == {q.context_id for q in dataset.queries[split]}
            for query in dataset.queries[split]:
                ranking = prefetched[query.context_id]
                assert query.citing_id not in ranking
                assert all((dataset.papers[p].date or dt.date.min) <= query.citing_date for p in ranking)


@pytest.mark.train
def test_trained_hatten_beats_the_untrained_one(smoke_run, dataset_dir):
    runs, _ = smoke_run
    dataset = load_dataset(dataset_dir)
    queries = dataset.queries["train"] + dataset.queries["validation"]
    papers = dataset.paper_ids()
    batch = dataset.queries["train"][:16]
    documents = [
        [(q.cited_ids[0], CITED)] + [(p, NEGATIVE) for p in papers if p not in q.cited_ids and p != q.citing_id][:6]
        for q in batch
    ]
    config = HAttenTrainConfig(in_batch_negatives=False)
    mrr, losses = {}, {}
    for which in ("init", "last"):  # the trained weights; best.pt is picked on 7 validation queries
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, vocabulary, _ = load_hatten(runs / "hatten", torch.device("cpu"), which)
        metrics, _ = evaluate_prefetch(model, vocabulary, dataset, queries, torch.device("cpu"), k=20)
        mrr[which] = metrics["mrr"]
        model.eval()
        with torch.no_grad():
            docs = [query_document(q, citing_paper(dataset, q)) for q in batch]
            losses[which] = training_loss(
                model, vocabulary, dataset, batch, docs, documents, config, torch.device("cpu")
            )
    assert mrr["last"] > mrr["init"], mrr
    assert losses["last"] < losses["init"], losses


@pytest.mark.train
def test_reranker_table_matches_its_own_order_and_the_oracle_adds_the_cited_paper(smoke_run, dataset_dir):
    runs, _ = smoke_run
    dataset = load_dataset(dataset_dir)
    from transformers import AutoTokenizer

    from trainers.rerank_model import PairEncoder, load_reranker

    saved = AutoTokenizer.from_pretrained(runs / "rerank" / "best")
    assert "TARGETCIT" in saved.tokenize("shown by TARGETCIT here")  # one special token, not word pieces
    assert saved.tokenize("TARGETCIT OTHERCIT") == ["TARGETCIT", "OTHERCIT"]
    model, tokenizer = load_reranker(runs / "rerank" / "best", torch.device("cpu"))
    encoder = PairEncoder(tokenizer, 128)
    for prefetcher in ("hatten", "bm25"):
        table = json.loads((runs / "rerank" / f"results_rerank_test_{prefetcher}.json").read_text())
        assert table["num_queries"] == len(dataset.queries["test"])
        prefetched = json.loads((runs / prefetcher / "prefetched_test.json").read_text())
        recalls, oracle_recalls = [], []
        for query in dataset.queries["test"]:
            pool = prefetched[query.context_id]
            assert len(pool) < 100  # every pool of the example is shorter than 100: each size reranks the same
            with_cited = pool + [c for c in query.cited_ids if c not in pool]
            scores = rerank.score_candidates(model, encoder, dataset, query, with_cited, torch.device("cpu"))
            order = sorted(pool, key=lambda p: -scores[p])  # best first, ties in prefetch order
            assert sorted(order) == sorted(pool)
            recalls.append(len(set(query.cited_ids) & set(order[:10])) / len(set(query.cited_ids)))
            oracle_order = sorted(with_cited, key=lambda p: -scores[p])
            oracle_recalls.append(len(set(query.cited_ids) & set(oracle_order[:10])) / len(set(query.cited_ids)))
        longest = max(len(prefetched[q.context_id]) for q in dataset.queries["test"])
        for n in (100, 200, 500, 1000, 2000):
            assert table[f"recall@10_rerank_top{n}"] == pytest.approx(sum(recalls) / len(recalls))
            assert table[f"recall@10_oracle_top{n}"] == pytest.approx(sum(oracle_recalls) / len(oracle_recalls))
            # Recall@K stops at what was ranked (the longest list, plus the one cited paper the oracle adds)
            oracle_ks = [
                int(k.split("@")[1].split("_")[0]) for k in table if k.endswith(f"_oracle_top{n}") and "recall@" in k
            ]
            assert max(oracle_ks) <= longest + 1 < n
        assert not any(k.startswith("recall@100_rerank") for k in table)  # every list is shorter than 100


@pytest.mark.train
def test_reranking_without_hub_access_fails_at_once_in_one_line(smoke_run, dataset_dir, monkeypatch):
    runs, _ = smoke_run
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    common = ["--dataset", str(dataset_dir), "--prefetched", str(runs / "hatten"), *CPU]
    for model in ("allenai/scibert_scivocab_uncased", str(runs / "nowhere")):
        with pytest.raises(SystemExit) as stopped:
            rerank.main(["train", *common, "--output", str(runs / "unused"), "--model", model])
        message = str(stopped.value.code)
        assert message.startswith("error: ") and "\n" not in message and "trainers.tiny_model" in message
    assert not (runs / "unused").exists()


@pytest.mark.train
def test_both_layouts_give_the_same_queries_and_papers(dataset_dir):
    parquet = load_dataset(dataset_dir)
    published = load_dataset(dataset_dir / "json")
    assert {p: (x.title, x.abstract) for p, x in parquet.papers.items()} == {
        p: (x.title, x.abstract) for p, x in published.papers.items()
    }
    for split in SPLITS:
        as_tuples = [(q.context_id, q.citing_id, q.cited_ids, q.context) for q in parquet.queries[split]]
        assert as_tuples == [(q.context_id, q.citing_id, q.cited_ids, q.context) for q in published.queries[split]]
    assert {split: len(parquet.queries[split]) for split in SPLITS} == contexts_per_split(expected_spec())
    sentences = load_dataset(dataset_dir, context_field="sentence_context")
    assert [q.context for q in sentences.queries["train"]] != [q.context for q in parquet.queries["train"]]
    assert all("TARGETCIT" in q.context for q in sentences.queries["train"])


@pytest.mark.train
def test_bm25_finds_a_paper_by_its_own_title_and_reports_recall_only_up_to_its_top_k(dataset_dir, tmp_path):
    dataset = load_dataset(dataset_dir)
    prefetcher = bm25.BM25Prefetcher(dataset)
    for paper in list(dataset.papers.values())[:5]:
        assert prefetcher.search(paper.title, 3, "nobody", None)[0] == paper.paper_id
        assert paper.paper_id not in prefetcher.search(paper.title, 50, paper.paper_id, None)
    results = bm25.main(["--dataset", str(dataset_dir), "--split", "test", "--output", str(tmp_path), "--top_k", "5"])
    assert [k for k in results["test"] if k.startswith("recall@")] == ["recall@5"]
    prefetched = json.loads((tmp_path / "prefetched_test.json").read_text())
    for query in dataset.queries["test"]:
        later = {p for p, x in dataset.papers.items() if x.date and x.date > query.citing_date}
        assert not later & set(prefetched[query.context_id]) and len(prefetched[query.context_id]) <= 5


def test_trainers_never_import_beam():
    import subprocess

    code = "import sys, trainers.hatten, trainers.rerank, trainers.bm25, trainers.tiny_model, trainers.symtax, "
    code += "trainers.citeomatic, trainers.submodular, trainers.symtax_rerank, trainers.rmcnet; "
    code += "sys.exit('apache_beam' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
