"""Words, vocabulary, GloVe loading and the JSON layout reader on small local files."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from tests.support.trainer_data import write_json_layout  # noqa: E402
from trainers.data import load_dataset  # noqa: E402
from trainers.hatten_training import make_model  # noqa: E402
from trainers.tokenization import UNK_ID, build_vocabulary, load_glove, word_tokens  # noqa: E402


def test_unknown_words_are_kept_as_unk_not_dropped():
    vocabulary = build_vocabulary(["graph ranking graph"])
    ids = vocabulary.encode("Graph models TARGETCIT ranking", max_len=10)
    assert ids == [vocabulary.index["graph"], UNK_ID, UNK_ID, vocabulary.index["ranking"]]
    assert word_tokens("A TARGETCIT, b.") == ["a", "targetcit", "b"]


def test_glove_file_is_read_and_restricted_to_corpus_words(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("graph 0.5 1.0 -1.0\nranking 2.0 0.0 1.0\nunused 9.0 9.0 9.0\n", encoding="utf-8")
    vocabulary, vectors = load_glove(path, keep={"graph", "ranking"})
    assert vocabulary.words == ["<pad>", "<unk>", "graph", "ranking"]
    np.testing.assert_allclose(vectors[vocabulary.index["graph"]], [0.5, 1.0, -1.0])
    np.testing.assert_allclose(vectors[0], [0, 0, 0])
    np.testing.assert_allclose(vectors[UNK_ID], [1.25, 0.5, 0.0])


def write_two_paper_layout(directory):
    """Two papers citing each other in the published JSON layout: c1 (train) and c2 (test), no val.json."""
    papers = {
        "p1": {"title": "Graph ranking", "abstract": "We rank graphs.", "categories": []},
        "p2": {"title": "Citation contexts", "abstract": "Contexts of citations.", "categories": []},
    }
    contexts = {
        "c1": {"masked_text": "as shown by TARGETCIT graphs", "citing_id": "p2", "refid": "p1", "heading": ""},
        "c2": {"masked_text": "contexts TARGETCIT", "citing_id": "p1", "refid": "p2", "heading": ""},
    }
    splits = {
        "train": [{"context_id": "c1", "positive_ids": ["p1"]}],
        "test": [{"context_id": "c2", "positive_ids": ["p2"]}],
    }
    return write_json_layout(directory, papers, contexts, splits)


def test_prefetched_lists_are_read_and_a_missing_split_names_the_prefetch_to_run(tmp_path):
    from trainers.data import load_prefetched

    (tmp_path / "prefetched_test.json").write_text(json.dumps({"c2": ["p2", "p1"]}))
    assert load_prefetched(str(tmp_path), "test") == {"c2": ["p2", "p1"]}
    with pytest.raises(SystemExit) as stopped:
        load_prefetched(tmp_path, "validation")
    assert str(stopped.value) == (
        f"error: {tmp_path / 'prefetched_validation.json'} is missing: run "
        "`python -m trainers.hatten prefetch --split validation` first"
    )


def test_json_layout_as_published(tmp_path):
    write_two_paper_layout(tmp_path)
    dataset = load_dataset(tmp_path)
    assert set(dataset.papers) == {"p1", "p2"}
    (query,) = dataset.queries["train"]
    assert (query.context_id, query.citing_id, query.cited_ids) == ("c1", "p2", ("p1",))
    assert query.context == "as shown by TARGETCIT graphs"
    assert dataset.queries["validation"] == []  # no val.json
    with pytest.raises(ValueError, match="only holds the character context"):
        load_dataset(tmp_path, context_field="sentence_context")


def test_model_takes_glove_vectors_and_dimension(tmp_path):
    write_two_paper_layout(tmp_path)
    words = ["graph", "ranking", "citation", "contexts"]
    rng = np.random.default_rng(0)
    table = {w: rng.standard_normal(16).round(4) for w in words}
    (tmp_path / "glove.txt").write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in table.items()))
    model, vocabulary = make_model(
        load_dataset(tmp_path), {"num_heads": 4, "hidden_dim": 32}, str(tmp_path / "glove.txt")
    )
    assert model.config.embed_dim == 16
    weights = model.paragraphs.embedding.weight.detach().numpy()
    for word in words:
        np.testing.assert_allclose(weights[vocabulary.index[word]], table[word], rtol=1e-6)


def test_only_pool_papers_are_candidates(tmp_path):
    """`in_pool = false` marks a citing paper outside the recipe's pool: readable as the query's paper, never
    ranked; a dataset written before the column existed ranks every paper."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from extractors.schemas import CONTEXTS_SCHEMA, PAPERS_SCHEMA, context_row, paper_row
    from mapping.records import Context, Paper
    from trainers.data import load_parquet_dataset

    (tmp_path / "papers").mkdir()
    (tmp_path / "contexts").mkdir()
    papers = [
        Paper("cand1", "A candidate", "Its abstract"),
        Paper("cand2", "Another candidate", "Its abstract"),
        Paper("citing", "The citing paper", None, in_pool=False),
    ]
    pq.write_table(
        pa.Table.from_pylist([paper_row(p) for p in papers], PAPERS_SCHEMA), tmp_path / "papers/papers-0.parquet"
    )
    context = Context(
        "citing_cand1_0",
        "citing",
        "cand1",
        "b0",
        "x TARGETCIT y",
        "x TARGETCIT y",
        None,
        "[1]",
        citing_date=dt.date(2020, 1, 1),
        split="train",
    )
    pq.write_table(pa.Table.from_pylist([context_row(context)], CONTEXTS_SCHEMA), tmp_path / "contexts/train-0.parquet")
    dataset = load_parquet_dataset(tmp_path)
    assert dataset.paper_ids() == ["cand1", "cand2"]
    assert dataset.papers["citing"].title == "The citing paper"
    old = pa.Table.from_pylist([paper_row(p) for p in papers], PAPERS_SCHEMA).drop(["in_pool"])
    pq.write_table(old, tmp_path / "papers/papers-0.parquet")
    assert load_parquet_dataset(tmp_path).paper_ids() == ["cand1", "cand2", "citing"]


