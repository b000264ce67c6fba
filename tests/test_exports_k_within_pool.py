"""The run configurations each export writes beside its files keep every top-K within the exported pool. The
peers' defaults (HAtten's and SymTax's K up to 2,000, RMC's `num_knn` 100) exceed a small pool, and their index
then answers with faiss's -1 padding, which their `index_to_id_mapper[-1]` turns into `KeyError: -1`. Here the
configurations are read the way the peers read them and every K is asked of an index that behaves like theirs;
the expected values are worked out by hand for pools of three to six papers."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from extractors.schemas import CANDIDATES_SCHEMA, CONTEXTS_SCHEMA, PAPERS_SCHEMA, POSITIVES_SCHEMA, QUERIES_SCHEMA
from pipelines.exports import ExportRequest, run_exports
from pipelines.exports.hatten import hatten_configs
from pipelines.exports.rmc import rmc_configs
from pipelines.exports.symtax import symtax_configs

# The defaults of the peers' published configurations (HAtten @ e46cae55 src/prefetch/config/custom/
# global_config.cfg and src/rerank/config/custom/scibert/*.config; RMC @ 89dc46ea src/configs/*/*.config).
HATTEN_K_LIST = [10, 20, 50, 100, 200, 500, 1000, 2000]
HATTEN_MINING, HATTEN_RERANKING, RMC_KNN = 100, 2000, 100
RMC_K_LIST = [1, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]


def read_like_hatten_run_py(path: Path) -> dict:
    """src/prefetch/run.py: `json.loads(" ".join([line.split("#")[0] for line in open(path) if ...]))`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(" ".join(line.split("#")[0] for line in lines if line.split("#")[0].strip() != ""))


def their_top_n(papers: int, n: int) -> list[str]:
    """What their rankers return when asked for n neighbours of an index of `papers` papers: faiss's
    IndexFlatIP.search pads the labels with -1 beyond the index, and rankers.py maps each label through the dict
    `index_to_id_mapper` (a KeyError: -1 for the padding)."""
    index_to_id_mapper = {i: f"paper{i}" for i in range(papers)}
    labels = list(range(min(n, papers))) + [-1] * max(0, n - papers)
    return [index_to_id_mapper[label] for label in labels]


def hatten_asks(prefetch: dict) -> list[int]:
    """The neighbours test.py and get_prefetched_ids.py ask the index for: max(K_list) + 1 and top_K + 1."""
    return [
        max(prefetch["K_list"]) + 1,
        prefetch["top_K_prefetched_ids_for_mining_hard_negative"] + 1,
        prefetch["top_K_prefetched_ids_for_reranking"] + 1,
    ]


def test_their_defaults_fail_on_a_small_pool_as_reported():
    with pytest.raises(KeyError, match="-1"):
        their_top_n(3, max(HATTEN_K_LIST) + 1)
    assert their_top_n(3, 3) == ["paper0", "paper1", "paper2"]


# --------------------------------------------------------------------------------- the sizes, for any pool


@given(st.integers(min_value=2, max_value=5000))
@example(2)
@example(11)  # K = 10 fits exactly: kept, and 20 ... 2000 become 10 too
@example(2001)
@example(2002)
def test_hatten_and_symtax_configs_ask_no_more_than_the_index_holds(papers):
    for configs, prefetch_file in (
        (hatten_configs({"papers.json": papers}), "src/prefetch/config/custom/citrec.cfg"),
        (symtax_configs({"papers_cat.json": papers}), "src/prefetch/config/custom/citrec.cfg"),
    ):
        prefetch = configs[prefetch_file]
        for asked in hatten_asks(prefetch):
            assert len(their_top_n(papers, asked)) == asked
        # a default that fits is kept as it is; one that does not becomes the largest that does (papers - 1)
        assert prefetch["top_K_prefetched_ids_for_reranking"] == (2000 if papers > 2000 else papers - 1)
        assert prefetch["top_K_prefetched_ids_for_mining_hard_negative"] == (100 if papers > 100 else papers - 1)
        kept = [k for k in HATTEN_K_LIST if k + 1 <= papers]
        assert prefetch["K_list"] == kept + ([papers - 1] if papers - 1 not in kept and papers <= 2000 else [])
        reranker = next(config for name, config in configs.items() if "training" in name or "rerank.config" in name)
        assert reranker["rerank_top_K"] == prefetch["top_K_prefetched_ids_for_reranking"]


