"""What a `pipelines.joins.FanOutJoin` did in a finished test pipeline."""

from __future__ import annotations


def largest_group(result, name: str) -> int:
    """The largest group `FanOutJoin` made under `name` (its `joins:<name>_group_size` distribution)."""
    from apache_beam.metrics.metric import MetricsFilter

    found = result.metrics().query(MetricsFilter().with_namespace("joins").with_name(f"{name}_group_size"))
    sizes = [d.committed.max for d in found["distributions"] if d.committed is not None]
    assert sizes, f"no group-size distribution named {name}"
    return max(sizes)
