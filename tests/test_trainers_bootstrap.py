"""`trainers.metrics.bootstrap_ci`: the percentile bootstrap interval of a mean over queries, on hand-made values."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainers.metrics import bootstrap_ci


def test_constant_values_have_a_zero_width_interval() -> None:
    assert bootstrap_ci([0.25] * 7, resamples=100, seed=3) == (0.25, 0.25, 0.25)


def test_two_queries_zero_and_one() -> None:
    # resampled means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: about 250 of 1,000 resamples sit at each
    # end, so the 2.5% and 97.5% percentiles are 0 and 1 (P(fewer than 25 at an end) is below 1e-60)
    assert bootstrap_ci([0.0, 1.0], resamples=1000, seed=0) == (0.5, 0.0, 1.0)


def test_one_query_in_ten_relevant() -> None:
    # mean 0.1; a resample of 10 draws has k ones ~ Binomial(10, 0.1): P(k = 0) = 0.349 > 2.5%, so the low end is
    # 0, and P(k >= 4) = 0.0128 < 2.5% < P(k >= 3) = 0.0702, so the high end is 0.3
    mean, low, high = bootstrap_ci([1.0] + [0.0] * 9, resamples=1000, seed=1)
    assert mean == pytest.approx(0.1)
    assert low == 0.0
    assert high == pytest.approx(0.3)


def test_same_seed_same_interval_and_empty_input() -> None:
    values = [0.1, 0.5, 0.9, 0.3, 0.0, 1.0]
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    with pytest.raises(ValueError):
        bootstrap_ci(values, resamples=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_the_interval_lies_within_the_values(values: list[float], seed: int) -> None:
    mean, low, high = bootstrap_ci(values, resamples=200, seed=seed)
    assert min(values) - 1e-12 <= low <= high <= max(values) + 1e-12
    assert mean == pytest.approx(sum(values) / len(values))
