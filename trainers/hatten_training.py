"""Training HAtten as the authors' `run.py` loop does it, in one process that can stop and resume.

Every `refresh_every` iterations the moving average of the weights embeds the candidates, is validated and
re-mines the top `mining_top_k` papers for the training queries; the online model restarts from that average. A
batch holds `queries_per_batch` queries, each with its cited paper, papers drawn from its mined list and random
papers, under the authors' `TripletLoss` (docs/trainers.md has what is kept and changed).
"""

from __future__ import annotations

import copy
import functools
import json
import random
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.checkpoints import Checkpointer, capture_rng, load_checkpoint, restore_rng, save_atomic
from trainers.data import CitationDataset, ContextQuery, citing_paper
from trainers.documents import Document, document_text, encode_packed, pack_documents, paper_document, query_document
from trainers.hatten_model import HAttenConfig, HAttenEncoder, flag_field, heads_for_dimension
from trainers.metrics import RECALL_KS, ranking_metrics, recall_ks_up_to
from trainers.prefetch import PaperIndex, default_token_budget, embed_documents
from trainers.pretrained import load_word_vectors
from trainers.runtime import autocast, grad_scaler, read_json, write_json
from trainers.tokenization import Vocabulary, build_vocabulary, jaccard, jaccard_words, word_tokens

NO_SLOT, CITED, MINED_POSITIVE, NEGATIVE, OTHER_QUERY = 0, 1, 2, 3, 4  # irrelevance levels of the original code
POSITIVE_LEVELS = (CITED, MINED_POSITIVE)  # `positive_irrelevance_levels` of global_config.cfg


class SetupError(ValueError):
    """Training cannot start as configured (too few papers, a selection metric that cannot tell models apart)."""


class UntrainedCheckpointWarning(UserWarning):
    """The weights a job is about to use have not been trained."""


@dataclass(frozen=True)
class HAttenTrainConfig:
    """Training defaults from the paper and the original `global_config.cfg`. Fields made with `flag_field` are
    flags of `train`; `with_citing_paper` and `seed` come from its --no_global_context and --seed."""

    queries_per_batch: int = flag_field(64, "Queries per batch.")
    cited_per_query: int = flag_field(1, "Cited papers (positives) per query.")
    prefetched_negatives: int = flag_field(
        4,
        "Papers per query drawn from its mined top mining_top_k (not cited): negatives, or mined positives where "
        "their Jaccard similarity to the query reaches the cited papers'.",
    )
    random_negatives: int = flag_field(1, "Random negatives per query.")
    mining_top_k: int = flag_field(100, "How many prefetched papers per query the mining draws from.")
    mining_queries: int = flag_field(
        0,
        "Training queries re-prefetched at each refresh: 0 for all; N for a random sample of N (the authors' config: "
        "50,000), which is then what the next interval trains on.",
    )
    in_batch_negatives: bool = flag_field(
        True, "The other queries' papers in a batch are negatives too, as in the authors' TripletLoss."
    )
    refresh_every: int = flag_field(5000, "Iterations between refreshes: embed papers, validate, re-mine.")
    max_iterations: int = flag_field(25_000, "Training iterations in all (the authors' ACL-200 run: 5 x 5,000).")
    learning_rate: float = flag_field(1e-4, "Adam learning rate.")
    weight_decay: float = flag_field(1e-5, "Adam weight decay (L2).")
    base_margin: float = flag_field(0.05, "Triplet margin per irrelevance level (cited vs negative: twice this).")
    moving_average_decay: float = flag_field(
        0.999,
        "Decay of the weights' moving average, which is validated, mined with, saved and restarted from at each "
        "refresh as in the authors' code; 0 turns it off.",
    )
    select_metric: str = flag_field("mrr", "Validation metric that picks best.pt: mrr, or recall@K (K < candidates).")
    checkpoint_every: int = flag_field(1000, "Iterations between writes of last.pt (resumable).")
    checkpoint_minutes: float = flag_field(10.0, "Minutes between writes of last.pt, whichever comes first.")
    embed_token_budget: int = flag_field(
        0, "Words per paragraph-encoder batch when embedding (0: 16,384 on the CPU, 65,536 on CUDA)."
    )
    with_citing_paper: bool = True
    seed: int = 0


