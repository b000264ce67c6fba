"""Training HAtten: graded triplet loss, mining from the current checkpoint's prefetch, and checkpoints.

Every `refresh_every` iterations the current model embeds all papers and prefetches the top
`mining_top_k` for (a sample of) the training queries. From those lists come the hard negatives (prefetched
but not cited) and the mined positives: prefetched, not cited, but textually close to the cited paper
(Jaccard similarity of their title+abstract word sets at least `jaccard_threshold`), which are neither
pushed away as negatives nor ranked above the cited paper.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.data import CitationDataset, PaperText, Query, citing_paper
from trainers.documents import Document, encode_documents, paper_document, query_document
from trainers.hatten_model import HAttenConfig, HAttenEncoder
from trainers.metrics import ranking_metrics
from trainers.prefetch import PaperIndex, embed_documents
from trainers.runtime import autocast, grad_scaler, read_json, rng_state, set_rng_state, write_json
from trainers.tokenization import Vocabulary, build_vocabulary, load_glove, word_tokens

CITED, MINED_POSITIVE, NEGATIVE = 1, 2, 3  # irrelevance levels; 0 marks an empty slot
NO_SLOT = 0


@dataclass(frozen=True)
class HAttenTrainConfig:
    """Training defaults from the paper and the original `global_config.cfg`."""

    queries_per_batch: int = 64
    cited_per_query: int = 1
    prefetched_negatives: int = 4
    random_negatives: int = 1
    mined_positives: int = 1
    mining_top_k: int = 100
    jaccard_threshold: float = 0.5
    refresh_every: int = 5000
    refresh_queries: int = 50_000
    max_iterations: int = 5000
    learning_rate: float = 1e-4
    weight_decay: float = 1e-5
    base_margin: float = 0.05
    select_recall_at: int = 100
    embed_batch_size: int = 256
    with_citing_paper: bool = True
    seed: int = 0


def graded_triplet_loss(
    query: torch.Tensor, documents: torch.Tensor, levels: torch.Tensor, base_margin: float
) -> torch.Tensor:
    """Mean over document pairs (a, b) of one query with level(a) < level(b) of
    max(0, s(q, b) - s(q, a) + base_margin * (level(b) - level(a))), s the cosine similarity.

    With one cited paper (level 1) and negatives (level 3) this is the paper's triplet loss
    max(0, s(q, d-) - s(q, d+) + m) with m = 2 * base_margin. query (B, D), documents (B, M, D), levels (B, M).
    """
    similarity = torch.nn.functional.cosine_similarity(query[:, None, :].float(), documents.float(), dim=-1)
    gap = levels[:, None, :] - levels[:, :, None]  # (B, a, b): level(b) - level(a)
    valid = (gap > 0) & (levels[:, :, None] > NO_SLOT) & (levels[:, None, :] > NO_SLOT)
    violation = similarity[:, None, :] - similarity[:, :, None] + base_margin * gap.float()
    losses = torch.relu(violation)[valid]
    return losses.mean() if losses.numel() else similarity.sum() * 0.0


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


@dataclass(frozen=True)
class MinedCandidates:
    """What the current checkpoint's prefetch says about one training query."""

    hard_negatives: tuple[str, ...]
    similar: tuple[str, ...]


def mine_candidates(
    query: Query, prefetched: Sequence[str], paper_words: dict[str, set[str]], threshold: float
) -> MinedCandidates:
    """Split a query's prefetched non-cited papers into hard negatives and mined (textually similar) positives."""
    cited_words = [paper_words.get(c, set()) for c in query.cited_ids]
    negatives, similar = [], []
    for paper_id in prefetched:
        if paper_id in query.cited_ids:
            continue
        words = paper_words.get(paper_id, set())
        if any(jaccard(words, cited) >= threshold for cited in cited_words):
            similar.append(paper_id)
        else:
            negatives.append(paper_id)
    return MinedCandidates(tuple(negatives), tuple(similar))


