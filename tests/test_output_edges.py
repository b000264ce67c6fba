"""The edges of a run's output: citrec removes only what it wrote, one run at a time holds an output, and
`_SUCCESS` is written only on a dataset that holds everything the run counted (docs/outputs.md).

The runs are the bundled example corpus on FnApiRunner; each test works on its own copy of one finished dataset or
one staged (not yet committed) run."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.arsyta import run
from tests.support.paths import REPO

pytestmark = pytest.mark.e2e

RUNNER = "--runner=FnApiRunner"
LEASE, MARKER = "_citrec_lease.json", "_citrec_output.json"


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with its content hash (links by their target), whatever wrote it."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            files[str(path.relative_to(root))] = "link:" + os.readlink(path)
        elif path.is_file():
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def _refused(args: list[str], capsys) -> str:
    """Run with `args`; it must stop with exit status 2 and exactly one line, an `error:` line, on stderr (after the
    example corpus's note); returns that line."""
    with pytest.raises(SystemExit) as stopped:
        run(args)
    assert stopped.value.code == 2
    err = [
        line for line in capsys.readouterr().err.splitlines() if not line.startswith(("no input flags", "reference"))
    ]
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.fixture(scope="module")
def finished(examples, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "out"
    run([RUNNER, "--output", str(out)])
    return out


@pytest.fixture(scope="module")
def staged(examples, tmp_path_factory) -> tuple[Path, dict]:
    """A run whose job finished and was not committed (`--no_wait_until_finish`), and the stats a committed run of
    the same inputs reports."""
    root = tmp_path_factory.mktemp("staged")
    out = root / "out"
    assert run([RUNNER, "--output", str(out), "--no_wait_until_finish"]) == {}
    stats = json.loads((out / "_staging" / "stats.json").read_text())
    return out, stats


def _copy(source: Path, tmp_path: Path, name: str = "out") -> Path:
    target = tmp_path / name
    shutil.copytree(source, target, symlinks=True)
    return target


def _rows(out: Path, prefix: str) -> int:
    return sum(pq.ParquetFile(p).metadata.num_rows for p in out.glob(f"{prefix}-*.parquet"))


# ------------------------------------------------------------------------------- only what citrec wrote


def test_a_directory_citrec_did_not_write_is_refused_even_with_overwrite(examples, tmp_path, capsys):
    thesis = tmp_path / "thesis"
    (thesis / "chapters").mkdir(parents=True)
    (thesis / "chapters" / "one.tex").write_text("\\chapter{One}")
    (thesis / "notes.txt").write_text("do not lose me")
    before = _snapshot(thesis)
    for flags in ([], ["--overwrite"], ["--overwrite", "--break_lease"]):
        line = _refused([RUNNER, "--output", str(thesis), *flags], capsys)
        assert "no citrec dataset" in line and "2 files" in line
    assert _snapshot(thesis) == before


def test_a_checkout_given_as_output_keeps_its_git_directory(examples, tmp_path, capsys, monkeypatch):
    """`--output . --overwrite` from inside a checkout: refused, nothing removed (it used to empty the checkout)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    (checkout / "paper.tex").write_text("x")
    before = _snapshot(checkout)
    monkeypatch.chdir(checkout)
    _refused([RUNNER, "--output", ".", "--overwrite"], capsys)
    assert _snapshot(checkout) == before


def test_overwrite_removes_only_the_earlier_runs_files(finished, tmp_path, capsys):
    """A user's file and a second dataset inside a citrec output survive `--overwrite`; the run says what it
    removes and what it keeps, and the new manifest lists exactly the new run's files."""
    out = _copy(finished, tmp_path)
    (out / "my-notes.txt").write_text("mine")
    (out / "papers" / "annotations.csv").write_text("paper_id,label\n")
    inner = out / "inner"
    run([RUNNER, "--output", str(inner)])  # another dataset, written into the first
    kept_before = {k: v for k, v in _snapshot(out).items() if k.startswith("inner/")}
    earlier = [f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]]
    capsys.readouterr()
    stats = run([RUNNER, "--output", str(out), "--overwrite", "--num_shards", "2"])
    err = capsys.readouterr().err
    # the earlier manifest's files, manifest.json and _SUCCESS go (the marker stays); notes, csv and inner/ are kept
    assert f"removing from {out} {len(earlier) + 2} files of the earlier citrec run;" in err
    assert f"keeping {2 + len(kept_before)} files citrec did not write" in err
    after = _snapshot(out)
    assert (out / "my-notes.txt").read_text() == "mine" and (out / "papers" / "annotations.csv").exists()
    assert {k: v for k, v in after.items() if k.startswith("inner/")} == kept_before
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"] for f in manifest["files"]}
    foreign = {"my-notes.txt", "papers/annotations.csv"} | {k for k in after if k.startswith("inner/")}
    assert listed == set(after) - foreign - {"manifest.json", "_SUCCESS", MARKER}
    assert _rows(out, "contexts/train") == stats["contexts"]["train"]


def test_overwrite_never_follows_a_manifest_out_of_the_output(finished, tmp_path):
    out = _copy(finished, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("outside")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"] += [{"path": "../victim.txt", "bytes": 7}, {"path": str(victim), "bytes": 7}]
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "plots").rename(out / "plots-real")
    (out / "plots").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "categories.png").write_text("not a plot of ours")
    with pytest.raises(SystemExit) as stopped:  # the new plots would land in `elsewhere`: refused, not clobbered
        run([RUNNER, "--output", str(out), "--overwrite"])
    assert stopped.value.code == 1
    assert victim.read_text() == "outside"
    assert (tmp_path / "elsewhere" / "categories.png").read_text() == "not a plot of ours"
    assert not (out / "_SUCCESS").exists()


