"""The commit: a finished run's `_staging/` becomes the dataset, and `_SUCCESS` says so only when it is true.

The job's last step writes the ledger (`_staging/_written.json`, `write_ledger`); without it nothing can be
committed. `commit_output` plans the moves and checks rows against stats.json, records the plan (so that
`--commit_only` can finish a cut-short commit), moves the files, writes and re-reads `manifest.json`, checks every
file it lists, then removes `_staging/` and writes `_SUCCESS`, last. Any disagreement is a one-line `CommitError`
(docs/outputs.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from apache_beam.io.filesystems import FileSystems

from pipelines.inputs import file_stamp
from pipelines.outputs import (
    MANIFEST,
    SHARD,
    SPLIT_TABLES,
    STAGING,
    SUCCESS,
    code_version,
    is_local,
    parquet_rows,
    read_json,
    rename_files,
)
from pipelines.ownership import COMMIT_PLAN, RUN, inside

LEDGER = "_written.json"
NOT_DATA = (RUN, LEDGER, COMMIT_PLAN)
"""Files of `_staging/` that are the run's bookkeeping, not the dataset's."""
VERSION_FIELDS = ("dataset_version", "schema_version")


class CommitError(Exception):
    """The staged run cannot be committed as it is: one line saying what is missing or disagrees."""


def _skipped(relative: str) -> bool:
    return "beam-temp-" in relative or relative.endswith(".write-probe") or relative in NOT_DATA


def _sizes(directory: str) -> dict[str, int]:
    """Every file under `directory` with its size, by path relative to it."""
    prefix = directory.rstrip("/") + "/"
    matched = FileSystems.match([FileSystems.join(directory, "**")])[0].metadata_list
    return {m.path[len(prefix) :]: m.size_in_bytes for m in matched if m.path.startswith(prefix)}


def _size(path: str) -> int | None:
    stamp = file_stamp(path)
    return stamp[0] if stamp else None


# ------------------------------------------------------------------------------------------------- the ledger


def write_ledger(_, staging: str, prefixes: Sequence[str], run_id: str | None = None, **_done) -> str:
    """The job's last step: list every file the run wrote under `staging` (size; rows for Parquet shards) into
    `_written.json`. `prefixes` are the tables the run declared: each must have at least one shard (an empty table
    gets one 0-row file), else the job fails here. `_done`: side inputs the step waits for (the tables named, the
    stats and card written, the exports written)."""
    files = []
    found: set[str] = set()
    for relative, size in sorted(_sizes(staging).items()):
        if _skipped(relative):
            continue
        match = SHARD.match(relative)
        rows = parquet_rows(FileSystems.join(staging, relative)) if match else None
        if match:
            found.add(match.group("prefix"))
        files.append({"path": relative, "bytes": size, "rows": rows})
    missing = sorted(set(prefixes) - found)
    if missing:
        raise RuntimeError(f"the run wrote no file for the tables {missing}: the dataset is incomplete")
    ledger = {"run_id": run_id, "files": files}
    with FileSystems.create(FileSystems.join(staging, LEDGER)) as handle:
        handle.write((json.dumps(ledger, indent=1) + "\n").encode("utf-8"))
    return staging


# --------------------------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Move:
    """One file of the dataset: from `_staging/SOURCE` to `OUTPUT/TO`, with its size and (a shard) its rows."""

    source: str
    to: str
    bytes: int
    rows: int | None = None


def plan_moves(ledger: Mapping) -> list[Move]:
    """The ledger's files as moves: a table's shards with no rows dropped and the rest renumbered, so that a split
    with no rows has no file (HuggingFace `datasets` rejects a 0-row shard), while any other empty table keeps one
    0-row shard for its schema; every other file moves as it is."""
    tables: dict[str, list[dict]] = {}
    moves = []
    for entry in ledger.get("files", []):
        relative = inside(entry.get("path"))
        if relative is None:
            raise CommitError(f"the ledger names {entry.get('path')!r}, which is not a path inside the dataset")
        match = SHARD.match(relative)
        if match:
            tables.setdefault(match.group("prefix"), []).append(entry)
        else:
            moves.append(Move(relative, relative, int(entry["bytes"])))
    for prefix, shards in sorted(tables.items()):
        shards = sorted(shards, key=lambda e: e["path"])
        kept = [e for e in shards if e["rows"]]
        if not kept and not prefix.startswith(tuple(f"{t}/" for t in SPLIT_TABLES)):
            kept = shards[:1]
        for index, entry in enumerate(kept):
            to = f"{prefix}-{index:05d}-of-{len(kept):05d}.parquet"
            moves.append(Move(entry["path"], to, int(entry["bytes"]), int(entry["rows"])))
    return sorted(moves, key=lambda m: m.to)


def table_rows(moves: Sequence[Move]) -> dict[str, int]:
    rows: dict[str, int] = {}
    for move in moves:
        match = SHARD.match(move.to)
        if match:
            rows[match.group("prefix")] = rows.get(match.group("prefix"), 0) + (move.rows or 0)
    return rows


def check_counts(rows: Mapping[str, int], expected: Mapping[str, int]) -> None:
    """Each table's rows against what the run counted (stats.json); a split table with no rows has no files."""
    wrong = [
        f"{table} holds {rows.get(table, 0):,} rows, the run counted {n:,}"
        for table, n in sorted(expected.items())
        if rows.get(table, 0) != n
    ]
    if wrong:
        raise CommitError("; ".join(wrong[:5]) + (f" (and {len(wrong) - 5} more)" if len(wrong) > 5 else ""))


