"""Every Parquet table of a dataset through one sink: `WriteParquetTables`.

Rows come tagged with their table's prefix (`contexts/train`, `papers/papers`); each bundle writes one temporary
file per prefix, converted by Arrow in batches, and one finalizing step renames the committed bundles' files to
`PREFIX-SSSSS-of-NNNNN.parquet` (an empty table gets one empty file, keeping its schema). One sink instead of
Beam's `WriteToParquet` per table saves most of a small run's fixed cost, with the same retry guarantees
(docs/design.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput
from apache_beam.utils.windowed_value import WindowedValue

from pipelines.outputs import rename_files
from pipelines.tallies import in_global_window

BATCH_ROWS = 5_000
"""Rows converted to Arrow at a time."""
ROW_GROUP_BYTES = 64 << 20
"""Arrow bytes buffered before a row group is written (Beam's `WriteToParquet`: `row_group_buffer_size`, 64 MiB)."""
KEYED = "keyed"


@dataclass(frozen=True)
class ParquetTable:
    """One table the sink writes: rows tagged `prefix` go to `PREFIX-SSSSS-of-NNNNN.parquet` under the sink's
    directory, with `schema`; `num_shards` 0: one file per bundle that held rows of it (the runner decides)."""

    prefix: str
    schema: pa.Schema
    num_shards: int = 0


class ShardWriter:
    """Rows (dicts with the schema's keys) into one zstd Parquet file, converted `BATCH_ROWS` at a time and
    written a row group at a time; `close()` returns the rows written."""

    def __init__(self, path: str, schema: pa.Schema) -> None:
        self.path = path
        self.schema = schema
        self.rows = 0
        self._handle = FileSystems.create(path)
        self._writer = pq.ParquetWriter(self._handle, schema, compression="zstd")
        self._pending: list[dict] = []
        self._batches: list[pa.RecordBatch] = []
        self._buffered = 0

    def add(self, row: Mapping) -> None:
        self._pending.append(row)
        if len(self._pending) >= BATCH_ROWS:
            self._convert()

    def _convert(self) -> None:
        if self._pending:
            batch = pa.RecordBatch.from_pylist(self._pending, schema=self.schema)
            self.rows += batch.num_rows
            self._pending = []
            self._batches.append(batch)
            self._buffered += batch.nbytes
            if self._buffered >= ROW_GROUP_BYTES:
                self._flush()

    def _flush(self) -> None:
        if self._batches:
            self._writer.write_table(pa.Table.from_batches(self._batches, schema=self.schema), row_group_size=None)
            self._batches, self._buffered = [], 0

    def close(self) -> int:
        self._convert()
        self._flush()
        self._writer.close()
        self._handle.close()
        return self.rows


class _WriteBundlesFn(beam.DoFn):
    """Rows of runner-sharded tables into one temporary file per table and bundle, reported as `(prefix, path)`
    when the bundle finishes; rows of tables with fixed shards go on as `((prefix, shard), row)` (`keyed`)."""

    def __init__(self, tables: Mapping[str, ParquetTable], temp: str) -> None:
        self.tables = dict(tables)
        self.temp = temp

    def start_bundle(self) -> None:
        self._writers: dict[str, ShardWriter] = {}
        self._dealt: dict[str, int] = {}

    def process(self, element: tuple[str, Mapping]) -> Iterator:
        prefix, row = element
        table = self.tables.get(prefix)
        if table is None:
            raise ValueError(f"a row for {prefix!r}, which is not one of the tables {sorted(self.tables)}")
        if table.num_shards:
            dealt = self._dealt.get(prefix, 0)
            self._dealt[prefix] = dealt + 1
            yield TaggedOutput(KEYED, ((prefix, dealt % table.num_shards), row))
            return
        writer = self._writers.get(prefix)
        if writer is None:
            writer = self._writers[prefix] = ShardWriter(temp_path(self.temp), table.schema)
        writer.add(row)

    def finish_bundle(self) -> Iterator[WindowedValue]:
        writers, self._writers = self._writers, {}
        for prefix, writer in sorted(writers.items()):
            writer.close()
            yield in_global_window((prefix, writer.path))


class _WriteGroupFn(beam.DoFn):
    """One fixed shard's rows (a GroupByKey's group, streamed) into one temporary file: `(prefix, path)`."""

    def __init__(self, tables: Mapping[str, ParquetTable], temp: str) -> None:
        self.tables = dict(tables)
        self.temp = temp

    def process(self, element: tuple[tuple[str, int], Iterable[Mapping]]) -> Iterator[tuple[str, str]]:
        (prefix, _), rows = element
        writer = ShardWriter(temp_path(self.temp), self.tables[prefix].schema)
        for row in rows:
            writer.add(row)
        writer.close()
        yield prefix, writer.path


def temp_path(temp: str) -> str:
    return FileSystems.join(temp, f"{uuid.uuid4().hex}.parquet")


def shard_name(directory: str, prefix: str, index: int, count: int) -> str:
    return FileSystems.join(directory, f"{prefix}-{index:05d}-of-{count:05d}.parquet")


def finalize(_, directory: str, tables: Mapping[str, ParquetTable], written: Iterable[tuple[str, str]]) -> list[str]:
    """Name the committed bundles' files `PREFIX-SSSSS-of-NNNNN.parquet` (in the order of their temporary names, which
    are random: shard order means nothing); give a table with no file one empty file. Returns the files named. A
    rerun after a partial rename finds the renamed files in place and renames the rest."""
    by_prefix: dict[str, list[str]] = {prefix: [] for prefix in tables}
    for prefix, path in written:
        by_prefix[prefix].append(path)
    sources, destinations, named = [], [], []
    for prefix, paths in sorted(by_prefix.items()):
        if not paths:
            empty = shard_name(directory, prefix, 0, 1)
            ShardWriter(empty, tables[prefix].schema).close()
            named.append(empty)
            continue
        for index, path in enumerate(sorted(paths)):
            destination = shard_name(directory, prefix, index, len(paths))
            named.append(destination)
            if FileSystems.exists(path):
                sources.append(path)
                destinations.append(destination)
            elif not FileSystems.exists(destination):
                raise FileNotFoundError(f"{path}, written by a committed bundle, is gone; {destination} is missing")
    rename_files(sources, destinations)
    return named


class WriteParquetTables(beam.PTransform):
    """`(prefix, row)` PCollections (a dict of them, by any name) into the `tables`' Parquet files under
    `directory` (the module docstring), temporary files under `temp` (a directory the run deletes afterwards). Each
    input PCollection gets
    its own writing step, fused into the step that makes its rows (a Flatten of them first would make the runner
    write every row out and read it back). Returns the names of the files written (one list)."""

    def __init__(self, directory: str, tables: Iterable[ParquetTable], temp: str) -> None:
        super().__init__()
        self.directory = directory
        self.tables = {table.prefix: table for table in tables}
        if not self.tables:
            raise ValueError("no tables to write")
        self.temp = temp

    def expand(self, inputs):
        files, keyed = [], []
        for name, rows in sorted(inputs.items()):
            written = rows | f"WriteBundles{name}" >> beam.ParDo(_WriteBundlesFn(self.tables, self.temp)).with_outputs(
                KEYED, main="files"
            )
            files.append(written.files)
            keyed.append(written[KEYED])
        groups = (
            keyed
            | "KeyedRows" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(_WriteGroupFn(self.tables, self.temp))
        )
        named = (*files, groups) | "WrittenFiles" >> beam.Flatten()
        return (
            next(iter(inputs.values())).pipeline
            | "Finalize" >> beam.Create([None])
            | "NameFiles"
            >> beam.Map(finalize, self.directory, self.tables, beam.pvalue.AsList(named)).with_output_types(list[str])
        )
