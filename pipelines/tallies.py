"""Counting inside DoFns, and the tags every stage's side outputs use.

Every DoFn reports what it counts twice: as a Beam counter (`Metrics.counter("arsyta", name)`, for the
runner's monitoring) and as a `(name, n)` element on its `tally` output, which the pipeline sums into
`stats.json`, so the funnel is data and does not depend on the runner's metrics support.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from extractors.records import DeadLetter

NAMESPACE = "arsyta"
TALLY = "tally"
DEAD = "dead"
INPUTS = "inputs"


class Tallies:
    """Collects counts inside one DoFn call; `emit()` yields them as tagged outputs and Beam counters."""

    def __init__(self, namespace: str = NAMESPACE) -> None:
        self.namespace = namespace
        self.counts: Counter[str] = Counter()

    def __call__(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def emit(self) -> Iterator[TaggedOutput]:
        for name, n in self.counts.items():
            Metrics.counter(self.namespace, name).inc(n)
            yield TaggedOutput(TALLY, (name, n))
        self.counts.clear()


def dead_letter_output(letter: DeadLetter, tally: Tallies, documents: bool) -> TaggedOutput:
    tally(f"dead:{letter.stage}:{letter.reason}")
    if documents:
        tally("documents_dead_lettered")
    return TaggedOutput(DEAD, letter)
