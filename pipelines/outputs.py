"""What every pipeline does at its edges before any work: strict flags, one-line usage errors, input patterns
checked; and the small file helpers the output's ownership (`pipelines.ownership`) and commit (`pipelines.commit`)
share. The output's rules: docs/outputs.md.
"""

from __future__ import annotations

import argparse
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


class OneLineArgumentParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, `error: ... (see PROG --help)`, exit status 2 (argparse
    prints the whole usage first: for the pipelines some 190 lines of Beam's flags before the line that matters)."""

    def error(self, message: str) -> None:
        fail(f"{message} (see {self.prog} --help)")


class _OneLineParser(OneLineArgumentParser, _BeamArgumentParser):
    """Beam's argument parser (it reads Beam's own flag conventions), with one-line usage errors."""


def parse_strict(argv: Sequence[str], prog: str) -> PipelineOptions:
    """`PipelineOptions(argv)`, but an argument no options class knows stops the program (exit 2, one line)
    instead of Beam's warning "Discarding unparseable args"; a typo such as `--teii` must not quietly
    build the example corpus."""
    parser = _OneLineParser(prog=prog, allow_abbrev=False)
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


def is_local(path: str) -> bool:
    """Whether `path` is on the local filesystem (where a stat, an O_EXCL create or a rename is cheap and atomic)."""
    return isinstance(FileSystems.get_filesystem(path), LocalFileSystem)


def read_json(path: str) -> dict | None:
    """A small JSON file (a marker, a lease, a plan, a manifest), or None when it is missing, cut short, unreadable
    or not a JSON object: each means "no usable record"."""
    try:
        with FileSystems.open(path) as handle:
            value = json.loads(handle.read().decode("utf-8"))
    except Exception:  # noqa: BLE001 - missing, unreadable or not JSON: all mean "no usable record"
        return None
    return value if isinstance(value, dict) else None


SUFFIXES = {
    "tei": ("*.tei.xml", "*.xml", "*.tei.xml.gz", "*.xml.gz"),
    "s2orc": ("*.jsonl", "*.jsonl.gz", "*.json", "*.json.gz", "*.jsonl.zst", "*.ndjson"),
    "metadata": ("*.jsonl", "*.json", "*.jsonl.gz", "*.json.gz", "*.jsonl.zst"),
    "pdfs": ("*.pdf",),
    "reviews": ("*.json", "*.jsonl", "*.csv"),
}
"""The file names each input flag reads, most specific first: what a directory given to it is searched for."""


def suggest_glob(flag: str, directory: str) -> str:
    """For a directory given where files are expected: the glob that finds the files `flag` reads in it (at its top,
    else below it), with how many it matches; or what the directory lacks."""
    base = directory.rstrip("/")
    for depth in ("", "**/"):
        for suffix in SUFFIXES.get(flag, ("*",)):
            pattern = FileSystems.join(base, depth + suffix)
            try:
                found = [m for m in FileSystems.match([pattern])[0].metadata_list if not os.path.isdir(m.path)]
            except Exception:  # noqa: BLE001 - an unreadable directory suggests nothing
                found = []
            if found:
                return f"give the files, e.g. {pattern!r} ({len(found):,} files)"
    wanted = ", ".join(SUFFIXES.get(flag, ("*",)))
    return f"it holds no file --{flag} reads ({wanted}), at its top or below"


def check_patterns(inputs: dict[str, list[str]]) -> None:
    """Fail before the pipeline starts, in one line, when a pattern names a directory or matches no file."""
    for flag, patterns in inputs.items():
        for pattern in patterns:
            names_directory = pattern.endswith("/") or (is_local(pattern) and os.path.isdir(pattern))
            if names_directory and not _GLOB_CHARS.search(pattern):
                fail(f"--{flag} {pattern!r} is a directory; {suggest_glob(flag, pattern)}")
            if not FileSystems.match([pattern])[0].metadata_list:
                fail(f"--{flag} {pattern!r} matches no file")


def rename_files(sources: Sequence[str], destinations: Sequence[str]) -> None:
    """Move files on any Beam filesystem; local destination directories are made first (a local rename needs
    them, object stores have none)."""
    if not sources:
        return
    for destination in destinations:
        if is_local(destination):
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