# --- the loss ----------------------------------------------------------------------------------------------------


def batch_triplet_loss(
    query_vectors: torch.Tensor,
    paper_vectors: torch.Tensor,
    owners: torch.Tensor,
    levels: torch.Tensor,
    visible: torch.Tensor,
    base_margin: float,
) -> torch.Tensor:
    """The authors' `TripletLoss`: the sum over triplets (q, p, n) of
    max(0, s(q, n) - s(q, p) + base_margin * (level_q(n) - level_q(p))), s the cosine similarity.

    query_vectors (B, D), paper_vectors (M, D); `owners` (M,) names the query each paper was drawn for, `levels` (M,)
    its level for it; another query's paper is level OTHER_QUERY (4). p runs over q's papers at a positive level, n
    over the papers `visible` (B, M) to q with a higher level than p.
    """
    batch = query_vectors.shape[0]
    queries = torch.nn.functional.normalize(query_vectors.float(), dim=-1)
    papers = torch.nn.functional.normalize(paper_vectors.float(), dim=-1)
    similarity = queries @ papers.T  # (B, M)
    own = owners[None, :] == torch.arange(batch, device=owners.device)[:, None]
    level = torch.where(own, levels[None, :], torch.full_like(own, OTHER_QUERY, dtype=levels.dtype))
    positive = own & (levels[None, :] >= CITED) & (levels[None, :] <= MINED_POSITIVE)
    width = max(1, int(positive.sum(dim=1).max()))
    # each query's positives gathered into `width` slots (stable sort puts them first)
    slots = torch.argsort((~positive).to(torch.int8), dim=1, stable=True)[:, :width]
    slot_valid = positive.gather(1, slots)
    positive_similarity = similarity.gather(1, slots)  # (B, W)
    positive_level = level.gather(1, slots)
    gap = level[:, None, :] - positive_level[:, :, None]  # (B, W, M)
    valid = slot_valid[:, :, None] & visible[:, None, :] & (gap > 0)
    violation = similarity[:, None, :] - positive_similarity[:, :, None] + base_margin * gap.float()
    losses = torch.relu(violation)[valid]
    return losses.sum() if losses.numel() else similarity.sum() * 0.0


def visibility(
    batch: Sequence[ContextQuery], documents: Sequence[Sequence[tuple[str, int]]], in_batch_negatives: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[str]]:
    """owners (M,), levels (M,), visible (B, M) and the paper ids of a batch's flattened papers. A query sees its
    own papers and, with in-batch negatives, every other paper except those it cites, its citing paper and its own
    papers (a paper drawn for two queries is a negative of each only through its own draw)."""
    paper_ids = [pid for docs in documents for pid, _ in docs]
    owners = torch.tensor([row for row, docs in enumerate(documents) for _ in docs], dtype=torch.long)
    levels = torch.tensor([level for docs in documents for _, level in docs], dtype=torch.long)
    visible = torch.zeros((len(batch), len(paper_ids)), dtype=torch.bool)
    for row, query in enumerate(batch):
        visible[row] = owners == row
        if in_batch_negatives:
            blocked = set(query.cited_ids) | {query.citing_id} | {pid for pid, _ in documents[row]}
            visible[row] |= torch.tensor([pid not in blocked for pid in paper_ids], dtype=torch.bool)
    return owners, levels, visible, paper_ids


def training_loss(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    batch: Sequence[ContextQuery],
    queries: Sequence[Document],
    documents: Sequence[Sequence[tuple[str, int]]],
    config: HAttenTrainConfig,
    device: torch.device,
    token_budget: int = 16_384,
) -> torch.Tensor:
    """The loss of one batch: queries (as documents) and, per query, (paper id, level) pairs; every unique
    paragraph of the batch is encoded once, packed by length."""
    owners, levels, visible, paper_ids = visibility(batch, documents, config.in_batch_negatives)
    all_documents = list(queries) + [paper_document(dataset.papers[pid]) for pid in paper_ids]
    packed = pack_documents(all_documents, vocabulary, model.config.max_doc_len, model.config.max_seq_len)
    vectors = encode_packed(model, packed, device, token_budget)
    return batch_triplet_loss(
        vectors[: len(queries)],
        vectors[len(queries) :],
        owners.to(device),
        levels.to(device),
        visible.to(device),
        config.base_margin,
    )


