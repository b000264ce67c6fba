"""The numpy sentence encoder of the learned review decision (`extractors/reviews/encoder.py`) against
sentence-transformers' own run of the same weights (the reference), where the weights' package is installed."""

from __future__ import annotations

import numpy as np
import pytest

from extractors.reviews.encoder import MAX_TOKENS, encoder_dir, encoder_status, load_encoder

pytestmark = pytest.mark.skipif(bool(encoder_status()), reason=f"no encoder here: {encoder_status()}")

SENTENCES = [
    "The authors should compare with LoRA (Hu et al., 2021) [SEP] The method adapts large models cheaply.",
    "Missing related work.",
    "x",
    "See \u201cAttention Is All You Need\u201d and https://arxiv.org/abs/1706.03762 for the architecture. " * 12,
]


@pytest.mark.train
def test_the_numpy_encoder_gives_sentence_transformers_vectors():
    """Long text cut at `MAX_TOKENS` as sentence-transformers cuts it at its `max_seq_length`; padding in a batch
    of mixed lengths changes nothing."""
    sentence_transformers = pytest.importorskip("sentence_transformers")
    reference = sentence_transformers.SentenceTransformer(str(encoder_dir()), device="cpu")
    reference.max_seq_length = MAX_TOKENS
    expected = reference.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    got = load_encoder().encode(SENTENCES)
    assert got.shape == (4, 384) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-4
    alone = load_encoder().encode(SENTENCES[1:2])
    assert np.abs(alone[0] - got[1]).max() < 1e-5


@pytest.mark.real
def test_the_encoder_ranks_a_paraphrase_above_an_unrelated_sentence():
    """No reference needed: a request to cite and its paraphrase are nearer than a request and a remark on typos."""
    vectors = load_encoder().encode(
        [
            "Please cite and compare with the prior work on low-rank adapters.",
            "The paper should discuss earlier work on low-rank adaptation and compare against it.",
            "There are several typos in the second section.",
        ]
    )
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
