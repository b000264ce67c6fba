"""What every pipeline does at its edges: strict flags, input and output checks before any work, and the commit
that turns a finished run's staging directory into the dataset (the tables are written by `pipelines.parquet`).

A run never mixes with another:
- `--output` holding files is refused (exit 2) unless `--overwrite`, which empties it first;
- the pipeline writes into `OUTPUT/_staging/`; only when it has finished are the shards moved into place
  (empty shards dropped, the rest renumbered), `beam-temp-*` and the staging directory removed, and
  `manifest.json` (every file with its row count, the code version, the options) and `_SUCCESS` written,
  in that order. A dataset without `_SUCCESS` is not finished: a killed run leaves `_staging/` and no
  manifest, and the next run into it is refused until `--overwrite`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.localfilesystem import LocalFileSystem
from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

STAGING = "_staging"
MANIFEST = "manifest.json"
SUCCESS = "_SUCCESS"
SPLIT_TABLES = ("contexts", "queries")
"""Tables whose shards are dataset splits: an empty split gets no file at all (HuggingFace `datasets`
rejects a 0-row shard)."""
SHARD = re.compile(r"^(?P<prefix>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})(?P<suffix>\.parquet)$")
_GLOB_CHARS = re.compile(r"[*?\[]")


class UsageError(Exception):
    """A bad flag or input found before any work: one `error:` line, exit status 2."""


def fail(message: str) -> None:
    """Stop the program the way argparse does for a usage error: one line on stderr, exit status 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_strict(argv: Sequence[str], prog: str) -> PipelineOptions:
    """`PipelineOptions(argv)`, but an argument no options class knows stops the program (exit 2)
    instead of Beam's warning "Discarding unparseable args"; a typo such as `--teii` must not quietly
    build the example corpus."""
    parser = _BeamArgumentParser(prog=prog, allow_abbrev=False)
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)  # noqa: SLF001 - the same registry Beam itself reads
    _, unknown = parser.parse_known_args(list(argv))
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return ViewCachingOptions(list(argv))


class ViewCachingOptions(PipelineOptions):
    """`PipelineOptions` whose `view_as(cls)` is built once per class. Beam's `view_as` builds an argparse parser
    of `cls`'s flags and parses every flag again at each call, and `Pipeline.apply` calls it for each transform:
    building the arsyta pipeline called it 1,416 times, half the CPU of building the job. A view holds no
    state of its own (its values live in the options' shared `_all_options`), so one view per class is what
    every call would have given."""

    def view_as(self, cls):
        views = self.__dict__.setdefault("_citrec_views", {})
        if cls not in views:
            views[cls] = super().view_as(cls)
        return views[cls]


def _is_local(path: str) -> bool:
    return isinstance(FileSystems.get_filesystem(path), LocalFileSystem)


def check_patterns(inputs: dict[str, list[str]]) -> None:
    """Fail before the pipeline starts, in one line, when a pattern names a directory or matches no file."""
    for flag, patterns in inputs.items():
        for pattern in patterns:
            names_directory = pattern.endswith("/") or (_is_local(pattern) and os.path.isdir(pattern))
            if names_directory and not _GLOB_CHARS.search(pattern):
                fail(
                    f"--{flag} {pattern!r} is a directory; give the files, e.g. "
                    f"{FileSystems.join(pattern.rstrip('/'), '*')!r}"
                )
            if not FileSystems.match([pattern])[0].metadata_list:
                fail(f"--{flag} {pattern!r} matches no file")


def _existing_files(output: str) -> list[str]:
    try:
        return [m.path for m in FileSystems.match([FileSystems.join(output, "**")])[0].metadata_list]
    except Exception:  # noqa: BLE001 - a missing directory matches nothing on every filesystem
        return []


def prepare_output(output: str, overwrite: bool) -> str:
    """Check `--output` before any work and return the staging directory the pipeline writes into.

    Refused (exit 2, one line): a path that is a regular file or lies under one, an output that already
    holds files (unless `overwrite`, which deletes them), an output that cannot be written.
    """
    if _is_local(output):
        path = Path(output)
        if path.is_file():
            fail(f"--output {output!r} is a file, not a directory")
        for parent in path.absolute().parents:
            if parent.exists():
                if not parent.is_dir():
                    fail(f"--output {output!r} lies under {str(parent)!r}, which is a regular file")
                break
    existing = _existing_files(output)
    if existing:
        if not overwrite:
            finished = any(p.endswith("/" + SUCCESS) for p in existing)
            what = "a finished dataset" if finished else "files (perhaps an unfinished run)"
            fail(
                f"--output {output!r} already holds {what}: {len(existing)} files. Pass --overwrite to "
                "replace them, or give a new directory."
            )
        FileSystems.delete([output])
    staging = FileSystems.join(output, STAGING)
    probe = FileSystems.join(staging, ".write-probe")
    try:
        with FileSystems.create(probe) as handle:
            handle.write(b"")
        FileSystems.delete([probe])
    except Exception as err:  # noqa: BLE001 - any filesystem's refusal ends the same way
        fail(f"cannot write to --output {output!r}: {type(err).__name__}: {err}")
    return staging