def test_a_symlinked_output_is_one_error_line(finished, tmp_path, capsys):
    target = _copy(finished, tmp_path, "real")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    before = _snapshot(target)
    line = _refused([RUNNER, "--output", str(link), "--overwrite"], capsys)
    assert "symbolic link" in line
    assert _snapshot(target) == before


def test_an_output_that_cannot_be_written_is_one_error_line(examples, tmp_path, capsys, monkeypatch):
    out = tmp_path / "ro"
    out.mkdir()
    if os.geteuid() != 0:
        out.chmod(0o555)
    else:  # root writes anywhere: the filesystem's refusal is made here
        import pipelines.ownership as ownership

        def refuse(path, data):
            raise PermissionError(13, "Permission denied", path)

        monkeypatch.setattr(ownership, "_create_exclusive", refuse)
    line = _refused([RUNNER, "--output", str(out)], capsys)
    assert "cannot write to --output" in line and "Permission denied" in line
    out.chmod(0o755)


# ------------------------------------------------------------------------------------------------- the lease


def _race(directory: str, barrier, results) -> None:
    from pipelines.ownership import Lease, acquire_lease

    barrier.wait()
    try:
        acquire_lease(directory, Lease.new("arsyta"))
        results.put("won")
    except Exception as err:  # noqa: BLE001 - the loser's refusal is the expected outcome
        results.put(type(err).__name__)


