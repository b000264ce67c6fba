"""`bench.acm_cr_table` end to end on a hand-made dataset: pool, folds, the three systems, the written table.

Tier `train` (loads all-MiniLM-L6-v2 and fine-tunes it for two steps); skipped without the packaged weights.
"""

import argparse
import datetime as dt
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("bm25s")

from bench.acm_cr_table import build_parser, citing_folds, draw_pool, run, write  # noqa: E402
from trainers.data import CitationDataset, ContextQuery, PaperText  # noqa: E402
from trainers.pretrained import PRETRAINED, PretrainedUnavailableError, resolve_encoder  # noqa: E402

pytestmark = pytest.mark.train

TOPICS = ["graph neural networks", "query expansion retrieval", "protein folding", "image segmentation",
          "speech recognition", "compiler optimisation"]  # fmt: skip


def dataset() -> CitationDataset:
    """Six cited papers, each with unique title words; six citing papers, one context each naming its topic;
    twenty filler papers about nothing in the contexts."""
    day = dt.date(2019, 1, 1)
    papers = {f"p{i}": PaperText(f"p{i}", f"{topic} study", f"we study {topic}", day) for i, topic in enumerate(TOPICS)}
    papers |= {f"f{i:02d}": PaperText(f"f{i:02d}", f"filler {i}", "lorem ipsum dolor", day) for i in range(20)}
    papers |= {f"c{i}": PaperText(f"c{i}", f"citing {i}", "an abstract", dt.date(2020, 1, 1)) for i in range(6)}
    queries = [
        ContextQuery(f"x{i}", f"c{i}", f"as shown for {topic} [1]", (f"p{i}",), dt.date(2020, 1, 1))
        for i, topic in enumerate(TOPICS)
    ]
    return CitationDataset(papers, {"test": queries}, None)


def test_pool_keeps_every_cited_paper_and_no_citing_one() -> None:
    data = dataset()
    pool = draw_pool(data, data.queries["test"], 10, seed=0)
    assert len(pool) == 10
    assert {f"p{i}" for i in range(6)} <= set(pool)
    assert not any(p.startswith("c") for p in pool)
    assert pool == draw_pool(data, data.queries["test"], 10, seed=0)
    folds = citing_folds(data.queries["test"], 3, seed=0)
    assert sorted(p for fold in folds for p in fold) == [f"c{i}" for i in range(6)]
    assert [len(f) for f in folds] == [2, 2, 2]


def test_the_table_on_a_hand_made_dataset(tmp_path) -> None:
    try:
        resolve_encoder("all-minilm-l6-v2")
        assert "all-minilm-l6-v2" in PRETRAINED
    except PretrainedUnavailableError as error:
        pytest.skip(f"all-MiniLM-L6-v2 is not installed: {error}")
    options = build_parser().parse_args(["--dataset", "-", "--output", str(tmp_path), "--pool", "16", "--folds",
                                         "3", "--steps", "2", "--resamples", "50", "--rerank_depth", "5"])  # fmt: skip
    options.systems = ["minilm", "rerank"]
    table = run(dataset(), options, log=lambda _: None, output=tmp_path)
    rows = {row["system"]: row for row in table["rows"]}
    assert len(rows) == 3
    # each context shares its topic's words with its cited paper alone: BM25 puts it first everywhere
    assert tuple(rows["BM25"]["summary"]["mrr"]) == (1.0, 1.0, 1.0)
    for row in rows.values():
        assert row["queries"] == 6
        for name in ("mrr", "recall@10", "ndcg@10"):
            mean, low, high = row["summary"][name]
            assert 0 <= low <= mean <= high <= 1
    assert all(len(v) == 6 for v in table["per_query"]["BM25"].values())
    written = json.loads((tmp_path / "table.json").read_text(encoding="utf-8"))
    assert [r["system"] for r in written["rows"]] == [r["system"] for r in table["rows"]]
    assert (tmp_path / "table.md").read_text(encoding="utf-8").count("\n") == 5
    write(table, tmp_path / "again")
    assert (tmp_path / "again" / "table.md").is_file()


def test_no_fold_trains_on_a_tested_citing_paper(monkeypatch) -> None:
    import bench.acm_cr_table as table_module

    seen: list[tuple[set[str], set[str]]] = []
    folds = citing_folds(dataset().queries["test"], 3, seed=0)

    def fake_train(data, train, candidates, options, seed):
        seen.append(({q.citing_id for q in train}, set()))
        raise StopIteration

    monkeypatch.setattr(table_module, "train_reranker", fake_train)
    with pytest.raises(StopIteration):
        table_module.reranked_rankings(dataset(), dataset().queries["test"], {}, folds,
                                       argparse.Namespace(seed=0), lambda _: None)  # fmt: skip
    assert seen[0][0].isdisjoint(folds[0])
    assert seen[0][0] | set(folds[0]) == {f"c{i}" for i in range(6)}
