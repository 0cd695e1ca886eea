"""scripts/phorge/setup.sh keeps to its own Phorge: ``status`` and ``down`` see and stop only
the daemons of its instance, never another Phorge's on the same machine (issue 27, section 5:
host-wide ``phd status`` took another instance's daemons for its own, so 2 of 7 tests timed
out, and ``phd stop`` stopped them). Real processes stand in for the daemons: phd starts its
daemons in the copy's ``scripts/daemon/``, which is how the script tells them apart."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "phorge" / "setup.sh"


def _daemon(root: Path) -> subprocess.Popen[bytes]:
    """A process that looks like a phd daemon of the Phorge copied to ``root``."""
    where = root / "phorge" / "scripts" / "daemon"
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(["sleep", "300"], cwd=where)


def _setup(state: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PHORGE_STATE": str(state)}
    return subprocess.run(
        ["bash", str(SETUP), command], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def two_instances(
    tmp_path: Path,
) -> Iterator[tuple[Path, subprocess.Popen[bytes], subprocess.Popen[bytes]]]:
    ours, theirs = _daemon(tmp_path / "ours"), _daemon(tmp_path / "theirs")
    yield tmp_path / "ours", ours, theirs
    for proc in (ours, theirs):
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_status_and_down_keep_to_their_own_instance(two_instances) -> None:
    state, ours, theirs = two_instances
    status = _setup(state, "status")
    assert status.returncode == 0, status.stderr
    pids = re.search(r"daemons: running \(PIDs ([\d ]+)\)", status.stdout)
    assert pids and pids.group(1).split() == [str(ours.pid)]
    down = _setup(state, "down")
    assert down.returncode == 0, down.stderr
    assert ours.wait(timeout=30) is not None  # stopped
    assert theirs.poll() is None  # the other Phorge's daemon still runs
    assert "daemons: stopped" in _setup(state, "status").stdout


def test_the_script_never_asks_phd_about_the_whole_machine() -> None:
    script = SETUP.read_text()
    code = "\n".join(ln for ln in script.splitlines() if not ln.lstrip().startswith("#"))
    assert not re.search(r"phd\"? (status|stop)", code)
    assert '"$ROOT/bin/phd" start --force' in script  # and it only starts its own