def paper_word_sets(papers: dict[str, PaperText]) -> dict[str, set[str]]:
    return {pid: set(word_tokens(f"{p.title} {p.abstract}")) for pid, p in papers.items()}


def sample_training_documents(
    query: Query, mined: MinedCandidates | None, paper_ids: Sequence[str], config: HAttenTrainConfig, rng: random.Random
) -> list[tuple[str, int]]:
    """(paper id, level) for one query: cited, mined positives, prefetched negatives, random negatives."""
    cited = list(query.cited_ids)
    chosen = [(pid, CITED) for pid in rng.sample(cited, min(config.cited_per_query, len(cited)))]
    if mined is not None:
        chosen += [
            (p, MINED_POSITIVE) for p in rng.sample(mined.similar, min(config.mined_positives, len(mined.similar)))
        ]
        hard = mined.hard_negatives
        chosen += [(p, NEGATIVE) for p in rng.sample(hard, min(config.prefetched_negatives, len(hard)))]
    taken = {pid for pid, _ in chosen} | set(cited) | {query.citing_id}
    wanted = config.random_negatives + (0 if mined is not None else config.prefetched_negatives)
    for _ in range(wanted * 20):
        if wanted == 0:
            break
        candidate = paper_ids[rng.randrange(len(paper_ids))]
        if candidate not in taken:
            chosen.append((candidate, NEGATIVE))
            taken.add(candidate)
            wanted -= 1
    return chosen


def slots_per_query(config: HAttenTrainConfig) -> int:
    return config.cited_per_query + config.mined_positives + config.prefetched_negatives + config.random_negatives


def training_loss(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    queries: Sequence[Document],
    documents: Sequence[Sequence[tuple[PaperText, int]]],
    base_margin: float,
    device: torch.device,
) -> torch.Tensor:
    """The graded triplet loss of one batch: queries and, per query, (paper, level) pairs."""
    config = model.config
    width = max(len(docs) for docs in documents)
    flat = [paper_document(paper) for docs in documents for paper, _ in docs]
    slots = torch.zeros((len(queries), width), dtype=torch.long)
    levels = torch.zeros((len(queries), width), dtype=torch.long)
    position = 0
    for row, docs in enumerate(documents):
        for column, (_, level) in enumerate(docs):
            slots[row, column] = position
            levels[row, column] = level
            position += 1
    query_ids, query_types = encode_documents(queries, vocabulary, config.max_doc_len, config.max_seq_len)
    doc_ids, doc_types = encode_documents(flat, vocabulary, config.max_doc_len, config.max_seq_len)
    query_vectors = model(query_ids.to(device), query_types.to(device))
    doc_vectors = model(doc_ids.to(device), doc_types.to(device))
    per_slot = doc_vectors[slots.to(device)]
    return graded_triplet_loss(query_vectors, per_slot, levels.to(device), base_margin)


def prefetch_queries(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    index: PaperIndex,
    queries: Sequence[Query],
    k: int,
    device: torch.device,
    with_citing_paper: bool = True,
    batch_size: int = 256,
    amp: bool = False,
) -> tuple[list[list[str]], float]:
    """Top-k paper ids per query and the average seconds per query (encoding + search)."""
    start = time.perf_counter()
    documents = [query_document(q, citing_paper(dataset, q), with_citing_paper) for q in queries]
    embeddings = embed_documents(model, vocabulary, documents, device, batch_size, amp)
    rankings = index.search(embeddings, k, [q.citing_id for q in queries], [q.citing_date for q in queries])
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return rankings, (time.perf_counter() - start) / max(1, len(queries))


def build_index(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    device: torch.device,
    batch_size: int = 256,
    amp: bool = False,
    progress: bool = False,
) -> PaperIndex:
    paper_ids = dataset.paper_ids()
    documents = [paper_document(dataset.papers[p]) for p in paper_ids]
    embeddings = embed_documents(model, vocabulary, documents, device, batch_size, amp, progress)
    return PaperIndex.build(paper_ids, embeddings, [dataset.papers[p].date for p in paper_ids])