@given(st.integers(min_value=2, max_value=500), st.integers(min_value=0, max_value=200))
def test_rmc_configs_ask_no_more_than_each_version_holds(base, extension):
    extended = base + extension
    configs = rmc_configs({"data/base/papers.json": base, "data/extended/papers.json": extended})
    assert sorted(configs) == [
        "src/configs/base/bm25.config",
        "src/configs/base/citrec.config",
        "src/configs/extended/bm25.config",
        "src/configs/extended/citrec.config",
    ]
    for name, config in configs.items():
        papers = extended if "extended" in name else base
        their_top_n(papers, config["num_knn"])  # get_prefetched_ids.py: ranker.get_top_n(n=num_knn)
        assert config["num_knn"] == min(RMC_KNN, papers)
        assert max(config["K_list"]) <= papers - 1  # a query ranks the other papers
        assert config["K_list"] == sorted({min(k, papers - 1) for k in RMC_K_LIST})


# ------------------------------------------------------------------------------- written by the exports


def _write(path: Path, schema: pa.Schema, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([{n: row.get(n) for n in schema.names} for row in rows], schema=schema), path)


def _context(citing: str, cited: str, split: str) -> dict:
    return {
        "context_id": f"{citing}_{cited}_0",
        "citing_id": citing,
        "cited_id": cited,
        "char_context": "a TARGETCIT b",
        "sentence_context": "One TARGETCIT.",
        "section_heading": "Introduction",
        "split": split,
    }


@pytest.fixture
def three_papers(tmp_path: Path) -> Path:
    """Three cs.* papers citing each other once per split."""
    ids = ("2101.00001", "2101.00002", "2101.00003")
    papers = [
        {"paper_id": p, "title": f"T{i}", "abstract": "A.", "categories": ["cs.IR"], "primary_category": "cs.IR"}
        for i, p in enumerate(ids)
    ]
    _write(tmp_path / "papers" / "papers-00000-of-00001.parquet", PAPERS_SCHEMA, papers)
    for split, (citing, cited) in zip(("train", "validation", "test"), ((0, 1), (1, 2), (2, 0)), strict=True):
        rows = [_context(ids[citing], ids[cited], split)]
        _write(tmp_path / "contexts" / f"{split}-00000-of-00001.parquet", CONTEXTS_SCHEMA, rows)
    return tmp_path


@pytest.mark.beam
def test_hatten_and_symtax_exports_write_configs_within_three_papers(three_papers, tmp_path):
    requests = [ExportRequest("hatten", "hatten"), ExportRequest("symtax", "symtax"), ExportRequest("hatten", "json")]
    results = run_exports(str(three_papers), requests, str(tmp_path / "out"))
    assert [counts["papers.json" if r.name == "hatten" else "papers_cat.json"] for r, counts in results] == [3, 3, 3]
    out = tmp_path / "out"

    prefetch = read_like_hatten_run_py(out / "hatten/src/prefetch/config/custom/citrec.cfg")
    # three papers: the index answers at most 3 neighbours, asked for K + 1, so every K is 2
    assert prefetch["K_list"] == [2]
    assert prefetch["top_K_prefetched_ids_for_mining_hard_negative"] == 2
    assert prefetch["top_K_prefetched_ids_for_reranking"] == 2
    for asked in hatten_asks(prefetch):
        their_top_n(3, asked)
    # everything else is their published setting, paths included
    assert (prefetch["max_num_iterations"], prefetch["embed_dim"], prefetch["num_heads"]) == (5000, 200, 8)
    assert prefetch["paper_database_path"] == "../../data/custom/papers.json"
    rerank_dir = out / "hatten/src/rerank/config/custom/scibert"
    training = json.loads((rerank_dir / "citrec_training_NN_prefetch.config").read_text())  # train.py: json.load
    validating = json.loads((rerank_dir / "citrec_validating_NN_prefetch.config").read_text())
    assert (training["rerank_top_K"], training["n_document"], training["initial_learning_rate"]) == (2, 10, 1e-5)
    assert (validating["rerank_top_K"], validating["K_list"]) == (2, [2])

    symtax = read_like_hatten_run_py(out / "symtax/src/prefetch/config/custom/citrec.cfg")
    assert (symtax["K_list"], symtax["top_K_prefetched_ids_for_reranking"]) == ([2], 2)
    assert symtax["max_num_samples_per_batch"] == 650  # SymTax's own setting
    # the paths, from src/prefetch, name this layout's files under arxiv/ (where per.py reads them)
    for key in ("paper_database_path", "context_database_path", "input_corpus_path_for_test"):
        assert symtax[key].startswith("../../arxiv/") and (out / "symtax" / Path(symtax[key]).name).is_file()
    reranker = json.loads((out / "symtax/src/rerank/citrec_rerank.config").read_text())
    assert reranker["rerank_top_K"] == 2 and reranker["paper_database_path"] == "../../arxiv/papers_cat.json"

    assert not (out / "json" / "src").exists()  # --export_json's json/ keeps the files it always had


