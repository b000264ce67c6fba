"""Whose an output directory is, who is writing it now, and removing only what citrec wrote.

An output is citrec's when it carries citrec's marker (`_citrec_output.json`) or a manifest citrec committed. A
run refuses an output that is not empty and not citrec's; takes the output's lease (`_citrec_lease.json`, one run
at a time; a dead run's lease is broken only with `--break_lease`); with `--overwrite` removes exactly what an
earlier citrec run wrote; and writes the marker. The rules: docs/outputs.md.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import shutil
import socket
import sys
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from apache_beam.io.filesystems import FileSystems

from pipelines.outputs import MANIFEST, STAGING, SUCCESS, UsageError, is_local, read_json

MARKER = "_citrec_output.json"
LEASE = "_citrec_lease.json"
RUN = "_run.json"
"""In `_staging/`: the id of the run the staged files belong to (what `--commit_only` commits)."""
COMMIT_PLAN = "_commit.json"
"""In `_staging/`: the moves a commit makes, written before the first one, so that a commit cut short can be
finished, and an `--overwrite` knows which committed files were the run's."""
CONTROL_FILES = (MARKER, LEASE, MANIFEST, SUCCESS, MANIFEST + ".tmp")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _write_json(path: str, value: dict) -> None:
    with FileSystems.create(path) as handle:
        handle.write((json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def inside(relative: str) -> str | None:
    """`relative` as a clean path inside a directory (`a/b.parquet`), or None when it would leave it or name the
    directory itself (absolute, `..`, empty)."""
    if not isinstance(relative, str) or not relative or relative.startswith(("/", "\\")) or "\\" in relative:
        return None
    clean = posixpath.normpath(relative)
    if clean in (".", "") or clean == ".." or clean.startswith("../"):
        return None
    return clean


# ----------------------------------------------------------------------------------------------- what is there


def list_files(output: str) -> list[str]:
    """Every file under `output`, relative to it (symbolic links included, never followed)."""
    if is_local(output):
        root = Path(output)
        if not root.is_dir():
            return []
        found = []
        for directory, dirs, files in os.walk(root, followlinks=False):
            base = Path(directory)
            found.extend(str((base / name).relative_to(root)) for name in files)
            found.extend(str((base / name).relative_to(root)) for name in dirs if (base / name).is_symlink())
        return sorted(found)
    try:
        matched = FileSystems.match([FileSystems.join(output, "**")])[0].metadata_list
    except Exception:  # noqa: BLE001 - a missing directory matches nothing on every filesystem
        return []
    prefix = output.rstrip("/") + "/"
    return sorted(m.path[len(prefix) :] for m in matched if m.path.startswith(prefix))


def citrec_manifest(output: str) -> dict | None:
    """The manifest of a dataset citrec committed in `output`, or None."""
    manifest = read_json(FileSystems.join(output, MANIFEST))
    if manifest and str(manifest.get("dataset", "")).startswith("citrec "):
        return manifest
    return None


def is_citrec_output(output: str) -> bool:
    """Whether `output` carries citrec's marker or a citrec manifest."""
    marker = read_json(FileSystems.join(output, MARKER))
    return bool(marker and marker.get("owner") == "citrec") or citrec_manifest(output) is not None


def written_by_citrec(output: str) -> set[str]:
    """The relative paths an earlier citrec run wrote in `output` that a new run may remove: the files its manifest
    lists, the destinations of an unfinished commit, its marker files. (`_staging/` is removed whole.) Paths that
    would leave the output are ignored."""
    listed: list[str] = list(CONTROL_FILES)
    manifest = citrec_manifest(output)
    if manifest:
        listed += [f.get("path") for f in manifest.get("files", []) if isinstance(f, dict)]
    plan = read_json(FileSystems.join(output, STAGING, COMMIT_PLAN))
    if plan:
        listed += [m.get("to") for m in plan.get("moves", []) if isinstance(m, dict)]
    return {clean for clean in map(inside, listed) if clean}


def _symlink_target(output: str) -> str | None:
    if is_local(output) and os.path.islink(output.rstrip("/") or "/"):
        return os.readlink(output.rstrip("/"))
    return None


def check_output_path(output: str) -> None:
    """What is refused before anything else: a path that is a file, lies under a file, or is a symbolic link."""
    if not is_local(output):
        return
    target = _symlink_target(output)
    if target is not None:
        raise UsageError(
            f"--output {output!r} is a symbolic link (to {target!r}); give the directory itself, so that what "
            "citrec writes and removes is where you see it"
        )
    path = Path(output)
    if path.is_file():
        raise UsageError(f"--output {output!r} is a file, not a directory")
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--output {output!r} lies under {str(parent)!r}, which is a regular file")
            break


def check_not_foreign(output: str, ignore: Iterable[str] = ()) -> None:
    """Refuse (UsageError) an output that holds files and is not citrec's: citrec writes into it and removes from
    it nothing, whatever the flags. `ignore`: this run's own files, once it has written them (its lease)."""
    if is_citrec_output(output):
        return
    files = [f for f in list_files(output) if f not in set(ignore)]
    if not files:
        return
    shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
    raise UsageError(
        f"--output {output!r} holds {len(files):,} files ({shown}) and no citrec dataset (no {MARKER} or citrec "
        "manifest.json): citrec writes only into a new or empty directory, or one it wrote, and never removes "
        "what it did not write, --overwrite or not; give a new directory"
    )


# ---------------------------------------------------------------------------------------------------- removal


@dataclass(frozen=True)
class Removal:
    """What `--overwrite` removes from an output (relative paths) and what it keeps (files citrec did not write)."""

    remove: tuple[str, ...]
    keep: tuple[str, ...]
    staging: bool

    def describe(self, output: str) -> str:
        parts = [f"{len(self.remove):,} files of the earlier citrec run"]
        if self.staging:
            parts.append(f"{STAGING}/ (an unfinished run's files)")
        text = f"--overwrite: removing from {output} " + " and ".join(parts)
        if self.keep:
            shown = ", ".join(self.keep[:3]) + (", ..." if len(self.keep) > 3 else "")
            text += f"; keeping {len(self.keep):,} files citrec did not write ({shown})"
        return text


def plan_removal(output: str) -> Removal:
    """What `--overwrite` would remove from the citrec output `output`, and what it keeps."""
    files = list_files(output)
    ours = written_by_citrec(output)
    staged = [f for f in files if f == STAGING or f.startswith(STAGING + "/")]
    rest = [f for f in files if f not in staged]
    remove = tuple(f for f in rest if f in ours and f not in (LEASE, MARKER))
    keep = tuple(f for f in rest if f not in ours)
    return Removal(remove, keep, bool(staged))


def remove_written(output: str, removal: Removal) -> None:
    """Remove what `removal` lists from `output`, never following a symbolic link, never outside `output`; empty
    directories left behind by the removed files are removed too."""
    paths = [FileSystems.join(output, relative) for relative in removal.remove]
    if is_local(output):
        root = os.path.realpath(output)
        for relative in removal.remove:
            path = os.path.join(output, relative)
            parent = os.path.realpath(os.path.dirname(path))
            if parent != root and not parent.startswith(root + os.sep):
                continue  # a directory on the way is a link out of the output: not ours to follow
            if os.path.lexists(path) and not (os.path.isdir(path) and not os.path.islink(path)):
                os.unlink(path)
        staging = os.path.join(output, STAGING)
        if removal.staging:
            if os.path.islink(staging):
                os.unlink(staging)
            elif os.path.isdir(staging):
                shutil.rmtree(staging)
        _remove_empty_directories(output, {os.path.dirname(r) for r in removal.remove if os.path.dirname(r)})
        return
    if paths:
        FileSystems.delete(paths)
    if removal.staging:
        FileSystems.delete([FileSystems.join(output, STAGING)])


def _remove_empty_directories(output: str, directories: Iterable[str]) -> None:
    for relative in sorted(directories, key=lambda d: -d.count("/")):
        while relative:
            path = os.path.join(output, relative)
            if os.path.islink(path) or not os.path.isdir(path) or os.listdir(path):
                break
            os.rmdir(path)
            relative = os.path.dirname(relative)


# ------------------------------------------------------------------------------------------------------ lease


@dataclass(frozen=True)
class Lease:
    """Who holds an output: a run's id, where and since when, and what it is doing (`running`, `submitted`: a job
    left running by `--no_wait_until_finish`, waiting for `--commit_only`; `committing`)."""

    run_id: str
    pipeline: str
    host: str
    pid: int
    started: str
    state: str = "running"
    job_id: str | None = None

    @classmethod
    def new(cls, pipeline: str, run_id: str | None = None) -> Lease:
        return cls(run_id or uuid.uuid4().hex[:16], pipeline, socket.gethostname(), os.getpid(), _now().isoformat())

    @classmethod
    def from_json(cls, value: dict | None) -> Lease | None:
        if not value:
            return None
        try:
            return cls(
                run_id=str(value["run_id"]),
                pipeline=str(value.get("pipeline", "")),
                host=str(value.get("host", "")),
                pid=int(value.get("pid", 0)),
                started=str(value.get("started", "")),
                state=str(value.get("state", "running")),
                job_id=value.get("job_id"),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def holder_alive(self) -> bool | None:
        """Whether the process that holds the lease still runs: None when it ran on another host (unknowable)."""
        if self.host != socket.gethostname():
            return None
        if self.pid == os.getpid():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def describe(self) -> str:
        try:
            age = _now() - dt.datetime.fromisoformat(self.started)
            since = f"started {self.started}, {_age(age)} ago"
        except ValueError:
            since = f"started {self.started!r}"
        alive = self.holder_alive()
        if self.state == "submitted":
            status = f"its job{f' {self.job_id}' if self.job_id else ''} was submitted and waits for --commit_only"
        elif alive is None:
            status = "on another host: citrec cannot tell whether it still runs"
        elif alive:
            status = "that process is still running"
        else:
            status = "that process is no longer running: the run died without releasing it"
        return f"run {self.run_id} ({self.pipeline}, pid {self.pid} on {self.host}, {since}; {status})"


def _age(delta: dt.timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


class LeaseHeld(UsageError):
    """The output is leased by another run."""


def _create_exclusive(path: str, data: bytes) -> bool:
    """Create `path` with `data` only if it does not exist, atomically; False when it exists. Local files: O_EXCL;
    Google Cloud Storage: a write with `if_generation_match=0`; other filesystems: check then create (not atomic)."""
    if is_local(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        return True
    if path.startswith("gs://"):
        return _create_exclusive_gcs(path, data)
    if FileSystems.exists(path):
        return False
    print(f"warning: {path}: this filesystem has no atomic create; the lease is checked, not guaranteed",
          file=sys.stderr)
    with FileSystems.create(path) as handle:
        handle.write(data)
    return True


def _create_exclusive_gcs(path: str, data: bytes) -> bool:
    from google.api_core.exceptions import PreconditionFailed
    from google.cloud import storage

    bucket, _, name = path[len("gs://") :].partition("/")
    blob = storage.Client().bucket(bucket).blob(name)
    try:
        blob.upload_from_string(data, if_generation_match=0)
    except PreconditionFailed:
        return False
    return True


def read_lease(output: str) -> Lease | None:
    return Lease.from_json(read_json(FileSystems.join(output, LEASE)))


def _encode(lease: Lease) -> bytes:
    return (json.dumps({"owner": "citrec", **asdict(lease)}, indent=2, sort_keys=True) + "\n").encode("utf-8")


def acquire_lease(output: str, lease: Lease, break_lease: bool = False) -> Lease:
    """Take the output's lease for `lease`'s run, or raise `LeaseHeld` explaining who holds it. `break_lease`
    removes a lease another run left (said on stderr) and takes it."""
    path = FileSystems.join(output, LEASE)
    for _ in range(2):
        if _create_exclusive(path, _encode(lease)):
            return lease
        held = read_lease(output)
        if break_lease:
            print(f"--break_lease: breaking the lease of {held.describe() if held else 'an unreadable lease'}",
                  file=sys.stderr)
            FileSystems.delete([path])
            break_lease = False
            continue
        what = held.describe() if held else f"an unreadable lease file {LEASE}"
        raise LeaseHeld(
            f"--output {output!r} is in use by {what}. Two runs never write one output; if no run is using it, "
            "pass --break_lease"
        )
    raise LeaseHeld(f"--output {output!r}: another run took the lease while this one broke the old one")


def update_lease(output: str, lease: Lease) -> Lease:
    """Rewrite the lease this run holds (a new state or holder); the file exists, so this is no race for it."""
    with FileSystems.create(FileSystems.join(output, LEASE)) as handle:
        handle.write(_encode(lease))
    return lease


def release_lease(output: str, lease: Lease) -> None:
    """Remove the lease if it is still `lease`'s run's (a broken and retaken lease is the new run's, left alone)."""
    held = read_lease(output)
    if held is not None and held.run_id == lease.run_id:
        FileSystems.delete([FileSystems.join(output, LEASE)])


def take_over_for_commit(output: str, staged_run: str | None, pipeline: str, break_lease: bool) -> Lease:
    """The lease for `--commit_only`: free, or held by the run whose files are staged and which cannot be writing any
    more (its job was submitted and left, or its process is gone), or broken with `break_lease`."""
    held = read_lease(output)
    mine = Lease.new(pipeline, run_id=staged_run)
    if held is None:
        return acquire_lease(output, replace(mine, state="committing"), break_lease)
    same_run = staged_run is not None and held.run_id == staged_run
    idle = held.state == "submitted" or held.holder_alive() is False
    if (same_run and idle) or break_lease:
        if break_lease and not (same_run and idle):
            print(f"--break_lease: breaking the lease of {held.describe()}", file=sys.stderr)
        return update_lease(output, replace(mine, run_id=held.run_id if same_run else mine.run_id,
                                            state="committing"))
    raise LeaseHeld(
        f"--output {output!r} is in use by {held.describe()}; --commit_only commits a run whose job has finished. "
        "If no run is using it, pass --break_lease"
    )


def write_marker(output: str) -> None:
    """Mark `output` as citrec's (once: an existing marker is kept). The same bytes for every run, so that two runs
    of the same inputs leave the same files (which run wrote the dataset is in its manifest)."""
    path = FileSystems.join(output, MARKER)
    if read_json(path):
        return
    note = "citrec writes here and removes only what it wrote (docs/outputs.md)"
    _write_json(path, {"owner": "citrec", "note": note})


def write_run_record(staging: str, lease: Lease) -> None:
    """`_staging/_run.json`: which run the staged files are, for `--commit_only`."""
    _write_json(FileSystems.join(staging, RUN), {"run_id": lease.run_id, "pipeline": lease.pipeline,
                                                  "started": lease.started})


def staged_run_id(output: str) -> str | None:
    record = read_json(FileSystems.join(output, STAGING, RUN))
    return str(record["run_id"]) if record and record.get("run_id") else None