def evaluate_prefetch(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    queries: Sequence[Query],
    device: torch.device,
    k: int = 2000,
    with_citing_paper: bool = True,
    amp: bool = False,
    index: PaperIndex | None = None,
) -> tuple[dict[str, float], list[list[str]]]:
    """Ranking metrics of the prefetched top-k and the rankings themselves."""
    index = index or build_index(model, vocabulary, dataset, device, amp=amp)
    rankings, seconds = prefetch_queries(
        model, vocabulary, dataset, index, queries, k, device, with_citing_paper, amp=amp
    )
    metrics = ranking_metrics(rankings, [set(q.cited_ids) for q in queries])
    metrics["prefetch_seconds_per_query"] = seconds
    return metrics, rankings


# --- vocabulary, model and checkpoints -------------------------------------------------------------------


def corpus_texts(dataset: CitationDataset) -> list[str]:
    texts = [f"{p.title} {p.abstract}" for p in dataset.papers.values()]
    return texts + [q.context for q in dataset.queries.get("train", [])]


def make_model(
    dataset: CitationDataset, model_overrides: dict, glove: str | None = None, min_count: int = 1
) -> tuple[HAttenEncoder, Vocabulary]:
    """A fresh model: GloVe vectors when a file is given (restricted to the corpus's words), learned otherwise."""
    texts = corpus_texts(dataset)
    if glove:
        corpus_words = {w for text in texts for w in word_tokens(text)}
        vocabulary, vectors = load_glove(glove, keep=corpus_words)
        overrides = {**model_overrides, "embed_dim": vectors.shape[1]}
        config = HAttenConfig(vocab_size=len(vocabulary), **overrides)
        return HAttenEncoder(config, vectors), vocabulary
    vocabulary = build_vocabulary(texts, min_count=min_count)
    return HAttenEncoder(HAttenConfig(vocab_size=len(vocabulary), **model_overrides)), vocabulary


