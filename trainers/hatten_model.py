"""The hierarchical-attention text encoder (HAtten) of Gu et al. (ECIR 2022), as their released code builds it
(`src/prefetch/model.py` of nianlonggu/Local-Citation-Recommendation).

A paragraph encoder (word vectors, positions, one transformer layer, multi-head pooling) feeds a document encoder
over the paragraphs (title, abstract, body, local context). `forward` takes the padded layout; the packed path
(`encode_paragraphs`, then `combine`) gives the same result without padding a title to its batch's longest
abstract, and is what embedding and training use.
"""

from __future__ import annotations

import math
from dataclasses import Field, asdict, dataclass, field, fields
from typing import TypeVar

import numpy as np
import torch
from torch import nn

from trainers.tokenization import PAD_ID

# Paragraph types: rows of the type embedding, the labels of `global_config.cfg`. BODY (2) is never used here.
TITLE, ABSTRACT, BODY, CONTEXT = 0, 1, 2, 3
PADDING_PARAGRAPH = 10
_T = TypeVar("_T")


def flag_field(default: _T, help_text: str) -> _T:
    """A config field that `python -m trainers.hatten train` offers as the flag of the same name, with this help."""
    return field(default=default, metadata={"help": help_text})


def flag_fields(config_type: type) -> tuple[Field, ...]:
    """The fields of a config dataclass made with `flag_field`, in their order."""
    return tuple(f for f in fields(config_type) if "help" in f.metadata)


@dataclass(frozen=True)
class HAttenConfig:
    """Architecture; defaults are the published ones (`global_config.cfg` of the original code). Fields made with
    `flag_field` are flags of `python -m trainers.hatten train`."""

    vocab_size: int
    embed_dim: int = flag_field(200, "Word and paragraph vector size; a GloVe file sets it to its own.")
    num_heads: int = flag_field(8, "Attention heads of the transformer layers and the pooling.")
    hidden_dim: int = flag_field(1024, "Feed-forward size of the transformer layers.")
    num_enc_layers: int = flag_field(1, "Transformer layers of the paragraph and of the document encoder.")
    max_seq_len: int = flag_field(512, "Words per paragraph; the rest is cut.")
    max_doc_len: int = 3
    n_para_types: int = 100
    dropout: float = flag_field(0.1, "Dropout on the output of each attention and feed-forward block.")
    train_word_vectors: bool = flag_field(
        False, "Train the word vectors (the paper keeps them fixed; their code holds them in a buffer)."
    )

    def __post_init__(self) -> None:
        if self.num_heads < 1 or self.embed_dim % self.num_heads:
            raise ValueError(
                f"embed_dim {self.embed_dim} is not divisible by num_heads {self.num_heads}: choose heads that divide "
                f"it ({', '.join(map(str, divisors(self.embed_dim)))})"
            )

    def to_dict(self) -> dict:
        return asdict(self)


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


def heads_for_dimension(embed_dim: int, wanted: int) -> int:
    """The most attention heads, at most `wanted`, that divide `embed_dim`: a word-vector file sets the dimension
    (50, 100, 300) and a preset the heads (8), and torch needs the one to divide the other (50 -> 5, 300 -> 6)."""
    return max(d for d in divisors(embed_dim) if d <= max(1, wanted))


