"""The JSON files every layout writes, and `WriteJsonFiles`. Workers write each file in key order from sorted
temporary shards, merged by one streaming write per file, because a peer's loader opens one JSON document
(`json.load`); the launching machine reads none of it."""

from __future__ import annotations

import heapq
import io
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from pipelines.joins import FanOutJoin

SPLIT_PREFIXES = ("train", "validation", "test")
EXPORT_SHARD_ENTRIES = 100_000
"""Entries one worker sorts into a temporary shard (a few tens of MB of JSON); a file of N entries is merged from
about N / EXPORT_SHARD_ENTRIES shards."""
DROPPED = "dropped"
DECLARED = "declared"
PRESENT = "present"


@dataclass(frozen=True)
class JsonFile:
    """One file of a layout: an `object` ({"key": value, ...}) or a `list` ([value, ...]), either in key order;
    `optional`: written only when some entry or a presence marker names it (RMC's `data/extended/`)."""

    name: str
    kind: str = "object"
    optional: bool = False


Entry = tuple[str, str, str]
"""(file name, sort key, the entry's JSON text: `"key": value` in an object, `value` in a list)."""


def json_text(value: object) -> str:
    """`value` as the exports write it: UTF-8 text, not `\\u` escapes."""
    return json.dumps(value, ensure_ascii=False)


def object_entry(file: str, key: str, value: object) -> Entry:
    return file, key, f"{json_text(key)}: {json_text(value)}"


def list_entry(file: str, key: str, value: object) -> Entry:
    return file, key, json_text(value)


def empty_rows(pbegin, label: str):
    """An empty PCollection, for a table or an output a layout does not have."""
    return pbegin | label >> beam.Create([])


def table_rows(tables: Mapping, prefix: str, pbegin, label: str):
    """The rows of the table at Parquet `prefix`, or none when the dataset has no such table (an empty split)."""
    return tables[prefix] if prefix in tables else empty_rows(pbegin, f"No{label}")


class _SortShardFn(beam.DoFn):
    """One group of a file's entries, sorted, as a temporary shard: one `[key, text]` JSON line per entry."""

    def __init__(self, temp: str) -> None:
        self.temp = temp

    def process(self, element) -> Iterator:
        name, grouped = element
        entries = sorted(grouped["entries"])
        path = FileSystems.join(self.temp, f"{uuid.uuid4().hex}.jsonl")
        with FileSystems.create(path) as handle:
            for key, text in entries:
                handle.write((json_text([key, text]) + "\n").encode("utf-8"))
        yield name, (path, len(entries))


def _shard_entries(path: str) -> Iterator[tuple[str, str]]:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw:
        for line in io.TextIOWrapper(raw, encoding="utf-8"):
            key, text = json.loads(line)
            yield key, text


class _MergeShardsFn(beam.DoFn):
    """One file: its sorted shards merged into it, streamed; yields (file name, entries). An optional file that
    nothing names is not written."""

    def __init__(self, directory: str, files: Sequence[JsonFile]) -> None:
        self.directory = directory
        self.files = {f.name: f for f in files}

    def process(self, element) -> Iterator:
        name, parts = element
        parts = list(parts)
        spec = self.files[name]
        shards = sorted(p for p in parts if isinstance(p, tuple))
        total = sum(n for _, n in shards)
        if spec.optional and not total and PRESENT not in parts:
            return
        opening, closing = (b"{", b"}\n") if spec.kind == "object" else (b"[", b"]")
        with FileSystems.create(FileSystems.join(self.directory, name)) as handle:
            handle.write(opening)
            for i, (_, text) in enumerate(heapq.merge(*(_shard_entries(path) for path, _ in shards))):
                handle.write(((", " if i else "") + text).encode("utf-8"))
            handle.write(closing)
        yield name, total


class WriteJsonFiles(beam.PTransform):
    """`Entry`s into the `files` under `directory`, each in key order: cut by file into groups of at most
    `shard_entries`, each sorted into a temporary shard under `temp` by the worker that holds it, then one worker
    per file merges that file's shards into it (heapq.merge: one line per shard in memory). `present`: (file name,
    PRESENT) markers for optional files. Returns (file name, entries) per written file."""

    def __init__(self, directory: str, files: Sequence[JsonFile], temp: str, shard_entries: int = EXPORT_SHARD_ENTRIES):
        super().__init__()
        self.directory = directory
        self.files = tuple(files)
        self.temp = temp
        self.shard_entries = shard_entries

    def expand(self, inputs):
        entries, present = inputs["entries"], inputs["present"]
        shards = (
            {"entries": entries | "ByFile" >> beam.Map(lambda entry: (entry[0], (entry[1], entry[2])))}
            | "Cut" >> FanOutJoin("entries", itemgetter(0), "export_shard", self.shard_entries)
            | "SortShards" >> beam.ParDo(_SortShardFn(self.temp))
        )
        declared = entries.pipeline | "Declared" >> beam.Create([(f.name, DECLARED) for f in self.files])
        return (
            (shards, declared, present)
            | "Parts" >> beam.Flatten()
            | "PartsByFile" >> beam.GroupByKey()
            | "Merge" >> beam.ParDo(_MergeShardsFn(self.directory, self.files))
        )