# --- mining -------------------------------------------------------------------------------------------------------


@dataclass
class MinedRankings:
    """The top `mining_top_k` of each mined training query as positions in `dataset.paper_ids()` (-1: none),
    from the refresh at `iteration`."""

    iteration: int
    context_ids: list[str]
    positions: np.ndarray  # (Q, K) int32

    def __post_init__(self) -> None:
        self.row = {context_id: i for i, context_id in enumerate(self.context_ids)}

    def candidates(self, context_id: str) -> np.ndarray | None:
        row = self.row.get(context_id)
        return None if row is None else self.positions[row]

    def save(self, path: Path) -> None:
        state = {"iteration": self.iteration, "context_ids": self.context_ids, "positions": self.positions}
        save_atomic(state, path)

    @classmethod
    def load(cls, path: Path) -> MinedRankings:
        state = load_checkpoint(path)
        return cls(state["iteration"], state["context_ids"], state["positions"])


def mined_path(output: Path, iteration: int) -> Path:
    """The mined rankings of the refresh at `iteration` (kept until last.pt has moved past them)."""
    return output / f"mined-{iteration:08d}.pt"


class TripletSampler:
    """Draws each query's papers: cited, from its mined list (labelled by Jaccard similarity), random."""

    def __init__(self, dataset: CitationDataset, config: HAttenTrainConfig, rng: random.Random) -> None:
        self.dataset = dataset
        self.config = config
        self.rng = rng
        self.paper_ids = dataset.paper_ids()
        self._paper_words: dict[str, frozenset[str]] = {}
        self._thresholds: dict[str, float] = {}

    def paper_words(self, paper_id: str) -> frozenset[str]:
        words = self._paper_words.get(paper_id)
        if words is None:
            if len(self._paper_words) > 500_000:  # bounded: a 1.7M-paper database must not all stay tokenised
                self._paper_words.clear()
            text = document_text(paper_document(self.dataset.papers[paper_id]))
            words = self._paper_words[paper_id] = jaccard_words(text)
        return words

    def threshold(self, query: ContextQuery, query_words: frozenset[str]) -> float:
        """The mean Jaccard similarity of the query text to its cited papers (their `avg_thres_jaccard_sim`)."""
        value = self._thresholds.get(query.context_id)
        if value is None:
            cited = [c for c in query.cited_ids if c in self.dataset.papers]
            similarities = [jaccard(query_words, self.paper_words(c)) for c in cited]
            value = self._thresholds[query.context_id] = float(np.mean(similarities)) if similarities else 0.0
        return value

    def sample(self, query: ContextQuery, document: Document, mined: np.ndarray | None) -> list[tuple[str, int]]:
        """(paper id, level) for one query."""
        config, rng = self.config, self.rng
        cited = [c for c in query.cited_ids if c in self.dataset.papers]
        chosen = [(pid, CITED) for pid in rng.sample(cited, min(config.cited_per_query, len(cited)))]
        taken = set(cited) | {query.citing_id}
        wanted = config.random_negatives
        if mined is None:
            wanted += config.prefetched_negatives
        else:
            pool = [self.paper_ids[i] for i in mined.tolist() if i >= 0 and self.paper_ids[i] not in taken]
            drawn = rng.sample(pool, min(config.prefetched_negatives, len(pool)))
            if drawn:
                query_words = jaccard_words(document_text(document))
                threshold = self.threshold(query, query_words)
                for paper_id in drawn:
                    similar = jaccard(query_words, self.paper_words(paper_id)) >= threshold
                    chosen.append((paper_id, MINED_POSITIVE if similar else NEGATIVE))
                    taken.add(paper_id)
        for _ in range(wanted * 20):
            if wanted == 0:
                break
            candidate = self.paper_ids[rng.randrange(len(self.paper_ids))]
            if candidate not in taken:
                chosen.append((candidate, NEGATIVE))
                taken.add(candidate)
                wanted -= 1
        return chosen


