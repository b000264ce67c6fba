"""Every requested layout of a finished dataset in one Beam job. `WriteExports`/`run_exports`: tables read
and files written by workers, only each layout's counts read back; `write_exports` does it in a committed
dataset under its lease; `export_hatten` & co. write one layout."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions

from pipelines.commit import update_manifest
from pipelines.exports.configs import LayoutConfigs, write_configs
from pipelines.exports.contexts import ContextLayout, ExportContextLayout
from pipelines.exports.files import DROPPED, PRESENT, SPLIT_PREFIXES, JsonFile, WriteJsonFiles, empty_rows, json_text
from pipelines.exports.hatten import HATTEN, hatten_configs
from pipelines.exports.plan import LEGACY_JSON_DIR, ExportRequest
from pipelines.exports.rmc import RMC_FILES, ExportRmc, rmc_configs
from pipelines.exports.symtax import SYMTAX, symtax_configs
from pipelines.outputs import fail
from pipelines.ownership import Lease, acquire_lease, citrec_manifest, release_lease
from pipelines.tallies import step_label

CONTEXT_LAYOUTS: dict[str, ContextLayout] = {"hatten": HATTEN, "symtax": SYMTAX}
"""The layouts made by `ExportContextLayout`; `rmc` has its own transform, `ExportRmc`."""
LAYOUT_TABLES: dict[str, tuple[str, ...]] = {
    "hatten": ("papers", "contexts"),
    "symtax": ("papers", "contexts"),
    "rmc": ("positives", "candidates", "queries"),
}
"""The tables each layout reads; the first ones must hold rows files (a split table may have none)."""
SPLIT_TABLES = ("contexts", "queries")
LAYOUT_CONFIGS: dict[str, LayoutConfigs] = {"hatten": hatten_configs, "symtax": symtax_configs, "rmc": rmc_configs}
"""Each layout's run configurations, sized by its counts (docs/exports.md: "K within the pool"); not written into
the legacy `json/` directory of `--export_json`, which keeps the files it always had."""


def layout_files(name: str) -> tuple[JsonFile, ...]:
    return RMC_FILES if name == "rmc" else CONTEXT_LAYOUTS[name].files


def table_prefixes(name: str) -> list[str]:
    """The Parquet prefixes a layout reads (`papers/papers`, `contexts/train`, ...)."""
    return [
        f"{table}/{split}" if table in SPLIT_TABLES else f"{table}/{table}"
        for table in LAYOUT_TABLES[name]
        for split in (SPLIT_PREFIXES if table in SPLIT_TABLES else ("",))
    ]


def counts_path(temp: str, index: int | str) -> str:
    return FileSystems.join(temp, f"counts-{index}.json")


def ordered_counts(name: str, counts: Mapping[str, int]) -> dict[str, int]:
    """A layout's counts as they are printed: its files in their order (an optional file only when written), then
    what was left out, by reason."""
    files = [f.name for f in layout_files(name) if f.name in counts]
    return {**{f: counts[f] for f in files}, **{k: v for k, v in sorted(counts.items()) if k not in files}}


class _CountsFn(beam.DoFn):
    """Writes one export's counts, with the request they belong to, as a small JSON file."""

    def __init__(self, path: str, request: ExportRequest) -> None:
        self.path = path
        self.request = request

    def process(self, _, counts: dict) -> Iterator:
        record = {
            "name": self.request.name,
            "directory": self.request.directory,
            "counts": dict(sorted(counts.items())),
        }
        with FileSystems.create(self.path) as handle:
            handle.write(json_text(record).encode("utf-8"))
        yield self.path


class _ConfigsFn(beam.DoFn):
    """Writes one export's run configurations, sized by its counts, under its directory."""

    def __init__(self, directory: str, name: str) -> None:
        self.directory = directory
        self.name = name

    def process(self, _, counts: dict) -> Iterator:
        yield from write_configs(self.directory, LAYOUT_CONFIGS[self.name](counts))


