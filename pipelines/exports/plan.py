"""Which layouts a run writes, and where. `plan_exports` checks `--export NAME[,NAME]` and `--export_json`
before any work; `ExportPlan` is what a pipeline hands to `WriteDataset`; `format_export` is the summary line."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

from pipelines.outputs import fail

PIPELINE_EXPORTS: dict[str, tuple[str, ...]] = {"arsyta": ("hatten", "symtax"), "citationr": ("rmc",)}
"""The layouts each pipeline can write (`--export NAME[,NAME]`)."""
EXPORT_JSON_ALIAS: dict[str, str] = {"arsyta": "hatten", "citationr": "rmc"}
"""`--export_json` is this layout, written where it always was: OUTPUT/json/."""
EXPORT_DIR = "export"
LEGACY_JSON_DIR = "json"


@dataclass(frozen=True)
class ExportRequest:
    """One layout to write after a run, into `directory` (relative to the dataset)."""

    name: str
    directory: str


def plan_exports(names: Iterable[str], export_json: bool, pipeline: str) -> tuple[ExportRequest, ...]:
    """The exports a run asked for (`--export` values, comma-separated and repeatable, and `--export_json`),
    checked before any work: a name the pipeline does not write stops the program in one line (exit 2)."""
    known = PIPELINE_EXPORTS[pipeline]
    wanted = list(dict.fromkeys(n.strip() for value in names for n in value.split(",") if n.strip()))
    for name in wanted:
        if name not in known:
            elsewhere = [p for p, layouts in PIPELINE_EXPORTS.items() if name in layouts]
            hint = f"; {name} is written by pipelines.{elsewhere[0]}" if elsewhere else ""
            fail(f"--export {name!r}: pipelines.{pipeline} writes {', '.join(known)}{hint}")
    requests = [ExportRequest(name, f"{EXPORT_DIR}/{name}") for name in wanted]
    if export_json:
        requests.append(ExportRequest(EXPORT_JSON_ALIAS[pipeline], LEGACY_JSON_DIR))
    return tuple(requests)


@dataclass(frozen=True)
class ExportPlan:
    """The layouts a run writes, in its own Beam job (`WriteDataset`), and whether RMC keeps title-only positives."""

    requests: tuple[ExportRequest, ...] = ()
    include_unresolved: bool = False


NO_EXPORTS = ExportPlan()


def export_temp(output: str) -> str:
    """Where a run's exports keep their temporary shards and counts: a `beam-temp-` directory, which the commit
    never moves into the dataset."""
    return FileSystems.join(output, "beam-temp-export")


def format_export(request: ExportRequest, counts: Mapping[str, int]) -> str:
    """One line for the end-of-run summary: the files with their item counts, then what was left out."""
    return f"export {request.name} -> {request.directory}/: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())
