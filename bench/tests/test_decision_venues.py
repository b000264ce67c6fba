"""The learned review decision on a venue it was not fitted on: the packaged encoder and the head that
`python -m bench.citationr.venues` fitted without ICLR 2023 (`results/heads/without-iclr-2023.npz`: NeurIPS 2023-2025
and DISAPERE's ICLR 2019-2020 only) decide review-citation-bias's ICLR 2023 reviews, as a run would (the rules'
candidates, then `decide_review`), and reach the floors measured there, a little under the figures of
`results/venues.json`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.citationr.fit_decision import candidates_of, case_outcome, labelled_cases
from bench.citationr.venues import Tally
from extractors.reviews.mentions.decision import DecisionHead, decide_review, decision_status

HEAD = Path(__file__).resolve().parents[1] / "citationr" / "results" / "heads" / "without-iclr-2023.npz"

pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(bool(decision_status()), reason=f"the learned decision cannot run here: {decision_status()}"),
]


def test_a_head_fitted_without_iclr_2023_reaches_its_floor_there(shared):
    head = DecisionHead.load(HEAD)
    assert "iclr-2023" not in head.trained  # fitted on the other venues only
    tally = Tally()
    cases = [c for c in labelled_cases(shared) if c.venue == "iclr-2023"]
    assert len(cases) == 137  # 34 reviews labelled at review level, 103 with hand-corrected titles
    for case in cases:
        tally.add(case, *case_outcome(case, decide_review(candidates_of(case.review), head)))
    figures = tally.as_dict()
    # measured 2026-11-28: precision 0.81 (17/21), recall 0.97 (117/120), title recall 0.77 (179/233)
    assert figures["review_precision"]["value"] >= 0.75
    assert figures["review_recall"]["value"] >= 0.93
    assert figures["title_recall"]["value"] >= 0.72