def read_counts(temp: str) -> list[tuple[ExportRequest, dict[str, int]]]:
    """Each export's request and counts, in the order they were requested, from the small files the exports wrote
    under `temp` (the only thing read back); [] when there were none."""
    found = FileSystems.match([counts_path(temp, "*")])[0].metadata_list if FileSystems.exists(temp) else []
    results = []
    for path in sorted((m.path for m in found), key=lambda path: int(path.rsplit("-", 1)[1].split(".")[0])):
        with FileSystems.open(path) as handle:
            record = json.loads(handle.read().decode("utf-8"))
        request = ExportRequest(record["name"], record["directory"])
        results.append((request, ordered_counts(request.name, record["counts"])))
    return results


class WriteExports(beam.PTransform):
    """Every requested layout of a dataset's `tables` ({Parquet prefix: rows}, a missing split prefix an empty
    one) under `root/REQUEST.DIRECTORY/`, written by workers, with the peer's run configurations sized by the
    layout's counts (`LAYOUT_CONFIGS`); each request's counts (files and what was left out) go to
    `counts_path(temp, i)`, its temporary shards under `temp`."""

    def __init__(
        self, requests: Sequence[ExportRequest], root: str, temp: str, include_unresolved: bool = False
    ) -> None:
        super().__init__()
        self.requests = tuple(requests)
        self.root = root
        self.temp = temp
        self.include_unresolved = include_unresolved

    def expand(self, tables):
        pbegin = next(iter(tables.values())).pipeline
        written = []
        for index, request in enumerate(self.requests):
            label = f"{request.name.title()}{index}"
            directory = FileSystems.join(self.root, request.directory)
            made = tables | f"Layout{label}" >> (
                ExportRmc(self.include_unresolved)
                if request.name == "rmc"
                else ExportContextLayout(CONTEXT_LAYOUTS[request.name])
            )
            files = {"entries": made["entries"], "present": made[PRESENT]} | f"Write{label}" >> WriteJsonFiles(
                directory,
                layout_files(request.name),
                FileSystems.join(self.temp, str(index)),
            )
            counts = (
                (files, made[DROPPED])
                | f"Counts{label}" >> beam.Flatten()
                | f"Sum{label}" >> beam.CombinePerKey(sum)
                | f"CountDict{label}" >> beam.combiners.ToDict()
            )
            written.append(
                pbegin
                | f"Finish{label}" >> beam.Create([None])
                | f"WriteCounts{label}"
                >> beam.ParDo(_CountsFn(counts_path(self.temp, index), request), beam.pvalue.AsSingleton(counts))
            )
            if request.directory != LEGACY_JSON_DIR:
                written.append(
                    pbegin
                    | f"ConfigsFor{label}" >> beam.Create([None])
                    | f"WriteConfigs{label}"
                    >> beam.ParDo(_ConfigsFn(directory, request.name), beam.pvalue.AsSingleton(counts))
                )
        return written


def read_tables(pipeline: beam.Pipeline, dataset: str, requests: Sequence[ExportRequest]) -> dict:
    """The Parquet tables the requested layouts read, as rows, read by workers (`ReadFromParquet`); a layout's
    required table with no files is a `FileNotFoundError`, checked before the pipeline runs."""
    tables = {}
    for request in requests:
        for prefix in table_prefixes(request.name):
            if prefix in tables:
                continue
            pattern = FileSystems.join(dataset, f"{prefix}-*.parquet")
            label = step_label(prefix)
            if FileSystems.match([pattern])[0].metadata_list:
                tables[prefix] = pipeline | f"Read{label}" >> beam.io.ReadFromParquet(pattern)
            elif prefix.split("/")[0] in SPLIT_TABLES:
                tables[prefix] = empty_rows(pipeline, f"No{label}")
            else:
                raise FileNotFoundError(f"{FileSystems.join(dataset, prefix.split('/')[0])}/ holds no Parquet table")
    return tables


