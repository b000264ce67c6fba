"""The lab's checks: where the real documents are, and their tier (`real` unless a test is marked otherwise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.shared import shared_data_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TIERS = ("unit", "real", "beam", "e2e", "train")
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents and not any(item.get_closest_marker(name) for name in TIERS):
            item.add_marker(pytest.mark.real)


@pytest.fixture(scope="session")
def shared() -> Path:
    """`../shared/data` (or $CITREC_SHARED_DATA); checks that need the real documents skip without it."""
    path = shared_data_dir()
    if not (path / "MANIFEST.md").is_file():
        pytest.skip("real documents not available: ../shared/data (or $CITREC_SHARED_DATA) is absent")
    return path
