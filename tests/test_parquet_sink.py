"""`pipelines.parquet`: every table of a dataset through one sink, checked against the rows put in."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline

from pipelines import parquet
from pipelines.parquet import ParquetTable, ShardWriter, WriteParquetTables, finalize

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64()), ("tags", pa.list_(pa.string()))])
OTHER = pa.schema([("reason", pa.string())])


def _rows(prefix: str, count: int) -> list[tuple[str, dict]]:
    return [(prefix, {"id": f"{prefix}:{i}", "n": i, "tags": [f"t{i % 3}"] * (i % 2)}) for i in range(count)]


def _files(root: Path) -> dict[str, list[dict]]:
    """Every Parquet file under `root` (its name relative to root) with its rows."""
    return {
        str(path.relative_to(root)): pq.read_table(path).to_pylist()
        for path in sorted(root.rglob("*.parquet"))
        if "tmp" not in path.relative_to(root).parts
    }


def _write(tmp_path: Path, inputs: dict[str, list], tables: list[ParquetTable]) -> None:
    with TestPipeline(runner="FnApiRunner") as p:
        pcolls = {name: p | f"Create{name}" >> beam.Create(rows) for name, rows in inputs.items()}
        _ = pcolls | WriteParquetTables(str(tmp_path / "out"), tables, str(tmp_path / "out" / "tmp"))


@pytest.mark.beam
def test_every_row_lands_in_its_tables_files_and_an_empty_table_keeps_its_schema(tmp_path):
    train, test, dead = _rows("contexts/train", 7), _rows("contexts/test", 3), [("dead/dead", {"reason": "x"})]
    tables = [
        ParquetTable("contexts/train", SCHEMA),
        ParquetTable("contexts/test", SCHEMA),
        ParquetTable("contexts/validation", SCHEMA),  # no rows at all
        ParquetTable("papers/papers", SCHEMA, num_shards=2),
        ParquetTable("dead/dead", OTHER, num_shards=1),
    ]
    papers = _rows("papers/papers", 5)
    _write(tmp_path, {"a": train + test, "b": papers, "c": dead}, tables)
    files = _files(tmp_path / "out")
    assert sorted(files) == [
        "contexts/test-00000-of-00001.parquet",
        "contexts/train-00000-of-00001.parquet",
        "contexts/validation-00000-of-00001.parquet",
        "dead/dead-00000-of-00001.parquet",
        "papers/papers-00000-of-00002.parquet",
        "papers/papers-00001-of-00002.parquet",
    ]
    key = json.dumps
    assert sorted(map(key, files["contexts/train-00000-of-00001.parquet"])) == sorted(key(r) for _, r in train)
    assert sorted(map(key, files["contexts/test-00000-of-00001.parquet"])) == sorted(key(r) for _, r in test)
    assert files["dead/dead-00000-of-00001.parquet"] == [{"reason": "x"}]
    assert files["contexts/validation-00000-of-00001.parquet"] == []
    empty = pq.read_schema(tmp_path / "out/contexts/validation-00000-of-00001.parquet")
    assert empty.equals(SCHEMA)
    shards = [files[f"papers/papers-0000{i}-of-00002.parquet"] for i in range(2)]
    assert sorted(len(s) for s in shards) == [2, 3]  # five rows dealt round-robin to two shards
    assert sorted(r["id"] for s in shards for r in s) == sorted(r["id"] for _, r in papers)
    meta = pq.ParquetFile(tmp_path / "out/papers/papers-00000-of-00002.parquet").metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


@pytest.mark.beam
def test_a_row_for_a_table_the_sink_does_not_know_stops_the_run(tmp_path):
    with pytest.raises(Exception, match="not one of the tables"):
        _write(tmp_path, {"a": _rows("nope/nope", 1)}, [ParquetTable("papers/papers", SCHEMA)])


def test_files_of_failed_bundles_are_never_named_and_a_rerun_finalizer_finds_its_work_done(tmp_path):
    out, temp = tmp_path / "out", tmp_path / "out" / "tmp"
    tables = {"papers/papers": ParquetTable("papers/papers", SCHEMA), "cits/cits": ParquetTable("cits/cits", SCHEMA)}
    committed = []
    for count in (2, 3):
        writer = ShardWriter(parquet.temp_path(str(temp)), SCHEMA)
        for _, row in _rows("papers/papers", count):
            writer.add(row)
        writer.close()
        committed.append(("papers/papers", writer.path))
    orphan = ShardWriter(parquet.temp_path(str(temp)), SCHEMA)  # a bundle that failed after writing its file
    orphan.add(_rows("papers/papers", 1)[0][1])
    orphan.close()
    named = finalize(None, str(out), tables, committed)
    assert sorted(Path(n).name for n in named) == [
        "cits-00000-of-00001.parquet",
        "papers-00000-of-00002.parquet",
        "papers-00001-of-00002.parquet",
    ]
    files = _files(out)
    assert sorted(len(rows) for name, rows in files.items() if name.startswith("papers/")) == [2, 3]
    assert files["cits/cits-00000-of-00001.parquet"] == []
    assert list(temp.iterdir()) == [Path(orphan.path)]  # left for the commit to delete with the staging directory
    assert finalize(None, str(out), tables, committed) == named  # a retried finalizer: renames already done
    assert _files(out) == files


def test_a_large_shard_is_written_a_row_group_at_a_time_and_reads_back_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "BATCH_ROWS", 10)
    monkeypatch.setattr(parquet, "ROW_GROUP_BYTES", 1)  # every converted batch makes its own row group
    writer = ShardWriter(str(tmp_path / "one.parquet"), SCHEMA)
    rows = [row for _, row in _rows("t/t", 35)]
    for row in rows:
        writer.add(row)
    assert writer.close() == 35
    assert pq.ParquetFile(tmp_path / "one.parquet").metadata.num_row_groups == 4  # 10 + 10 + 10 + 5
    assert pq.read_table(tmp_path / "one.parquet").to_pylist() == rows
