"""The ACM-CR table's trained systems (HAtten, Citeomatic, Kieu et al.) end to end on a hand-made dataset: each
fold trains on the other citing papers only, and every context gets one ranking.

Tier `train` (GloVe 6B 50d and all-MiniLM-L6-v2, a few steps each); skipped without the packaged weights.
"""

import datetime as dt

import pytest

pytest.importorskip("torch")
pytest.importorskip("bm25s")

import bench.acm_cr_table as table_module  # noqa: E402
from trainers.data import CitationDataset, ContextQuery, PaperText  # noqa: E402
from trainers.pretrained import PretrainedUnavailableError, load_word_vectors, resolve_encoder  # noqa: E402

pytestmark = pytest.mark.train

TOPICS = ["graph neural networks", "query expansion retrieval", "protein folding", "image segmentation",
          "speech recognition", "compiler optimisation"]  # fmt: skip


def dataset() -> CitationDataset:
    """Six cited papers with their topic's words, twelve contexts from six citing papers (two each, the second
    citing its neighbour's topic too), twenty filler papers."""
    day = dt.date(2019, 1, 1)
    papers = {f"p{i}": PaperText(f"p{i}", f"{topic} study", f"we study {topic}", day) for i, topic in enumerate(TOPICS)}
    papers |= {f"f{i:02d}": PaperText(f"f{i:02d}", f"filler {i}", "lorem ipsum dolor", day) for i in range(20)}
    papers |= {f"c{i}": PaperText(f"c{i}", f"citing {i}", "an abstract", dt.date(2020, 1, 1)) for i in range(6)}
    queries = []
    for i, topic in enumerate(TOPICS):
        other = (i + 1) % len(TOPICS)
        queries.append(ContextQuery(f"x{i}a", f"c{i}", f"as shown for {topic} [1]", (f"p{i}",), dt.date(2020, 1, 1)))
        queries.append(ContextQuery(f"x{i}b", f"c{i}", f"{topic} and {TOPICS[other]} [2]", (f"p{i}", f"p{other}"),
                                    dt.date(2020, 1, 1)))  # fmt: skip
    pool = frozenset(p for p in papers if not p.startswith("c"))
    return CitationDataset(papers, {"test": queries}, pool)


def test_trained_systems_rank_every_context_from_folds_that_never_saw_it(tmp_path, monkeypatch) -> None:
    try:
        resolve_encoder("all-minilm-l6-v2")
        load_word_vectors("glove-6b-50d", keep={"protein"})
    except PretrainedUnavailableError as error:
        pytest.skip(f"the packaged weights are not installed: {error}")
    seen: list[tuple[set[str], set[str]]] = []
    real_fold = table_module.fold_dataset

    def spy(data, queries, tested):
        fold = real_fold(data, queries, tested)
        seen.append(({q.citing_id for q in fold.queries["train"]}, {q.citing_id for q in fold.queries["test"]}))
        return fold

    monkeypatch.setattr(table_module, "fold_dataset", spy)
    options = table_module.build_parser().parse_args(
        ["--output", str(tmp_path), "--pool", "26", "--folds", "3", "--resamples", "50", "--hatten_iterations", "3",
         "--hatten_refresh", "2", "--hatten_batch", "4", "--hatten_hidden", "32", "--cite_samples", "64",
         "--kieu_steps", "1", "--kieu_max_length", "32"]
    )  # fmt: skip
    options.systems = ["hatten", "citeomatic", "kieu"]
    table = table_module.run(dataset(), options, log=lambda _: None)
    assert [row["system"].split(" ")[0] for row in table["rows"]] == ["BM25", "HAtten", "Citeomatic", "Kieu"]
    for row in table["rows"]:
        assert row["queries"] == 12
        mean, low, high = row["summary"]["recall@10"]
        assert 0 <= low <= mean <= high <= 1
    assert len(seen) == 9  # three folds for each of three systems
    for train, test in seen:
        assert train.isdisjoint(test) and train | test == {f"c{i}" for i in range(6)}
    for system, values in table["per_query"].items():
        if system != "context_ids":
            assert len(values["mrr"]) == 12