# ---------------------------------------------------------------- word vectors of any dimension


def write_glove(path, words, dimension, seed=0):
    rng = np.random.default_rng(seed)
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.standard_normal(dimension))}\n" for w in words))
    return path


def test_a_config_whose_heads_do_not_divide_the_dimension_fails_by_name():
    from trainers.hatten_model import HAttenConfig, heads_for_dimension

    with pytest.raises(ValueError, match=r"embed_dim 50 is not divisible by num_heads 8.*1, 2, 5, 10, 25, 50"):
        HAttenConfig(vocab_size=10, embed_dim=50, num_heads=8)
    # by hand: the divisors of 50 are 1 2 5 10 25 50, of 300 ... 5 6 10 ..., of 200 ... 8 10 ...
    assert [heads_for_dimension(50, h) for h in (8, 4, 1)] == [5, 2, 1]
    assert [heads_for_dimension(300, h) for h in (8, 4, 16)] == [6, 4, 15]
    assert heads_for_dimension(200, 8) == 8


@pytest.mark.train
@pytest.mark.parametrize(
    ("dimension", "asked", "heads"),
    [(50, None, 2), (50, 8, 5), (300, None, 4), (300, 8, 6)],  # None: the smoke preset's 4 heads
)
def test_hatten_trains_on_word_vectors_whose_dimension_the_preset_heads_do_not_divide(
    tmp_path, capsys, dimension, asked, heads
):
    """A 50-d or 300-d file (the GloVe sizes) with the preset's 4 or the published 8 heads: the heads become the
    most that divide the dimension, and training steps run through a refresh."""
    from trainers import hatten

    write_two_paper_layout(tmp_path)
    glove = write_glove(tmp_path / "vectors.txt", ["graph", "ranking", "citation", "contexts", "rank"], dimension)
    output = tmp_path / "run"
    flags = ["--num_heads", str(asked)] if asked else []
    summary = hatten.main(
        ["train", "--dataset", str(tmp_path), "--output", str(output), "--glove", str(glove), "--preset", "smoke"]
        + ["--max_iterations", "4", "--refresh_every", "2", "--queries_per_batch", "2", "--device", "cpu"]
        + ["--no_progress", *flags]
    )
    config = json.loads((output / "config.json").read_text())["model"]
    assert (config["embed_dim"], config["num_heads"]) == (dimension, heads)
    assert config["embed_dim"] % config["num_heads"] == 0
    assert summary["iterations"] == 4 and [r["iteration"] for r in summary["history"]] == [2, 4]
    if heads != (asked or 4):
        assert f"num_heads {heads}, not {asked or 4}" in capsys.readouterr().out


