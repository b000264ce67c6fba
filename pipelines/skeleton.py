"""The one shape every dataset pipeline has, so that `pipelines.arsyta` and `pipelines.citationr` only say what
is their own.

`DatasetPipeline.run`: strict flags; the inputs (or the bundled example); checks before any work (exit 2, one
line); the output claimed and written through `_staging/`; the Beam pipeline, ending in `WriteDataset`; the
commit; the summary. `--no_wait_until_finish` stops after submitting, `--commit_only` commits later, and
`--dry_run=True` only builds the job. The steps in full: docs/design.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions, StandardOptions, TestOptions

from extractors.schemas import DEAD_LETTER_SCHEMA, INPUTS_SCHEMA, SPLITS, dead_letter_row, input_row
from pipelines.commit import CommitError, commit_output, write_ledger
from pipelines.exports import (
    NO_EXPORTS,
    ExportPlan,
    WriteExports,
    export_temp,
    format_export,
    plan_exports,
    read_counts,
)
from pipelines.inputs import AccountInputs, ReadConfig
from pipelines.options import CorpusOptions, read_config
from pipelines.outputs import STAGING, SUCCESS, UsageError, check_patterns, fail, parse_strict, read_stats
from pipelines.ownership import (
    LEASE,
    MARKER,
    Lease,
    acquire_lease,
    check_not_foreign,
    check_output_path,
    is_citrec_output,
    list_files,
    plan_removal,
    release_lease,
    remove_written,
    staged_run_id,
    take_over_for_commit,
    update_lease,
    write_marker,
    write_run_record,
)
from pipelines.parquet import ParquetTable, WriteParquetTables
from pipelines.tallies import DEAD, INPUTS, TALLY, SumDictFn, step_label

LOG = logging.getLogger(__name__)

BEAM_EPILOG = (
    "Beam options (--runner, --direct_num_workers, --direct_running_mode, --project, --region, "
    "--temp_location, --setup_file, ...) are accepted too; see Beam's PipelineOptions."
)

Inputs = dict[str, list[str]]
"""Input patterns by flag name (`{"tei": [...], "metadata": [...]}`)."""


# ------------------------------------------------------------------------------------------ the tables


@dataclass(frozen=True)
class Table:
    """One Parquet table of a dataset, written from `WriteDataset`'s input of the same name.

    `row` turns a record into its row by the table's schema (`extractors.schemas`); None: the records are rows
    already. With `split` (a record's split) the table is one set of files per split, `NAME/SPLIT-*.parquet`;
    without it, `NAME/NAME-*.parquet`."""

    name: str
    schema: pa.Schema
    row: Callable[[Any], dict[str, object]] | None = None
    split: Callable[[Any], str] | None = None

    @property
    def label(self) -> str:
        """The CamelCase name of the table's steps (`dead_letter` -> `DeadLetter`)."""
        return step_label(self.name)

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The table's Parquet prefixes: `NAME/SPLIT` for each split, or `NAME/NAME`."""
        if self.split is None:
            return (f"{self.name}/{self.name}",)
        return tuple(f"{self.name}/{split}" for split in SPLITS)

    def tagged(self, record) -> tuple[str, dict[str, object]]:
        """`(prefix, row)`: the record's row and the Parquet prefix it is written under."""
        row = record if self.row is None else self.row(record)
        return (f"{self.name}/{self.name}" if self.split is None else f"{self.name}/{self.split(record)}"), row


TABLES_TEMP = "beam-temp-tables"
"""Where (under the staging directory) the tables' temporary files are written before they are named."""


def _prefix_index(element: tuple[str, object], _: int, index: Mapping[str, int]) -> int:
    return index[element[0]]


def _write_files(_, output: str, finish: Callable[..., Mapping[str, bytes]], **values) -> str:
    """Runs once, at the end of the pipeline: the files `finish` makes of the summed tallies and the figures."""
    for name, data in finish(**values).items():
        with FileSystems.create(FileSystems.join(output, name)) as handle:
            handle.write(data)
    return output


class WriteDataset(beam.PTransform):
    """The end every dataset shares: `tables` as Parquet shards, `dead` as `dead_letter/`, `inputs` as `inputs/`,
    and, once every count is in, the files `finish(tallies=..., **figures)` returns (stats.json, the card, plots).

    The input is a dict: one PCollection per table, `dead`, `tally` (`(name, n)` pairs), optionally `inputs`
    (`InputTally`s); any other entry is a one-value figure handed to `finish` under its name. `exports`: the peers'
    layouts, written by workers in the same job. Returns the output directory, once written."""

    def __init__(
        self,
        output: str,
        num_shards: int,
        tables: Sequence[Table],
        finish: Callable[..., Mapping[str, bytes]],
        exports: ExportPlan = NO_EXPORTS,
    ) -> None:
        super().__init__()
        self.output = output
        self.num_shards = num_shards
        self.tables = tuple(tables)
        self.finish = finish
        self.exports = exports

    def expand(self, inputs):
        tables = [inputs[table.name] | f"{table.label}Rows" >> beam.Map(table.tagged) for table in self.tables]
        sink = [ParquetTable(p, table.schema, self.num_shards) for table in self.tables for p in table.prefixes]
        exported = []
        if self.exports.requests:
            exported = self._by_prefix(tables) | "Exports" >> WriteExports(
                self.exports.requests, self.output, export_temp(self.output), self.exports.include_unresolved
            )
        tables.append(inputs[DEAD] | "DeadRows" >> beam.Map(DEAD_LETTERS.tagged))
        sink.append(ParquetTable(DEAD_LETTERS.prefixes[0], DEAD_LETTERS.schema, num_shards=1))
        if INPUTS in inputs:
            accounts = inputs[INPUTS] | "AccountInputs" >> AccountInputs()
            tables.append(accounts | "InputRows" >> beam.Map(INPUT_ROWS.tagged))
            sink.append(ParquetTable(INPUT_ROWS.prefixes[0], INPUT_ROWS.schema, num_shards=1))
        temp = FileSystems.join(self.output, TABLES_TEMP)
        sinks = WriteParquetTables(self.output, sink, temp)
        named = {str(i): rows for i, rows in enumerate(tables)} | "WriteTables" >> sinks
        tallies = inputs[TALLY] | "SumTallies" >> beam.CombineGlobally(SumDictFn())
        written = {table.name for table in self.tables} | {DEAD, TALLY, INPUTS}
        figures = {name: pcoll for name, pcoll in inputs.items() if name not in written}
        values = {name: beam.pvalue.AsSingleton(pcoll) for name, pcoll in {**figures, "tallies": tallies}.items()}
        pbegin = inputs[TALLY].pipeline
        stats = pbegin | "Finish" >> beam.Create([None]) | "WriteStats" >> beam.Map(
            _write_files, output=self.output, finish=self.finish, **values
        )
        done = {"tables": beam.pvalue.AsList(named), "stats": beam.pvalue.AsList(stats)}
        done.update({f"export{i}": beam.pvalue.AsList(pcoll) for i, pcoll in enumerate(exported)})
        return (
            pbegin
            | "Done" >> beam.Create([None])
            | "WriteLedger" >> beam.Map(write_ledger, staging=self.output, prefixes=[t.prefix for t in sink], **done)
        )

    def _by_prefix(self, tables: list) -> dict:
        """The tables' rows by Parquet prefix (what the exports read), every prefix present, empty or not."""
        by_prefix = {}
        for table, rows in zip(self.tables, tables, strict=True):
            prefixes = table.prefixes
            parts = [rows]
            if len(prefixes) > 1:
                index = {prefix: i for i, prefix in enumerate(prefixes)}
                parts = rows | f"{table.label}ByPrefix" >> beam.Partition(_prefix_index, len(prefixes), index)
            for prefix, part in zip(prefixes, parts, strict=True):
                by_prefix[prefix] = part | f"Only{step_label(prefix)}" >> beam.Values()
        return by_prefix


DEAD_LETTERS = Table("dead_letter", DEAD_LETTER_SCHEMA, dead_letter_row)
INPUT_ROWS = Table("inputs", INPUTS_SCHEMA, input_row)
"""The two tables every dataset has, each written as one file."""


# ------------------------------------------------------------------------------------------------ a run

IN_PROCESS_RUNNERS = ("fnapirunner", "directrunner", "direct", "bundlebaseddirectrunner", "switchingdirectrunner")
"""Runners whose job ends when the launching process does (its workers are its threads or children)."""


def interrupted_state(output: str, prog: str) -> str:
    """What an interrupted run leaves in `output`, in one line: where it stopped and what to do next."""
    from pipelines.commit import LEDGER
    from pipelines.ownership import COMMIT_PLAN

    staging = FileSystems.join(output, STAGING)
    try:
        if FileSystems.exists(FileSystems.join(staging, COMMIT_PLAN)):
            return (
                f"the commit of {output} was cut short and nothing is marked done; `{prog} --commit_only --output "
                f"{output}` finishes it"
            )
        if FileSystems.exists(FileSystems.join(staging, LEDGER)):
            return (
                f"the job had finished and nothing is committed; `{prog} --commit_only --output {output}` commits it"
            )
        if FileSystems.exists(staging):
            return (
                f"the job was stopped before it finished; nothing in {output} is marked done and {STAGING}/ holds "
                "this run's partial files; run again with --overwrite to start over"
            )
    except Exception:  # noqa: BLE001 - the state is a courtesy; the exit status says the run stopped
        return "the run stopped before its commit; nothing is marked done"
    return f"stopped before anything was written to {output}"


def use_fn_api_runner(options: PipelineOptions) -> None:
    """Run Beam's DirectRunner (also the default when no `--runner` is given) as the FnApiRunner, the runner the
    tests use: Beam 2.77's DirectRunner first tries to download and start the Prism runner from the internet, which
    offline costs a failed download and online runs the job on a runner citrec never tests. The DirectRunner's own
    flags (`--direct_num_workers`, `--direct_running_mode`) are the FnApiRunner's too."""
    standard = options.view_as(StandardOptions)
    runner = standard.runner
    if runner is None or (isinstance(runner, str) and runner.lower() in ("directrunner", "direct")):
        standard.runner = "FnApiRunner"
        LOG.debug("runner: FnApiRunner (Beam's DirectRunner would first try to download the Prism runner)")


def check_runner(options: PipelineOptions) -> None:
    """Before any work: the runner exists and can be made here (one `UsageError` line otherwise), and
    DataflowRunner has Google Cloud credentials (Beam would find out only after building and staging the job)."""
    from apache_beam.runners.runner import create_runner

    runner = options.view_as(StandardOptions).runner
    if not isinstance(runner, str):
        return
    try:
        create_runner(runner)
    except ValueError:
        raise UsageError(
            f"--runner {runner!r} is not a Beam runner: use FnApiRunner (the default; local), DataflowRunner, "
            "FlinkRunner, SparkRunner or PortableRunner"
        ) from None
    except ImportError as err:
        raise UsageError(f"--runner {runner!r} needs {err.name or 'a package'}: pip install -e '.[dataflow]'") from None
    if runner.lower() in ("dataflowrunner", "dataflow") and not options.view_as(TestOptions).dry_run:
        check_gcp_credentials()


def check_gcp_credentials() -> None:
    """DataflowRunner's Google Cloud credentials, found the way Beam will look for them, or one `UsageError` line."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError:
        raise UsageError("--runner DataflowRunner needs the [dataflow] extra: pip install -e '.[dataflow]'") from None
    try:
        google.auth.default()
    except DefaultCredentialsError:
        raise UsageError(
            "--runner DataflowRunner: no Google Cloud credentials found; run `gcloud auth application-default "
            "login` or set GOOGLE_APPLICATION_CREDENTIALS to a service account key, then run again (nothing was "
            "started)"
        ) from None


def runs_in_this_process(options: PipelineOptions) -> bool:
    runner = options.view_as(StandardOptions).runner
    return not isinstance(runner, str) or runner.lower() in IN_PROCESS_RUNNERS


RUN_GC_THRESHOLD = 50_000
"""Net allocations of container objects between the garbage collector's young collections while a pipeline runs
in this process (CPython's default: 700)."""


@contextlib.contextmanager
def gc_tuned_for_run(tuned: bool = True) -> Iterator[None]:
    """While the pipeline runs in this process, the cyclic garbage collector does less of the work that finds
    nothing. The objects alive before the run (the modules imported, the flags, the pipeline's graph: some 250,000)
    are left out of its full collections (`gc.freeze`), which otherwise walk them all each time. Young collections
    run every `RUN_GC_THRESHOLD` net allocations instead of every 700 (`gc.set_threshold`). Beam's worker makes
    and drops objects by the million, and each young collection that finds no cycle costs time. Together these
    are a tenth of a 1,000-paper run's CPU (bench/RESULTS.md). Cycles wait longer to be collected: a few MB.

    Both are handed back when the run ends, also when it fails, so nothing is kept that would have been
    collected. A process that froze objects itself keeps them frozen. A threshold it set higher is kept. A
    process that turned the collector off is left as it is."""
    if not tuned or not gc.isenabled():
        yield
        return
    freeze = not gc.get_freeze_count()
    thresholds = gc.get_threshold()
    if freeze:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], RUN_GC_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freeze:
            gc.unfreeze()



@dataclass(frozen=True)
class RunRequest:
    """A run's flags once the common ones are checked: what a pipeline's `configure` reads."""

    options: PipelineOptions
    """Every flag; `options.view_as(...)` for the pipeline's own."""
    corpus: CorpusOptions
    inputs: Inputs
    read: ReadConfig


@dataclass(frozen=True)
class Plan:
    """What a pipeline's `configure` decided: `build(pipeline, inputs, staging, exports=ExportPlan)` wires its stages
    and `WriteDataset` into `pipeline`, writing under `staging`; `include_unresolved` is for the RMC export."""

    build: Callable[[beam.Pipeline, Inputs, str], object]
    include_unresolved: bool = False


def _no_warnings(_stats: Mapping) -> list[str]:
    return []


def _no_tables(_stats: Mapping) -> dict[str, int]:
    return {}


@dataclass(frozen=True)
class DatasetPipeline:
    """What one dataset pipeline is: its name, flags, inputs, example, settings, summary and checks."""

    name: str
    """`arsyta`: run as `python -m pipelines.arsyta`, recorded as `citrec arsyta`, its exports planned by it."""
    description: str
    """`--help`'s text (the module's docstring)."""
    options: type[PipelineOptions]
    """The pipeline's own flags; the corpus, database and output flags are `CorpusOptions`."""
    default_output: str
    input_flags: Callable[[CorpusOptions, PipelineOptions], Inputs]
    """The input patterns the flags give, by flag name (the options passed are the pipeline's own)."""
    example_unless: tuple[str, ...]
    """When none of these inputs is given, the run uses `example()` instead, saying so (`example_note`)."""
    example: Callable[[], Inputs]
    example_note: str
    configure: Callable[[RunRequest], Plan]
    """The pipeline's own settings from its flags, checked before any work (exit 2 on a bad one)."""
    summarize: Callable[[Mapping], str]
    """The end-of-run summary of stats.json (`extractors.assembly.format_summary`)."""
    warnings: Callable[[Mapping], list[str]] = _no_warnings
    committed_rows: Callable[[Mapping], dict[str, int]] = _no_tables
    """Rows each table (`contexts/train`, `papers/papers`) must hold by stats.json; a mismatch stops the commit."""

    @property
    def prog(self) -> str:
        return f"python -m pipelines.{self.name}"

    def run(self, argv: Sequence[str] | None = None) -> dict:
        """Parse flags, run the pipeline to completion, commit, print the summary; return stats.json. With Beam's
        `--no_wait_until_finish` the job is submitted and left to run (returns {}; what a Dataflow Flex Template's
        launcher must do), and a later `--commit_only` commits what the finished job left in `_staging/`.
        The output is the run's alone from the start to the commit (`pipelines.ownership`: its lease)."""
        options = parse_strict(list(argv if argv is not None else sys.argv[1:]), self.prog)
        corpus = options.view_as(CorpusOptions)
        options.view_as(SetupOptions).save_main_session = False
        use_fn_api_runner(options)
        try:
            check_runner(options)
        except UsageError as err:
            fail(str(err))
        output = corpus.output or self.default_output
        if corpus.commit_only:
            return self.commit_only(output, corpus.break_lease)
        inputs = self.choose_inputs(self.input_flags(corpus, options.view_as(self.options)))
        check_patterns(inputs)
        read = read_config(corpus)
        exports = plan_exports(corpus.export, corpus.export_json, self.name)
        plan = self.configure(RunRequest(options, corpus, inputs, read))
        if options.view_as(TestOptions).dry_run:
            return self.dry_run(options, plan, inputs, output, ExportPlan(exports, plan.include_unresolved))
        lease = self.claim(output, corpus.overwrite, corpus.break_lease)
        keep_lease = False
        try:
            staging = FileSystems.join(output, STAGING)
            with gc_tuned_for_run(runs_in_this_process(options)), beam.Pipeline(options=options) as pipeline:
                plan.build(pipeline, inputs, staging, exports=ExportPlan(exports, plan.include_unresolved))
            if options.view_as(StandardOptions).no_wait_until_finish:
                job = getattr(pipeline.result, "job_id", lambda: None)()
                update_lease(output, replace(lease, state="submitted", job_id=job))
                keep_lease = True
                print(
                    f"submitted{f' as job {job}' if job else ''} and not waited for (--no_wait_until_finish); once it "
                    f"has finished, `{self.prog} --commit_only --output {output}` commits the dataset"
                )
                return {}
            return self.commit(output)
        except BaseException:
            if not runs_in_this_process(options):
                keep_lease = True
                print(
                    f"the lease on {output} is kept: the job may still be running on "
                    f"{options.view_as(StandardOptions).runner}; once it has stopped, `--commit_only` commits it or "
                    "--break_lease frees the output",
                    file=sys.stderr,
                )
            raise
        finally:
            if not keep_lease:
                release_lease(output, lease)

    def claim(self, output: str, overwrite: bool, break_lease: bool) -> Lease:
        """Take `output` for this run (`pipelines.ownership`): refused if it is not citrec's, or in use, or holds a
        dataset and `overwrite` is not given; with `overwrite`, what an earlier run wrote there is removed, and only
        that. Returns the lease; usage errors end the program (exit 2, one line)."""
        try:
            check_output_path(output)
            check_not_foreign(output)
            lease = acquire_lease(output, Lease.new(self.name), break_lease)
        except UsageError as err:
            fail(str(err))
        except OSError as err:
            fail(f"cannot write to --output {output!r}: {err.strerror or err}")
        try:
            self._prepare(output, overwrite, lease)
        except BaseException as err:
            release_lease(output, lease)
            if isinstance(err, UsageError):
                fail(str(err))
            if isinstance(err, OSError):
                fail(f"cannot write to --output {output!r}: {err.strerror or err}")
            raise
        return lease

    def _prepare(self, output: str, overwrite: bool, lease: Lease) -> None:
        check_not_foreign(output, ignore=(LEASE, MARKER))  # again, under the lease: nothing came in meanwhile
        content = [f for f in list_files(output) if f not in (LEASE, MARKER)]
        if content:
            if not overwrite:
                finished = SUCCESS in content
                what = "a finished dataset" if finished else "files of an unfinished run"
                raise UsageError(
                    f"--output {output!r} already holds {what} ({len(content):,} files). Pass --overwrite to remove "
                    "what citrec wrote there (and only that), or give a new directory."
                )
            removal = plan_removal(output)
            print(removal.describe(output), file=sys.stderr)
            remove_written(output, removal)
        write_marker(output)
        staging = FileSystems.join(output, STAGING)
        write_run_record(staging, lease)

    def commit_only(self, output: str, break_lease: bool) -> dict:
        """`--commit_only`: commit the run staged in `output` (a job left running by `--no_wait_until_finish`, or a
        commit cut short), under the output's lease."""
        try:
            check_output_path(output)
            if not is_citrec_output(output):
                raise UsageError(f"--output {output!r} is not a citrec output: nothing to commit")
            lease = take_over_for_commit(output, staged_run_id(output), self.name, break_lease)
        except UsageError as err:
            fail(str(err))
        try:
            return self.commit(output)
        finally:
            release_lease(output, lease)

    def commit(self, output: str) -> dict:
        """After the job: the dataset in `output/_staging/` committed (`pipelines.commit`: every table's rows, every
        file's size and the manifest checked before `_SUCCESS`), the exports' counts, the summary; returns
        stats.json. A commit that cannot be made prints one `error:` line and exits 1, marking nothing done."""
        staging = FileSystems.join(output, STAGING)
        where = staging if FileSystems.exists(FileSystems.join(staging, "stats.json")) else output
        if not FileSystems.exists(FileSystems.join(where, "stats.json")):
            fail(f"{staging} holds no finished run (no stats.json): nothing to commit")
        stats = read_stats(where)
        export_counts = read_counts(export_temp(staging)) if where == staging else []
        try:
            commit_output(output, f"citrec {self.name}", stats.get("options"), stats, self.committed_rows(stats))
        except CommitError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        except OSError as err:
            where = f" ({err.filename})" if err.filename else ""
            print(
                f"error: the commit of {output} stopped: {err.strerror or err}{where}; nothing is marked done: once "
                f"the cause is fixed, `{self.prog} --commit_only --output {output}` finishes it",
                file=sys.stderr,
            )
            raise SystemExit(1) from None
        for request, counts in export_counts:
            print(format_export(request, counts))
        print(self.summarize(stats))
        for warning in self.warnings(stats):
            print(f"warning: {warning}", file=sys.stderr)
        print(f"dataset written to {output}")
        return stats

    def dry_run(self, options: PipelineOptions, plan: Plan, inputs: Inputs, output: str, exports: ExportPlan) -> dict:
        """`--dry_run=True`: the job built (every DoFn pickled into the runner's graph) and handed to DataflowRunner,
        which builds its job and submits nothing; any other runner would run it, so it is not handed over. Nothing
        is written, read back, committed or exported; returns {}."""
        pipeline = beam.Pipeline(options=options)
        plan.build(pipeline, inputs, FileSystems.join(output, STAGING), exports=exports)
        transforms = len(pipeline.to_runner_api().components.transforms)
        runner = type(pipeline.runner).__name__
        if runner == "DataflowRunner":
            pipeline.run().wait_until_finish()
        print(
            f"dry run: the {runner} job was built ({transforms} transforms) and not run; nothing was written to "
            f"{output}, no stats, commit or exports"
        )
        return {}

    def choose_inputs(self, given: Inputs) -> Inputs:
        """The given inputs, or the bundled example when none of `example_unless` is given."""
        if any(given.get(flag) for flag in self.example_unless):
            return given
        example = self.example()
        print(self.example_note, file=sys.stderr)
        return example

    def print_help(self) -> None:
        parser = argparse.ArgumentParser(
            prog=self.prog,
            description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=BEAM_EPILOG,
        )
        CorpusOptions._add_argparse_args(parser)  # noqa: SLF001 - the flags Beam itself reads
        self.options._add_argparse_args(parser)  # noqa: SLF001
        parser.print_help()

    def main(self, argv: Sequence[str] | None = None) -> None:
        """`python -m pipelines.NAME`: `--help`, or a run with INFO logging from the pipelines."""
        argv = list(argv if argv is not None else sys.argv[1:])
        if "-h" in argv or "--help" in argv:
            self.print_help()
            return
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", force=True)
        logging.getLogger("pipelines").setLevel(logging.INFO)
        try:
            self.run(argv)
        except KeyboardInterrupt:
            output = parse_strict(argv, self.prog).view_as(CorpusOptions).output or self.default_output
            print(f"interrupted: {interrupted_state(output, self.prog)}", file=sys.stderr)
            raise SystemExit(130) from None
