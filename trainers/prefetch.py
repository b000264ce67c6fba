"""Exact nearest-neighbour prefetching: embed every paper, then brute-force top-K by cosine.

Embedding packs unique paragraphs in length-sorted batches under a word budget (`embed_documents`). The search
runs as batched matrix products on the embeddings' device, chunked over papers and queries with a running top-K,
so 1.7M papers fit; the citing paper and later papers are excluded before the top-K. One query on a CPU takes a
matrix-vector path instead (`top_k_one`), as fast as memory can be read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from trainers.documents import Document, encode_documents, encode_packed, pack_documents
from trainers.hatten_model import HAttenEncoder
from trainers.runtime import autocast
from trainers.tokenization import Vocabulary

Dates = Sequence[dt.date | None]
"""Publication dates, one a paper or query, None where unknown."""
UNKNOWN_PAPER_DAY = -(2**62)  # a paper without a date is never "after" a query
UNKNOWN_QUERY_DAY = 2**62  # a query without a date excludes nothing by date


def day_number(date: dt.date | None, unknown: int) -> int:
    return date.toordinal() if date is not None else unknown


def default_token_budget(device: torch.device) -> int:
    """Words per paragraph-encoder batch (rows x longest row): bounds the attention's memory at about
    budget x 512 x heads x 4 bytes for 512-word paragraphs (256 MiB on the CPU, 1 GiB on a GPU)."""
    return 65_536 if device.type == "cuda" else 16_384


@torch.inference_mode()
def embed_documents(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    documents: Sequence[Document],
    device: torch.device,
    *,
    token_budget: int | None = None,
    chunk_documents: int = 4096,
    amp: bool = False,
    progress: bool = False,
) -> torch.Tensor:
    """L2-normalised embeddings (N, D), float32, on `device`.

    Documents are taken `chunk_documents` at a time, so memory holds one chunk's word ids and activations besides
    the (N, D) result; within a chunk every unique paragraph is encoded once, one per row, in length-sorted batches
    of at most `token_budget` words (`encode_packed`). Equal, up to float rounding, to `embed_documents_padded`.
    """
    from tqdm.auto import tqdm

    model.eval()
    budget = token_budget or default_token_budget(device)
    out = torch.empty((len(documents), model.config.embed_dim), dtype=torch.float32, device=device)
    starts = range(0, len(documents), chunk_documents)
    for start in tqdm(starts, desc="embed", disable=not progress, unit="chunk"):
        chunk = documents[start : start + chunk_documents]
        packed = pack_documents(chunk, vocabulary, model.config.max_doc_len, model.config.max_seq_len)
        with autocast(device, amp):
            vectors = encode_packed(model, packed, device, budget)
        out[start : start + len(chunk)] = torch.nn.functional.normalize(vectors.float(), dim=-1)
    return out


@torch.inference_mode()
def embed_documents_padded(
    model: HAttenEncoder,
    vocabulary: Vocabulary,
    documents: Sequence[Document],
    device: torch.device,
    *,
    batch_size: int = 256,
    amp: bool = False,
) -> torch.Tensor:
    """The reference: `batch_size` documents at a time in the padded layout, every
    paragraph padded to the longest paragraph of its batch. Kept for the equality test and the benchmark."""
    model.eval()
    out = []
    for start in range(0, len(documents), batch_size):
        word_ids, types = encode_documents(
            documents[start : start + batch_size], vocabulary, model.config.max_doc_len, model.config.max_seq_len
        )
        with autocast(device, amp):
            vectors = model(word_ids.to(device), types.to(device))
        out.append(torch.nn.functional.normalize(vectors.float(), dim=-1))
    if not out:
        return torch.zeros((0, model.config.embed_dim), device=device)
    return torch.cat(out)


@torch.inference_mode()
def top_k_cosine(
    queries: torch.Tensor,
    papers: torch.Tensor,
    k: int,
    query_days: torch.Tensor | None = None,
    paper_days: torch.Tensor | None = None,
    excluded_paper: torch.Tensor | None = None,
    query_chunk: int = 1024,
    paper_chunk: int = 262_144,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores and paper indices (Q, k) of the k most similar papers, best first; excluded slots are -inf.

    queries (Q, D) and papers (N, D) must be L2-normalised (then the dot product is the cosine). A paper is
    excluded for query q when `paper_days > query_days[q]` or its index is `excluded_paper[q]`.
    """
    k = min(k, papers.shape[0])
    if queries.shape[0] == 0 or k == 0:
        empty = torch.zeros((queries.shape[0], k), device=papers.device)
        return empty.float(), empty.long()
    all_scores, all_indices = [], []
    for q0 in range(0, queries.shape[0], query_chunk):
        block = queries[q0 : q0 + query_chunk]
        best_scores = torch.full((block.shape[0], 0), float("-inf"), device=papers.device)
        best_indices = torch.zeros((block.shape[0], 0), dtype=torch.long, device=papers.device)
        for p0 in range(0, papers.shape[0], paper_chunk):
            chunk = papers[p0 : p0 + paper_chunk]
            scores = (block @ chunk.T).float()
            if query_days is not None and paper_days is not None:
                later = paper_days[None, p0 : p0 + chunk.shape[0]] > query_days[q0 : q0 + block.shape[0], None]
                scores = scores.masked_fill(later, float("-inf"))
            if excluded_paper is not None:
                local = excluded_paper[q0 : q0 + block.shape[0]] - p0
                own = torch.arange(chunk.shape[0], device=papers.device)[None, :] == local[:, None]
                scores = scores.masked_fill(own, float("-inf"))
            chunk_scores, chunk_indices = scores.topk(min(k, chunk.shape[0]), dim=1)
            merged_scores = torch.cat([best_scores, chunk_scores], dim=1)
            merged_indices = torch.cat([best_indices, chunk_indices + p0], dim=1)
            best_scores, order = merged_scores.topk(min(k, merged_scores.shape[1]), dim=1)
            best_indices = merged_indices.gather(1, order)
        all_scores.append(best_scores)
        all_indices.append(best_indices)
    return torch.cat(all_scores), torch.cat(all_indices)