@pytest.fixture
def citationr_five_papers(tmp_path: Path) -> Path:
    """Two submissions (train, test) and one validation query, three recommended papers, one extension paper:
    base papers.json = 3 submissions + 2 recommended papers with a record = 5; extended = 6."""
    queries = {
        "train": [{"submission_id": "S1", "title": "One", "abstract": "A.", "positive_ids": ["P-a"]}],
        "validation": [{"submission_id": "S2", "title": "Two", "abstract": "B.", "positive_ids": ["P-b"]}],
        "test": [{"submission_id": "S3", "title": "Three", "abstract": "C.", "positive_ids": ["P-a", "P-b"]}],
    }
    for split, rows in queries.items():
        for row in rows:
            row |= {"split": split, "reference_titles": ["Some Work"]}
        _write(tmp_path / "queries" / f"{split}-00000-of-00001.parquet", QUERIES_SCHEMA, rows)
    positives = [
        {"submission_id": s, "paper_id": p, "title": None, "resolved": True, "split": split}
        for s, p, split in (("S1", "P-a", "train"), ("S2", "P-b", "validation"))
        + (("S3", "P-a", "test"), ("S3", "P-b", "test"))
    ]
    _write(tmp_path / "positives" / "positives-00000-of-00001.parquet", POSITIVES_SCHEMA, positives)
    candidates = [
        {"paper_id": "P-a", "title": "Paper A", "abstract": "Aa.", "role": "positive"},
        {"paper_id": "P-b", "title": "Paper B", "abstract": "Bb.", "role": "positive"},
        {"paper_id": "X-1", "title": "Extension", "abstract": "Ext.", "role": "extension"},
    ]
    _write(tmp_path / "candidates" / "candidates-00000-of-00001.parquet", CANDIDATES_SCHEMA, candidates)
    return tmp_path


@pytest.mark.beam
def test_rmc_export_writes_configs_within_each_version(citationr_five_papers, tmp_path):
    [(_, counts)] = run_exports(str(citationr_five_papers), [ExportRequest("rmc", "rmc")], str(tmp_path / "out"))
    assert (counts["data/base/papers.json"], counts["data/extended/papers.json"]) == (5, 6)
    configs = tmp_path / "out" / "rmc" / "src" / "configs"
    for version, papers in (("base", 5), ("extended", 6)):
        for name in ("citrec.config", "bm25.config"):
            config = json.loads((configs / version / name).read_text())  # prepare_config: json.load
            assert config["num_knn"] == papers  # 100 asked of 5 (or 6) papers: faiss pads, KeyError: -1
            their_top_n(papers, config["num_knn"])
            assert config["K_list"] == [1, 3, papers - 1]
            assert config["train_para"]["max_num_iterations"] == (5000 if name == "citrec.config" else 200)
