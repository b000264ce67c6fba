"""Shared test set-up: where the real documents are, and no network for model hubs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "corpus"


def shared_data_dir() -> Path | None:
    configured = os.environ.get("CITREC_SHARED_DATA")
    candidate = Path(configured) if configured else REPO.parent / "shared" / "data"
    return candidate if (candidate / "MANIFEST.md").is_file() else None


@pytest.fixture(scope="session")
def shared() -> Path:
    """`../shared/data` (or $CITREC_SHARED_DATA); tests that need real documents skip without it."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("real documents not available: ../shared/data (or $CITREC_SHARED_DATA) is absent")
    return path


@pytest.fixture(scope="session")
def examples() -> Path:
    assert EXAMPLES.is_dir(), f"the bundled example corpus is missing at {EXAMPLES}"
    return EXAMPLES


def counter_dict():
    """A counter callback and the dict it fills, for asserting on drop reasons."""
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    return count, counts
