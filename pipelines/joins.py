"""Joins whose groups stay small however skewed the keys, so that a paper cited 100,000 times is not one group.

Beam's Python `CoGroupByKey` hands the DoFn after it every value of a key as one list in memory (`_CoGBKImpl`
collects them), so a join of contexts with their cited paper, keyed by the cited paper, would hold the most cited
paper's contexts in one worker. `FanOutJoin` is that join with the hot keys spread out:

1. the values of the *many* side (contexts, references, out-neighbour sets) are counted per key, a combine that never
   gathers them (`Count.PerKey` is lifted before the shuffle);
2. a key with more than `max_group` of them is *hot*: its values go to ceil(n / max_group) groups by a stable
   hash of each value's shard key, and the other sides' values of that key (the few: a paper record, an edge
   marker) are copied into each group. The hot keys reach every worker as a side input of at most
   n / max_group entries, whatever the corpus;
3. the output is `CoGroupByKey`'s, `(key, {tag: list})`, where a hot key comes in several elements.

A DoFn after it must therefore treat each value of the many side on its own, together with the key's other values:
what a join with a record does. Values with the same shard key always meet in one group (a reference's candidate
pairs from several bands, say), so a DoFn may still deduplicate them. The many side's group sizes are recorded as
the Beam distribution `joins:<name>_group_size`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.tallies import step_label

MAX_GROUP = 10_000
"""Values of the many side a group holds before its key is split: a few MB of contexts, well inside a worker."""
NAMESPACE = "joins"


def stable_shard(key: str, shards: int) -> int:
    """A shard in `[0, shards)` from the bytes of `key`, the same in every process (Python's `hash` of a str is
    salted per process, so it cannot place a value)."""
    return zlib.crc32(key.encode("utf-8")) % shards


def _hot_shards(element: tuple[object, int], max_group: int) -> Iterator[tuple[object, int]]:
    key, n = element
    if n > max_group:
        yield key, -(-n // max_group)


class _SpreadFn(beam.DoFn):
    """A value of the many side to `((key, shard), value)`: shard 0 for a key that is not hot."""

    def __init__(self, shard_key: Callable[[object], object]) -> None:
        self.shard_key = shard_key

    def process(self, element, hot: dict) -> Iterator:
        key, value = element
        shards = hot.get(key)
        yield (key, stable_shard(str(self.shard_key(value)), shards) if shards else 0), value


def _copy_to_shards(element, hot: dict) -> Iterator:
    """A value of another side to every shard of its key."""
    key, value = element
    for shard in range(hot.get(key, 1)):
        yield (key, shard), value


class _RestoreKeyFn(beam.DoFn):
    def __init__(self, many: str, name: str) -> None:
        self.many = many
        self.name = name
        self._sizes = None

    def setup(self) -> None:
        self._sizes = Metrics.distribution(NAMESPACE, f"{self.name}_group_size")

    def process(self, element) -> Iterator:
        (key, _), grouped = element
        self._sizes.update(len(grouped[self.many]))
        yield key, grouped


class FanOutJoin(beam.PTransform):
    """`{tag: PCollection of (key, value)}` joined like `CoGroupByKey`, the `many` tag's values of a hot key spread
    over groups of about `max_group` by `stable_shard(str(shard_key(value)))` (module docstring)."""

    def __init__(self, many: str, shard_key: Callable[[object], object], name: str, max_group: int = MAX_GROUP) -> None:
        super().__init__()
        if max_group < 1:
            raise ValueError(f"max_group must be at least 1, not {max_group}")
        self.many = many
        self.shard_key = shard_key
        self.name = name
        self.max_group = max_group

    def expand(self, inputs):
        hot = beam.pvalue.AsDict(
            inputs[self.many]
            | "CountPerKey" >> beam.combiners.Count.PerKey()
            | "HotKeys" >> beam.FlatMap(_hot_shards, self.max_group)
        )
        spread = {}
        for tag, pcoll in inputs.items():
            label = step_label(str(tag))
            if tag == self.many:
                spread[tag] = pcoll | f"Spread{label}" >> beam.ParDo(_SpreadFn(self.shard_key), hot)
            else:
                spread[tag] = pcoll | f"Copy{label}" >> beam.FlatMap(_copy_to_shards, hot)
        return (
            spread | "Group" >> beam.CoGroupByKey() | "RestoreKeys" >> beam.ParDo(_RestoreKeyFn(self.many, self.name))
        )