# --- embedding, prefetching, evaluation --------------------------------------------------------------------------


def rank_queries(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    index: PaperIndex,
    queries: Sequence[ContextQuery],
    k: int,
    device: torch.device,
    *,
    with_citing_paper: bool = True,
    token_budget: int | None = None,
    amp: bool = False,
    block: int = 65_536,
) -> np.ndarray:
    """Positions of the top-k papers per query (Q, k), -1 padded. Queries are embedded grouped by citing paper, so
    the citing title and abstract are encoded once per paper, and `block` queries at a time, so memory holds one
    block's embeddings."""
    order = sorted(range(len(queries)), key=lambda i: queries[i].citing_id)
    out = np.full((len(queries), min(k, len(index.paper_ids))), -1, dtype=np.int32)
    for start in range(0, len(order), block):
        rows = order[start : start + block]
        chunk = [queries[i] for i in rows]
        documents = [query_document(q, citing_paper(dataset, q), with_citing_paper) for q in chunk]
        embeddings = embed_documents(model, vocabulary, documents, device, token_budget=token_budget, amp=amp)
        out[rows] = index.search_positions(embeddings, k, [q.citing_id for q in chunk], [q.citing_date for q in chunk])
    return out


@dataclass(frozen=True)
class QuerySearch:
    """One model's search of one candidate index, as a job runs it: what ranking queries needs besides the queries
    and k, so that prefetching, evaluation and mining ask for rankings the same way."""

    model: HAttenEncoder
    vocabulary: Vocabulary
    dataset: CitationDataset
    index: PaperIndex
    device: torch.device
    with_citing_paper: bool = True
    token_budget: int | None = None
    amp: bool = False

    def positions(self, queries: Sequence[ContextQuery], k: int) -> np.ndarray:
        """`rank_queries`: positions in the index of the top-k papers per query, -1 padded."""
        return rank_queries(
            self.model,
            self.vocabulary,
            self.dataset,
            self.index,
            queries,
            k,
            self.device,
            with_citing_paper=self.with_citing_paper,
            token_budget=self.token_budget,
            amp=self.amp,
        )

    def prefetch(self, queries: Sequence[ContextQuery], k: int) -> tuple[list[list[str]], float]:
        """Top-k paper ids per query and the average seconds per query (encoding + search)."""
        start = time.perf_counter()
        positions = self.positions(queries, k)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        seconds = (time.perf_counter() - start) / max(1, len(queries))
        return [[self.index.paper_ids[i] for i in row if i >= 0] for row in positions.tolist()], seconds

    def evaluate(self, queries: Sequence[ContextQuery], k: int = 2000) -> tuple[dict[str, float], list[list[str]]]:
        """Ranking metrics of the prefetched top-k (Recall@K for K up to min(k, candidates)) and the rankings."""
        rankings, seconds = self.prefetch(queries, k)
        pool = min(k, len(self.index.paper_ids))
        metrics = ranking_metrics(rankings, [set(q.cited_ids) for q in queries], recall_ks_up_to(pool))
        metrics["prefetch_seconds_per_query"] = seconds
        return metrics, rankings


def build_index(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    device: torch.device,
    *,
    token_budget: int | None = None,
    amp: bool = False,
    progress: bool = False,
) -> PaperIndex:
    """The candidate papers (`dataset.paper_ids()`) embedded by `model`, ready for exact search."""
    paper_ids = dataset.paper_ids()
    documents = [paper_document(dataset.papers[p]) for p in paper_ids]
    embeddings = embed_documents(
        model, vocabulary, documents, device, token_budget=token_budget, amp=amp, progress=progress
    )
    return PaperIndex.build(paper_ids, embeddings, [dataset.papers[p].date for p in paper_ids])


