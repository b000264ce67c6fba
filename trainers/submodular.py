"""Kieu et al. (ICPR 2020), "Learning Neural Textual Representations for Citation Recommendation": SBERT fine-tuned
on the citation graph (Siamese, then triplet), then K papers picked from its top candidates by greedy maximisation
of a monotone submodular function of relevance, coverage and diversity.

    python -m trainers.submodular train    --dataset out/ --output runs/sbert   # --model: all-MiniLM-L6-v2
    python -m trainers.submodular evaluate --dataset out/ --checkpoint runs/sbert --split test

Objectives, function, metrics and choices made where the paper was unread: docs/trainers.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.checkpoints import Checkpointer, add_checkpoint_flags, capture_rng, restore_rng
from trainers.data import SPLITS, CitationDataset, ContextQuery, citing_paper, load_dataset
from trainers.metrics import ranking_metrics, recall_ks_up_to, set_metrics
from trainers.prefetch import PaperIndex
from trainers.pretrained import resolve_encoder
from trainers.rerank_model import add_model_flag, load_encoder, paper_text, run_bert_command
from trainers.runtime import (
    PresetRates,
    add_common_flags,
    add_learning_rate_flag,
    add_preset_flag,
    autocast,
    command_parser,
    dataset_versions,
    grad_scaler,
    parse_with_preset,
    read_json,
    resolve_device,
    settle_learning_rate,
    train_command,
    write_json,
    write_split_metrics,
)
from trainers.tiny_model import is_tiny_model

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SBERT_CONFIG = "sbert_config.json"
QUERY_TEXTS = ("context", "citing", "both")
POOLINGS = ("mean", "cls")
POOLING_HELP = "mean (SBERT, all-MiniLM) or cls (SPECTER); default: as the model was saved, else mean."

# `--preset smoke`: minutes on two CPU cores with a tiny local model; explicit flags win over it.
PRESETS: dict[str, dict[str, object]] = {
    "paper": {},
    "smoke": {"batch_size": 8, "max_length": 128, "max_steps": 100, "epochs": 10},
}
# The rate by what is trained (`runtime.settle_learning_rate`): a pretrained encoder is fine-tuned at SBERT's 2e-5
# in every preset; the tiny random model needs 1e-3 to learn anything in a smoke run.
LEARNING_RATES = {"paper": PresetRates(pretrained=2e-5, tiny=2e-5), "smoke": PresetRates(pretrained=2e-5, tiny=1e-3)}
EVALUATE_PRESETS: dict[str, dict[str, object]] = {
    "paper": {},
    "smoke": {"candidates": 15, "ks": [1, 3, 5, 10], "clusters": 3, "alpha": 0.3, "max_length": 128},
}


# ---------------------------------------------------------------- the citation graph and the Siamese targets


def citation_graph(queries: Sequence[ContextQuery]):
    """The undirected graph of citing -> cited edges of `queries` (pass the training split's only)."""
    import networkx as nx

    graph = nx.Graph()
    for query in queries:
        for cited in query.cited_ids:
            if cited != query.citing_id:
                graph.add_edge(query.citing_id, cited)
    return graph


def graph_distances(graph, source: str, max_distance: int) -> dict[str, int]:
    """Shortest-path length from `source` to every node within `max_distance` (the source itself excluded)."""
    import networkx as nx

    if source not in graph:
        return {}
    lengths = nx.single_source_shortest_path_length(graph, source, cutoff=max_distance)
    return {node: d for node, d in lengths.items() if d > 0}


def siamese_target(distance: int | None, theta: float, max_distance: int) -> float:
    """theta^(dis - 1) for dis in 1..max_distance; 0 beyond it or unconnected (None)."""
    if distance is None or distance > max_distance:
        return 0.0
    if distance < 1:
        raise ValueError("a pair's distance is at least 1")
    return theta ** (distance - 1)


# ---------------------------------------------------------------- the submodular objective


def to_unit_similarity(cosine: np.ndarray) -> np.ndarray:
    """(1 + cos) / 2: nonnegative, as coverage and diversity need to be monotone submodular; keeps the order."""
    return np.clip((1.0 + np.asarray(cosine, dtype=np.float64)) / 2.0, 0.0, 1.0)


def kmeans_labels(vectors: np.ndarray, clusters: int, seed: int = 0, iterations: int = 25) -> np.ndarray:
    """Cluster of each row (k-means++ seeding, Lloyd iterations; deterministic for a seed)."""
    n = vectors.shape[0]
    clusters = max(1, min(clusters, n))
    if clusters == 1:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    centres = [vectors[rng.integers(n)]]
    for _ in range(1, clusters):
        distance = np.min([((vectors - c) ** 2).sum(axis=1) for c in centres], axis=0)
        total = distance.sum()
        centres.append(vectors[rng.choice(n, p=distance / total)] if total > 0 else vectors[rng.integers(n)])
    centres = np.stack(centres)
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        labels = ((vectors[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
        moved = np.stack(
            [vectors[labels == c].mean(axis=0) if (labels == c).any() else centres[c] for c in range(len(centres))]
        )
        if np.allclose(moved, centres):
            break
        centres = moved
    return labels


@dataclass
class SubmodularObjective:
    """f(S) = w_r * relevance(S) + w_c * coverage(S) + w_d * diversity(S) over candidates 0..n-1 (module docstring).

    relevance (n,) and similarity (n, n) must be nonnegative; labels (n,) are the clusters of the diversity term."""

    relevance: np.ndarray
    similarity: np.ndarray
    labels: np.ndarray
    alpha: float = 0.1
    relevance_weight: float = 1.0
    coverage_weight: float = 1.0
    diversity_weight: float = 1.0

    def __post_init__(self) -> None:
        self.relevance = np.asarray(self.relevance, dtype=np.float64)
        self.similarity = np.asarray(self.similarity, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=np.int64)
        if (self.relevance < 0).any() or (self.similarity < 0).any():
            raise ValueError("relevance and similarity must be nonnegative for f to be monotone submodular")
        self.cap = self.alpha * self.similarity.sum(axis=1)  # alpha * C_i(V)

    @property
    def size(self) -> int:
        return len(self.relevance)

    def value(self, selected: Sequence[int]) -> float:
        """f(S), computed directly from the definition (the reference for `gains`)."""
        chosen = list(selected)
        relevance = float(self.relevance[chosen].sum())
        coverage = float(np.minimum(self.similarity[:, chosen].sum(axis=1), self.cap).sum()) / self.size
        diversity = sum(
            math.sqrt(float(self.relevance[[j for j in chosen if self.labels[j] == k]].sum()))
            for k in set(self.labels.tolist())
        )
        return self.relevance_weight * relevance + self.coverage_weight * coverage + self.diversity_weight * diversity

    def gains(self, covered: np.ndarray, cluster_reward: np.ndarray) -> np.ndarray:
        """f(S + j) - f(S) for every j, given C_i(S) = `covered` (n,) and the reward of S in each cluster."""
        before = np.minimum(covered, self.cap)
        coverage = (np.minimum(covered[:, None] + self.similarity, self.cap[:, None]) - before[:, None]).sum(axis=0)
        current = cluster_reward[self.labels]
        diversity = np.sqrt(current + self.relevance) - np.sqrt(current)
        return (
            self.relevance_weight * self.relevance
            + self.coverage_weight * coverage / self.size
            + self.diversity_weight * diversity
        )


def greedy_select(objective: SubmodularObjective, k: int) -> list[int]:
    """The greedy order: at each step the candidate of largest marginal gain (ties: the lower index, i.e. the
    better plain rank); stops at k or when every candidate is chosen."""
    n = objective.size
    covered = np.zeros(n)
    cluster_reward = np.zeros(int(objective.labels.max()) + 1 if n else 0)
    chosen: list[int] = []
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        gains = np.where(available, objective.gains(covered, cluster_reward), -np.inf)
        best = int(np.argmax(gains))
        chosen.append(best)
        available[best] = False
        covered += objective.similarity[:, best]
        cluster_reward[objective.labels[best]] += objective.relevance[best]
    return chosen


# ---------------------------------------------------------------- the SBERT encoder


def load_sbert(model_name_or_path: str | Path, device: torch.device):
    """(encoder, tokenizer) from a hub id or local directory; `resolve_model` says in one line why one is missing."""
    encoder, tokenizer = load_encoder(model_name_or_path)
    return encoder.to(device), tokenizer


def mean_pool(encoder, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """SBERT's mean pooling: the average of the last hidden states over the real (unpadded) tokens."""
    states = encoder(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
    return (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)


def pool(encoder, batch: dict[str, torch.Tensor], pooling: str = "mean") -> torch.Tensor:
    """A text's vector: `mean` pooling (SBERT, all-MiniLM) or the [CLS] state (`cls`: SPECTER's paper vector)."""
    if pooling == "cls":
        return encoder(**batch).last_hidden_state[:, 0]
    return mean_pool(encoder, batch)


def model_pooling(model_name_or_path: str | Path) -> str:
    """The pooling a model was saved with: our `sbert_config.json`, else a sentence-transformers model's
    `1_Pooling/config.json` (local, in a package of `trainers.pretrained`, or in the hub cache), else `mean`.
    SPECTER ships neither: pass --pooling cls."""
    model_name_or_path = resolve_encoder(model_name_or_path)
    path = Path(model_name_or_path)
    if (path / SBERT_CONFIG).is_file():
        return read_json(path / SBERT_CONFIG).get("pooling", "mean")
    pooling_file = path / "1_Pooling" / "config.json"
    if not pooling_file.is_file() and not path.exists():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(str(model_name_or_path), "1_Pooling/config.json")
        pooling_file = Path(cached) if isinstance(cached, str) else pooling_file
    if pooling_file.is_file():
        return "cls" if read_json(pooling_file).get("pooling_mode_cls_token") else "mean"
    return "mean"


def tokenize(tokenizer, texts: Sequence[str], max_length: int, device: torch.device) -> dict[str, torch.Tensor]:
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    return {key: value.to(device) for key, value in batch.items()}


@torch.inference_mode()
def embed_texts(
    encoder,
    tokenizer,
    texts: Sequence[str],
    device: torch.device,
    *,
    max_length: int,
    batch_size: int = 64,
    amp: bool = False,
    pooling: str = "mean",
) -> torch.Tensor:
    """L2-normalised embeddings (N, D), float32, in the order of `texts` (batched by length)."""
    encoder.eval()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = torch.zeros((len(texts), encoder.config.hidden_size), dtype=torch.float32, device=device)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        with autocast(device, amp):
            vectors = pool(encoder, tokenize(tokenizer, [texts[i] for i in rows], max_length, device), pooling)
        out[torch.tensor(rows, device=device)] = torch.nn.functional.normalize(vectors.float(), dim=-1)
    return out


def query_text(dataset: CitationDataset, query: ContextQuery, mode: str = "both") -> str:
    """The local context, the citing paper's title and abstract, or the context followed by them (`both`: the
    context comes first, so truncation cuts the abstract)."""
    citing = paper_text(citing_paper(dataset, query))
    if mode == "context":
        return query.context
    if mode == "citing":
        return citing
    return f"{query.context} {citing}".strip()


def save_sbert(encoder, tokenizer, directory: Path, config: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    write_json(directory / SBERT_CONFIG, config)


# ---------------------------------------------------------------- training


@dataclass(frozen=True)
class Pair:
    query: ContextQuery
    paper_id: str
    target: float


def siamese_pairs(
    queries: Sequence[ContextQuery],
    graph,
    candidates: Sequence[str],
    *,
    theta: float,
    max_distance: int,
    negatives: int,
    rng: random.Random,
) -> list[Pair]:
    """One epoch's pairs: per query its cited papers (target 1), one paper drawn at each distance 2..max_distance
    (theta^(d-1)) and `negatives` papers beyond max_distance or unconnected (target 0), shuffled."""
    pool = set(candidates)
    pairs: list[Pair] = []
    cache: dict[str, dict[int, list[str]]] = {}
    for query in queries:
        if query.citing_id not in cache:
            by_distance: dict[int, list[str]] = {}
            for paper_id, d in graph_distances(graph, query.citing_id, max_distance).items():
                if paper_id in pool:
                    by_distance.setdefault(d, []).append(paper_id)
            cache[query.citing_id] = {d: sorted(ids) for d, ids in by_distance.items()}
        by_distance = cache[query.citing_id]
        near = {p for ids in by_distance.values() for p in ids}
        pairs += [Pair(query, cited, 1.0) for cited in query.cited_ids if cited in pool]
        for d in range(2, max_distance + 1):
            if by_distance.get(d):
                pairs.append(Pair(query, rng.choice(by_distance[d]), siamese_target(d, theta, max_distance)))
        for _ in range(negatives):
            for _attempt in range(20):
                paper_id = rng.choice(candidates)
                if paper_id not in near and paper_id != query.citing_id and paper_id not in query.cited_ids:
                    pairs.append(Pair(query, paper_id, 0.0))
                    break
    rng.shuffle(pairs)
    return pairs


def triplets(
    queries: Sequence[ContextQuery],
    graph,
    candidates: Sequence[str],
    rng: random.Random,
    nearest: dict[str, list[str]] | None = None,
    hard_pool: int = 5,
) -> list[tuple[ContextQuery, str, str]]:
    """One epoch's (query, cited paper, negative): the negative is any paper but the context's cited ones and the
    citing paper (a paper the citing paper cites elsewhere is a negative for this context, as in the reranker's
    training), drawn at random or among the `hard_pool` nearest (`nearest`: context_id -> ids, best first)."""
    pool = set(candidates)
    out = []
    for query in queries:
        cited = [c for c in query.cited_ids if c in pool]
        if not cited:
            continue
        excluded = set(query.cited_ids) | {query.citing_id}
        negative = None
        if nearest is not None:
            hard = [p for p in nearest.get(query.context_id, []) if p in pool and p not in excluded][:hard_pool]
            negative = rng.choice(hard) if hard else None
        for _attempt in range(20):
            if negative is not None:
                break
            paper_id = rng.choice(candidates)
            negative = paper_id if paper_id not in excluded else None
        if negative is not None:
            out.append((query, rng.choice(cited), negative))
    rng.shuffle(out)
    return out


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor, margin: float) -> torch.Tensor:
    """SBERT's TripletLoss (Euclidean): mean of max(0, |a - p| - |a - n| + margin)."""
    return torch.relu((anchor - positive).norm(dim=-1) - (anchor - negative).norm(dim=-1) + margin).mean()


def linear_warmup(optimizer, total_steps: int, warmup_fraction: float = 0.1):
    """SBERT's WarmupLinear: linear rise over the first 10% of steps, then linear decay to 0."""
    warmup = max(1, int(total_steps * warmup_fraction))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def index_papers(encoder, tokenizer, dataset, args, device, **embedding) -> PaperIndex:
    """Every paper of the dataset embedded (`embed_texts`, `args`' length and pooling, `embedding`'s batch size and
    AMP) and indexed with its date."""
    paper_ids = dataset.paper_ids()
    texts = [paper_text(dataset.papers[p]) for p in paper_ids]
    papers = embed_texts(
        encoder, tokenizer, texts, device, max_length=args.max_length, pooling=args.pooling, **embedding
    )
    return PaperIndex.build(paper_ids, papers, [dataset.papers[p].date for p in paper_ids])


def embed_queries(encoder, tokenizer, dataset, queries, args, device, **embedding) -> torch.Tensor:
    """The queries' texts (`args.query_text`) embedded as `index_papers` embeds papers."""
    texts = [query_text(dataset, q, args.query_text) for q in queries]
    return embed_texts(encoder, tokenizer, texts, device, max_length=args.max_length, pooling=args.pooling, **embedding)


def mine_nearest(encoder, tokenizer, dataset, queries, args, device) -> dict[str, list[str]]:
    """Each query's nearest papers by the current model (citing paper and later papers excluded)."""
    index = index_papers(encoder, tokenizer, dataset, args, device)
    embedded = embed_queries(encoder, tokenizer, dataset, queries, args, device)
    rankings = index.search(
        embedded, args.hard_pool + 16, [q.citing_id for q in queries], [q.citing_date for q in queries]
    )
    encoder.train()
    return {q.context_id: r for q, r in zip(queries, rankings, strict=True)}


def epoch_items(objective: str, encoder, tokenizer, dataset, train, graph, args, device, rng) -> list:
    """One epoch's Siamese pairs or triplets (nearest negatives mined with the current weights)."""
    candidates = dataset.paper_ids()
    if objective == "siamese":
        return siamese_pairs(
            train,
            graph,
            candidates,
            theta=args.theta,
            max_distance=args.max_distance,
            negatives=args.siamese_negatives,
            rng=rng,
        )
    nearest = mine_nearest(encoder, tokenizer, dataset, train, args, device) if args.negatives == "nearest" else None
    return triplets(train, graph, candidates, rng, nearest, args.hard_pool)


def batch_loss(objective: str, encoder, tokenizer, dataset, text: dict[str, str], batch: list, args, device):
    """The Siamese MSE or the triplet loss of one batch; every text of the batch goes through one forward pass."""
    if objective == "siamese":
        texts = [text[p.query.context_id] for p in batch] + [paper_text(dataset.papers[p.paper_id]) for p in batch]
    else:
        texts = [text[q.context_id] for q, _, _ in batch]
        texts += [paper_text(dataset.papers[p]) for _, p, _ in batch]
        texts += [paper_text(dataset.papers[n]) for _, _, n in batch]
    with autocast(device, args.amp):
        vectors = pool(encoder, tokenize(tokenizer, texts, args.max_length, device), args.pooling).float()
    b = len(batch)
    if objective == "siamese":
        targets = torch.tensor([p.target for p in batch], device=device)
        cosine = torch.nn.functional.cosine_similarity(vectors[:b], vectors[b:], dim=-1)
        return torch.nn.functional.mse_loss(cosine, targets)
    return triplet_loss(vectors[:b], vectors[b : 2 * b], vectors[2 * b :], args.margin)


def run_phase(
    objective: str,
    encoder,
    tokenizer,
    dataset,
    train,
    graph,
    args,
    device,
    rng,
    checkpoints: Checkpointer,
    history: list[dict],
    state: dict | None = None,
) -> bool:
    """One objective's epochs (at most --max_steps steps), a record per epoch appended to `history`; resumes from
    `state` (this phase's checkpoint) when given. True when a Ctrl-C stopped it (the checkpoint written)."""
    text = {q.context_id: query_text(dataset, q, args.query_text) for q in train}
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    scaler = grad_scaler(device, args.amp)
    encoder.train()
    if state is None:
        items = epoch_items(objective, encoder, tokenizer, dataset, train, graph, args, device, rng)
        total = args.epochs * max(1, math.ceil(len(items) / args.batch_size))  # later epochs draw about as many
        if args.max_steps:
            total = min(total, args.max_steps)
        epoch, items_epoch, first, step, losses = 0, 0, 0, 0, []
    else:
        items, total, epoch, first, step = state["items"], state["total"], state["epoch"], state["next"], state["step"]
        items_epoch, losses = epoch, state["losses"]
    scheduler = linear_warmup(optimizer, total)
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        scheduler.load_state_dict(state["scheduler"])

    def save() -> None:
        checkpoints.write(
            {
                "objective": objective,
                "model": encoder.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "scheduler": scheduler.state_dict(),
                "items": items,
                "total": total,
                "epoch": epoch,
                "next": first,
                "step": step,
                "losses": losses,
                "history": history,
                "rng": capture_rng(sampler=rng),
            }
        )

    started = time.perf_counter()
    while epoch < args.epochs and step < total:
        if items_epoch != epoch:
            items = epoch_items(objective, encoder, tokenizer, dataset, train, graph, args, device, rng)
            items_epoch = epoch
        while first < len(items) and step < total:
            loss = batch_loss(
                objective, encoder, tokenizer, dataset, text, items[first : first + args.batch_size], args, device
            )
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            losses.append(loss.item())
            step += 1
            first += args.batch_size
            if checkpoints.step_done(step, save):
                return True
        record = {
            "objective": objective,
            "epoch": epoch + 1,
            "steps": step,
            "items": len(items),
            "train_loss": sum(losses) / len(losses) if losses else None,
            "seconds": time.perf_counter() - started,
        }
        history.append(record)
        if not args.no_progress:
            print(f"{objective} epoch {epoch + 1}: {len(losses)} steps, mean loss {record['train_loss']}")
        epoch, first, losses, started = epoch + 1, 0, [], time.perf_counter()
    save()  # the phase's end: a run stopped in the next phase resumes after it
    return False


def run_train(args: argparse.Namespace) -> dict:
    """Fine-tune (Siamese, triplet or both), resumable from OUTPUT/last.pt; the model saved in OUTPUT at the end."""
    device = resolve_device(args.device)
    dataset = load_dataset(args.dataset, args.context_field)
    train = dataset.split_queries("train", "SBERT fine-tuning")
    graph = citation_graph(train)  # the training split's edges only: no validation or test edge shortens a path
    encoder, tokenizer = load_sbert(args.model, device)
    args.pooling = args.pooling or model_pooling(args.model)
    rng = random.Random(args.seed)
    objectives = ["siamese", "triplet"] if args.objective == "both" else [args.objective]
    output = Path(args.output)
    # the state holds the epoch's pairs or triplets
    checkpoints = Checkpointer.from_flags(args, output / "last.pt", types=(Pair, ContextQuery, dt.date))
    state = checkpoints.load()
    history: list[dict] = []
    if state is not None:
        encoder.load_state_dict(state["model"])
        history = state["history"]
        restore_rng(state["rng"], sampler=rng)
    with checkpoints:
        for objective in objectives:
            if state is not None and objectives.index(objective) < objectives.index(state["objective"]):
                continue  # a phase the checkpoint has finished
            resume = state if state is not None and state["objective"] == objective else None
            if run_phase(
                objective, encoder, tokenizer, dataset, train, graph, args, device, rng, checkpoints, history, resume
            ):
                return {"history": history, "stopped": True}
    options = {k: v for k, v in vars(args).items() if k != "command"}
    save_sbert(
        encoder,
        tokenizer,
        output,
        {"pooling": args.pooling, "max_length": args.max_length, "query_text": args.query_text},
    )
    write_json(output / "train_history.json", history)
    write_json(output / "train_config.json", {**options, "dataset_versions": dataset_versions(args.dataset)})
    steps = sum(max((r["steps"] for r in history if r["objective"] == o), default=0) for o in objectives)
    print(
        f"fine-tuned ({', '.join(objectives)}), {steps} steps at learning rate {args.learning_rate:g} "
        f"({args.learning_rate_choice}); model in {output}"
    )
    return {"history": history, "steps": steps, "stopped": False}


# ---------------------------------------------------------------- evaluation


def select_for_queries(
    query_vectors: torch.Tensor,
    index: PaperIndex,
    queries: Sequence[ContextQuery],
    args: argparse.Namespace,
) -> tuple[list[list[str]], list[list[str]]]:
    """Per query the plain ranking of the top --candidates papers and the greedy submodular order of max(ks)."""
    positions = index.search_positions(
        query_vectors, args.candidates, [q.citing_id for q in queries], [q.citing_date for q in queries]
    )
    papers = index.embeddings.cpu().numpy().astype(np.float64)
    vectors = query_vectors.cpu().numpy().astype(np.float64)
    k = max(args.ks)
    plain, chosen = [], []
    for row, query_vector in zip(positions.tolist(), vectors, strict=True):
        rows = [i for i in row if i >= 0]
        ids = [index.paper_ids[i] for i in rows]
        plain.append(ids)
        if not rows:
            chosen.append([])
            continue
        candidate_vectors = papers[rows]
        objective = SubmodularObjective(
            relevance=to_unit_similarity(candidate_vectors @ query_vector),
            similarity=to_unit_similarity(candidate_vectors @ candidate_vectors.T),
            labels=kmeans_labels(candidate_vectors, args.clusters, seed=args.seed),
            alpha=args.alpha,
            relevance_weight=args.relevance_weight,
            coverage_weight=args.coverage_weight,
            diversity_weight=args.diversity_weight,
        )
        chosen.append([ids[i] for i in greedy_select(objective, k)])
    return plain, chosen


def selection_metrics(
    plain: Sequence[Sequence[str]], chosen: Sequence[Sequence[str]], relevant: Sequence[set[str]], ks: Sequence[int]
) -> dict[str, float]:
    """The plain ranking's metrics (no suffix), and the submodular selection's (`_submodular`) beside the plain
    ranking cut at the same K."""
    top = max(ks)
    pool = max((len(r) for r in plain), default=0)
    metrics = ranking_metrics(plain, relevant, recall_ks_up_to(pool))
    for k in ks:
        metrics.update(set_metrics(plain, relevant, k))
        selected = set_metrics(chosen, relevant, k)
        metrics.update({f"{key}_submodular": value for key, value in selected.items() if key != "map"})
    cut = [r[:top] for r in plain]
    metrics[f"mrr@{top}"] = ranking_metrics(cut, relevant, ())["mrr"]
    metrics[f"map@{top}"] = set_metrics(cut, relevant, top)["map"]
    metrics[f"mrr@{top}_submodular"] = ranking_metrics(chosen, relevant, ())["mrr"]
    metrics[f"map@{top}_submodular"] = set_metrics(chosen, relevant, top)["map"]
    return metrics


def run_evaluate(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    checkpoint = Path(args.checkpoint)
    encoder, tokenizer = load_sbert(checkpoint, device)
    if args.query_text is None:  # as the model was trained to read them
        saved = read_json(checkpoint / SBERT_CONFIG) if (checkpoint / SBERT_CONFIG).is_file() else {}
        args.query_text = saved.get("query_text", "both")
    args.pooling = args.pooling or model_pooling(args.checkpoint)
    dataset = load_dataset(args.dataset, args.context_field)
    split_queries = {split: dataset.split_queries(split, "SBERT evaluation") for split in args.split}
    embedding = {"batch_size": args.batch_size, "amp": args.amp}
    start = time.perf_counter()
    index = index_papers(encoder, tokenizer, dataset, args, device, **embedding)
    embed_seconds = time.perf_counter() - start
    output = Path(args.output or checkpoint)
    options = {k: v for k, v in vars(args).items() if k != "command"}
    results = {}
    for split, queries in split_queries.items():
        start = time.perf_counter()
        vectors = embed_queries(encoder, tokenizer, dataset, queries, args, device, **embedding)
        plain, chosen = select_for_queries(vectors, index, queries, args)
        metrics = selection_metrics(plain, chosen, [set(q.cited_ids) for q in queries], args.ks)
        metrics.update(
            {
                "split": split,
                "device": str(device),
                "papers": len(dataset.papers),
                "candidates": len(index.paper_ids),
                "paper_embedding_seconds": embed_seconds,
                "seconds_per_query": (time.perf_counter() - start) / len(queries),
                "dataset_versions": dataset_versions(args.dataset),
                "options": options,
            }
        )
        top = max(args.ks)
        shown = ["mrr", f"mrr@{top}", f"mrr@{top}_submodular"]
        shown += [f"{m}@{k}{s}" for k in args.ks for m in ("f1_of_means", "recall") for s in ("", "_submodular")]
        write_split_metrics(output / f"results_{split}.json", split, metrics, shown)
        results[split] = metrics
    return results


# ---------------------------------------------------------------- the command line


def build_parser(preset: str = "paper") -> argparse.ArgumentParser:
    parser, commands = command_parser("python -m trainers.submodular", __doc__)
    train = train_command(
        commands,
        PRESETS,
        "batches of 8, 128 tokens, 10 epochs, at most 100 steps per objective, rate 1e-3 for the tiny model "
        "(a pretrained encoder keeps 2e-5)",
        "the defaults below",
        help="Fine-tune the SBERT encoder.",
        description="Fine-tune SBERT.",
    )
    train.add_argument("--output", required=True, help="Directory for the fine-tuned model (created).")
    add_model_flag(train)
    train.add_argument(
        "--objective", choices=("siamese", "triplet", "both"), default="both", help="both: Siamese then triplet."
    )
    train.add_argument("--theta", type=float, default=0.4, help="Siamese target theta^(dis-1) (0.4).")
    train.add_argument("--max_distance", type=int, default=3, help="Largest graph distance with a nonzero target (3).")
    train.add_argument("--siamese_negatives", type=int, default=1, help="Target-0 pairs per query (1).")
    train.add_argument("--negatives", choices=("random", "nearest"), default="random", help="Triplet negatives.")
    train.add_argument("--hard_pool", type=int, default=5, help="Nearest negatives drawn from the top n (5).")
    train.add_argument("--margin", type=float, default=1.0, help="Triplet margin (1, Euclidean).")
    train.add_argument("--epochs", type=int, default=1, help="Epochs per objective (1).")
    train.add_argument("--max_steps", type=int, default=0, help="Steps per objective at most (0: no limit).")
    train.add_argument("--batch_size", type=int, default=16, help="Pairs or triplets per step (16, SBERT's).")
    add_learning_rate_flag(train, LEARNING_RATES, whose="SBERT's")
    train.add_argument("--weight_decay", type=float, default=0.01, help="AdamW weight decay (0.01).")
    train.add_argument("--max_length", type=int, default=256, help="Tokens per text (256).")
    train.add_argument("--query_text", choices=QUERY_TEXTS, default="both", help="What a query reads (both).")
    train.add_argument("--pooling", choices=POOLINGS, help=POOLING_HELP)
    add_checkpoint_flags(train)
    train.set_defaults(**PRESETS.get(preset, {}))

    evaluate = commands.add_parser(
        "evaluate", help="Plain top-K against submodular selection.", description="Evaluate the selection."
    )
    add_common_flags(evaluate)
    add_preset_flag(evaluate, PRESETS, "15 candidates, K in 1 3 5 10, 3 clusters, alpha 0.3", "the defaults below")
    evaluate.add_argument("--checkpoint", required=True, help="A model directory (train's --output, or any BERT).")
    evaluate.add_argument("--output", help="Where results_<split>.json go (default: the checkpoint directory).")
    evaluate.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    evaluate.add_argument("--candidates", type=int, default=100, help="Top candidates V the selection reads (100).")
    evaluate.add_argument("--ks", type=int, nargs="+", default=[5, 10, 20], help="K of P/R/F1@K; max K is selected.")
    evaluate.add_argument("--clusters", type=int, default=10, help="k-means clusters of the diversity term (10).")
    evaluate.add_argument("--alpha", type=float, default=0.1, help="Coverage saturation alpha (0.1).")
    evaluate.add_argument("--relevance_weight", type=float, default=1.0, help="w_r (1).")
    evaluate.add_argument("--coverage_weight", type=float, default=1.0, help="w_c (1).")
    evaluate.add_argument("--diversity_weight", type=float, default=1.0, help="w_d (1).")
    evaluate.add_argument("--batch_size", type=int, default=64, help="Texts embedded per forward pass (64).")
    evaluate.add_argument("--max_length", type=int, default=256, help="Tokens per text (256).")
    evaluate.add_argument(
        "--query_text", choices=QUERY_TEXTS, help="What a query reads (default: as trained, else both)."
    )
    evaluate.add_argument("--pooling", choices=POOLINGS, help=POOLING_HELP)
    evaluate.set_defaults(**EVALUATE_PRESETS.get(preset, {}))
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    args = parse_with_preset(build_parser, argv)
    if args.command == "evaluate" and (min(args.ks) < 1 or args.candidates < 1):
        raise SystemExit("error: --ks and --candidates must be at least 1")
    if args.command == "train":
        settle_learning_rate(args, LEARNING_RATES, pretrained=not is_tiny_model(args.model))
    return args


def main(argv: list[str] | None = None) -> dict:
    return run_bert_command(parse_args(argv), run_train, run_evaluate)


if __name__ == "__main__":
    main()
