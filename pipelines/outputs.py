"""What every pipeline does at its edges: refuse input patterns that match nothing, write a table as
Parquet shards, read back the `stats.json` a run wrote."""

from __future__ import annotations

import json

from apache_beam.io.filesystems import FileSystems
from apache_beam.io.parquetio import WriteToParquet


def check_patterns(inputs: dict[str, list[str]]) -> None:
    """Fail before the pipeline starts, in one line, when a pattern matches no file."""
    for flag, patterns in inputs.items():
        for pattern in patterns:
            if not FileSystems.match([pattern])[0].metadata_list:
                raise SystemExit(f"error: --{flag} {pattern!r} matches no file")


def write_parquet(pcoll, prefix: str, schema, label: str, num_shards: int):
    """`pcoll` (dicts with every schema key) as zstd Parquet shards `prefix-SSSSS-of-NNNNN.parquet`."""
    return pcoll | label >> WriteToParquet(
        file_path_prefix=prefix,
        schema=schema,
        codec="zstd",
        file_name_suffix=".parquet",
        num_shards=num_shards,
        shard_name_template="-SSSSS-of-NNNNN",
    )


def read_stats(output: str) -> dict:
    with FileSystems.open(FileSystems.join(output, "stats.json")) as handle:
        return json.loads(handle.read().decode("utf-8"))