def run_exports(
    dataset: str,
    requests: Sequence[ExportRequest],
    root: str,
    *,
    include_unresolved: bool = False,
    argv: Sequence[str] = (),
) -> list[tuple[ExportRequest, dict[str, int]]]:
    """The requested layouts of the finished dataset `dataset`, under `root/REQUEST.DIRECTORY/`, in one Beam
    pipeline (`argv`: Beam's flags; FnApiRunner by default); returns each request with its counts."""
    if not requests:
        return []
    temp = FileSystems.join(root, f"beam-temp-export-{uuid.uuid4().hex}")
    options = PipelineOptions(["--runner=FnApiRunner", *argv])
    options.view_as(SetupOptions).save_main_session = False
    try:
        with beam.Pipeline(options=options) as pipeline:
            tables = read_tables(pipeline, dataset, requests)
            _ = tables | "Exports" >> WriteExports(requests, root, temp, include_unresolved)
        return read_counts(temp)
    finally:
        if FileSystems.exists(temp):
            FileSystems.delete([temp])


def write_exports(
    dataset: str, requests: Sequence[ExportRequest], *, include_unresolved: bool = False, argv: Sequence[str] = ()
) -> list[tuple[ExportRequest, dict[str, int]]]:
    """Write every requested layout of the finished dataset under `dataset` in one Beam pipeline (FnApiRunner unless
    `argv` names another runner and its flags); returns each request with its counts. Into a committed citrec
    dataset, under its lease (`pipelines.ownership`): a layout never replaces a file the dataset's manifest does not
    list, and the manifest then lists the layout's files, so that `--overwrite` removes them with the dataset."""
    manifest = citrec_manifest(dataset)
    if manifest is None:
        return run_exports(dataset, requests, dataset, include_unresolved=include_unresolved, argv=argv)
    listed = {f.get("path") for f in manifest.get("files", [])}
    for request in requests:
        found = FileSystems.join(dataset, request.directory, "**")
        prefix = dataset.rstrip("/") + "/"
        present = [m.path[len(prefix) :] for m in FileSystems.match([found])[0].metadata_list]
        foreign = [path for path in present if path not in listed]
        if foreign:
            fail(
                f"{FileSystems.join(dataset, request.directory)} holds {len(foreign)} files the dataset's manifest "
                f"does not list ({', '.join(foreign[:3])}): the export would replace them; move them away first"
            )
    lease = acquire_lease(dataset, Lease.new("exports"))
    try:
        results = run_exports(dataset, requests, dataset, include_unresolved=include_unresolved, argv=argv)
        update_manifest(dataset, [request.directory for request in requests])
        return results
    finally:
        release_lease(dataset, lease)


def export_hatten(dataset: str, output: str) -> dict[str, int]:
    """The layout of nianlonggu/Local-Citation-Recommendation's `data/custom/` (HAtten prefetcher + SciBERT
    reranker) in `output`; returns the items per file and what was left out."""
    return _export_one(dataset, output, "hatten")


def export_symtax(dataset: str, output: str) -> dict[str, int]:
    """The layout goyalkaraniit/SymTax's per.py and reranker read, in `output`; returns the items per file and what
    was left out (papers whose primary category SymTax has no embedding for, and the contexts that touch them)."""
    return _export_one(dataset, output, "symtax")


def export_rmc(dataset: str, output: str, include_unresolved: bool = False) -> dict[str, int]:
    """The layout ChainsawM/RMC's MCDataset reads under its project root's `data/`, in `output`; returns the items
    per file and what was left out. Title-only (unresolved) positives are left out unless `include_unresolved`."""
    return _export_one(dataset, output, "rmc", include_unresolved)


def _export_one(dataset: str, output: str, name: str, include_unresolved: bool = False) -> dict[str, int]:
    parent, directory = output.rstrip("/").rsplit("/", 1) if "/" in output.rstrip("/") else (".", output)
    [(_, counts)] = run_exports(
        dataset, [ExportRequest(name, directory)], parent, include_unresolved=include_unresolved
    )
    return counts


EXPORTERS: dict[str, Callable[..., dict[str, int]]] = {
    "hatten": export_hatten,
    "symtax": export_symtax,
    "rmc": export_rmc,
}
