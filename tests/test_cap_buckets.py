"""`CapBucketFn` keeps what capping the whole bucket keeps (`cap_bucket` over every member at once), whatever the
order members arrive in and however the runner splits and merges accumulators."""

from __future__ import annotations

import random

import pytest

from mapping.matcher import MatchConfig, cap_bucket
from pipelines.matching import CapBucketFn

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("size", [0, 1, 2, 5, 9, 40, 333])
@pytest.mark.parametrize("max_bucket", [1, 2, 4, 50])
def test_any_order_and_split_keeps_the_whole_bucket_cap(size, max_bucket):
    config = MatchConfig(max_bucket=max_bucket)
    rng = random.Random(size * 100 + max_bucket)
    members = [(f"p{rng.randrange(10_000):05d}", rng.randrange(200), rng.randrange(1 << 30)) for _ in range(size)]
    expected = cap_bucket(members, config)
    combine = CapBucketFn(config)
    for _ in range(5):
        shuffled = members[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(size + 1), min(3, size + 1)))
        parts = [shuffled[a:b] for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
        accumulators = []
        for part in parts:
            accumulator = combine.create_accumulator()
            for member in part:
                accumulator = combine.add_input(accumulator, member)
            accumulators.append(accumulator)
        kept, skipped = combine.extract_output(combine.merge_accumulators(accumulators))
        assert (kept, skipped) == expected
        assert len(kept) == min(size, max_bucket) and skipped == max(size - max_bucket, 0)
