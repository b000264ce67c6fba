"""Citeomatic's two networks (Bhagavatula et al., NAACL 2018), as allenai/citeomatic builds them in Keras
(`citeomatic/models/text_embeddings.py`, `paper_embedder.py`, `citation_ranker.py`, `layers.py`, `features.py`).

`MagnitudeDirectionSum` embeds a text as a normalised sum of learned word directions and magnitudes; `NNSelect`
scores a pair by the cosine of two such document vectors; `NNRank` adds field cosines, word-intersection features
and optional metadata before dense layers; `triplet_loss` serves both. Layer by layer: docs/trainers.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from trainers.hatten_model import flag_field
from trainers.tokenization import PAD_ID, UNK_ID, Vocabulary

FIELDS = ("title", "abstract")
# `Featurizer.STOPWORDS` of their features.py; their CountVectorizer keeps words of two letters or more.
STOPWORDS = frozenset(
    "abstract about an and are as at be by for from how in is it of on or that the this to was what when where who "
    "will with we our which".split()
)
_NOT_LETTER = re.compile(r"[^ a-z]")
MAX_AUTHORS_PER_DOCUMENT = 8  # their features.py; pad_sequences keeps the last 8
INIT_RANGE = 0.05  # Keras' `uniform` initializer: U(-0.05, 0.05), for the directions, magnitudes and sparse weights


@dataclass(frozen=True)
class CiteomaticConfig:
    """Model sizes and training settings; defaults are their OpenCorpus configs (`config/oc.paper_embedder`,
    `config/oc.citation_ranker.canonical`) and `ModelOptions`. Each field is a flag of `citeomatic train`."""

    dense_dim: int = flag_field(75, "Word vector size (a GloVe file sets its own).")
    dropout_p: float = flag_field(0.1, "Spatial dropout on the word vectors (whole dimensions of a text).")
    l1_lambda: float = flag_field(1e-7, "L1 activity penalty on the magnitudes and the intersection weights.")
    l2_lambda: float = flag_field(1e-5, "L2 activity penalty on the word directions (0 with GloVe, as theirs).")
    margin_multiplier: float = flag_field(1.0, "Scales the label offsets, hence the triplet margins.")
    neg_to_pos_ratio: int = flag_field(6, "Negatives per cited paper (a third hard, a third NN, a third easy).")
    min_citations: int = flag_field(2, "Training queries need this many cited papers in the pool (OC: 2).")
    max_title_len: int = flag_field(50, "Title words kept (the last ones, as Keras' pad_sequences).")
    max_abstract_len: int = flag_field(500, "Abstract words kept (the last ones).")
    max_features: int = flag_field(200_000, "Vocabulary size (most frequent words of the training papers).")
    learning_rate: float = flag_field(1e-3, "NAdam learning rate (their OC configs).")
    select_batch_size: int = flag_field(512, "NNSelect rows (query, paper) per batch: half as many triplets.")
    select_samples_per_epoch: int = flag_field(2_500_000, "NNSelect rows per epoch; neighbours re-embedded after.")
    select_total_samples: int = flag_field(50_000_000, "NNSelect rows in all.")
    rank_batch_size: int = flag_field(64, "NNRank rows per batch.")
    rank_samples_per_epoch: int = flag_field(2_500_000, "NNRank rows per epoch.")
    rank_total_samples: int = flag_field(100_000_000, "NNRank rows in all.")
    dense_config: str = flag_field("20,20", "NNRank's hidden ELU layers.")
    separate_embeddings: bool = flag_field(True, "NNRank: separate query and candidate embedders (OC config).")
    use_citations: bool = flag_field(False, "NNRank: the candidate's log citation count (training graph).")
    use_selector_confidence: bool = flag_field(True, "NNRank: the NNSelect cosine of the pair.")
    use_authors: bool = flag_field(False, "NNRank: the cosine of the query's and the candidate's author vectors.")
    min_author_count: int = flag_field(
        1, "Authors on fewer training papers than this are unknown (their min_author_papers); unknowns add nothing."
    )
    author_dim: int = flag_field(10, "Author vector size (their metadata_dim).")
    num_ann_nbrs_to_fetch: int = flag_field(100, "Nearest neighbours NNSelect fetches per query.")
    num_candidates_to_rank: int = flag_field(100, "Papers kept after ranking (the ranking's length).")
    extend_candidate_citations: bool = flag_field(True, "Add the papers the neighbours cite (training graph).")

    def to_dict(self) -> dict:
        return asdict(self)


def document_words(text: str) -> list[str]:
    """Their featurizer's words: lower case, everything but a-z becomes a space, words of 2+ letters, no stop words."""
    return [w for w in _NOT_LETTER.sub(" ", text.lower()).split() if len(w) > 1 and w not in STOPWORDS]


