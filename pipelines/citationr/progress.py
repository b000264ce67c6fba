"""What the CitationR steps report while they run: the counters' namespace and `Progress`, a worker's INFO lines
through a long step, so that a run over thousands of reviews is never silent for long.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

NAMESPACE = "citationr"
LOG = logging.getLogger("pipelines.citationr")  # one logger for the package: the name users filter on


class Progress:
    """A worker's progress through a long step as INFO lines (the pipelines' loggers print at INFO): one when
    `every` more items are done or `seconds` have passed since the last line, whichever comes first, so that a
    run over thousands of reviews is never silent for long. A DoFn holds one: each worker says what it did."""

    EVERY = 1_000
    SECONDS = 10.0

    def __init__(
        self,
        step: str,
        unit: str,
        every: int | None = None,
        seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.step, self.unit, self.clock = step, unit, clock
        self.every = every or self.EVERY
        self.seconds = self.SECONDS if seconds is None else seconds
        self.done = 0
        self.counts: dict[str, int] = {}
        self._logged = 0
        self._last: float | None = None

    def add(self, n: int = 1, last: str = "", **counts: int) -> bool:
        """`n` more items done, with what they added to each of `counts` (`mentions=3`) and the `last` one's
        name; logs a line (and returns True) when one is due."""
        now = self.clock()
        if self._last is None:
            self._last = now
        self.done += n
        for name, value in counts.items():
            self.counts[name] = self.counts.get(name, 0) + value
        if self.done // self.every == self._logged // self.every and now - self._last < self.seconds:
            return False
        figures = [f"{value:,} {name}" for name, value in self.counts.items()] + ([f"last: {last}"] if last else [])
        tail = f" ({', '.join(figures)})" if figures else ""
        LOG.info("%s: %s %s done on this worker%s", self.step, f"{self.done:,}", self.unit, tail)
        self._logged, self._last = self.done, now
        return True