def top_k_one(
    query: np.ndarray, papers: np.ndarray, k: int, query_day: int, paper_days: np.ndarray, excluded: int
) -> np.ndarray:
    """Positions of the k papers most similar to one query, best first (ties by position), -1 past the papers
    allowed: never `excluded` nor a paper whose day is after `query_day`. int32 (k,).

    The single-query path on a CPU: one matrix-vector product through numpy's BLAS (a bandwidth-bound read of the
    paper matrix; torch's CPU build ran the same product 3-4x slower on this machine's AMD CPU) and an
    `argpartition` for the top k instead of a full `topk` (0.18 against 0.77 ms at 100,000 papers)."""
    k = min(k, papers.shape[0])
    out = np.full(k, -1, dtype=np.int32)
    if k == 0:
        return out
    scores = papers @ query
    scores[paper_days > query_day] = -np.inf
    if 0 <= excluded < scores.shape[0]:
        scores[excluded] = -np.inf
    top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    top = top[np.lexsort((top, -scores[top]))]
    top = top[np.isfinite(scores[top])]
    out[: top.shape[0]] = top
    return out


@dataclass
class PaperIndex:
    """Paper embeddings with their ids and publication days, ready for exact search."""

    paper_ids: list[str]
    embeddings: torch.Tensor
    days: torch.Tensor

    @classmethod
    def build(cls, paper_ids: list[str], embeddings: torch.Tensor, dates: Dates) -> PaperIndex:
        days = torch.tensor([day_number(d, UNKNOWN_PAPER_DAY) for d in dates], dtype=torch.long)
        return cls(paper_ids, embeddings, days.to(embeddings.device))

    @cached_property
    def positions(self) -> dict[str, int]:
        """Each paper id's position, built once per index: rebuilt per search, it cost a single query O(papers)
        of Python (about 0.4 s at 1.7M papers), many times the search itself on a GPU."""
        return {paper_id: i for i, paper_id in enumerate(self.paper_ids)}

    @cached_property
    def _cpu_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The embeddings and days as numpy arrays sharing the tensors' memory, for `top_k_one`; None unless the
        index is float32 on the CPU."""
        if self.embeddings.device.type != "cpu" or self.embeddings.dtype != torch.float32:
            return None
        return self.embeddings.detach().contiguous().numpy(), self.days.numpy()

    def search_positions(
        self,
        query_embeddings: torch.Tensor,
        k: int,
        citing_ids: Sequence[str],
        citing_dates: Dates,
        query_chunk: int = 1024,
        paper_chunk: int = 262_144,
    ) -> np.ndarray:
        """Positions in `paper_ids` of the top-k papers per query, best first, -1 where fewer than k papers may be
        returned; never the citing paper nor a paper published after it. int32 (Q, k)."""
        position = self.positions
        if query_embeddings.shape[0] == 1 and self._cpu_arrays is not None:
            papers, days = self._cpu_arrays
            query = query_embeddings[0].detach().to("cpu", torch.float32).numpy()
            day = day_number(citing_dates[0], UNKNOWN_QUERY_DAY)
            return top_k_one(query, papers, k, day, days, position.get(citing_ids[0], -1))[None, :]
        device = self.embeddings.device
        query_days = torch.tensor([day_number(d, UNKNOWN_QUERY_DAY) for d in citing_dates], device=device)
        excluded = torch.tensor([position.get(c, -1) for c in citing_ids], dtype=torch.long, device=device)
        scores, indices = top_k_cosine(
            query_embeddings.to(device), self.embeddings, k, query_days, self.days, excluded, query_chunk, paper_chunk
        )
        indices = indices.masked_fill(~torch.isfinite(scores), -1)
        return indices.to(torch.int32).cpu().numpy()

    def search(
        self, query_embeddings: torch.Tensor, k: int, citing_ids: Sequence[str], citing_dates: Dates, **chunks: int
    ) -> list[list[str]]:
        """The top-k paper ids per query, never the citing paper nor a paper published after it: `search_positions`
        (which `chunks` passes `query_chunk` and `paper_chunk` to) as ids."""
        positions = self.search_positions(query_embeddings, k, citing_ids, citing_dates, **chunks)
        return [[self.paper_ids[i] for i in row if i >= 0] for row in positions.tolist()]
