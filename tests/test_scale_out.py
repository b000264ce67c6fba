"""The pipelines the way distributed runners run Python: on external SDK worker processes over gRPC (the Fn API path
Dataflow, Flink and Spark use), as a Dataflow job built offline, as a Flex Template and an Airflow DAG; and what
keeps one process from holding the corpus (GROBID concurrency per process, the metadata snapshot in byte ranges)."""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.paths import REPO

EXAMPLES = REPO / "examples"
DATAFLOW = EXAMPLES / "dataflow"
VENV_BIN = str(Path(sys.executable).parent)


def python_env(**extra: str) -> dict[str, str]:
    """This interpreter's directory first on PATH: the worker pool starts its SDK workers as `python`."""
    return {**os.environ, "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""), **extra}


def run_module(module: str, *flags: str, env: dict[str, str] | None = None, timeout: int = 300):
    return subprocess.run(
        [sys.executable, "-m", module, *flags],
        cwd=REPO,
        env=env or python_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dataset_content(directory: Path) -> dict[str, object]:
    """Every table's rows (sorted), every export file's JSON, and stats.json: what two runs must agree on."""
    content: dict[str, object] = {}
    tables: dict[str, list[str]] = {}
    for path in sorted(directory.rglob("*")):
        name = str(path.relative_to(directory))
        if path.suffix == ".parquet":
            rows = [json.dumps(r, sort_keys=True, default=str) for r in pq.read_table(path).to_pylist()]
            tables.setdefault(path.parent.name + "/" + path.name.split("-")[0], []).extend(rows)
        elif path.suffix == ".json" and name != "manifest.json":
            content[name] = json.loads(path.read_text())
    content.update({table: sorted(rows) for table, rows in tables.items()})
    return content


# ------------------------------------------------------------------------------------ external SDK workers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def worker_pool(tmp_path_factory):
    """`apache_beam.runners.worker.worker_pool_main`: a pool that starts a separate SDK worker process (`python`,
    this venv's) for every worker a job asks for, and talks to it over gRPC. Yields (port, its log)."""
    assert shutil.which("python", path=VENV_BIN), "the pool starts its SDK workers as `python`"
    port = free_port()
    log = tmp_path_factory.mktemp("pool") / "worker_pool.log"
    with open(log, "w") as handle:
        pool = subprocess.Popen(
            [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={port}"],
            cwd=REPO,
            env=python_env(),
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("localhost", port), timeout=1).close()
                break
            except OSError:
                if pool.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the worker pool did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        yield port, log
    finally:
        pool.terminate()
        try:
            pool.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pool.kill()


PIPELINE_RUNS = {
    # the join matcher in arsyta and the in-memory one in citationr, each with its peers' exports
    "arsyta": ["--title_matcher=join", "--export", "hatten,symtax"],
    "citationr": ["--export", "rmc"],
}


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(PIPELINE_RUNS))
def test_external_sdk_workers_write_what_fnapirunner_writes(name, worker_pool, tmp_path):
    """`python -m pipelines.NAME` on PortableRunner with an external worker pool (every DoFn unpickled and run in
    separate SDK worker processes) writes the same tables, exports and stats.json as on FnApiRunner; and nothing
    the job ships to workers is a function or DoFn of `__main__` (the module `python -m` runs), which a worker
    could not import."""
    port, log = worker_pool
    flags = PIPELINE_RUNS[name]
    record = tmp_path / "shipped.txt"
    reference = run_module(
        f"pipelines.{name}",
        "--runner=tests.support.recording.RecordingRunner",
        "--output",
        str(tmp_path / "fnapi"),
        *flags,
        env=python_env(CITREC_RECORD_MODULES=str(record)),
    )
    assert reference.returncode == 0, reference.stderr[-3000:]
    shipped = record.read_text().splitlines()
    assert shipped and not [line for line in shipped if line.startswith("__main__:")]
    assert any(line.startswith("pipelines.") for line in shipped)
    started_before = log.read_text().count("Starting worker with command")
    portable = run_module(
        f"pipelines.{name}",
        "--runner=PortableRunner",
        "--job_endpoint=embed",
        "--environment_type=EXTERNAL",
        f"--environment_config=localhost:{port}",
        "--output",
        str(tmp_path / "portable"),
        *flags,
    )
    assert portable.returncode == 0, portable.stderr[-3000:]
    assert log.read_text().count("Starting worker with command") > started_before  # real SDK worker processes
    expected = dataset_content(tmp_path / "fnapi")
    assert any(key.startswith("export/") for key in expected) and "stats.json" in expected
    assert dataset_content(tmp_path / "portable") == expected


# ---------------------------------------------------------------------------------- Dataflow, built offline


def offline_dataflow_flags(output: str) -> list[str]:
    return [
        "--runner=DataflowRunner",
        "--dry_run=True",
        "--project=citrec-dry-run",
        "--region=us-central1",
        "--temp_location=gs://citrec-dry-run/tmp",
        "--staging_location=gs://citrec-dry-run/staging",
        "--output",
        output,
    ]


@pytest.mark.e2e
def test_both_dataflow_jobs_build_offline_with_dry_run(tmp_path):
    """DataflowRunner builds each job (every DoFn pickled into its graph) and submits nothing; the launcher neither
    checks nor writes the gs:// output, reads nothing back, commits nothing. No credentials, no network."""
    pytest.importorskip(
        "google.cloud.storage",
        reason="apache-beam[gcp] is not installed (pip install -e '.[dataflow]'): the Dataflow job cannot be built",
    )
    env = python_env(GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "no-credentials.json"), NO_GCE_CHECK="True")
    reviews = EXAMPLES / "reviews"
    runs = {
        "arsyta": [sys.executable, "-m", "pipelines.arsyta", "--export", "hatten,symtax"],
        "citationr, through the Flex Template's launcher": [
            sys.executable,
            str(DATAFLOW / "launch_citationr.py"),
            "--reviews",
            str(reviews / "reviews" / "*"),
            "--metadata",
            str(reviews / "metadata" / "*.jsonl"),
            "--export",
            "rmc",
        ],
    }
    for what, command in runs.items():
        output = f"gs://citrec-dry-run/out/{what.split(',')[0]}"
        done = subprocess.run(
            [*command, *offline_dataflow_flags(output)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{what}: {done.stderr[-3000:]}"
        assert "dry run: the DataflowRunner job was built" in done.stdout, what
        assert f"nothing was written to {output}" in done.stdout, what


# ---------------------------------------------------------------------- not waiting, then committing


@pytest.mark.e2e
def test_a_job_not_waited_for_is_committed_later_by_commit_only(tmp_path):
    """What a Flex Template's launcher does (submit, `--no_wait_until_finish`) leaves the dataset in _staging/;
    `--commit_only` then commits it, exports included, from what the job wrote."""
    from pipelines.arsyta import run

    out = tmp_path / "out"
    assert run(["--runner=FnApiRunner", "--output", str(out), "--export", "hatten", "--no_wait_until_finish"]) == {}
    # the job's files are staged; the output is marked citrec's and held for the commit (its lease: `submitted`)
    assert sorted(p.name for p in out.iterdir()) == ["_citrec_lease.json", "_citrec_output.json", "_staging"]
    assert json.loads((out / "_citrec_lease.json").read_text())["state"] == "submitted"
    stats = run(["--commit_only", "--output", str(out)])
    assert (out / "_SUCCESS").is_file() and not (out / "_staging").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert {f"contexts/{s}": n for s, n in stats["contexts"].items() if n} == {
        t: n for t, n in manifest["tables"].items() if t.startswith("contexts/")
    }
    hatten = json.loads((out / "export" / "hatten" / "train.json").read_text())
    assert len(hatten) == stats["contexts"]["train"]
    with pytest.raises(SystemExit) as stop:
        run(["--commit_only", "--output", str(tmp_path / "nothing")])
    assert stop.value.code == 2


@pytest.mark.e2e
def test_citationr_resolves_mentions_with_the_join_as_with_the_in_memory_matcher(tmp_path):
    """`--title_matcher join` (no worker holds the database) writes what the in-memory side input writes, counts
    included: only the recommended mentions are counted, as the in-memory path counts them."""
    from pipelines.citationr import run

    contents = {}
    for matcher in ("memory", "join"):
        stats = run(["--runner=FnApiRunner", "--output", str(tmp_path / matcher), f"--title_matcher={matcher}"])
        assert stats["options"]["matching"]["matcher"] == matcher
        assert stats["resolution"]["resolved_by:title"] and stats["resolution"]["resolved_by:arxiv_id"]
        content = dataset_content(tmp_path / matcher)
        del content["stats.json"]["options"]["matching"]["matcher"]
        contents[matcher] = content
    assert contents["join"] == contents["memory"]


# ------------------------------------------------------------------------------ Flex Template and Airflow


REQUIRED_PARAMETERS = {"arsyta": {"output", "metadata"}, "citationr": {"output", "reviews", "metadata"}}
"""What a Dataflow run of each pipeline cannot do without: a gs:// output (the default is a local directory) and
its inputs (without them the pipeline builds the bundled example)."""


def pipeline_flags(name: str) -> set[str]:
    """Every flag `python -m pipelines.NAME` accepts, by its option name."""
    import argparse

    from pipelines.arsyta import ARSYTA
    from pipelines.citationr import CITATIONR
    from pipelines.options import CorpusOptions

    parser = argparse.ArgumentParser()
    CorpusOptions._add_argparse_args(parser)  # noqa: SLF001
    {"arsyta": ARSYTA, "citationr": CITATIONR}[name].options._add_argparse_args(parser)  # noqa: SLF001
    return {action.dest for action in parser._actions}  # noqa: SLF001


@pytest.mark.parametrize("name", sorted(REQUIRED_PARAMETERS))
def test_the_flex_template_names_every_required_flag_and_only_real_ones(name):
    from pipelines.outputs import parse_strict

    spec = json.loads((DATAFLOW / f"{name}-metadata.json").read_text())
    parameters = {p["name"]: p for p in spec["parameters"]}
    assert len(parameters) == len(spec["parameters"]) and spec["name"] and spec["description"]
    assert {n for n, p in parameters.items() if not p["isOptional"]} == REQUIRED_PARAMETERS[name]
    assert set(parameters) <= pipeline_flags(name)
    for p in parameters.values():
        assert p["label"] and p["helpText"]
    # the launcher passes each parameter as --NAME=VALUE: the pipeline's strict parser takes them all, with a value
    # each parameter's own regexes allow
    samples = ("gs://bucket/path", "auto", "arsyta", "database", "symtax", "rmc", "3")
    values = {
        n: next(v for v in samples if all(re.fullmatch(r, v) for r in p.get("regexes", [])))
        for n, p in parameters.items()
    }
    options = parse_strict([f"--{n}={v}" for n, v in values.items()], f"pipelines.{name}").get_all_options()
    assert {n: str(options[n][-1] if isinstance(options[n], list) else options[n]) for n in values} == values


def test_the_flex_template_image_copies_what_exists_and_launches_files_that_compile():
    dockerfile = (DATAFLOW / "Dockerfile").read_text()
    copied = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("COPY ") and "--from" not in line]
    assert copied and all((REPO / source).exists() for source in copied), copied
    assert 'pip install --no-cache-dir ".[dataflow]"' in dockerfile
    launcher = next(line for line in dockerfile.splitlines() if line.startswith("ENV FLEX_TEMPLATE_PYTHON_PY_FILE="))
    assert launcher.split("=", 1)[1].startswith("/template/examples/dataflow/launch_arsyta.py")
    for name in REQUIRED_PARAMETERS:
        source = (DATAFLOW / f"launch_{name}.py").read_text()
        tree = ast.parse(source)
        compile(tree, f"launch_{name}.py", "exec")
        # it defines nothing a job could ship: it runs as __main__
        assert not [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Lambda)]
        assert f"from pipelines.{name} import main" in source and "--no_wait_until_finish" in source


def test_the_airflow_dag_compiles_and_launches_the_template_with_its_parameters():
    """Parsed and compiled without Airflow installed: its template parameters are the Flex Template's, the required
    ones given, and the task after the job commits the same output."""
    path = EXAMPLES / "airflow" / "citrec_dag.py"
    tree = ast.parse(path.read_text())
    compile(tree, str(path), "exec")
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    keys = {key.value for key in assigned["ARSYTA_PARAMETERS"].keys}
    spec = json.loads((DATAFLOW / "arsyta-metadata.json").read_text())
    assert keys <= {p["name"] for p in spec["parameters"]}
    assert REQUIRED_PARAMETERS["arsyta"] <= keys
    source = path.read_text()
    assert "DataflowStartFlexTemplateOperator" in source and "wait_until_finished=True" in source
    assert "python -m pipelines.arsyta --commit_only --output {OUTPUT}" in source
    assert "build_dataset >> commit_dataset" in source


# -------------------------------------------------------------------------------- GROBID, per process


def test_grobid_requests_in_flight_per_process_never_exceed_its_concurrency():
    """Two DoFn instances in one process (a runner makes one per bundle thread) share one pool of
    `--grobid_concurrency` threads: never more requests at once than that, however many instances."""
    from extractors.clients.grobid import GrobidResult
    from pipelines.grobid import GrobidConfig, GrobidParseFn
    from pipelines.inputs import ReadTask
    from tests.support.documents import SEGMENTED_TEI

    class SlowGrobid:
        def __init__(self) -> None:
            self.lock = threading.Lock()
            self.active = self.most = self.calls = 0

        def process_fulltext(self, pdf: bytes, name: str) -> GrobidResult:
            with self.lock:
                self.active += 1
                self.calls += 1
                self.most = max(self.most, self.active)
            time.sleep(0.05)
            with self.lock:
                self.active -= 1
            return GrobidResult(SEGMENTED_TEI)

    server = SlowGrobid()
    config = GrobidConfig(url="http://127.0.0.1:9/per-process-test", version="0.8.2", concurrency=2)
    instances = [GrobidParseFn(config), GrobidParseFn(config)]
    outputs = []
    for fn in instances:
        fn.setup()
        fn._client = server  # noqa: SLF001
        fn.reader = lambda path, cap: b"%PDF-1.4 " + path.encode()
        fn.start_bundle()
    assert instances[0]._pool is instances[1]._pool  # noqa: SLF001
    for i in range(8):  # each instance queues up to twice the concurrency before it waits
        for fn in instances:
            outputs.extend(fn.process(ReadTask(f"mem://{id(fn)}-{i}.pdf", "pdfs")))
    for fn in instances:
        outputs.extend(fn.finish_bundle())
        fn.teardown()
    assert server.calls == 16
    assert server.most == 2


# ------------------------------------------------------------------------- the metadata snapshot in ranges


@pytest.mark.beam
def test_the_metadata_snapshot_is_read_in_byte_ranges_by_many_tasks(tmp_path):
    """An uncompressed snapshot (the arXiv one is one ~4 GB `.json` file of JSON Lines) is cut into read tasks of
    --read_range_bytes that workers read in parallel, and gives the papers one task reading it whole gives."""
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from extractors.documents.streams import byte_ranges
    from pipelines.inputs import PlanReads, ReadConfig
    from pipelines.transforms import ReadPaperDatabase
    from tests.support.runs import arxiv_record

    snapshot = tmp_path / "arxiv-metadata-oai-snapshot.json"
    records = [arxiv_record(f"2101.{i:05d}", f"Paper number {i}", dt.date(2021, 1, 1 + i % 28)) for i in range(60)]
    snapshot.write_text("".join(json.dumps(r) + "\n" for r in records))
    size = snapshot.stat().st_size
    ranged = ReadConfig(range_bytes=size // 7)
    expected = [(r["id"], r["title"]) for r in records]
    with TestPipeline(runner="FnApiRunner") as p:
        tasks = p | "Plan" >> PlanReads([str(snapshot)], "metadata", ranged)
        n = len(byte_ranges(size, ranged.range_bytes))
        assert n > 1
        assert_that(tasks["tasks"] | beam.combiners.Count.Globally(), equal_to([n]), label="Tasks")
        for label, config in (("Ranged", ranged), ("Whole", ReadConfig())):
            papers = p | f"Read{label}" >> ReadPaperDatabase([str(snapshot)], config)
            titles = papers["papers"] | f"{label}Titles" >> beam.Map(lambda paper: (paper.paper_id, paper.title))
            assert_that(titles, equal_to(expected), label=f"{label}Papers")