def test_only_one_of_several_runs_racing_for_an_output_gets_it(tmp_path):
    context = multiprocessing.get_context("fork")
    for attempt in range(10):
        directory = str(tmp_path / f"out{attempt}")
        barrier, results = context.Barrier(4), context.Queue()
        workers = [context.Process(target=_race, args=(directory, barrier, results)) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        outcomes = sorted(results.get(timeout=5) for _ in workers)
        assert outcomes == ["LeaseHeld", "LeaseHeld", "LeaseHeld", "won"], outcomes


def test_a_second_run_while_the_first_holds_the_output_is_refused(examples, tmp_path, capsys):
    """Two runs launched at once into one output: the second is refused at once (exit 2, naming the first run),
    and the first writes its dataset, whole."""
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "pipelines.arsyta", RUNNER, "--output", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (out / LEASE).exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    held = json.loads((out / LEASE).read_text())
    line = _refused([RUNNER, "--output", str(out), "--overwrite"], capsys)
    assert held["run_id"] in line and "still running" in line
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert (out / "_SUCCESS").exists() and not (out / LEASE).exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run_id"] == held["run_id"]
    assert all((out / f["path"]).stat().st_size == f["bytes"] for f in manifest["files"])


def test_a_lease_left_by_a_dead_run_is_explained_and_broken_only_on_request(finished, tmp_path, capsys):
    from pipelines.ownership import Lease, acquire_lease

    out = _copy(finished, tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = Lease.new("arsyta")
    stale = Lease(stale.run_id, "arsyta", stale.host, int(dead.stdout), "2026-01-01T00:00:00+00:00")
    acquire_lease(str(out), stale)
    line = _refused([RUNNER, "--output", str(out), "--overwrite"], capsys)
    assert stale.run_id in line and "no longer running" in line and "--break_lease" in line
    assert json.loads((out / LEASE).read_text())["run_id"] == stale.run_id
    run([RUNNER, "--output", str(out), "--overwrite", "--break_lease"])
    assert "breaking the lease" in capsys.readouterr().err
    assert not (out / LEASE).exists() and (out / "_SUCCESS").exists()


# ------------------------------------------------------------------------------------------------ the commit


def test_a_commit_cut_short_is_finished_by_commit_only(staged, tmp_path, monkeypatch):
    """The launcher is stopped after moving half of the files: no `_SUCCESS`; `--commit_only` finishes the same
    moves, and the dataset holds every table's rows."""
    import pipelines.commit as commit

    out = _copy(staged[0], tmp_path)
    moved = commit.rename_files

    def die_halfway(sources, destinations):
        half = len(sources) // 2
        moved(sources[:half], destinations[:half])
        raise KeyboardInterrupt

    monkeypatch.setattr(commit, "rename_files", die_halfway)
    with pytest.raises(KeyboardInterrupt):
        run(["--commit_only", "--output", str(out)])
    assert not (out / "_SUCCESS").exists()
    monkeypatch.setattr(commit, "rename_files", moved)
    stats = run(["--commit_only", "--output", str(out)])
    assert (out / "_SUCCESS").exists() and not (out / "_staging").exists()
    for split, n in staged[1]["contexts"].items():
        assert _rows(out, f"contexts/{split}") == n == stats["contexts"][split]
    assert _rows(out, "citations/citations") == staged[1]["citation_graph"]["edges"] > 0
    assert _rows(out, "papers/papers") == staged[1]["papers"]


def _commit_refused(out: Path, capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        run(["--commit_only", "--output", str(out)])
    assert stopped.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert not (out / "_SUCCESS").exists()
    return err[0]


def test_a_staged_table_gone_missing_is_named_and_nothing_is_marked_done(staged, tmp_path, capsys):
    out = _copy(staged[0], tmp_path)
    for shard in (out / "_staging" / "citations").glob("*.parquet"):
        shard.unlink()
    line = _commit_refused(out, capsys)
    assert "citations/citations-00000-of-00001.parquet" in line


def test_a_card_cut_short_by_a_full_disk_is_not_committed(staged, tmp_path, capsys):
    out = _copy(staged[0], tmp_path)
    card = out / "_staging" / "README.md"
    card.write_bytes(card.read_bytes()[:4096] if card.stat().st_size > 4096 else card.read_bytes()[:-10])
    line = _commit_refused(out, capsys)
    assert "README.md" in line and "bytes" in line


def test_a_job_that_died_before_its_ledger_cannot_be_committed(staged, tmp_path, capsys):
    out = _copy(staged[0], tmp_path)
    (out / "_staging" / "_written.json").unlink()
    assert "ledger" in _commit_refused(out, capsys)


def test_rows_that_disagree_with_the_runs_counts_stop_the_commit(staged, tmp_path, capsys):
    out = _copy(staged[0], tmp_path)
    stats_path = out / "_staging" / "stats.json"
    stats = json.loads(stats_path.read_text())
    stats["contexts"]["test"] += 1
    stats_path.write_text(json.dumps(stats))
    line = _commit_refused(out, capsys)
    assert (
        f"contexts/test holds {stats['contexts']['test'] - 1} rows, the run counted {stats['contexts']['test']}" in line
    )


def test_a_manifest_write_that_fails_leaves_no_success_and_is_redone(staged, tmp_path, capsys, monkeypatch):
    """Disk full while writing manifest.json: one error line, no `_SUCCESS`; once there is room, `--commit_only`
    writes a manifest that reads back whole and marks the dataset done."""
    import errno

    import pipelines.commit as commit

    out = _copy(staged[0], tmp_path)
    write = commit._write_manifest

    def disk_full(output, manifest):
        (Path(output) / "manifest.json").write_bytes(b"")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(commit, "_write_manifest", disk_full)
    with pytest.raises(SystemExit) as stopped:
        run(["--commit_only", "--output", str(out)])
    assert stopped.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0]
    assert not (out / "_SUCCESS").exists()
    monkeypatch.setattr(commit, "_write_manifest", write)
    run(["--commit_only", "--output", str(out)])
    manifest = json.loads((out / "manifest.json").read_text())
    assert (out / "_SUCCESS").exists() and manifest["complete"]
    assert all((out / f["path"]).stat().st_size == f["bytes"] for f in manifest["files"])


# ----------------------------------------------------------------------------------- exports made later


def test_an_export_made_later_is_listed_in_the_manifest_and_removed_with_the_dataset(finished, tmp_path, capsys):
    from pipelines.exports import main as exports

    out = _copy(finished, tmp_path)
    exports(["--dataset", str(out), "--export", "hatten"])
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"]: f["bytes"] for f in manifest["files"] if f["path"].startswith("export/hatten/")}
    on_disk = {str(p.relative_to(out)): p.stat().st_size for p in (out / "export" / "hatten").rglob("*") if p.is_file()}
    assert listed == on_disk and "export/hatten/train.json" in listed
    assert not (out / LEASE).exists()
    run([RUNNER, "--output", str(out), "--overwrite"])  # a new dataset, without the export: none left behind
    assert not (out / "export").exists()


def test_an_export_never_replaces_a_file_the_dataset_does_not_list(finished, tmp_path, capsys):
    from pipelines.exports import main as exports

    out = _copy(finished, tmp_path)
    (out / "export" / "hatten").mkdir(parents=True)
    (out / "export" / "hatten" / "papers.json").write_text("my own papers.json")
    with pytest.raises(SystemExit) as stopped:
        exports(["--dataset", str(out), "--export", "hatten"])
    assert stopped.value.code == 2
    assert "does not list" in capsys.readouterr().err
    assert (out / "export" / "hatten" / "papers.json").read_text() == "my own papers.json"
