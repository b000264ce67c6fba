"""Joins whose groups stay small however skewed the keys, so that a paper cited 100,000 times is not one group.

Beam's Python `CoGroupByKey` hands the next DoFn every value of a key as one in-memory list. `FanOutJoin` counts
the many side's values per key (a lifted combine), spreads a key with more than `max_group` of them over several
groups by a stable hash of each value's shard key, and copies the few side's values into each group. A DoFn after
it must treat each many-side value on its own with the key's other values. Details: docs/design.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.tallies import in_global_window, step_label

MAX_GROUP = 10_000
"""Values of the many side a group holds before its key is split: a few MB of contexts, well inside a worker."""
NAMESPACE = "joins"


BATCH = 256
"""Values of one key a batch holds at most (`KeyedBatches`)."""
BUFFER = 50_000
"""Values a `KeyedBatches` holds before every batch it has is sent."""


def batch_size_for(max_group: int) -> int:
    """The batch size for a join spreading groups of about `max_group`: at most a sixteenth of a group, so that a
    hot key's groups, made of whole batches, stay near `max_group`."""
    return max(1, min(BATCH, max_group // 16))


class KeyedBatches:
    """Values gathered by key within a bundle, for the many side of a weighted `FanOutJoin`: `add` gives a key's
    batch back once it holds `batch_size` values, `drain` every batch left (when `held` reaches `buffer_size`,
    and when the bundle ends); `offer` does both, as a DoFn's `process` needs them. A bundle of many values of few
    keys then sends a few elements instead of one per value; a bundle with one value per key sends one batch per
    value, no worse. Which values share a batch
    depends on the bundles, so what a DoFn after the join does with a batch must be what it would do with each
    value alone."""

    def __init__(self, batch_size: int = BATCH, buffer_size: int = BUFFER) -> None:
        if batch_size < 1 or buffer_size < 1:
            raise ValueError(f"batch and buffer sizes must be at least 1, not {batch_size} and {buffer_size}")
        self.batch_size = batch_size
        self.buffer_size = buffer_size
        self._batches: dict = {}
        self.held = 0

    def add(self, key, value) -> list | None:
        batch = self._batches.setdefault(key, [])
        batch.append(value)
        self.held += 1
        if len(batch) < self.batch_size:
            return None
        self.held -= len(batch)
        return self._batches.pop(key)

    @property
    def full(self) -> bool:
        return self.held >= self.buffer_size

    def offer(self, key, value) -> list[tuple[object, list]]:
        """`add`, and what must be sent now: the key's batch once it is full, or every batch once the buffer is."""
        batch = self.add(key, value)
        if batch is not None:
            return [(key, batch)]
        return list(self.drain()) if self.full else []

    def drain(self) -> Iterator[tuple[object, list]]:
        batches, self._batches, self.held = self._batches, {}, 0
        yield from batches.items()


class BatchByKeyFn(beam.DoFn):
    """Elements gathered into per-bundle batches by key (`KeyedBatches`): `key_value(element)` gives an element's
    `(key, value)`; each batch goes out as `(key, [value, ...])`, or as `send(key, batch)` where `send` is given
    (what a batch crosses the shuffle as), when it is full and when the bundle ends."""

    def __init__(
        self,
        key_value: Callable[[object], tuple[object, object]],
        batch_size: int = BATCH,
        send: Callable[[object, list], object] | None = None,
    ) -> None:
        self.key_value = key_value
        self.batch_size = batch_size
        self.send = send
        self._batches: KeyedBatches | None = None

    def start_bundle(self) -> None:
        self._batches = KeyedBatches(self.batch_size)

    def _sent(self, key, batch: list):
        return (key, batch) if self.send is None else self.send(key, batch)

    def process(self, element) -> Iterator:
        for key, batch in self._batches.offer(*self.key_value(element)):
            yield self._sent(key, batch)

    def finish_bundle(self) -> Iterator:
        for key, batch in self._batches.drain():
            yield in_global_window(self._sent(key, batch))


def stable_shard(key: str, shards: int) -> int:
    """A shard in `[0, shards)` from the bytes of `key`, the same in every process (Python's `hash` of a str is
    salted per process, so it cannot place a value)."""
    return zlib.crc32(key.encode("utf-8")) % shards


def _hot_shards(element: tuple[object, int], max_group: int) -> Iterator[tuple[object, int]]:
    key, n = element
    if n > max_group:
        yield key, -(-n // max_group)


def _weighed(element: tuple[object, object], weight: Callable[[object], int]) -> tuple[object, int]:
    key, value = element
    return key, weight(value)


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
    def __init__(self, many: str, name: str, weight: Callable[[object], int] | None = None) -> None:
        self.many = many
        self.name = name
        self.weight = weight
        self._sizes = None

    def setup(self) -> None:
        self._sizes = Metrics.distribution(NAMESPACE, f"{self.name}_group_size")

    def process(self, element) -> Iterator:
        (key, _), grouped = element
        values = grouped[self.many]
        self._sizes.update(len(values) if self.weight is None else sum(map(self.weight, values)))
        yield key, grouped


class FanOutJoin(beam.PTransform):
    """`{tag: PCollection of (key, value)}` joined like `CoGroupByKey`, the `many` tag's values of a hot key spread
    over groups of about `max_group` by `stable_shard(str(shard_key(value)))` (module docstring). `weight(value)`,
    where given, is how many values a value stands for (a batch's size): groups are then about `max_group` of
    summed weight."""

    def __init__(
        self,
        many: str,
        shard_key: Callable[[object], object],
        name: str,
        max_group: int = MAX_GROUP,
        weight: Callable[[object], int] | None = None,
    ) -> None:
        super().__init__()
        if max_group < 1:
            raise ValueError(f"max_group must be at least 1, not {max_group}")
        self.many = many
        self.shard_key = shard_key
        self.name = name
        self.max_group = max_group
        self.weight = weight

    def expand(self, inputs):
        if self.weight is None:
            counts = inputs[self.many] | "CountPerKey" >> beam.combiners.Count.PerKey()
        else:
            counts = (
                inputs[self.many]
                | "WeightPerValue" >> beam.Map(_weighed, self.weight)
                | "CountPerKey" >> beam.CombinePerKey(sum)
            )
        hot = beam.pvalue.AsDict(counts | "HotKeys" >> beam.FlatMap(_hot_shards, self.max_group))
        spread = {}
        for tag, pcoll in inputs.items():
            label = step_label(str(tag))
            if tag == self.many:
                spread[tag] = pcoll | f"Spread{label}" >> beam.ParDo(_SpreadFn(self.shard_key), hot)
            else:
                spread[tag] = pcoll | f"Copy{label}" >> beam.FlatMap(_copy_to_shards, hot)
        return (
            spread
            | "Group" >> beam.CoGroupByKey()
            | "RestoreKeys" >> beam.ParDo(_RestoreKeyFn(self.many, self.name, self.weight))
        )
