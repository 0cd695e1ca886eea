"""A run never outlives its job, never costs Nova more memory than its output cap, and
never sees a home or a directory the caller names as secret. Each is run as it was found:
a real Nova process that calls ``run_sandboxed`` (killed with SIGKILL or SIGTERM; or
reading a run that prints 300 MiB), and a real bubblewrap run with another HOME."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.sandbox.run import View, choose_isolation, run_sandboxed
from tests.sandbox.test_sandbox import AVAILABLE, alive

ROOT = Path(__file__).resolve().parents[2]

# a job: runs a command sandboxed, on the isolation named in argv[1]
JOB = (
    "import sys\n"
    "from pathlib import Path\n"
    "from bot.sandbox.run import choose_isolation, run_sandboxed\n"
    "run = run_sandboxed(sys.argv[3:], Path(sys.argv[2]), timeout=600,\n"
    "                    isolation=choose_isolation(sys.argv[1]))\n"
)
SPAWNER = (
    "import subprocess, sys\n"
    "for _ in range(3):\n"
    "    subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True)\n"
    "subprocess.run(['sleep', sys.argv[1]])\n"
)


def _until(condition: object, what: str, bound: float = 60.0) -> None:
    """Wait for ``condition()``; ``bound`` is a limit on a stuck run, not a delay."""
    deadline = time.monotonic() + bound
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
@pytest.mark.parametrize("name", AVAILABLE)
def test_every_process_of_a_run_dies_with_its_job(name: str, how: str, tmp_path: Path) -> None:
    marker = f"33{os.getpid() % 1000:03d}.{AVAILABLE.index(name)}{len(how)}"
    job = subprocess.Popen(
        [sys.executable, "-c", JOB, name, str(tmp_path), sys.executable, "-c", SPAWNER, marker],
        cwd=ROOT,
    )
    try:
        _until(lambda: len(alive(marker)) >= 4, "the run did not start")
        job.send_signal(getattr(signal, how))
        job.wait(timeout=60)
        _until(lambda: alive(marker) == [], f"the run outlived its job: {alive(marker)}")
    finally:
        job.kill()
        job.wait()
        for pid in alive(marker):
            os.kill(pid, signal.SIGKILL)


# a job that reads a run printing 300 MiB, and says how much memory it took at its peak
PRINTER = (
    "import sys\n"
    "line = b'x' * 1023 + b'\\n'\n"
    "for _ in range(300 * 1024):\n"
    "    sys.stdout.buffer.write(line)\n"
    "print('END-OF-OUTPUT', flush=True)\n"
)
# The peak is the job's own (VmHWM of its address space): ru_maxrss would also count the
# address space it replaced at exec — a long test session's whole memory, via fork/vfork.
MEASURE = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from bot.sandbox.run import run_sandboxed\n"
    "run = run_sandboxed([sys.executable, '-c', sys.argv[1]], Path(sys.argv[2]), timeout=600)\n"
    "peak = next(ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:'))\n"
    "print(json.dumps({'passed': run.passed, 'chars': len(run.output),\n"
    "                  'tail': run.output.rstrip().endswith('END-OF-OUTPUT'),\n"
    "                  'kib': int(peak.split()[1])}))\n"
)


@pytest.mark.slow
def test_output_is_capped_while_it_is_read(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, PRINTER, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.splitlines()[-1])
    assert row["passed"] and row["tail"] and row["chars"] <= 20_000
    assert row["kib"] < 200 * 1024, f"Nova's peak RSS was {row['kib'] // 1024} MiB"


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp (bubblewrap hides /tmp anyway)."""
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="nova-hide-"))
    yield base
    subprocess.run(["rm", "-rf", str(base)], check=False)


LOOK = (
    "import json, os, sys\n"
    "seen = {}\n"
    "for p in sys.argv[1:]:\n"
    "    try:\n"
    "        seen[p] = sorted(os.listdir(p))\n"
    "    except OSError as exc:\n"
    "        seen[p] = type(exc).__name__\n"
    "print(json.dumps(seen))\n"
)


def test_bubblewrap_hides_every_home_and_the_named_secret_dirs(
    outside_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "bubblewrap" not in AVAILABLE:
        pytest.skip("bubblewrap cannot run on this machine (see test_sandbox.py)")
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    planted = None
    if os.access(real_home, os.W_OK):
        planted = Path(tempfile.mkdtemp(dir=real_home, prefix=".nova-secret-"))
    data, extra = outside_tmp / "data", outside_tmp / "extra"
    for d in (data, extra):
        (d / "jobs").mkdir(parents=True)
        (d / "app-key.pem").write_text("fake-app-key\n")
    job_home = tmp_path / "job-home"  # the job was given another HOME (serve: its work dir)
    job_home.mkdir()
    monkeypatch.setenv("HOME", str(job_home))
    monkeypatch.setenv("NOVA_SANDBOX_HIDE", f"{data}{os.pathsep}relative/ignored")
    look = [str(real_home), str(data), str(extra)]
    try:
        run = run_sandboxed(
            [sys.executable, "-c", LOOK, *look],
            tmp_path,
            isolation=choose_isolation("bubblewrap"),
            view=View(hidden=(extra,)),
        )
    finally:
        if planted is not None:
            planted.rmdir()
    assert run.passed, run.output
    seen = json.loads(run.output.splitlines()[-1])
    assert seen[str(data)] == [] and seen[str(extra)] == []
    if planted is not None:
        assert planted.name not in seen[str(real_home)], seen[str(real_home)]
    for home in [Path("/home"), *Path("/home").glob("*")] if Path("/home").is_dir() else []:
        shown = run_sandboxed([sys.executable, "-c", LOOK, str(home)], tmp_path)
        assert json.loads(shown.output.splitlines()[-1])[str(home)] in ([], "FileNotFoundError")