def sinusoidal_positions(length: int, dim: int) -> torch.Tensor:
    """The fixed positional encoding of Vaswani et al. (2017), shape (length, dim): sin(pos / 10000^(i/dim)) at
    even i and cos of the same angle at i + 1, as `PositionalEncoding` of the original code."""
    position = torch.arange(length, dtype=torch.float32)[:, None]
    scale = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * scale)
    table[:, 1::2] = torch.cos(position * scale[: dim // 2])
    return table


class MultiHeadPooling(nn.Module):
    """Eq. 2 of the paper (`MultiHeadPoolingLayer` of the original code): per head h a score a_jh = w_h . x_j + b_h
    for every position j, weights alpha_jh = softmax_j(a_jh) over the unpadded positions, values v_j = W_v x_j split
    into heads, head_h = sum_j alpha_jh v_jh, and the output W_o ReLU([head_1; ...; head_H]) + b_o."""

    def __init__(self, dim: int, num_heads: int) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"embed_dim {dim} is not divisible by num_heads {num_heads}")
        self.num_heads = num_heads
        self.scores = nn.Linear(dim, num_heads)
        self.values = nn.Linear(dim, dim)
        self.output = nn.Linear(dim, dim)

    def forward(self, states: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        """states (B, L, D), padding (B, L) True where padded -> (B, D)."""
        batch, length, dim = states.shape
        scores = self.scores(states).float().masked_fill(padding[:, :, None], float("-inf"))
        weights = torch.softmax(scores, dim=1).to(states.dtype)  # (B, L, H)
        values = self.values(states).view(batch, length, self.num_heads, dim // self.num_heads)
        pooled = torch.einsum("blh,blhd->bhd", weights, values).reshape(batch, dim)
        return self.output(torch.relu(pooled))


def _encoder(config: HAttenConfig) -> nn.TransformerEncoder:
    """Post-norm layers with ReLU feed-forward and dropout only on each block's output, as the original
    `TransformerEncoderLayer` (no dropout on the attention weights nor inside the feed-forward block)."""
    layer = nn.TransformerEncoderLayer(
        config.embed_dim, config.num_heads, config.hidden_dim, config.dropout, batch_first=True
    )
    layer.self_attn.dropout = 0.0
    layer.dropout = nn.Identity()
    return nn.TransformerEncoder(layer, config.num_enc_layers, enable_nested_tensor=False)


class ParagraphEncoder(nn.Module):
    """Word ids (N, L), one paragraph per row -> paragraph vectors (N, D). A row's vector depends only on its own
    unpadded words, so rows can be packed by length."""

    def __init__(self, config: HAttenConfig, word_vectors: np.ndarray | None = None) -> None:
        super().__init__()
        self.embedding = nn.Embedding(config.vocab_size, config.embed_dim, padding_idx=PAD_ID)
        if word_vectors is not None:
            if word_vectors.shape != (config.vocab_size, config.embed_dim):
                raise ValueError(f"word vectors {word_vectors.shape} do not match the config")
            self.embedding.weight.data.copy_(torch.from_numpy(word_vectors))
        self.embedding.weight.requires_grad_(config.train_word_vectors)
        self.register_buffer("positions", sinusoidal_positions(config.max_seq_len, config.embed_dim), persistent=False)
        self.encoder = _encoder(config)
        self.pooling = MultiHeadPooling(config.embed_dim, config.num_heads)

    def forward(self, word_ids: torch.Tensor) -> torch.Tensor:
        padding = word_ids == PAD_ID
        padding[:, 0] = False  # an empty paragraph attends to its one pad token instead of to nothing
        states = self.embedding(word_ids) + self.positions[: word_ids.shape[1]]
        states = self.encoder(states, src_key_padding_mask=padding)
        return self.pooling(states, padding)


class HAttenEncoder(nn.Module):
    """Documents -> embeddings (B, D): `forward` on padded word ids (B, P, L) and paragraph types (B, P), or
    `combine` on paragraph vectors (B, P, D) that `encode_paragraphs` computed one row per paragraph."""

    def __init__(self, config: HAttenConfig, word_vectors: np.ndarray | None = None) -> None:
        super().__init__()
        self.config = config
        self.paragraphs = ParagraphEncoder(config, word_vectors)
        self.types = nn.Embedding(config.n_para_types, config.embed_dim)
        self.register_buffer(
            "paragraph_positions", sinusoidal_positions(config.max_doc_len, config.embed_dim), persistent=False
        )
        self.encoder = _encoder(config)
        self.pooling = MultiHeadPooling(config.embed_dim, config.num_heads)

    def encode_paragraphs(self, word_ids: torch.Tensor) -> torch.Tensor:
        return self.paragraphs(word_ids)

    def combine(self, vectors: torch.Tensor, paragraph_types: torch.Tensor) -> torch.Tensor:
        """Paragraph vectors (B, P, D) and types (B, P) -> document embeddings (B, D). Paragraphs of the padding
        type are masked; a document with none but padding keeps its first."""
        padding = paragraph_types == PADDING_PARAGRAPH
        padding[:, 0] = padding[:, 0] & ~padding.all(dim=1)
        states = vectors + self.paragraph_positions[: vectors.shape[1]] + self.types(paragraph_types)
        states = self.encoder(states, src_key_padding_mask=padding)
        return self.pooling(states, padding)

    def forward(self, word_ids: torch.Tensor, paragraph_types: torch.Tensor) -> torch.Tensor:
        batch, paragraphs, length = word_ids.shape
        vectors = self.paragraphs(word_ids.reshape(batch * paragraphs, length)).view(batch, paragraphs, -1)
        return self.combine(vectors, paragraph_types)

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]
