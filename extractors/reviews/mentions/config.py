"""The mention rules' parameters: title lengths, how long a reference entry may be, the title similarity that
makes a paper already cited, and how much text around a mention the classification reads."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class MentionConfig:
    """Rule parameters; recorded in the dataset's stats (a model's weights by their SHA-256, not in full)."""

    min_title_words: int = 2
    max_title_words: int = 40
    max_reference_chars: int = 600
    already_cited_similarity: float = 0.9
    context_chars: int = 300
    # "" (the rules decide names) or the learned name decision's model: "builtin" or a JSON file (`learned.py`)
    name_model: str = ""
    # the model file's text, read where the pipeline is built, so that workers that cannot see `name_model`'s path
    # (Dataflow, Flink, Spark) decide with the same weights; "" reads `name_model` itself
    name_model_weights: str = field(default="", repr=False)
    # who decides which mentions are recommended: "rules", or "model" (the learned decision, `decision.py`; the rules
    # decide where the encoder's package is absent)
    decision: str = "rules"

    def as_metadata(self) -> dict[str, object]:
        data = asdict(self)
        weights = data.pop("name_model_weights")
        if weights:
            data["name_model_sha256"] = hashlib.sha256(weights.encode("utf-8")).hexdigest()
        return data


DEFAULT_CONFIG = MentionConfig()  # the default of every rule that takes a config
