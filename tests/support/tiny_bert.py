"""A tiny local model for the trainer tests: `trainers.tiny_model`, the module a user without hub access runs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def build_tiny_bert(directory: Path, texts: Iterable[str], vocab_size: int = 600, seed: int = 0) -> Path:
    """A 2-layer, 64-wide BERT and a word-piece tokenizer trained on `texts`, saved like a hub model."""
    from trainers.tiny_model import build_tiny_bert as build

    return build(directory, texts, vocab_size=vocab_size, seed=seed)
