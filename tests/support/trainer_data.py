"""Small datasets for the trainer tests: papers on distinct topics and contexts that name the topic of the paper
they cite, so that a few training steps can learn something and nothing needs Beam; a dataset written in the
published JSON layout."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from trainers.data import CitationDataset, ContextQuery, PaperText

TOPICS = (
    "graph spectra",
    "protein folding",
    "speech recognition",
    "machine translation",
    "image segmentation",
    "citation networks",
    "reinforcement learning",
    "topic models",
    "query expansion",
    "dependency parsing",
    "galaxy clusters",
    "quantum circuits",
)


def topical_dataset(train_per_paper: int = 2, validation_per_paper: int = 1, train: bool = True) -> CitationDataset:
    """12 papers of 2020 (one topic each), citing papers of 2021 that cite them, contexts naming the topic."""
    papers = {}
    for i, topic in enumerate(TOPICS):
        papers[f"p{i}"] = PaperText(
            f"p{i}",
            f"Advances in {topic}",
            f"We study {topic} with method {i % 3} on data {i % 4}.",
            dt.date(2020, 1, 1),
        )
    for i in range(4):
        papers[f"c{i}"] = PaperText(f"c{i}", f"A survey number {i}", "We survey several fields.", dt.date(2021, 1, 1))
    queries: dict[str, list[ContextQuery]] = {"train": [], "validation": [], "test": []}
    counts = {"train": train_per_paper if train else 0, "validation": validation_per_paper, "test": 1}
    for split, count in counts.items():
        for i, topic in enumerate(TOPICS):
            for n in range(count):
                citing = f"c{(i + n) % 4}"
                context = f"earlier work on {topic} TARGETCIT is relevant here ({split} {n})"
                queries[split].append(
                    ContextQuery(f"{split}-{i}-{n}", citing, context, (f"p{i}",), dt.date(2021, 1, 1))
                )
    return CitationDataset(papers, queries, frozenset(f"p{i}" for i in range(len(TOPICS))))


def reranker_example(out, *flags: str):
    """The bundled example as a dataset under `out/data` (arsyta with `--pool cited` and `flags`), every candidate
    but the citing paper as each query's prefetched list (`out/prefetched`, in table order), and a tiny BERT on
    its texts (`out/tiny-bert`): what a reranker test trains on. Returns `out`."""
    from pipelines.arsyta import run
    from trainers.data import load_dataset
    from trainers.tiny_model import build_tiny_bert, dataset_texts

    data = out / "data"
    run(["--runner=FnApiRunner", "--output", str(data), *flags, "--pool", "cited"])
    dataset = load_dataset(data)
    prefetched = out / "prefetched"
    prefetched.mkdir()
    for split, queries in dataset.queries.items():
        lists = {q.context_id: [p for p in dataset.paper_ids() if p != q.citing_id] for q in queries}
        (prefetched / f"prefetched_{split}.json").write_text(json.dumps(lists))
    build_tiny_bert(out / "tiny-bert", dataset_texts(data), vocab_size=600)
    return out


def write_json_layout(directory: Path, papers: dict, contexts: dict, splits: dict[str, list[dict]]) -> Path:
    """A dataset in the published JSON layout (HAtten's and SymTax's) under `directory`: `papers.json`,
    `contexts.json` and, per split name, `<name>.json`, a list of `{"context_id", "positive_ids"}`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in {"papers": papers, "contexts": contexts, **splits}.items():
        (directory / f"{name}.json").write_text(json.dumps(value))
    return directory
