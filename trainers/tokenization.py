"""Words for HAtten and BM25: one tokenizer, a vocabulary with an unknown token, and GloVe vectors.

Out-of-vocabulary words become `<unk>` rather than disappearing, so a context keeps its length and the
position of the citation marker.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

PAD = "<pad>"
UNK = "<unk>"
PAD_ID = 0
UNK_ID = 1
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def word_tokens(text: str) -> list[str]:
    """Lower-cased words and numbers; punctuation is dropped. `TARGETCIT` becomes the word `targetcit`."""
    return _WORD.findall(text.lower())


class Vocabulary:
    """Words to ids, with `<pad>` = 0 and `<unk>` = 1."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = [PAD, UNK] + [w for w in words if w not in (PAD, UNK)]
        self.index = {word: i for i, word in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, max_len: int) -> list[int]:
        """Word ids of `text`, unknown words as `<unk>`, cut at `max_len`."""
        return [self.index.get(word, UNK_ID) for word in word_tokens(text)[:max_len]]

    def save(self, path: Path) -> None:
        path.write_text("\n".join(self.words) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        return cls(path.read_text(encoding="utf-8").splitlines())


def build_vocabulary(texts: Iterable[str], min_count: int = 1, max_size: int | None = None) -> Vocabulary:
    """The words of `texts` seen at least `min_count` times, most frequent first (ties alphabetical)."""
    counts = Counter(word for text in texts for word in word_tokens(text))
    ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return Vocabulary(ranked[:max_size] if max_size else ranked)


def load_glove(path: str | Path, keep: set[str] | None = None) -> tuple[Vocabulary, np.ndarray]:
    """A GloVe text file (`word v1 ... vd` per line) as a vocabulary and its matrix.

    `keep` restricts the vocabulary to the corpus's words, which keeps a 400k-word file small. `<pad>` is the
    zero vector and `<unk>` the mean of the loaded vectors.
    """
    words: list[str] = []
    vectors: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip().split(" ")
            if len(parts) < 3:
                continue
            word = parts[0]
            vector = np.asarray(parts[1:], dtype=np.float32)
            if dim is None:
                dim = vector.shape[0]
            if vector.shape[0] != dim:
                raise ValueError(f"{path}: the vector of {word!r} has {vector.shape[0]} values, not {dim}")
            if (keep is None or word in keep) and word not in (PAD, UNK):
                words.append(word)
                vectors.append(vector)
    if dim is None:
        raise ValueError(f"{path} holds no word vectors")
    vocabulary = Vocabulary(words)
    matrix = np.zeros((len(vocabulary), dim), dtype=np.float32)
    if vectors:
        stacked = np.stack(vectors)
        matrix[2:] = stacked
        matrix[UNK_ID] = stacked.mean(axis=0)
    return vocabulary, matrix
