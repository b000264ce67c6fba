"""Shared test set-up: the tiers, where the real documents are, and no network for model hubs.

Tiers (CI runs and reports each on its own, `.ci/run`; times in docs/testing.md): `unit` is plain Python on
hand-made data, the default; a test that reads the real documents (the `shared` fixture) is `real`; `beam` (a
transform on `TestPipeline(runner="FnApiRunner")`), `e2e` (a whole pipeline run) and `train` (a trainer run) are
marked. `-m unit` (or another tier) runs one. Helpers shared by several test modules are in `tests/support/`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, real_documents_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

TIERS = ("unit", "real", "beam", "e2e", "train")
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the default tier must be there to be selected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE not in item.path.parents:
            continue
        tiers = [name for name in TIERS if item.get_closest_marker(name)]
        if len(tiers) > 1:
            raise pytest.UsageError(f"{item.nodeid} is marked {' and '.join(tiers)}: a test has one tier")
        if not tiers:
            item.add_marker(pytest.mark.real if "shared" in item.fixturenames else pytest.mark.unit)


@pytest.fixture(scope="session")
def shared() -> Path:
    """`../shared/data` (or $CITREC_SHARED_DATA); tests that need real documents skip without it."""
    path = real_documents_dir()
    if path is None:
        pytest.skip("real documents not available: ../shared/data (or $CITREC_SHARED_DATA) is absent")
    return path


@pytest.fixture(scope="session")
def examples() -> Path:
    assert EXAMPLES.is_dir(), f"the bundled example corpus is missing at {EXAMPLES}"
    return EXAMPLES
