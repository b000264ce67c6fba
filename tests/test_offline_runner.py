"""The README's main command runs offline, on the runner the tests use, and tries no network: Beam 2.77's
DirectRunner first downloads and starts the Prism runner, so `--runner=DirectRunner` (and no `--runner` at all) runs
as the FnApiRunner."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.e2e

RECORDER = textwrap.dedent(
    """
    import os, socket
    _log = os.environ["CITREC_NET_LOG"]
    _local = ("localhost", "127.0.0.1", "::1", "0.0.0.0", "", None)

    def _record(what):
        with open(_log, "a") as handle:
            handle.write(what + "\\n")

    _getaddrinfo = socket.getaddrinfo
    def getaddrinfo(host, *args, **kwargs):
        if host not in _local:
            _record(f"getaddrinfo {host}")
        return _getaddrinfo(host, *args, **kwargs)
    socket.getaddrinfo = getaddrinfo

    _connect = socket.socket.connect
    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _local:
            _record(f"connect {address}")
        return _connect(self, address)
    socket.socket.connect = connect
    """
)


def _readme_main_command() -> list[str]:
    """The pipeline part of the README's first command (`python3 -m pipelines.arsyta ...`)."""
    text = (REPO / "README.md").read_text()
    line = next(line for line in text.splitlines() if "python3 -m pipelines.arsyta" in line)
    command = line[line.index("python3 -m pipelines.arsyta") :]
    return shlex.split(re.sub(r"^python3", sys.executable, command))


def test_the_readme_command_runs_with_no_network_attempt(tmp_path):
    (tmp_path / "recorder").mkdir()
    (tmp_path / "recorder" / "sitecustomize.py").write_text(RECORDER)
    log = tmp_path / "net.log"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": f"{tmp_path / 'recorder'}:{REPO}",
        "CITREC_NET_LOG": str(log),
    }
    command = _readme_main_command()
    assert "--runner=DirectRunner" not in command
    if shutil.which("unshare") and subprocess.run(["unshare", "-rn", "true"]).returncode == 0:
        command = ["unshare", "-rn", *command]  # no network at all, as on a machine offline
    output = command[command.index("--output") + 1]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / output / "_SUCCESS").is_file()
    assert not log.exists(), log.read_text()


def test_direct_runner_runs_as_the_fn_api_runner_and_never_starts_prism(examples, tmp_path, monkeypatch):
    from apache_beam.runners.portability import prism_runner

    from pipelines.arsyta import run

    started = []

    def no_prism(self, *args, **kwargs):
        started.append(type(self).__name__)
        raise RuntimeError("the Prism runner was started")

    monkeypatch.setattr(prism_runner.PrismRunner, "run_pipeline", no_prism)
    for runner in (["--runner=DirectRunner"], []):
        out = tmp_path / f"out{len(runner)}"
        stats = run([*runner, "--output", str(out)])
        assert stats["contexts"] == {"train": 34, "validation": 7, "test": 8}
    assert started == []