def save_model_files(directory: Path, model: HAttenEncoder, vocabulary: Vocabulary, extra: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary.save(directory / "vocab.txt")
    write_json(directory / "config.json", {"model": model.config.to_dict(), **extra})


def load_hatten(directory: Path, device: torch.device, which: str = "best") -> tuple[HAttenEncoder, Vocabulary, dict]:
    """A trained (or, with which="init", the untrained) encoder from a checkpoint directory."""
    meta = read_json(directory / "config.json")
    model = HAttenEncoder(HAttenConfig(**meta["model"]))
    state = torch.load(directory / f"{which}.pt", map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    return model.to(device), Vocabulary.load(directory / "vocab.txt"), meta


def train_hatten(
    dataset: CitationDataset,
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    output: Path,
    config: HAttenTrainConfig,
    device: torch.device,
    amp: bool = True,
    resume: bool = True,
    progress: bool = True,
    meta: dict | None = None,
) -> dict:
    """Train, validating and re-mining every `refresh_every` iterations; keeps `last.pt` and `best.pt`.

    Returns a summary: iterations, the loss curve (mean per validation interval) and validation recall.
    """
    from tqdm.auto import tqdm

    save_model_files(output, model, vocabulary, {"train": asdict(config), **(meta or {})})
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    scaler = grad_scaler(device, amp)
    rng = random.Random(config.seed)
    start, best_score, history = 0, -1.0, []
    last = output / "last.pt"
    if resume and last.is_file():
        state = torch.load(last, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        start, best_score, history = state["iteration"], state["best_score"], state["history"]
        rng.setstate(state["python_rng"])
        set_rng_state(state["rng"])
    else:
        torch.save({"model": model.state_dict(), "iteration": 0}, output / "init.pt")
    train = dataset.queries["train"]
    validation = dataset.queries.get("validation") or []
    paper_ids = dataset.paper_ids()
    words = paper_word_sets(dataset.papers)
    mined: dict[str, MinedCandidates] = {}
    log = open(output / "train_log.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - closed below
    losses: list[float] = []
    bar = tqdm(
        range(start, config.max_iterations),
        desc="hatten",
        disable=not progress,
        initial=start,
        total=config.max_iterations,
    )

    def refresh(iteration: int, validate: bool = True, mine: bool = True) -> None:
        nonlocal best_score
        index = build_index(model, vocabulary, dataset, device, config.embed_batch_size, amp)
        if validate:
            validate_and_keep_best(iteration, index)
        if mine:
            sample = rng.sample(train, min(config.refresh_queries, len(train)))
            rankings, _ = prefetch_queries(
                model,
                vocabulary,
                dataset,
                index,
                sample,
                config.mining_top_k,
                device,
                config.with_citing_paper,
                amp=amp,
            )
            mined.clear()
            for query, ranking in zip(sample, rankings, strict=True):
                mined[query.context_id] = mine_candidates(query, ranking, words, config.jaccard_threshold)
        model.train()

    def validate_and_keep_best(iteration: int, index: PaperIndex) -> None:
        nonlocal best_score
        record: dict = {"iteration": iteration, "train_loss": float(np.mean(losses)) if losses else None}
        if validation:
            metrics, _ = evaluate_prefetch(
                model,
                vocabulary,
                dataset,
                validation,
                device,
                config.select_recall_at,
                config.with_citing_paper,
                amp,
                index,
            )
            record["validation_recall"] = metrics[f"recall@{config.select_recall_at}"]
            if record["validation_recall"] >= best_score:  # ties go to the later, longer-trained model
                best_score = record["validation_recall"]
                torch.save(
                    {"model": model.state_dict(), "iteration": iteration, "score": best_score}, output / "best.pt"
                )
        history.append(record)
        log.write(json.dumps(record) + "\n")
        log.flush()
        losses.clear()

    try:
        if start and start < config.max_iterations:
            refresh(start, validate=False)  # resumed: re-mine with the restored model; step `start` was validated
        for iteration in bar:
            if iteration % config.refresh_every == 0 and not (start and iteration == start):
                refresh(iteration)
                if iteration > 0:
                    save_last(last, model, optimizer, scaler, iteration, best_score, history, rng)
            batch = rng.sample(train, min(config.queries_per_batch, len(train)))
            queries = [query_document(q, citing_paper(dataset, q), config.with_citing_paper) for q in batch]
            documents = [
                [
                    (dataset.papers[p], level)
                    for p, level in sample_training_documents(q, mined.get(q.context_id), paper_ids, config, rng)
                ]
                for q in batch
            ]
            model.train()
            with autocast(device, amp):
                loss = training_loss(model, vocabulary, queries, documents, config.base_margin, device)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{loss.item():.4f}")
        if not history or history[-1]["iteration"] != config.max_iterations:
            refresh(config.max_iterations, mine=False)
        save_last(last, model, optimizer, scaler, config.max_iterations, best_score, history, rng)
    finally:
        log.close()
    if not (output / "best.pt").is_file():
        torch.save({"model": model.state_dict(), "iteration": config.max_iterations, "score": None}, output / "best.pt")
    return {"iterations": config.max_iterations, "best_validation_recall": best_score, "history": history}


def save_last(
    path: Path,
    model: HAttenEncoder,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    iteration: int,
    best_score: float,
    history: list,
    rng: random.Random,
) -> None:
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
        "iteration": iteration,
        "best_score": best_score,
        "history": history,
        "python_rng": rng.getstate(),
        "rng": rng_state(),
    }
    torch.save(state, path.with_suffix(".tmp"))
    path.with_suffix(".tmp").replace(path)
