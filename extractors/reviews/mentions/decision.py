"""The learned review decision: does the reviewer recommend citing the work a candidate mention names?

The rules (`extractors.reviews.mentions`) find the candidates: every mention they find, and every strictly coined
token outside them ("SinSR", "GPT-2": `learned.add_free_names`), each classified by the rules. The decision reads,
per candidate:

- the sentence it is judged by and the one before it (`PaperMention.context`), embedded by a pretrained sentence
  encoder (all-MiniLM-L6-v2, frozen, `extractors.reviews.encoder`): what the sentence asks, however it is phrased;
- what the rules say of it (`hand_features`): its source, the rules' kind and reason, the review field, its shape
  (a link, a title, a coined name, lower case), how often the review names it, and whether the review has a
  reference list;

and a head fitted on labelled reviews (`DecisionHead`, a logistic regression or a one-hidden-layer network over the
standardised features; the lab's `bench/citationr/fit_decision.py` fits it) gives the probability that the
candidate's sentence recommends the work it names. At or above the head's threshold it is `recommended` (reason
`model`), and so is a candidate the rules recommend at or above the head's lower `keep_threshold` (the rules
propose, the model confirms, vetoes or adds); otherwise a mention the rules found is `discussed` (`model_below`)
and a free candidate is dropped. What needs the
submission, not the sentence, stays the rules': a mention its bibliography cites (`already_cited`) and a name its own
title or abstract writes (`named_by_submission`).

The head shipped is `extractors/reviews/data/decision_head.npz` (`decision_head.json` beside it says how it was
trained). Without the encoder's package the rules decide (`decision_status`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from extractors.reviews.encoder import encoder_status, load_encoder
from extractors.reviews.mentions.classify import NAMED_BY_SUBMISSION
from extractors.reviews.mentions.learned import FREE_REASON
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, IDENTIFIER_FIELDS, RECOMMENDED, PaperMention

HEAD_PATH = Path(__file__).resolve().parents[1] / "data" / "decision_head.npz"
MODEL_REASON = "model"  # `PaperMention.reason` of a candidate the model recommends
BELOW_REASON = "model_below"  # of a rules' mention the model does not recommend
MODEL, RULES = "model", "rules"  # what decided (`MentionConfig.decision`, stats.json's `decided_by`)

Embed = Callable[[list[str]], np.ndarray]
"""Texts -> one unit-length embedding row each (`SentenceEncoder.encode`, or the lab's cache in front of it)."""

_SECTIONS = (  # review field -> bucket, by the first word that names one
    ("summary", ("summary", "summar", "synopsis", "paper")),
    ("strengths", ("strength", "pros", "positive", "reasons_to_accept")),
    ("weaknesses", ("weakness", "cons", "negative", "concern", "reasons_to_reject", "limitation")),
    ("questions", ("question", "suggestion", "comment", "request", "feedback", "clarification")),
    ("review", ("review", "main", "comments")),
)


def section_bucket(section: str | None) -> str:
    """The kind of review field a mention is in: summary, strengths, weaknesses, questions, review or none."""
    name = (section or "").lower().replace(" ", "_")
    if not name:
        return "none"
    for bucket, words in _SECTIONS:
        if any(word in name for word in words):
            return bucket
    return "other"


def mention_shape(mention: PaperMention) -> str:
    """How the mention is written: link, title (three words or more), coined (inner capitals or digits), caps
    (an acronym), lower (all lower case) or word."""
    if mention.url or any(getattr(mention, f) for f in IDENTIFIER_FIELDS):
        return "link"
    if mention.title and len(mention.title.split()) >= 3:
        return "title"
    letters = re.sub(r"[^A-Za-z0-9]", "", mention.text)
    if not letters:
        return "other"
    if letters.isupper():
        return "caps"
    if any(c.isdigit() for c in letters) or any(c.isupper() for c in letters[1:]):
        return "coined"
    return "lower" if letters.islower() else "word"


def _bucket(n: int, bounds: Sequence[int]) -> str:
    for bound in bounds:
        if n <= bound:
            return str(bound)
    return f">{bounds[-1]}"


def hand_features(mention: PaperMention, review: Sequence[PaperMention]) -> list[str]:
    """What the rules say of one candidate among the review's candidates `review`, as named binary features."""
    free = mention.reason.startswith(FREE_REASON)
    reason = mention.reason[len(FREE_REASON) + 1 :] if free else mention.reason
    counts = Counter(m.text.lower() for m in review)
    title_words = len((mention.title or "").split())
    features = [
        f"source={mention.source}",
        f"rules={mention.kind}",
        f"reason={reason}",
        f"section={section_bucket(mention.section)}",
        f"shape={mention_shape(mention)}",
        f"title_words={_bucket(title_words, (0, 2, 5, 12))}",
        f"repeated={_bucket(counts[mention.text.lower()], (1, 2))}",
        f"review_mentions={_bucket(len(review), (1, 3, 8, 20))}",
    ]
    if free:
        features.append("free")
    if any(m.source == "reference_entry" for m in review):
        features.append("review_has_entries")
    if any(m.kind == RECOMMENDED for m in review if m is not mention):
        features.append("rules_recommend_another")
    if any(m.kind == RECOMMENDED for m in review if m is not mention and m.context == mention.context):
        features.append("rules_recommend_in_sentence")
    if "?" in mention.context.partition(" || ")[0]:
        features.append("question")
    for field in ("authors", "year", "marker"):
        if getattr(mention, field):
            features.append(f"has_{field}")
    return features


def context_text(mention: PaperMention) -> str:
    """What the encoder reads: the mention's sentence, then the sentence before it (for a reference entry the
    sentences citing it, then the line leading into its list)."""
    own, _, before = mention.context.partition(" || ")
    own = own.strip() or mention.text
    return f"{own} [SEP] {before.strip()}" if before.strip() else own


@dataclass(frozen=True)
class DecisionHead:
    """The fitted head: features are the embedding, then `features` (binary, by name); both standardised by `mean`
    and `scale`; a hidden layer `hidden` (with `hidden_bias`, ReLU) when the head has one; `weights`, `bias`; the
    probability at or above which a candidate is recommended (`threshold`), and the lower one at or above which a
    candidate the rules recommend stays recommended (`keep_threshold`); `trained`: how it was fitted (the JSON
    beside the file)."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    threshold: float
    keep_threshold: float | None = None  # None: `threshold`
    hidden: np.ndarray | None = None
    hidden_bias: np.ndarray | None = None
    trained: str = ""

    @property
    def keep(self) -> float:
        return self.threshold if self.keep_threshold is None else self.keep_threshold

    def matrix(self, embeddings: np.ndarray, features: Sequence[Sequence[str]]) -> np.ndarray:
        """The standardised design matrix: embedding columns, then one column per known feature."""
        index = {name: i for i, name in enumerate(self.features)}
        binary = np.zeros((len(features), len(self.features)), dtype=np.float32)
        for row, names in enumerate(features):
            for name in names:
                if name in index:
                    binary[row, index[name]] = 1.0
        raw = np.concatenate([np.asarray(embeddings, dtype=np.float32).reshape(len(features), -1), binary], axis=1)
        return (raw - self.mean) / self.scale

    def probabilities(self, embeddings: np.ndarray, features: Sequence[Sequence[str]]) -> np.ndarray:
        x = self.matrix(embeddings, features)
        if self.hidden is not None:
            x = np.maximum(x @ self.hidden + self.hidden_bias, 0.0)
        return 1.0 / (1.0 + np.exp(-np.clip(x @ self.weights + self.bias, -30.0, 30.0)))

    def save(self, path: Path, trained: dict) -> None:
        """The head as `.npz` (arrays and feature names) and how it was trained as `.json` beside it."""
        arrays = {
            "features": np.array(self.features, dtype=str),
            "mean": self.mean.astype(np.float32),
            "scale": self.scale.astype(np.float32),
            "weights": self.weights.astype(np.float32),
            "bias": np.array([self.bias], dtype=np.float32),
            "threshold": np.array([self.threshold], dtype=np.float32),
            "keep_threshold": np.array([self.keep], dtype=np.float32),
        }
        if self.hidden is not None and self.hidden_bias is not None:
            arrays |= {"hidden": self.hidden.astype(np.float32), "hidden_bias": self.hidden_bias.astype(np.float32)}
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            np.savez_compressed(handle, **arrays)
        path.with_suffix(".json").write_text(json.dumps(trained, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path = HEAD_PATH) -> DecisionHead:
        with np.load(path, allow_pickle=False) as data:
            hidden = data["hidden"] if "hidden" in data.files else None
            return cls(
                features=tuple(str(f) for f in data["features"]),
                mean=data["mean"],
                scale=data["scale"],
                weights=data["weights"],
                bias=float(data["bias"][0]),
                threshold=float(data["threshold"][0]),
                keep_threshold=float(data["keep_threshold"][0]) if "keep_threshold" in data.files else None,
                hidden=hidden,
                hidden_bias=data["hidden_bias"] if hidden is not None else None,
                trained=path.with_suffix(".json").read_text(encoding="utf-8")
                if path.with_suffix(".json").is_file()
                else "",
            )


def decision_status(head: Path = HEAD_PATH) -> str:
    """Empty when the learned decision can run here, else why the rules decide instead (one line)."""
    if not head.is_file():
        return f"no decision head at {head}"
    return encoder_status()


@lru_cache(maxsize=2)
def load_head(path: Path = HEAD_PATH) -> DecisionHead:
    return DecisionHead.load(path)


def default_embed(texts: list[str]) -> np.ndarray:
    return load_encoder().encode(texts)


def load_decision() -> None:
    """Load the shipped head and the encoder now (a worker's setup), not on its first review."""
    load_head()
    load_encoder()


def score_candidates(candidates: Sequence[PaperMention], head: DecisionHead, embed: Embed) -> np.ndarray:
    """Each candidate's probability of being a work the review recommends (one encoder call per distinct context)."""
    if not candidates:
        return np.zeros(0, dtype=np.float32)
    texts = [context_text(m) for m in candidates]
    distinct = sorted(set(texts))
    vectors = embed(distinct)
    row = {text: i for i, text in enumerate(distinct)}
    embeddings = vectors[[row[t] for t in texts]]
    return head.probabilities(embeddings, [hand_features(m, candidates) for m in candidates])


def decide(
    candidates: Sequence[PaperMention], probabilities: Sequence[float], threshold: float, keep: float | None = None
) -> list[PaperMention]:
    """The candidates decided (module docstring): recommended at or above `threshold`, or at or above `keep` when
    the rules recommend it; else discussed, a free candidate dropped; `already_cited` and `named_by_submission`
    stay the rules'."""
    keep = threshold if keep is None else keep
    decided = []
    for mention, p in zip(candidates, probabilities, strict=True):
        free = mention.reason.startswith(FREE_REASON)
        if mention.kind == ALREADY_CITED or mention.reason.endswith(NAMED_BY_SUBMISSION):
            if not free:
                decided.append(mention)
            continue
        if p >= threshold or (mention.kind == RECOMMENDED and p >= keep):
            decided.append(replace(mention, kind=RECOMMENDED, reason=MODEL_REASON))
        elif not free:
            decided.append(replace(mention, kind=DISCUSSED, reason=BELOW_REASON))
    return decided


def decide_review(
    candidates: Sequence[PaperMention], head: DecisionHead | None = None, embed: Embed | None = None
) -> list[PaperMention]:
    """One review's candidates (rules' mentions and free names, classified by the rules) decided by the model."""
    head = head or load_head()
    probabilities = score_candidates(candidates, head, embed or default_embed)
    return decide(candidates, probabilities, head.threshold, head.keep)
