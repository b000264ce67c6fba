"""What every stage shares: counting inside DoFns, the tags its side outputs use, and the base classes of the
stages and DoFns that one frozen config sets (`ConfiguredTransform`, `ConfiguredFn`).

Every count is both a Beam counter (for the runner's monitoring) and a `(name, n)` element on the `tally`
output, summed into `stats.json`, so the funnel is data whatever the runner's metrics support. A `TallyingFn`
sums per bundle and reports each name once in `finish_bundle` (a failed bundle reports nothing, its retry all);
outside a bundle `Tallies.emit` yields at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from mapping.records import DeadLetter

NAMESPACE = "arsyta"
TALLY = "tally"
DEAD = "dead"
INPUTS = "inputs"


class ConfiguredTransform(beam.PTransform):
    """A composite stage set by one frozen config (`self.config`; the pipeline records it in stats.json)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.config = config


class Tallies:
    """Collects counts inside one DoFn call; `emit()` yields them as tagged outputs and Beam counters. Made by
    `TallyingFn.tallies` inside a bundle, it adds them to the bundle's sums instead and `emit()` yields nothing."""

    def __init__(self, namespace: str = NAMESPACE, bundle: dict[str, Counter[str]] | None = None) -> None:
        self.namespace = namespace
        self.bundled = bundle is not None
        self.counts: Counter[str] = bundle.setdefault(namespace, Counter()) if bundle is not None else Counter()

    def __call__(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def emit(self) -> Iterator[TaggedOutput]:
        if self.bundled:
            return
        for name, n in self.counts.items():
            Metrics.counter(self.namespace, name).inc(n)
            yield TaggedOutput(TALLY, (name, n))
        self.counts.clear()


class TallyingFn(beam.DoFn):
    """A DoFn that counts with `self.tallies()` (and `yield from tally.emit()`, which in a bundle yields nothing):
    its counts are summed over the bundle and reported once per name in `finish_bundle`, as Beam counters and
    as `(name, n)` on the `tally` output in the global window (every pipeline here is batch). A subclass with
    its own `start_bundle` or `finish_bundle` calls these (`yield from super().finish_bundle()` last)."""

    _bundle_tallies: dict[str, Counter[str]] | None = None

    def start_bundle(self) -> None:
        self._bundle_tallies = {}

    def tallies(self, namespace: str = NAMESPACE) -> Tallies:
        return Tallies(namespace, self._bundle_tallies)

    def finish_bundle(self) -> Iterator[TaggedOutput]:
        bundle, self._bundle_tallies = self._bundle_tallies or {}, None
        for namespace, counts in bundle.items():
            for name, n in counts.items():
                Metrics.counter(namespace, name).inc(n)
                yield TaggedOutput(TALLY, in_global_window((name, n)))


def in_global_window(value) -> WindowedValue:
    """`value` as an element of the global window, what a DoFn's `finish_bundle` must yield (it has no input
    element to take a window from); every pipeline here is a batch job in the global window."""
    return WindowedValue(value, MIN_TIMESTAMP, (GlobalWindow(),))


class SumPerBundleFn(beam.DoFn):
    """The `(key, n)` pairs that `pairs(element)` gives, summed over the bundle: one `(key, sum)` per key when the
    bundle finishes (in the global window), so that a `CombinePerKey(sum)` after it (or a `Distinct` of the keys)
    gets one element per key and bundle, not one per element (a context's plot keys, its roles). `n` must be
    an int, whose sums do not depend on the order."""

    def __init__(self, pairs: Callable[[object], Iterable[tuple[object, int]]]) -> None:
        self.pairs = pairs
        self._sums: dict = {}

    def start_bundle(self) -> None:
        self._sums = {}

    def process(self, element) -> None:
        sums = self._sums
        for key, n in self.pairs(element):
            sums[key] = sums.get(key, 0) + n

    def finish_bundle(self) -> Iterator[WindowedValue]:
        sums, self._sums = self._sums, {}
        for item in sums.items():
            yield in_global_window(item)


class ConfiguredFn(TallyingFn):
    """A DoFn set by one frozen config (`self.config`)."""

    def __init__(self, config) -> None:
        self.config = config


def dead_letter_output(letter: DeadLetter, tally: Tallies, documents: bool) -> TaggedOutput:
    tally(f"dead:{letter.stage}:{letter.reason}")
    if documents:
        tally("documents_dead_lettered")
    return TaggedOutput(DEAD, letter)


# ------------------------------------------------------------------------------------------- figures


class PartialCombineFn(beam.DoFn):
    """`combine_fn` over one bundle's elements: its accumulator, tagged `name`, when the bundle finishes (what
    Beam's combiner lifting does before a shuffle, done here so that several combines can share one merge)."""

    def __init__(self, name: str, combine_fn: beam.CombineFn) -> None:
        self.name = name
        self.combine_fn = combine_fn
        self._accumulator = None

    def start_bundle(self) -> None:
        self._accumulator = None

    def process(self, element) -> None:
        fn = self.combine_fn
        if self._accumulator is None:
            self._accumulator = fn.create_accumulator()
        self._accumulator = fn.add_input(self._accumulator, element)

    def finish_bundle(self) -> Iterator[WindowedValue]:
        accumulator, self._accumulator = self._accumulator, None
        if accumulator is not None:
            accumulator = self.combine_fn.compact(accumulator)
            yield in_global_window((self.name, accumulator))


class MergeNamedFn(beam.CombineFn):
    """Partial accumulators `(name, accumulator)` of several combines (`fns`, by name), merged name by name into
    `{name: output}`; a name that got no input has its combine's output of nothing (a count of 0, an empty dict)."""

    def __init__(self, fns: dict[str, beam.CombineFn]) -> None:
        self.fns = dict(fns)

    def create_accumulator(self) -> dict:
        return {}

    def add_input(self, merged: dict, partial: tuple[str, object]) -> dict:
        name, accumulator = partial
        if name in merged:
            merged[name] = self.fns[name].merge_accumulators([merged[name], accumulator])
        else:
            merged[name] = accumulator
        return merged

    def merge_accumulators(self, accumulators: Iterable[dict]) -> dict:
        merged: dict = {}
        for accumulator in accumulators:
            for partial in accumulator.items():
                merged = self.add_input(merged, partial)
        return merged

    def extract_output(self, merged: dict) -> dict:
        return {
            name: fn.extract_output(merged[name] if name in merged else fn.create_accumulator())
            for name, fn in self.fns.items()
        }


class CombineFigures(beam.PTransform):
    """Several global combines as one: `{name: PCollection}` in, each combined by `fns[name]`, one `{name: output}`
    out. Each input is combined within its bundles where it is made (`PartialCombineFn`, fused into the step before
    it); the partials meet in one merge. A global combine of its own costs a run two stages and nine transforms
    (`CombineGlobally` with its default value), which on a small corpus cost more than the figures."""

    def __init__(self, fns: dict[str, beam.CombineFn]) -> None:
        super().__init__()
        self.fns = dict(fns)

    def expand(self, inputs):
        if set(inputs) - set(self.fns):
            raise ValueError(f"no combine for {sorted(set(inputs) - set(self.fns))}")
        partials = [
            pcoll | f"Partial{step_label(name)}" >> beam.ParDo(PartialCombineFn(name, self.fns[name]))
            for name, pcoll in sorted(inputs.items())
        ]
        merge = beam.CombineGlobally(MergeNamedFn(self.fns))
        return partials | "AllPartials" >> beam.Flatten() | "MergePartials" >> merge


def step_label(name: str) -> str:
    """A step label's CamelCase from a snake_case or path-like name (`dead_letter` -> `DeadLetter`,
    `contexts/train` -> `ContextsTrain`)."""
    return "".join(part.title() for part in name.replace("/", "_").split("_"))


class SumDictFn(beam.CombineFn):
    """`(key, n)` pairs summed per key into one dict (a few hundred keys: figures, tallies)."""

    def create_accumulator(self) -> dict:
        return {}

    def add_input(self, sums: dict, pair: tuple[object, int]) -> dict:
        key, n = pair
        sums[key] = sums.get(key, 0) + n
        return sums

    def merge_accumulators(self, accumulators: Iterable[dict]) -> dict:
        merged: dict = {}
        for sums in accumulators:
            for key, n in sums.items():
                merged[key] = merged.get(key, 0) + n
        return merged

    def extract_output(self, sums: dict) -> dict:
        return sums


class CountPerElementFn(SumDictFn):
    """Elements counted per distinct value into one dict (papers per year)."""

    def add_input(self, sums: dict, element: object) -> dict:
        sums[element] = sums.get(element, 0) + 1
        return sums
