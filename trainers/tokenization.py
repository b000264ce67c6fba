"""Words for HAtten and BM25: one tokenizer, a vocabulary with an unknown token, GloVe vectors, and the word
sets the mining's Jaccard similarity compares.

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
_JACCARD_WORD = re.compile(r"\w+")
# NLTK's English stop-word list (`nltk.corpus.stopwords.words("english")`, 179 words) and the two placeholders the
# authors add (`SentenceTokenizerForJaccard` in src/prefetch/datautils.py); written out so that no corpus download
# is needed.
JACCARD_STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
    himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this
    that that'll these those am is are was were be been being have has had having do does did doing a an the and but
    if or because as until while of at by for with about against between into through during before after above
    below to from up down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can will just don don't
    should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn
    wasn't weren weren't won won't wouldn wouldn't <num> <cit>""".split()
)


def word_tokens(text: str) -> list[str]:
    """Lower-cased words and numbers; punctuation is dropped. `TARGETCIT` becomes the word `targetcit`."""
    return _WORD.findall(text.lower())


def singular_noun(word: str) -> str:
    """English plural nouns to the singular by the suffix rules of WordNet's `morphy` (what NLTK's
    `WordNetLemmatizer().lemmatize(word)` applies), without its lexicon check: -ies -> -y; -sses, -ches, -shes,
    -xes, -zes lose -es; other words in -s lose it unless they end in -ss, -us or -is or are 3 letters or fewer."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    return word[:-1]


def jaccard_words(text: str) -> frozenset[str]:
    """The word set the authors' Jaccard similarity compares: lower-cased, stop words removed (matched on
    whitespace-separated tokens, as their code does), `\\w+` tokens, nouns singularised (see `singular_noun`)."""
    kept = " ".join(w for w in text.lower().split() if w not in JACCARD_STOPWORDS)
    return frozenset(singular_noun(w) for w in _JACCARD_WORD.findall(kept))


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """|a & b| / |a | b|, 0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


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