def stamped_versions(stats: Mapping) -> dict[str, str]:
    """The dataset and schema versions the run stamped in its stats.json, which the manifest repeats."""
    versions = stats.get("versions") if isinstance(stats, Mapping) else None
    if not isinstance(versions, Mapping):
        return {}
    return {key: versions[key] for key in VERSION_FIELDS if key in versions}


# ------------------------------------------------------------------------------------------------- the commit


def _problems(output: str, moves: Sequence[Move]) -> list[str]:
    """What is wrong with the committed files: missing, another size, a shard with other rows."""
    problems = []
    for move in moves:
        path = FileSystems.join(output, move.to)
        size = _size(path)
        if size is None:
            problems.append(f"{move.to} is missing")
        elif size != move.bytes:
            problems.append(f"{move.to} has {size:,} bytes, the run wrote {move.bytes:,}")
        elif move.rows is not None and parquet_rows(path) != move.rows:
            problems.append(f"{move.to} does not hold the {move.rows:,} rows the run wrote")
    return problems


def _fail_on(problems: list[str], what: str) -> None:
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise CommitError(f"{what}: " + "; ".join(problems[:3]) + more + "; nothing is marked done")


def _load_plan(output: str, staging: str) -> list[Move]:
    plan = read_json(FileSystems.join(staging, COMMIT_PLAN))
    if plan is not None:
        return [Move(**m) for m in plan["moves"]]
    ledger = read_json(FileSystems.join(staging, LEDGER))
    if ledger is None:
        raise CommitError(
            f"{staging} holds no complete run: its ledger ({LEDGER}, the job's last write) is missing or unreadable, "
            "so the job failed or has not finished; nothing is marked done"
        )
    return plan_moves(ledger)


def _move(output: str, staging: str, moves: Sequence[Move]) -> None:
    sources, destinations, problems = [], [], []
    sizes = _sizes(staging)
    for move in moves:
        destination = FileSystems.join(output, move.to)
        staged = sizes.get(move.source)
        if staged is not None:
            if staged != move.bytes:
                problems.append(f"{STAGING}/{move.source} has {staged:,} bytes, the run wrote {move.bytes:,}")
                continue
            present = _size(destination)
            if present is not None and present != move.bytes:
                problems.append(f"{move.to} is already there and is not this run's ({present:,} bytes)")
                continue
            sources.append(FileSystems.join(staging, move.source))
            destinations.append(destination)
        elif _size(destination) is None:
            problems.append(f"{move.to} is missing (neither staged nor committed)")
    _fail_on(problems, "cannot commit")
    rename_files(sources, destinations)