# ---------------------------------------------------------------- one dataset, one read: Parquet and the JSON export


def test_a_parquet_context_without_text_is_left_out_and_counted(tmp_path):
    """The exports leave out a context without text in the chosen field; the Parquet read does the same, counted."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from extractors.schemas import CONTEXTS_SCHEMA, PAPERS_SCHEMA, context_row, paper_row
    from mapping.records import Context, Paper
    from trainers.data import DroppedContextsWarning, load_parquet_dataset

    (tmp_path / "papers").mkdir()
    (tmp_path / "contexts").mkdir()
    papers = [Paper("b", "B", "Its abstract"), Paper("a", "A", "Its abstract")]
    pq.write_table(pa.Table.from_pylist([paper_row(p) for p in papers], PAPERS_SCHEMA), tmp_path / "papers/p-0.parquet")
    contexts = [
        Context(
            "a_b_0", "a", "b", "b0", "x TARGETCIT y", "", None, "[1]", citing_date=dt.date(2020, 1, 1), split="train"
        ),
        Context(
            "a_b_1", "a", "b", "b0", "", "s TARGETCIT", None, "[1]", citing_date=dt.date(2020, 1, 1), split="train"
        ),
    ]
    pq.write_table(
        pa.Table.from_pylist([context_row(c) for c in contexts], CONTEXTS_SCHEMA), tmp_path / "contexts/train-0.parquet"
    )
    with pytest.warns(DroppedContextsWarning, match="dropped_contexts:no_char_context 1"):
        dataset = load_parquet_dataset(tmp_path)
    assert [q.context_id for q in dataset.queries["train"]] == ["a_b_0"]
    assert dataset.dropped == {"dropped_contexts:no_char_context": 1}
    assert list(dataset.papers) == ["a", "b"]  # paper-id order, not the shard's
    with pytest.warns(DroppedContextsWarning, match="no_sentence_context 1"):
        assert [q.context_id for q in load_parquet_dataset(tmp_path, "sentence_context").queries["train"]] == ["a_b_1"]


@pytest.fixture(scope="module")
def example_dataset(tmp_path_factory):
    """The bundled example built by `pipelines.arsyta`, with its HAtten export in json/."""
    from pipelines.arsyta import run

    out = tmp_path_factory.mktemp("example") / "out"
    run(["--runner=FnApiRunner", "--output", str(out), "--export_json"])
    return out


def parquet_column(directory, pattern, column, keep=None):
    import pyarrow.parquet as pq

    rows = [row for path in sorted(directory.glob(pattern)) for row in pq.read_table(path).to_pylist()]
    return [row[column] for row in rows if keep is None or row[keep]]


def as_the_json_layout_holds_it(parquet, json_read):
    """The Parquet read without the dates the HAtten export does not write (its papers.json has title and abstract
    only); the same read when the export carries them."""
    import dataclasses

    if any(p.date for p in json_read.papers.values()):
        return parquet
    papers = {k: dataclasses.replace(v, date=None) for k, v in parquet.papers.items()}
    queries = {s: [dataclasses.replace(q, citing_date=None) for q in qs] for s, qs in parquet.queries.items()}
    return dataclasses.replace(parquet, papers=papers, queries=queries)


@pytest.mark.e2e
def test_the_example_reads_the_same_from_parquet_and_from_its_hatten_export(example_dataset):
    """Papers in paper-id order and queries in context-id order from either layout; independently, the Parquet
    rows sorted by those keys are the export's records in file order (the export writes in key order)."""
    from trainers.data import load_json_dataset, load_parquet_dataset

    parquet = load_parquet_dataset(example_dataset)
    json_read = load_json_dataset(example_dataset / "json")
    raw_papers = json.loads((example_dataset / "json/papers.json").read_text(encoding="utf-8"))
    assert list(raw_papers) == sorted(parquet_column(example_dataset, "papers/*.parquet", "paper_id"))
    assert list(parquet.papers) == list(json_read.papers) == list(raw_papers)
    assert parquet.paper_ids() == json_read.paper_ids()
    assert [(p.title, p.abstract) for p in parquet.papers.values()] == [
        (p.title, p.abstract) for p in json_read.papers.values()
    ]
    for split, file in (("train", "train.json"), ("validation", "val.json"), ("test", "test.json")):
        records = json.loads((example_dataset / "json" / file).read_text(encoding="utf-8"))
        rows = parquet_column(example_dataset, f"contexts/{split}-*.parquet", "context_id", keep="char_context")
        assert [r["context_id"] for r in records] == sorted(rows) != []
        fields = [
            [(q.context_id, q.citing_id, q.context, q.cited_ids) for q in d.queries[split]]
            for d in (parquet, json_read)
        ]
        assert fields[0] == fields[1]
        assert [q.context_id for q in parquet.queries[split]] == [r["context_id"] for r in records]
    assert as_the_json_layout_holds_it(parquet, json_read).papers == json_read.papers
    # an export that writes each paper's date (ISO) gives the JSON read the Parquet read's dates, and so its run
    dated = example_dataset / "json-dated"
    dated.mkdir()
    dates = dict(
        zip(*(parquet_column(example_dataset, "papers/*.parquet", c) for c in ("paper_id", "date")), strict=True)
    )
    for record in raw_papers:
        raw_papers[record]["date"] = dates[record].isoformat() if dates[record] else None
    (dated / "papers.json").write_text(json.dumps(raw_papers), encoding="utf-8")
    for name in ("contexts.json", "train.json", "val.json", "test.json"):
        (dated / name).write_text((example_dataset / "json" / name).read_text(encoding="utf-8"), encoding="utf-8")
    dated_read = load_json_dataset(dated)
    assert any(p.date for p in dated_read.papers.values())
    assert (dated_read.papers, dated_read.queries) == (parquet.papers, parquet.queries)