def fit_vocabulary(texts: Sequence[str], max_features: int = 200_000, max_df: float = 0.9) -> Vocabulary:
    """Their `CountVectorizer(max_df=0.9, max_features=...)`: words in at most `max_df` of the texts, the
    `max_features` most frequent (ties alphabetical), in alphabetical order. Id 0 pads; id 1 (`<unk>`) is unused:
    unknown words are dropped, as theirs."""
    term_counts: dict[str, int] = {}
    doc_counts: dict[str, int] = {}
    for text in texts:
        words = document_words(text)
        for w in words:
            term_counts[w] = term_counts.get(w, 0) + 1
        for w in set(words):
            doc_counts[w] = doc_counts.get(w, 0) + 1
    limit = max_df * len(texts)
    kept = [w for w in term_counts if doc_counts[w] <= limit]
    ranked = sorted(kept, key=lambda w: (-term_counts[w], w))[:max_features]
    return Vocabulary(sorted(ranked))


def encode_words(vocabulary: Vocabulary, text: str, max_len: int) -> list[int]:
    """Known word ids of `text`, the last `max_len` (Keras' `pad_sequences` truncates at the front)."""
    ids = [vocabulary.index[w] for w in document_words(text) if w in vocabulary.index]
    return ids[-max_len:] if max_len > 0 else []


def normalise_author(name: str) -> str:
    """An author name as the vocabulary keys it: lower case, runs of whitespace as one space, no edges."""
    return " ".join(name.lower().split())


def fit_author_vocabulary(papers_authors: Iterable[Sequence[str]], min_count: int = 1) -> Vocabulary:
    """Normalised names on at least `min_count` of the given papers (each paper counts a name once), sorted; id 0
    pads and id 1 (`<unk>`) stands for every other name. Give it the training papers only."""
    counts: Counter[str] = Counter()
    for names in papers_authors:
        counts.update({normalise_author(n) for n in names} - {""})
    return Vocabulary(sorted(name for name, count in counts.items() if count >= min_count))


def author_ids(vocabulary: Vocabulary, names: Sequence[str]) -> list[int]:
    """Each distinct normalised name's id in the paper's order, `<unk>` (1) for names the vocabulary lacks."""
    distinct = dict.fromkeys(n for n in (normalise_author(name) for name in names) if n)
    return [vocabulary.index.get(n, UNK_ID) for n in distinct]


def encode_authors(vocabulary: Vocabulary, names: Sequence[str]) -> list[int]:
    """What NNRank reads: the known authors' ids, the last `MAX_AUTHORS_PER_DOCUMENT` (their featurizer drops
    unknown names; one shared unknown vector would make any two papers by unseen authors look alike)."""
    return [i for i in author_ids(vocabulary, names) if i != UNK_ID][-MAX_AUTHORS_PER_DOCUMENT:]