def evaluate_prefetch(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    device: torch.device,
    *,
    k: int = 2000,
    with_citing_paper: bool = True,
    amp: bool = False,
    index: PaperIndex | None = None,
    token_budget: int | None = None,
) -> tuple[dict[str, float], list[list[str]]]:
    """`QuerySearch.evaluate` on `index`, or on the candidates embedded by `model` when none is given."""
    index = index or build_index(model, vocabulary, dataset, device, amp=amp, token_budget=token_budget)
    search = QuerySearch(model, vocabulary, dataset, index, device, with_citing_paper, token_budget, amp)
    return search.evaluate(queries, k)


# --- vocabulary, model and checkpoints -------------------------------------------------------------------------


def corpus_texts(dataset: CitationDataset) -> list[str]:
    texts = [f"{p.title} {p.abstract}" for p in dataset.papers.values()]
    return texts + [q.context for q in dataset.queries.get("train", [])]


def make_model(
    dataset: CitationDataset, model_overrides: dict, glove: str | None = None, min_count: int = 1
) -> tuple[HAttenEncoder, Vocabulary]:
    """A fresh model: word vectors when `glove` names a file or a packaged set (`trainers.pretrained`; restricted
    to the corpus's words), random otherwise (fixed unless `train_word_vectors`, as the original code's buffer).
    The vectors set embed_dim, and num_heads becomes the most heads up to the one asked that divide it."""
    texts = corpus_texts(dataset)
    if glove:
        corpus_words = {w for text in texts for w in word_tokens(text)}
        vocabulary, vectors = load_word_vectors(glove, keep=corpus_words)
        dimension = vectors.shape[1]
        heads = heads_for_dimension(dimension, model_overrides.get("num_heads", HAttenConfig.num_heads))
        overrides = {**model_overrides, "embed_dim": dimension, "num_heads": heads}
        config = HAttenConfig(vocab_size=len(vocabulary), **overrides)
        return HAttenEncoder(config, vectors), vocabulary
    vocabulary = build_vocabulary(texts, min_count=min_count)
    return HAttenEncoder(HAttenConfig(vocab_size=len(vocabulary), **model_overrides)), vocabulary


def save_model_files(directory: Path, model: HAttenEncoder, vocabulary: Vocabulary, extra: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary.save(directory / "vocab.txt")
    write_json(directory / "config.json", {"model": model.config.to_dict(), **extra})


def load_hatten(directory: Path, device: torch.device, which: str = "best") -> tuple[HAttenEncoder, Vocabulary, dict]:
    """An encoder from a checkpoint directory: `best` (best validation), `last` or `init` (untrained).

    Without best.pt (training stopped before its first validation) `best` falls back to last.pt with a warning,
    and an `UntrainedCheckpointWarning` says when the weights chosen are those of iteration 0.
    """
    directory = Path(directory)
    if not (directory / "config.json").is_file():
        raise FileNotFoundError(f"{directory} holds no HAtten checkpoint (config.json): run `trainers.hatten train`")
    meta = read_json(directory / "config.json")
    path = directory / f"{which}.pt"
    if which == "best" and not path.is_file() and (directory / "last.pt").is_file():
        warnings.warn(f"{path} is missing (no validation yet); using last.pt", UntrainedCheckpointWarning, stacklevel=2)
        path = directory / "last.pt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `trainers.hatten train` (it writes best.pt, last.pt, init.pt)")
    model = HAttenEncoder(HAttenConfig(**meta["model"]))
    state = load_checkpoint(path)
    model.load_state_dict(state["model"])
    meta["checkpoint"] = {"file": path.name, "iteration": state.get("iteration", 0)}
    if which != "init" and not state.get("iteration"):
        warnings.warn(
            f"{path} holds the untrained model (iteration 0): train longer than --refresh_every, or pass --which init "
            "to use it knowingly",
            UntrainedCheckpointWarning,
            stacklevel=2,
        )
    return model.to(device), Vocabulary.load(directory / "vocab.txt"), meta