def _write_manifest(output: str, manifest: Mapping) -> None:
    """`manifest.json`, written whole or not at all (locally: a temporary file, flushed, renamed), then read back."""
    data = (json.dumps(manifest, indent=2, default=str) + "\n").encode("utf-8")
    path = FileSystems.join(output, MANIFEST)
    if is_local(output):
        temporary = path + ".tmp"
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    else:
        with FileSystems.create(path) as handle:
            handle.write(data)
    with FileSystems.open(path) as handle:
        if handle.read() != data:
            raise CommitError(f"{path} does not read back as written; nothing is marked done")


def commit_output(
    output: str, dataset: str, options: Mapping | None, stats: Mapping, expected_rows: Mapping[str, int]
) -> dict:
    """Commit the run staged in `output/_staging/` (the module docstring); returns the manifest. A commit cut short
    is finished by calling this again; a dataset whose staging is gone but whose `_SUCCESS` is missing is checked
    against its manifest and then marked done."""
    staging = FileSystems.join(output, STAGING)
    if not FileSystems.exists(staging):
        manifest = read_json(FileSystems.join(output, MANIFEST))
        if manifest is None or not manifest.get("files"):
            raise CommitError(f"{staging} does not exist and {output} has no manifest: nothing to commit")
        moves = [Move(f["path"], f["path"], f["bytes"], f.get("rows")) for f in manifest["files"] if "bytes" in f]
        _fail_on(_problems(output, moves), "the committed dataset does not match its manifest")
        _write_success(output)
        return manifest
    moves = _load_plan(output, staging)
    rows = table_rows(moves)
    check_counts(rows, expected_rows)
    plan_path = FileSystems.join(staging, COMMIT_PLAN)
    if not FileSystems.exists(plan_path):
        with FileSystems.create(plan_path) as handle:
            handle.write(json.dumps({"moves": [asdict(m) for m in moves]}, indent=1).encode("utf-8"))
    _move(output, staging, moves)
    run = read_json(FileSystems.join(staging, RUN)) or {}
    manifest = {
        "dataset": dataset,
        "complete": True,
        "run_id": run.get("run_id"),
        **stamped_versions(stats),
        **code_version(),
        "tables": rows,
        "files": [{"path": m.to, "bytes": m.bytes, "rows": m.rows} for m in moves],
        "options": dict(options or {}),
    }
    _write_manifest(output, manifest)
    _fail_on(_problems(output, moves), "the committed files do not match what the run wrote")
    FileSystems.delete([staging])
    _write_success(output)
    return manifest


def _write_success(output: str) -> None:
    with FileSystems.create(FileSystems.join(output, SUCCESS)) as handle:
        handle.write(b"")


def update_manifest(output: str, directories: Sequence[str]) -> dict:
    """After files were written under `directories` of the committed dataset `output` (an export made later): its
    manifest lists them, with their sizes, in place of what it listed there before; written whole, read back."""
    manifest = read_json(FileSystems.join(output, MANIFEST))
    if manifest is None:
        raise CommitError(f"{output} has no readable manifest.json to update")
    prefixes = tuple(d.rstrip("/") + "/" for d in directories)
    files = [f for f in manifest.get("files", []) if not str(f.get("path", "")).startswith(prefixes)]
    for directory in directories:
        for relative, size in sorted(_sizes(FileSystems.join(output, directory)).items()):
            if not _skipped(relative):
                files.append({"path": f"{directory.rstrip('/')}/{relative}", "bytes": size, "rows": None})
    manifest["files"] = sorted(files, key=lambda f: f["path"])
    _write_manifest(output, manifest)
    return manifest
