"""The bundled CitationR example gives every split a query, so RMCNet can train, select and be tested on it.

The expected splits are worked out here from the example's files, read by hand, and the split rule as
docs/citationr.md states it (queries laid on a line by submission year, each at its year block's start plus a
SHA-1 coin of its id times the block's size; the first 80% train, the next 10% validate, the rest test), written
out again below rather than taken from the library.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import apache_beam as beam
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractors.reviews.dataset import CitationrConfig
from extractors.reviews.forms import split_for_submission
from pipelines.citationr import build_pipeline, example_inputs, export_rmc_json
from tests.support.example_corpus import REVIEWS_EXAMPLE, REVIEWS_RECOMMEND
from tests.support.runs import read_rows

# The year of each submission whose reviewers ask for a paper the database holds (REVIEWS_RECOMMEND), as its
# file names it: ICLR.cc/2022 in the CSV's invitation, "NeurIPS 2023" in the PeerRead file, NeurIPS.cc/2024 and
# NeurIPS.cc/2025 in the notes' invitations.
QUERY_YEARS = {
    "iclr-2022:SUBC03": 2022,
    "neurips-2023:SUBA01": 2023,
    "neurips-2024:SUBB02": 2024,
    "neurips-2025:SUBD04": 2025,
    "neurips-2025:SUBE07": 2025,
}
# By hand from the rule and the coins (SHA-1 of "0\x1f<id>", first 8 bytes over 2**64): SUBD04 0.950, SUBE07
# 0.670. Five queries, one a year from 2022 to 2024 and two of 2025: the 2025 block is [0.6, 1.0), so SUBE07
# sits at 0.6 + 0.4 * 0.670 = 0.868 (validation, in [0.8, 0.9)) and SUBD04 at 0.980 (test); the other three sit
# below 0.6 (train).
EXPECTED_SPLITS = {
    "iclr-2022:SUBC03": "train",
    "neurips-2023:SUBA01": "train",
    "neurips-2024:SUBB02": "train",
    "neurips-2025:SUBE07": "validation",
    "neurips-2025:SUBD04": "test",
}
RMC_FILES = {"train": "train", "validation": "val", "test": "test"}


def coin(local_id: str, seed: int = 0) -> float:
    digest = hashlib.sha1(f"{seed}\x1f{local_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_by_the_stated_rule(years: dict[str, int], train: float = 0.8, validation: float = 0.1) -> dict[str, str]:
    counts = Counter(years.values())
    total = sum(counts.values())
    splits = {}
    for submission, year in years.items():
        start = sum(n for y, n in counts.items() if y < year)
        position = (start + coin(submission.split(":", 1)[1]) * counts[year]) / total
        splits[submission] = "train" if position < train else "validation" if position < train + validation else "test"
    return splits


def test_the_hand_table_covers_every_query_of_the_example():
    assert set(QUERY_YEARS) == set(REVIEWS_RECOMMEND) == set(EXPECTED_SPLITS)
    notes = json.loads((REVIEWS_EXAMPLE / "reviews" / "openreview-v1-2025.json").read_text())["notes"]
    assert {note["id"] for note in notes} == {"SUBD04", "SUBE07"}
    assert all("/2025/" in note["invitation"] for note in notes)


def test_the_stated_rule_gives_every_split_a_query():
    assert split_by_the_stated_rule(QUERY_YEARS) == EXPECTED_SPLITS
    assert set(EXPECTED_SPLITS.values()) == {"train", "validation", "test"}


def test_the_library_rule_agrees_with_the_hand_table():
    counts = Counter(str(year) for year in QUERY_YEARS.values())
    config = CitationrConfig()
    found = {
        submission: split_for_submission(
            submission.split(":", 1)[1], year, counts, config.cut_points(), config.split_seed
        )
        for submission, year in QUERY_YEARS.items()
    }
    assert found == EXPECTED_SPLITS


@given(
    st.dictionaries(
        st.text("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=1, max_size=8).map(lambda s: f"venue:{s}"),
        st.integers(2015, 2026),
        min_size=1,
        max_size=40,
    )
)
def test_the_library_rule_is_the_stated_rule_on_any_years(years):
    counts = Counter(str(year) for year in years.values())
    config = CitationrConfig()
    found = {
        submission: split_for_submission(
            submission.split(":", 1)[1], year, counts, config.cut_points(), config.split_seed
        )
        for submission, year in years.items()
    }
    assert found == split_by_the_stated_rule(years)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    output = tmp_path_factory.mktemp("citationr-example")
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(pipeline, example_inputs(), str(output))
    export_rmc_json(str(output), str(output / "rmc"))
    return output


@pytest.mark.e2e
def test_the_example_run_writes_each_split_its_queries(example_run):
    found = {
        split: sorted(q["submission_id"] for q in read_rows(example_run / "queries", f"{split}-*.parquet"))
        for split in ("train", "validation", "test")
    }
    assert found == {
        split: sorted(s for s, where in EXPECTED_SPLITS.items() if where == split)
        for split in ("train", "validation", "test")
    }
    stats = json.loads((example_run / "stats.json").read_text())
    assert stats["queries"] == {"train": 3, "validation": 1, "test": 1} == Counter(EXPECTED_SPLITS.values())


@pytest.mark.e2e
def test_the_rmc_export_has_train_validation_and_test_queries(example_run):
    data = example_run / "rmc" / "data"
    for split, name in RMC_FILES.items():
        exported = json.loads((data / f"{name}.json").read_text())
        wanted = sorted(s for s, where in EXPECTED_SPLITS.items() if where == split)
        assert exported, f"the example's RMC {name}.json is empty"
        assert sorted(q["id"] for q in exported) == wanted
        assert {q["id"]: set(q["positive_ids"]) for q in exported} == {s: REVIEWS_RECOMMEND[s] for s in wanted}
    papers = json.loads((data / "base" / "papers.json").read_text())
    assert set().union(*REVIEWS_RECOMMEND.values()) <= set(papers)
