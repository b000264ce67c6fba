"""The mention rules' parameters: title lengths, how long a reference entry may be, the title similarity that
makes a paper already cited, and how much text around a mention the classification reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class MentionConfig:
    """Rule parameters; recorded in the dataset's stats."""

    min_title_words: int = 2
    max_title_words: int = 40
    max_reference_chars: int = 600
    already_cited_similarity: float = 0.9
    context_chars: int = 300
    # "" (the rules decide names) or the learned name decision's model: "builtin" or a JSON file (`learned.py`)
    name_model: str = ""

    def as_metadata(self) -> dict[str, object]:
        return asdict(self)


DEFAULT_CONFIG = MentionConfig()  # the default of every rule that takes a config