def moving_average(model: HAttenEncoder) -> HAttenEncoder:
    """A copy for the weights' moving average; fixed word vectors are shared, not copied."""
    average = copy.deepcopy(model)
    if not model.paragraphs.embedding.weight.requires_grad:
        average.paragraphs.embedding.weight = model.paragraphs.embedding.weight
    average.eval()
    for parameter in average.parameters():
        parameter.requires_grad_(False)
    return average


@torch.no_grad()
def update_moving_average(average: HAttenEncoder, model: HAttenEncoder, decay: float) -> None:
    """average = decay * average + (1 - decay) * model, over the trained parameters (`update_moving_average` of
    their train.py)."""
    pairs = [(a, p) for a, p in zip(average.parameters(), model.parameters(), strict=True) if p.requires_grad]
    if pairs:
        torch._foreach_lerp_([a for a, _ in pairs], [p.detach() for _, p in pairs], 1.0 - decay)


def check_select_metric(name: str, candidates: int) -> None:
    """`mrr` or `recall@K` with K below the number of candidates (Recall@candidates is 1 for any model)."""
    if name == "mrr":
        return
    if name.startswith("recall@") and name[7:].isdigit() and int(name[7:]) in RECALL_KS:
        if int(name[7:]) < candidates:
            return
        raise SetupError(
            f"--select_metric {name}: the dataset has {candidates} candidate papers, so Recall@{name[7:]} is the same "
            f"for every model; use mrr or recall@K with K < {candidates}"
        )
    raise SetupError(f"--select_metric {name}: use mrr or recall@K, K one of {', '.join(map(str, RECALL_KS))}")


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
    """Train with a refresh (validate, keep best.pt, re-mine) every `refresh_every` iterations and last.pt every
    `checkpoint_every` iterations or `checkpoint_minutes`; resumes from last.pt and the mined rankings it names.

    `train_log.jsonl` has one line per refresh: iteration, mined_queries, mean training loss since the last one,
    the validation metrics and the seconds it took. Returns iterations, best validation score and that history.
    """
    from tqdm.auto import tqdm

    train = dataset.split_queries("train", "HAtten training")
    validation = dataset.queries.get("validation") or []
    paper_ids = dataset.paper_ids()
    if len(paper_ids) < 2:
        raise SetupError(f"the dataset has {len(paper_ids)} candidate papers; ranking needs at least 2")
    check_select_metric(config.select_metric, len(paper_ids))
    output.mkdir(parents=True, exist_ok=True)
    save_model_files(output, model, vocabulary, {"train": asdict(config), **(meta or {})})
    model.to(device)
    average = moving_average(model) if config.moving_average_decay > 0 else None
    evaluated = average or model
    optimizer = torch.optim.Adam(
        model.trainable_parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    scaler = grad_scaler(device, amp)
    rng = random.Random(config.seed)
    budget = config.embed_token_budget or default_token_budget(device)
    start, best_score, history = 0, -1.0, []
    mined: MinedRankings | None = None
    last = output / "last.pt"
    checkpoints = Checkpointer(last, config.checkpoint_every, config.checkpoint_minutes, resume=resume)
    state = checkpoints.load()
    if state is not None:
        model.load_state_dict(state.get("online") or state["model"])
        if average is not None:
            average.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        start, best_score, history = state["iteration"], state["best_score"], state["history"]
        rng.setstate(state["python_rng"])
        restore_rng(state["rng"])
        if state.get("mined_iteration") is not None:
            mined = MinedRankings.load(mined_path(output, state["mined_iteration"]))
        with open(output / "train_log.jsonl", "w", encoding="utf-8") as log:  # what last.pt knows, nothing later
            log.writelines(json.dumps(record) + "\n" for record in history)
    else:
        torch.save({"model": model.state_dict(), "iteration": 0}, output / "init.pt")
        (output / "train_log.jsonl").unlink(missing_ok=True)
        for stale in output.glob("mined-*.pt"):
            stale.unlink()
        (output / "best.pt").unlink(missing_ok=True)
    sampler = TripletSampler(dataset, config, rng)
    by_id = {q.context_id: q for q in train}
    losses: list[float] = []

    def save_last(iteration: int) -> None:
        state = {
            "model": evaluated.state_dict(),
            "online": model.state_dict() if average is not None else None,
            "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict(),
            "iteration": iteration,
            "best_score": best_score,
            "history": history,
            "python_rng": rng.getstate(),
            "rng": capture_rng(),
            "mined_iteration": mined.iteration if mined else None,
        }
        checkpoints.write(state)
        for older in output.glob("mined-*.pt"):  # last.pt now needs only the current mining
            if mined is None or older != mined_path(output, mined.iteration):
                older.unlink()

    def refresh(iteration: int, mine: bool) -> None:
        nonlocal best_score, mined
        began = time.perf_counter()
        evaluated.eval()
        index = build_index(evaluated, vocabulary, dataset, device, token_budget=budget, amp=amp)
        search = QuerySearch(evaluated, vocabulary, dataset, index, device, config.with_citing_paper, budget, amp)
        record: dict = {
            "iteration": iteration,
            "mined_queries": 0,
            "train_loss": float(np.mean(losses)) if losses else None,
        }
        if validation:
            metrics, _ = search.evaluate(validation, k=min(2000, len(paper_ids)))
            record["validation"] = {k: v for k, v in metrics.items() if k != "prefetch_seconds_per_query"}
            score = metrics[config.select_metric]
            if score >= best_score:  # ties go to the later, longer-trained model
                best_score = score
                state = {"model": evaluated.state_dict(), "iteration": iteration, "score": score}
                torch.save(state, output / "best.pt")
        if mine:
            sample = train if not config.mining_queries else rng.sample(train, min(config.mining_queries, len(train)))
            positions = search.positions(sample, config.mining_top_k)
            mined = MinedRankings(iteration, [q.context_id for q in sample], positions)
            mined.save(mined_path(output, iteration))
            record["mined_queries"] = len(sample)
        if average is not None:
            model.load_state_dict(average.state_dict())  # each of the authors' loops restarts from the average
        record["seconds"] = round(time.perf_counter() - began, 3)
        history.append(record)
        with open(output / "train_log.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        losses.clear()

    def training_pool() -> list[ContextQuery]:
        if mined is None or not config.mining_queries:
            return train
        return [by_id[c] for c in mined.context_ids if c in by_id]

    refreshed = {record["iteration"] for record in history}
    bar = tqdm(total=config.max_iterations, initial=start, desc="hatten", disable=not progress)
    iteration = start
    with checkpoints:
        try:
            while iteration < config.max_iterations:
                if iteration and iteration % config.refresh_every == 0 and iteration not in refreshed:
                    refresh(iteration, mine=True)
                    refreshed.add(iteration)
                pool = training_pool()
                batch = rng.sample(pool, min(config.queries_per_batch, len(pool)))
                queries = [query_document(q, citing_paper(dataset, q), config.with_citing_paper) for q in batch]
                documents = [
                    sampler.sample(q, doc, mined.candidates(q.context_id) if mined else None)
                    for q, doc in zip(batch, queries, strict=True)
                ]
                model.train()
                with autocast(device, amp):
                    loss = training_loss(model, vocabulary, dataset, batch, queries, documents, config, device, budget)
                optimizer.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                if average is not None:
                    update_moving_average(average, model, config.moving_average_decay)
                losses.append(loss.item())
                iteration += 1
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.4f}")
                if checkpoints.step_done(iteration, functools.partial(save_last, iteration)):
                    return {
                        "iterations": iteration,
                        "stopped": True,
                        "best_validation_score": best_score,
                        "history": history,
                    }
        finally:
            bar.close()
    if config.max_iterations not in refreshed:
        refresh(config.max_iterations, mine=False)
    save_last(config.max_iterations)
    if not (output / "best.pt").is_file():  # no validation split: the final weights are the choice
        state = {"model": evaluated.state_dict(), "iteration": config.max_iterations, "score": None}
        torch.save(state, output / "best.pt")
    return {
        "iterations": config.max_iterations,
        "stopped": False,
        "best_validation_score": best_score,
        "history": history,
    }