def rename_files(sources: Sequence[str], destinations: Sequence[str]) -> None:
    """Move files on any Beam filesystem; local destination directories are made first (a local rename needs
    them, object stores have none)."""
    if not sources:
        return
    for destination in destinations:
        if _is_local(destination):
            os.makedirs(os.path.dirname(destination), exist_ok=True)
    FileSystems.rename(list(sources), list(destinations))


def read_stats(output: str) -> dict:
    with FileSystems.open(FileSystems.join(output, "stats.json")) as handle:
        return json.loads(handle.read().decode("utf-8"))


def parquet_rows(path: str) -> int:
    import pyarrow.parquet as pq

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as handle:
        return pq.ParquetFile(handle).metadata.num_rows


def code_version() -> dict[str, str | None]:
    """The citrec package version and, in a source checkout, the git commit (with `+dirty` for changes)."""
    from importlib import metadata

    try:
        version = metadata.version("citrec")
    except metadata.PackageNotFoundError:
        version = None
    commit = None
    root = Path(__file__).resolve().parent.parent
    if (root / ".git").exists():
        try:
            commit = subprocess.run(
                ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.strip()
            commit += "+dirty" if dirty else ""
        except (OSError, subprocess.SubprocessError):
            commit = None
    return {"citrec_version": version, "git_commit": commit}


VERSION_FIELDS = ("dataset_version", "schema_version")


def stamped_versions(staging: str) -> dict[str, str]:
    """The dataset and schema versions the run stamped in its stats.json (`versions`), which the manifest repeats
    so that the three never disagree; {} for a run that stamps none."""
    try:
        with FileSystems.open(FileSystems.join(staging, "stats.json")) as handle:
            versions = json.loads(handle.read().decode("utf-8")).get("versions") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return {key: versions[key] for key in VERSION_FIELDS if key in versions}


def commit_output(output: str, dataset: str, options: dict | None = None) -> dict:
    """Move a finished run's staging directory into `output`; write `manifest.json`, then `_SUCCESS`.

    Parquet shards with no rows are dropped and the rest of each table renumbered, so that a split with
    no rows has no file (HuggingFace `datasets` rejects a 0-row shard; any other empty table keeps one
    0-row shard for its schema); everything else (stats.json, the
    card) moves as it is; Beam's temporary directories are deleted with the staging directory.
    """
    staging = FileSystems.join(output, STAGING)
    versions = stamped_versions(staging)
    files = sorted(m.path for m in FileSystems.match([FileSystems.join(staging, "**")])[0].metadata_list)
    tables: dict[str, list[tuple[str, int]]] = {}
    plain: list[str] = []
    for path in files:
        relative = path[len(staging) :].lstrip("/")
        if "beam-temp-" in relative or relative.endswith(".write-probe"):
            continue
        match = SHARD.match(relative)
        if match:
            tables.setdefault(match.group("prefix"), []).append((path, parquet_rows(path)))
        else:
            plain.append(relative)
    moves: list[tuple[str, str]] = []
    manifest_files = []
    table_rows: dict[str, int] = {}
    for prefix, shards in sorted(tables.items()):
        kept = [(path, rows) for path, rows in shards if rows > 0]
        if not kept and not prefix.startswith(tuple(f"{t}/" for t in SPLIT_TABLES)):
            kept = shards[:1]  # an empty table keeps one 0-row shard, so that readers still get its schema
        table_rows[prefix] = sum(rows for _, rows in kept)
        for index, (path, rows) in enumerate(kept):
            relative = f"{prefix}-{index:05d}-of-{len(kept):05d}.parquet"
            moves.append((path, FileSystems.join(output, relative)))
            manifest_files.append({"path": relative, "rows": rows})
    for relative in plain:
        moves.append((FileSystems.join(staging, relative), FileSystems.join(output, relative)))
        manifest_files.append({"path": relative, "rows": None})
    rename_files([a for a, _ in moves], [b for _, b in moves])
    FileSystems.delete([staging])
    manifest = {
        "dataset": dataset,
        "complete": True,
        **versions,
        **code_version(),
        "tables": table_rows,
        "files": sorted(manifest_files, key=lambda f: f["path"]),
        "options": options or {},
    }
    with FileSystems.create(FileSystems.join(output, MANIFEST)) as handle:
        handle.write((json.dumps(manifest, indent=2, default=str) + "\n").encode("utf-8"))
    with FileSystems.create(FileSystems.join(output, SUCCESS)) as handle:
        handle.write(b"")
    return manifest