def pad_ids(rows: Iterable[Sequence[int]]) -> torch.Tensor:
    """Rows of ids as one (N, longest) long tensor padded with 0 (at least one column)."""
    rows = list(rows)
    width = max([len(r) for r in rows] + [1])
    out = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            out[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
    return out


def intersection_ids(query: Sequence[int], candidate: Sequence[int]) -> list[int]:
    """The distinct word ids both fields hold, ascending (their `np.intersect1d`)."""
    return sorted(set(query) & set(candidate))


class MagnitudeDirectionSum(nn.Module):
    """sum_w m_w * d_w / |d_w| over a field's words, L2-normalised; padding (id 0) adds nothing."""

    def __init__(self, vocab_size: int, dim: int, dropout: float = 0.0, pretrained: np.ndarray | None = None) -> None:
        super().__init__()
        self.direction = nn.Embedding(vocab_size, dim)
        self.magnitude = nn.Embedding(vocab_size, 1)
        nn.init.uniform_(self.direction.weight, -INIT_RANGE, INIT_RANGE)
        nn.init.uniform_(self.magnitude.weight, -INIT_RANGE, INIT_RANGE)
        if pretrained is not None:
            found = np.abs(pretrained).sum(axis=1) > 0
            with torch.no_grad():
                self.direction.weight[torch.as_tensor(found)] = torch.as_tensor(pretrained[found], dtype=torch.float32)
        self.dropout = dropout

    def word_vectors(self, ids: torch.Tensor) -> torch.Tensor:
        """(..., L, D): m_w * d_w / |d_w|, zero at padding."""
        mask = (ids != PAD_ID).unsqueeze(-1).float()
        direction = F.normalize(self.direction(ids), dim=-1)
        return direction * self.magnitude(ids) * mask

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        vectors = self.word_vectors(ids)
        if self.training and self.dropout > 0:  # SpatialDropout1D: one mask per text over the dimensions
            keep = torch.bernoulli(torch.full((ids.shape[0], 1, vectors.shape[-1]), 1 - self.dropout))
            vectors = vectors * keep.to(vectors) / (1 - self.dropout)
        return F.normalize(vectors.sum(dim=-2), dim=-1)

    def penalty(self, ids: torch.Tensor, l1: float, l2: float) -> torch.Tensor:
        """Their activity regularisers: l2 * sum of squared raw directions + l1 * sum of |magnitudes| over the
        words, per text (averaged over the batch)."""
        mask = (ids != PAD_ID).unsqueeze(-1).float()
        total = l1 * (self.magnitude(ids).abs() * mask).sum()
        if l2:
            total = total + l2 * (self.direction(ids).pow(2) * mask).sum()
        return total / max(1, ids.shape[0])


class NNSelect(nn.Module):
    """The document embedder: normalise(w_title * title + w_abstract * abstract) with the shared embedder."""

    def __init__(self, vocab_size: int, config: CiteomaticConfig, pretrained: np.ndarray | None = None) -> None:
        super().__init__()
        dim = pretrained.shape[1] if pretrained is not None else config.dense_dim
        self.embedder = MagnitudeDirectionSum(vocab_size, dim, config.dropout_p, pretrained)
        self.field_weights = nn.Parameter(torch.ones(len(FIELDS)))  # their ScalarMultiply per field, init 1

    def forward(self, title: torch.Tensor, abstract: torch.Tensor) -> torch.Tensor:
        weighted = self.field_weights[0] * self.embedder(title) + self.field_weights[1] * self.embedder(abstract)
        return F.normalize(weighted, dim=-1)

    def penalty(self, title: torch.Tensor, abstract: torch.Tensor, config: CiteomaticConfig, l2: float):
        return self.embedder.penalty(title, config.l1_lambda, l2) + self.embedder.penalty(
            abstract, config.l1_lambda, l2
        )


@dataclass
class RankBatch:
    """NNRank's inputs for N (query, candidate) pairs: padded word ids per source and field, the padded
    intersection ids per field, the candidate's citation count, the NNSelect cosine and the padded author ids."""

    query_title: torch.Tensor
    query_abstract: torch.Tensor
    candidate_title: torch.Tensor
    candidate_abstract: torch.Tensor
    title_intersection: torch.Tensor
    abstract_intersection: torch.Tensor
    citation_count: torch.Tensor
    confidence: torch.Tensor
    query_authors: torch.Tensor
    candidate_authors: torch.Tensor

    def to(self, device: torch.device) -> RankBatch:
        return RankBatch(**{k: v.to(device) for k, v in vars(self).items()})


def citation_feature(count: int) -> float:
    """Their `_citation_features`: log(max(count - 1, 0) + 1)."""
    return float(np.log(max(count - 1, 0) + 1))


class NNRank(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        config: CiteomaticConfig,
        pretrained: np.ndarray | None = None,
        author_vocab_size: int = 0,
    ) -> None:
        super().__init__()
        dim = pretrained.shape[1] if pretrained is not None else config.dense_dim
        self.config = config
        self.query_embedder = MagnitudeDirectionSum(vocab_size, dim, config.dropout_p, pretrained)
        self.candidate_embedder = (
            MagnitudeDirectionSum(vocab_size, dim, config.dropout_p, pretrained)
            if config.separate_embeddings
            else self.query_embedder
        )
        self.sparse = nn.ModuleDict({field: nn.Embedding(vocab_size, 1) for field in FIELDS})
        for table in self.sparse.values():
            nn.init.uniform_(table.weight, -INIT_RANGE, INIT_RANGE)
        self.author_embedder: MagnitudeDirectionSum | None = None
        if config.use_authors:
            if author_vocab_size < 2:
                raise ValueError("use_authors needs an author vocabulary (fit_author_vocabulary)")
            self.author_embedder = MagnitudeDirectionSum(author_vocab_size, config.author_dim, config.dropout_p)
        extra = int(config.use_authors) + int(config.use_citations) + int(config.use_selector_confidence)
        width = 2 * len(FIELDS) + extra
        layers: list[nn.Module] = []
        for size in (int(s) for s in config.dense_config.split(",") if s.strip()):
            linear = nn.Linear(width, size)
            nn.init.xavier_uniform_(linear.weight)  # Keras' Dense default (glorot_uniform, zero bias)
            nn.init.zeros_(linear.bias)
            layers += [linear, nn.ELU()]
            width = size
        final = nn.Linear(width, 1)
        nn.init.ones_(final.weight)  # kernel_initializer='one'
        nn.init.zeros_(final.bias)
        self.hidden = nn.Sequential(*layers)
        self.final = final

    def intersection_sum(self, field: str, ids: torch.Tensor) -> torch.Tensor:
        """(N,): the sum of the field's learned word weights over the shared words (padding 0 adds nothing)."""
        mask = (ids != PAD_ID).float()
        return (self.sparse[field](ids).squeeze(-1) * mask).sum(dim=-1)

    def features(self, batch: RankBatch) -> torch.Tensor:
        """(N, F): title cosine, abstract cosine, title intersection, abstract intersection [, authors cosine,
        citations, confidence] (their concatenation order)."""
        columns = [
            (self.query_embedder(batch.query_title) * self.candidate_embedder(batch.candidate_title)).sum(-1),
            (self.query_embedder(batch.query_abstract) * self.candidate_embedder(batch.candidate_abstract)).sum(-1),
            self.intersection_sum("title", batch.title_intersection),
            self.intersection_sum("abstract", batch.abstract_intersection),
        ]
        if self.author_embedder is not None:
            query, candidate = self.author_embedder(batch.query_authors), self.author_embedder(batch.candidate_authors)
            columns.append((query * candidate).sum(-1))
        if self.config.use_citations:
            columns.append(batch.citation_count)
        if self.config.use_selector_confidence:
            columns.append(batch.confidence)
        return torch.stack(columns, dim=-1)

    def forward(self, batch: RankBatch) -> torch.Tensor:
        return torch.sigmoid(self.final(self.hidden(self.features(batch)))).squeeze(-1)

    def penalty(self, batch: RankBatch, l2: float) -> torch.Tensor:
        l1 = self.config.l1_lambda
        total = self.query_embedder.penalty(batch.query_title, l1, l2)
        total = total + self.query_embedder.penalty(batch.query_abstract, l1, l2)
        total = total + self.candidate_embedder.penalty(batch.candidate_title, l1, l2)
        total = total + self.candidate_embedder.penalty(batch.candidate_abstract, l1, l2)
        if self.author_embedder is not None:  # never pretrained: their l2 on author directions always applies
            for ids in (batch.query_authors, batch.candidate_authors):
                total = total + self.author_embedder.penalty(ids, l1, self.config.l2_lambda)
        for field, ids in (("title", batch.title_intersection), ("abstract", batch.abstract_intersection)):
            mask = (ids != PAD_ID).float()
            total = total + l1 * (self.sparse[field](ids).squeeze(-1).abs() * mask).sum() / max(1, ids.shape[0])
        return total


def triplet_loss(positive: torch.Tensor, negative: torch.Tensor, margin: torch.Tensor) -> torch.Tensor:
    """Their `triplet_loss`: mean over pairs of max(0, margin + s(negative) - s(positive))."""
    return torch.clamp(margin + negative - positive, min=0).mean()
