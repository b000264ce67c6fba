"""Papers and queries as the paragraph lists HAtten reads, in two layouts: padded id tensors (documents x
paragraphs x words, the layout of the original code) and packed (one unique paragraph per row, rows sorted by
length), which gives the same embeddings with far less padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from trainers.data import ContextQuery, PaperText
from trainers.hatten_model import ABSTRACT, CONTEXT, PADDING_PARAGRAPH, TITLE, HAttenEncoder
from trainers.tokenization import PAD_ID, Vocabulary

Document = tuple[tuple[int, str], ...]


def paper_document(paper: PaperText) -> Document:
    """A candidate paper: its title and abstract."""
    return ((TITLE, paper.title), (ABSTRACT, paper.abstract))


def query_document(query: ContextQuery, citing: PaperText, with_citing_paper: bool = True) -> Document:
    """A query: the citing paper's title and abstract (the global context) and the local context."""
    if not with_citing_paper:
        return ((CONTEXT, query.context),)
    return ((TITLE, citing.title), (ABSTRACT, citing.abstract), (CONTEXT, query.context))


def document_text(document: Document) -> str:
    """The document's paragraphs joined by spaces (the text the mining's Jaccard similarity reads)."""
    return " ".join(text for _, text in document)


def encode_documents(
    documents: Sequence[Document], vocabulary: Vocabulary, max_doc_len: int, max_seq_len: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Word ids (B, P, L) and paragraph types (B, P), every paragraph padded to the longest in the batch; empty
    paragraphs get the padding type. The reference layout (`HAttenEncoder.forward`); see `pack_documents`."""
    encoded = [[(kind, vocabulary.encode(text, max_seq_len)) for kind, text in doc[:max_doc_len]] for doc in documents]
    paragraphs = max(1, max((len(doc) for doc in encoded), default=1))
    length = max(1, max((len(ids) for doc in encoded for _, ids in doc), default=1))
    word_ids = torch.full((len(documents), paragraphs, length), PAD_ID, dtype=torch.long)
    types = torch.full((len(documents), paragraphs), PADDING_PARAGRAPH, dtype=torch.long)
    for row, doc in enumerate(encoded):
        for column, (kind, ids) in enumerate(doc):
            if ids:
                word_ids[row, column, : len(ids)] = torch.tensor(ids, dtype=torch.long)
                types[row, column] = kind
    return word_ids, types


@dataclass(frozen=True)
class PackedDocuments:
    """Documents as unique paragraphs, one per row: `rows` are word ids (an empty tuple for an empty or missing
    paragraph), `slots` (B, P) the row of each paragraph slot, `types` (B, P) the paragraph types, empty ones
    marked as padding. Paragraphs that several documents share (the citing paper's title and abstract in every
    context of that paper) are one row."""

    rows: list[tuple[int, ...]]
    slots: torch.Tensor
    types: torch.Tensor


def pack_documents(
    documents: Sequence[Document], vocabulary: Vocabulary, max_doc_len: int, max_seq_len: int
) -> PackedDocuments:
    """The packed layout of `documents`; `encode_documents` is the padded one, and both give the same embeddings."""
    paragraphs = max(1, max((len(doc[:max_doc_len]) for doc in documents), default=1))
    slots = torch.zeros((len(documents), paragraphs), dtype=torch.long)
    types = torch.full((len(documents), paragraphs), PADDING_PARAGRAPH, dtype=torch.long)
    row_of: dict[tuple[int, ...], int] = {}
    ids_of: dict[str, tuple[int, ...]] = {}
    rows: list[tuple[int, ...]] = []
    for b, doc in enumerate(documents):
        doc = doc[:max_doc_len]
        for p in range(paragraphs):
            ids: tuple[int, ...] = ()
            if p < len(doc):
                kind, text = doc[p]
                ids = ids_of.get(text)
                if ids is None:
                    ids = ids_of[text] = tuple(vocabulary.encode(text, max_seq_len))
                if ids:
                    types[b, p] = kind
            row = row_of.get(ids)
            if row is None:
                row = row_of[ids] = len(rows)
                rows.append(ids)
            slots[b, p] = row
    return PackedDocuments(rows, slots, types)


def length_batches(lengths: Sequence[int], token_budget: int, max_rows: int) -> list[list[int]]:
    """Row indices sorted by length and cut into batches of at most `max_rows` rows whose padded size (rows x the
    longest row) stays within `token_budget` (a row longer than the budget is a batch of its own)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and ((len(current) + 1) * lengths[index] > token_budget or len(current) >= max_rows):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def encode_packed(
    model: HAttenEncoder,
    packed: PackedDocuments,
    device: torch.device,
    token_budget: int = 16_384,
    max_rows: int = 4096,
) -> torch.Tensor:
    """Document embeddings (B, D), unnormalised: every unique paragraph encoded once, in length-sorted batches
    padded only to their own longest row, then the document encoder over each document's paragraph vectors.
    Differentiable: training uses it too."""
    lengths = [max(1, len(row)) for row in packed.rows]
    outputs, order = [], []
    for batch in length_batches(lengths, token_budget, max_rows):
        ids = np.full((len(batch), lengths[batch[-1]]), PAD_ID, dtype=np.int64)
        for i, row in enumerate(batch):
            ids[i, : len(packed.rows[row])] = packed.rows[row]
        outputs.append(model.encode_paragraphs(torch.from_numpy(ids).to(device)))
        order.extend(batch)
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order, dtype=torch.long)] = torch.arange(len(order))
    vectors = torch.cat(outputs)[inverse.to(device)]
    return model.combine(vectors[packed.slots.to(device)], packed.types.to(device))