@pytest.mark.train
def test_a_smoke_training_on_either_read_of_the_example_gives_the_same_run(example_dataset, tmp_path):
    """Same seed, same data: the same losses, validation metrics and best weights from the Parquet read and
    from the HAtten export (without the dates the export does not hold)."""
    import torch

    from trainers.data import load_json_dataset, load_parquet_dataset
    from trainers.hatten_training import HAttenTrainConfig, evaluate_prefetch, load_hatten, make_model, train_hatten
    from trainers.runtime import seed_everything

    json_read = load_json_dataset(example_dataset / "json")
    reads = {
        "parquet": as_the_json_layout_holds_it(load_parquet_dataset(example_dataset), json_read),
        "json": json_read,
    }
    config = HAttenTrainConfig(
        queries_per_batch=8, refresh_every=10, max_iterations=30, learning_rate=1e-3, moving_average_decay=0.9
    )
    runs = {}
    for name, dataset in reads.items():
        seed_everything(0)
        model, vocabulary = make_model(dataset, {"embed_dim": 32, "num_heads": 4, "hidden_dim": 64, "max_seq_len": 64})
        summary = train_hatten(
            dataset, model, vocabulary, tmp_path / name, config, torch.device("cpu"), False, False, False
        )
        best, _, meta = load_hatten(tmp_path / name, torch.device("cpu"))
        metrics, rankings = evaluate_prefetch(best, vocabulary, dataset, dataset.queries["test"], torch.device("cpu"))
        history = [{k: v for k, v in record.items() if k != "seconds"} for record in summary["history"]]
        metrics.pop("prefetch_seconds_per_query")
        runs[name] = (history, meta["checkpoint"]["iteration"], metrics, rankings, best.state_dict())
    (history, iteration, metrics, rankings, weights), other = runs["parquet"], runs["json"]
    assert [r["iteration"] for r in history] == [10, 20, 30] and all("validation" in r for r in history)
    assert (history, iteration, metrics, rankings) == other[:4]
    assert all(torch.equal(weights[k], other[4][k]) for k in weights)
