"""The floor benchmark's fit (`bench.beam_floor.slope`) on hand-computed points."""

from __future__ import annotations

import pytest

from bench.beam_floor import slope


def test_the_fit_is_the_least_squares_line():
    assert slope([(0, 1.0), (2, 5.0)]) == pytest.approx((2.0, 1.0))
    # (0, 0), (1, 1), (2, 5): mean x 1, mean y 2; slope (1*3 + -1*-2) / 2 = 2.5, intercept 2 - 2.5 = -0.5
    assert slope([(0, 0.0), (1, 1.0), (2, 5.0)]) == pytest.approx((2.5, -0.5))

