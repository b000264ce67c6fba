"""RMCNet's pieces (Long et al., COLING 2024; src/modules/models.py and losses.py of ChainsawM/RMC, rewritten):
the attentive reference encoder and the triplet loss over irrelevance levels."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

OTHER_CLASS_LEVEL = 4


def reference_attention(content: torch.Tensor, references: torch.Tensor, mask: torch.Tensor):
    """content [B, d], references [B, R, d], mask [B, R] (True = a real reference): weights = softmax over the
    real references of content . reference (no scaling, as RMC's CitationParser), padding weighted 0; returns the
    weighted sum [B, d] and the weights [B, R]."""
    scores = torch.einsum("bd,brd->br", content, references).masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=1), nan=0.0).masked_fill(~mask, 0.0)
    return torch.einsum("br,brd->bd", weights, references), weights


def reference_average(references: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """RMC's AvgParser: the mean of the real references."""
    weights = mask.float() / mask.float().sum(1, keepdim=True).clamp(min=1)
    return torch.einsum("br,brd->bd", weights, references)


def irrelevance_triplet_loss(
    embeddings: torch.Tensor,
    classes: torch.Tensor,
    levels: torch.Tensor,
    base_margin: float = 0.05,
    positive_levels: tuple[int, ...] = (1,),
) -> torch.Tensor:
    """RMC's TripletLoss (cosine): sum over anchors a (level 0), positives p (its class, a positive level) and
    negatives n (not level 0; of another class, or of a's class with a higher level than p) of
    max(0, cos(a, n) - cos(a, p) + base_margin * (level'(n) - level(p))), level'(n) = 4 for another class; over the
    number of anchors."""
    vectors = F.normalize(embeddings, dim=1)
    sim = vectors @ vectors.T
    same = classes[:, None] == classes[None, :]
    n_level = torch.where(same, levels[None, :], torch.full_like(same, OTHER_CLASS_LEVEL, dtype=levels.dtype))
    margin = (n_level - levels[:, None]).float() * base_margin  # [p, n]
    positive = torch.zeros_like(levels, dtype=torch.bool)
    for level in positive_levels:
        positive |= levels == level
    anchor = levels == 0
    valid = anchor[:, None, None] & same[:, :, None] & positive[None, :, None] & ~anchor[None, None, :]
    valid &= ~(same & (levels[None, :] <= levels[:, None]))[None, :, :]
    eye = torch.eye(len(levels), dtype=torch.bool, device=levels.device)
    valid &= ~eye[:, :, None] & ~eye[:, None, :] & ~eye[None, :, :]
    diff = sim[:, None, :] - sim[:, :, None] + margin[None, :, :]
    return (diff.clamp(min=0) * valid).sum() / anchor.sum().clamp(min=1)


class RMCNetEncoder(nn.Module):
    """A paper's vector: the CLS of title [SEP] abstract, and (way_ref atten/avg) its references' CLS vectors
    pooled, mixed (1 - ratio_ref) : ratio_ref or concatenated (ratio_ref 0); `concat` puts the reference titles
    after the text, `no` reads the text alone. A paper with no references gets one empty reference, as RMC does."""

    def __init__(self, model: str, way_ref: str = "atten", ratio_ref: float = 0.6, max_length: int = 512) -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        self.bert = AutoModel.from_pretrained(model)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.way_ref, self.ratio_ref, self.max_length = way_ref, ratio_ref, max_length

    def trainable_parameters(self, top_layers: int) -> list[nn.Parameter]:
        """The top `top_layers` transformer layers (RMC's num_kept_layers 3 trains BERT's layers 10 and 11)."""
        total = self.bert.config.num_hidden_layers
        keep = {f"layer.{i}." for i in range(max(0, total - top_layers), total)}
        chosen = []
        for name, param in self.bert.named_parameters():
            param.requires_grad = any(k in name for k in keep)
            if param.requires_grad:
                chosen.append(param)
        return chosen

    def cls(self, texts: list[str]) -> torch.Tensor:
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        batch = {k: v.to(self.bert.device) for k, v in batch.items()}
        return self.bert(**batch).last_hidden_state[:, 0, :]

    def forward(self, texts: list[str], references: list[list[str]]) -> torch.Tensor:
        if self.way_ref == "no":
            return self.cls(texts)
        if self.way_ref == "concat":
            return self.cls([t + " [SEP] " + " [SEP] ".join(r) for t, r in zip(texts, references, strict=True)])
        content = self.cls(texts)
        refs = [r or [""] for r in references]
        flat = self.cls([t for r in refs for t in r])
        width = max(len(r) for r in refs)
        padded = flat.new_zeros(len(refs), width, flat.shape[1])
        mask = torch.zeros(len(refs), width, dtype=torch.bool, device=flat.device)
        start = 0
        for i, r in enumerate(refs):
            padded[i, : len(r)] = flat[start : start + len(r)]
            mask[i, : len(r)] = True
            start += len(r)
        if self.way_ref == "atten":
            pooled, _ = reference_attention(content, padded, mask)
        else:
            pooled = reference_average(padded, mask)
        if not self.ratio_ref:
            return torch.cat([content, pooled], dim=1)
        return (1 - self.ratio_ref) * content + self.ratio_ref * pooled
