"""SymTax's taxonomy-aware reranker (Goyal et al., ACL 2024), as a model: the BERT pair score fused with the
separation of the citing and candidate papers' categories, embedded from the arXiv + ACM CCS taxonomy.

Read off goyalkaraniit/SymTax @ e3de5b2c (`src/rerank/model.py`, `Scorer_PER_v1`). The published category vectors
are precomputed (the graph ones unpublished), so both fusions are computed here from
`mapping.taxonomy.build_graph()`, the graph layers by PyTorch Geometric. What is read how: docs/trainers.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

FUSIONS = ("vector", "graph", "none")
GRAPH_LAYERS = ("appnp", "gat")
UNKNOWN = -1  # the category index of a paper whose category is not a taxonomy node


def mobius_add(x: torch.Tensor, y: torch.Tensor, curvature: float) -> torch.Tensor:
    """x (+)_k y in the k-stereographic model (k < 0: Poincare ball, k = 0: R^n, k > 0: projected sphere)."""
    k = curvature
    xy = (x * y).sum(-1, keepdim=True)
    x2 = x.pow(2).sum(-1, keepdim=True)
    y2 = y.pow(2).sum(-1, keepdim=True)
    numerator = (1 - 2 * k * xy - k * y2) * x + (1 + k * x2) * y
    denominator = 1 - 2 * k * xy + k * k * x2 * y2
    return numerator / denominator.clamp_min(1e-15)


def artan_k(value: torch.Tensor, curvature: float) -> torch.Tensor:
    """arctan for k > 0, artanh for k < 0 (clamped below 1), the identity for k = 0, each scaled by sqrt|k|."""
    if curvature == 0:
        return value
    root = math.sqrt(abs(curvature))
    if curvature > 0:
        return torch.atan(root * value) / root
    return torch.atanh((root * value).clamp(max=1 - 1e-5)) / root


def separation(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """d_k(x, y) = 2 artan_k(|(-x) (+)_k y|): geoopt's `stereographic.math.dist`, the published code's feature with
    k = 1; k = 0 gives 2|x - y| (the ablation's Euclidean separation), k = -1 the Poincare-ball distance."""
    return 2 * artan_k(mobius_add(-x, y, curvature).norm(dim=-1), curvature)


def expmap0(v: torch.Tensor, curvature: float) -> torch.Tensor:
    """The exponential map at the origin: tan_k(|v|) v/|v|, which puts any vector inside the ball when k < 0."""
    if curvature >= 0:
        return v
    root = math.sqrt(-curvature)
    norm = v.norm(dim=-1, keepdim=True).clamp_min(1e-15)
    return torch.tanh(root * norm) * v / (root * norm)


def normalized_adjacency(edges: Sequence[tuple[int, int]], n: int) -> torch.Tensor:
    """D^-1/2 (A + I) D^-1/2 of the undirected graph on `n` nodes, dense (the fused taxonomy has ~400 nodes)."""
    adjacency = torch.eye(n)
    for a, b in edges:
        adjacency[a, b] = adjacency[b, a] = 1.0
    scale = adjacency.sum(1).rsqrt()
    return scale[:, None] * adjacency * scale[None, :]


def edge_index(adjacency: torch.Tensor) -> torch.Tensor:
    """The edges of a dense adjacency (both directions, no self loops: PyTorch Geometric adds its own), as PyG's
    `edge_index` (2 x E: sources, targets)."""
    sources, targets = adjacency.nonzero(as_tuple=True)
    off_diagonal = sources != targets
    return torch.stack([sources[off_diagonal], targets[off_diagonal]])


def appnp(features: torch.Tensor, adjacency: torch.Tensor, steps: int = 10, alpha: float = 0.1) -> torch.Tensor:
    """APPNP propagation (Gasteiger et al., 2019) by PyTorch Geometric's `APPNP`: Z <- (1 - alpha) A_hat Z + alpha H,
    `steps` times, Z0 = H, A_hat = D^-1/2 (A + I) D^-1/2 of the graph whose edges `adjacency` holds."""
    from torch_geometric.nn import APPNP

    return APPNP(K=steps, alpha=alpha, cached=False)(features, edge_index(adjacency))


class GATLayer(nn.Module):
    """One-head graph attention (Velickovic et al., 2018) by PyTorch Geometric's `GATConv` over the graph of a 0/1
    adjacency, self loops added: e_ij = LeakyReLU(a . [W h_i ; W h_j]) on the edges, alpha_ij = softmax_j e_ij,
    h'_i = ELU(sum_j alpha_ij W h_j)."""

    def __init__(self, in_dim: int, out_dim: int, negative_slope: float = 0.2) -> None:
        super().__init__()
        from torch_geometric.nn import GATConv

        self.conv = GATConv(in_dim, out_dim, heads=1, negative_slope=negative_slope, add_self_loops=True, bias=False)

    def attention_weights(self, features: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(the attention as a dense n x n matrix, row i over the nodes i attends to; the layer's output before
        the ELU)."""
        out, (edges, weights) = self.conv(features, edge_index(mask), return_attention_weights=True)
        dense = torch.zeros(features.shape[0], features.shape[0], dtype=weights.dtype)
        dense[edges[1], edges[0]] = weights[:, 0]
        return dense, out

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return nn.functional.elu(self.conv(features, edge_index(mask)))


class TaxonomyFusion(nn.Module):
    """Category index -> category vector: the taxonomy nodes' text embeddings (`node_features`, frozen) fused by
    vector averaging (`vector`: each arXiv node with the mean of the ACM nodes it maps to), by APPNP or a GAT
    over the fused graph (`graph`), and mapped by `ln_cat` (the published 768 -> 512 layer)."""

    def __init__(
        self,
        node_features: torch.Tensor,
        edges: Sequence[tuple[int, int]],
        mapped: Sequence[Sequence[int]],
        *,
        fusion: str = "vector",
        graph_layer: str = "appnp",
        category_dim: int = 512,
        appnp_steps: int = 10,
        appnp_alpha: float = 0.1,
    ) -> None:
        super().__init__()
        if fusion not in FUSIONS[:2]:
            raise ValueError(f"fusion must be one of {FUSIONS[:2]}, not {fusion!r}")
        self.fusion, self.graph_layer = fusion, graph_layer
        n, dim = node_features.shape
        mask = normalized_adjacency(edges, n)
        self.register_buffer("adjacency", mask)
        self.register_buffer("mask", (mask > 0).float())
        self.gat = GATLayer(dim, dim) if fusion == "graph" and graph_layer == "gat" else None
        if fusion == "vector":
            fused = node_features.clone()
            for node, targets in enumerate(mapped):
                if targets:
                    fused[node] = (node_features[node] + node_features[list(targets)].mean(0)) / 2
        elif graph_layer == "appnp":
            fused = appnp(node_features, mask, appnp_steps, appnp_alpha)  # linear: precomputed once
        else:
            fused = node_features  # the GAT runs in forward, its attention being trained
        self.register_buffer("fused", fused)
        self.ln_cat = nn.Linear(dim, category_dim)

    def forward(self, categories: torch.Tensor) -> torch.Tensor:
        table = self.gat(self.fused, self.mask) if self.gat is not None else self.fused
        return self.ln_cat(table[categories.clamp_min(0)])


class SymTaxReranker(nn.Module):
    """sigmoid(w . ReLU([h_CLS ; d ; known]) + b), d the separation of the two category vectors (0 and known = 0
    when either paper has no taxonomy category); with `taxonomy=None` the plain [CLS] scorer of `trainers.rerank`
    (the ablation without taxonomy)."""

    def __init__(self, encoder: nn.Module, taxonomy: TaxonomyFusion | None, curvature: float = 1.0) -> None:
        super().__init__()
        self.encoder = encoder
        self.taxonomy = taxonomy
        self.curvature = curvature
        extra = 2 if taxonomy is not None else 0
        self.head = nn.Linear(encoder.config.hidden_size + extra, 1)

    def taxonomy_features(self, query_category: torch.Tensor, candidate_category: torch.Tensor) -> torch.Tensor:
        """(B, 2): the separation of each pair's categories and whether both are known."""
        known = ((query_category != UNKNOWN) & (candidate_category != UNKNOWN)).float()
        x = expmap0(self.taxonomy(query_category), self.curvature)
        y = expmap0(self.taxonomy(candidate_category), self.curvature)
        return torch.stack([separation(x, y, self.curvature) * known, known], dim=1)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
        query_category: torch.Tensor | None = None,
        candidate_category: torch.Tensor | None = None,
    ) -> torch.Tensor:
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        features = states.last_hidden_state[:, 0].float()
        if self.taxonomy is not None:
            extra = self.taxonomy_features(query_category, candidate_category)
            features = torch.cat([features, extra.to(features.dtype)], dim=1)
        return torch.sigmoid(self.head(torch.relu(features)).squeeze(-1).float())
