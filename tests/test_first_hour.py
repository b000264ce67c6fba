"""A new user's first hour: the README's command sequence in a fresh directory, and every way a command can fail
ending in one line with the right exit status."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import REPO

ARSYTA = [sys.executable, "-m", "pipelines.arsyta"]


def _first_hour_blocks() -> list[list[str]]:
    """The commands of the README's blocks marked `<!-- first-hour -->`, in order, one list per block."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"<!-- first-hour -->\s*```bash\n(.*?)```", text, flags=re.S)
    return [[line.strip() for line in block.splitlines() if line.strip()] for block in blocks]


def _snapshot(root: Path) -> dict[str, int]:
    """Every file under `root` with its size and modification time: what a later command must not change."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _run(args: list[str], cwd: Path, timeout: int = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------ the sequence


@pytest.mark.e2e
def test_the_readmes_first_hour_runs_in_order_and_no_command_touches_anothers_output(shared, tmp_path):
    blocks = _first_hour_blocks()
    assert len(blocks) == 2 and blocks[0][0] == "python3 -m pipelines.arsyta --output out/example"
    top = next(line for line in (REPO / "README.md").read_text().splitlines() if "python3 -m pipelines.arsyta" in line)
    assert top.endswith(blocks[0][0]), "the README's first command is the first command of the first hour"
    (tmp_path / "shared").symlink_to(shared.parent, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    written: dict[str, dict] = {}
    for number, block in enumerate(blocks):
        if number and importlib.util.find_spec("torch") is None:
            pytest.skip("the trainer block needs the [train] extra (torch); the pipelines' block ran")
        for command in block:
            if command.startswith("python3 -m pip install"):
                continue  # installed already, as .ci/run installs it
            args = shlex.split(command)
            assert args[0] == "python3" and "--overwrite" not in args, command
            done = _run([sys.executable, *args[1:]], work)
            assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
            for name, before in written.items():
                now = _snapshot(work / name)
                if name.startswith("runs/"):  # an evaluation adds its results beside the checkpoint it reads
                    now = {path: stamp for path, stamp in now.items() if path in before}
                assert now == before, f"{command} changed {name}"
            for parent in ("out", "runs"):
                for directory in sorted((work / parent).glob("*")) if (work / parent).exists() else []:
                    written.setdefault(f"{parent}/{directory.name}", _snapshot(directory))
    assert {"out/example", "out/real", "out/citationr-example", "out/smoke", "runs/hatten"} <= set(written)
    for dataset in ("out/example", "out/real", "out/citationr-example", "out/smoke"):
        assert (work / dataset / "_SUCCESS").is_file(), dataset
    example = json.loads((work / "out/example/stats.json").read_text())
    assert example["contexts"] == {"train": 34, "validation": 7, "test": 8}


# --------------------------------------------------------------------------------------------- one line


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--teii", "papers/*.xml"], "unrecognized arguments: --teii"),
        (["--num_shards", "many"], "argument --num_shards: invalid int value"),
        (["--runner=Dataflw"], "--runner 'Dataflw' is not a Beam runner"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(tmp_path, flags, says):
    done = _run([*ARSYTA, *flags, "--output", str(tmp_path / "out")], REPO, timeout=120)
    assert done.returncode == 2
    lines = _lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], done.stderr
    assert not (tmp_path / "out").exists()


def test_dataflow_without_credentials_is_one_line_before_any_work(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_", "GCLOUD"))}
    env.update(HOME=str(tmp_path), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"), NO_GCE_CHECK="True")
    args = ["--runner=DataflowRunner", "--project", "p", "--region", "r", "--temp_location", "gs://b/tmp"]
    done = _run([*ARSYTA, *args, "--output", "gs://b/out"], REPO, timeout=120, env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = _lines(done.stderr)
    assert len(lines) == 1, done.stderr
    assert "no Google Cloud credentials" in lines[0] or "[dataflow]" in lines[0]


def test_help_is_the_usage_and_nothing_else(tmp_path):
    done = _run([*ARSYTA, "--help"], REPO, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: python -m pipelines.arsyta")


def test_beams_bigquery_import_warning_is_not_shown():
    import pipelines  # noqa: F401 - installs the filter

    record = logging.LogRecord("root", logging.WARNING, __file__, 1, "apitools not found, and bigquery ...", (), None)
    assert not logging.getLogger().filter(record)
    other = logging.LogRecord("root", logging.WARNING, __file__, 1, "something else", (), None)
    assert logging.getLogger().filter(other)


@pytest.mark.e2e
def test_ctrl_c_is_one_line_saying_what_was_kept_and_exit_130(examples, tmp_path):
    out = tmp_path / "out"
    started = subprocess.Popen(
        [*ARSYTA, "--output", str(out)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not (out / "_staging").exists() and started.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    started.send_signal(signal.SIGINT)
    _, err = started.communicate(timeout=120)
    if started.returncode == 0:
        pytest.skip("the run finished before the interrupt reached it")
    assert started.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    last = _lines(err)[-1]
    assert last.startswith("interrupted: ") and str(out) in last, err[-2000:]
    assert not (out / "_SUCCESS").exists() and not (out / "_citrec_lease.json").exists()


def test_a_directory_given_for_files_names_a_glob_that_finds_them(shared, tmp_path):
    from apache_beam.io.filesystems import FileSystems

    directory = shared / "grobid"
    done = _run([*ARSYTA, "--tei", str(directory), "--output", str(tmp_path / "out")], REPO, timeout=120)
    assert done.returncode == 2
    [line] = _lines(done.stderr)
    match = re.search(r"e\.g\. '([^']+)' \(([\d,]+) files\)", line)
    assert match, line
    found = FileSystems.match([match.group(1)])[0].metadata_list
    assert len(found) == int(match.group(2).replace(",", "")) == len(list(directory.rglob("*.tei.xml"))) > 0


@pytest.mark.e2e
def test_unarxive_2020_text_files_are_an_unknown_layout(shared, tmp_path):
    import pyarrow.parquet as pq

    from pipelines.arsyta import run

    papers = shared / "unarxive2020/paper_centered_sample/papers"
    stats = run(["--runner=FnApiRunner", "--s2orc", str(papers / "*.txt"), "--output", str(tmp_path / "out")])
    letters = [r for p in (tmp_path / "out/dead_letter").glob("*.parquet") for r in pq.read_table(p).to_pylist()]
    assert len(letters) == len(list(papers.glob("*.txt"))) == stats["funnel"]["documents_dead_lettered"]
    assert {r["reason"] for r in letters} == {"unknown_layout"}
    assert all("unarXive 2020" in r["detail"] for r in letters)
