"""`trainers.tiny_model`: a vocabulary that depends on the texts alone (the same model from the same dataset, in any
process), written out by hand here, and no word of the texts unknown."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from trainers.tiny_model import SPECIAL_TOKENS, wordpiece_vocabulary  # noqa: E402

TEXTS = ["Beta alpha, alpha", "gamma BETA alpha"]


def test_the_vocabulary_is_characters_then_the_most_frequent_words():
    characters = [",", "a", "b", "e", "g", "h", "l", "m", "p", "t"]  # of alpha, beta, gamma and the comma
    expected = [*SPECIAL_TOKENS, *characters, *(f"##{c}" for c in characters), "alpha", "beta"]
    assert wordpiece_vocabulary(TEXTS, vocab_size=27) == expected  # alpha 3, beta 2 (lower-cased); gamma cut
    assert wordpiece_vocabulary(TEXTS, vocab_size=100)[-3:] == ["alpha", "beta", "gamma"]  # "," is a character


@pytest.mark.train
def test_two_processes_build_the_same_model_and_no_word_is_unknown(tmp_path):
    script = (
        "import sys; from pathlib import Path; from trainers.tiny_model import build_tiny_bert; "
        "build_tiny_bert(Path(sys.argv[1]), sys.argv[2:], vocab_size=200)"
    )
    texts = ["Citation recommendation with graph neural networks.", "Naive Bayes, naïve retrieval; BM25 (2009)"]
    for name in ("one", "two"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / name), *texts], check=True, capture_output=True)
    for file in ("vocab.txt", "model.safetensors", "tokenizer.json"):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes(), file
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "one")
    for text in texts:
        assert tokenizer.unk_token_id not in tokenizer(text)["input_ids"], text
    assert tokenizer.tokenize("naive retrieval") == ["naive", "retrieval"]  # frequent words are whole tokens
