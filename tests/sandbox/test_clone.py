"""Nova's own code is visible to its sandboxed runs wherever it is installed: an editable
install in a fresh clone under /tmp (the README's way) or under the real HOME (where most
people clone), both hidden under bubblewrap. The clone is a real ``git clone`` of this
checkout; its venv has the clone on ``sys.path`` the way an editable install does (a
``.pth``) and the test venv's packages (tests do not reach PyPI)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.sandbox.test_sandbox import AVAILABLE
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.test_testgen import GOOD, HEADER, build_python_sample

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "import bot\n"
    "from bot.sandbox.run import choose_isolation, run_sandboxed\n"
    "run = run_sandboxed([sys.executable, '-c', 'import bot; print(bot.__file__)'],\n"
    "                    Path(sys.argv[1]), isolation=choose_isolation('bubblewrap'))\n"
    "print(json.dumps({'nova': bot.__file__, 'passed': run.passed, 'output': run.output}))\n"
)


def clone(where: Path) -> tuple[Path, Path]:
    """A fresh clone of this checkout at ``where/nova`` and its venv's python."""
    target = where / "nova"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    venv = target / ".venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    (site / "a_nova_editable.pth").write_text(f"{target}\n")  # what `pip install -e` writes
    (site / "z_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target, venv / "bin" / "python"


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="nova-clone-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def under_home() -> Iterator[Path]:
    """A directory in the real home of this user (not the HOME the tests set)."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if not os.access(home, os.W_OK):
        pytest.skip(f"the real home {home} is not writable here")
    base = Path(tempfile.mkdtemp(dir=home, prefix="nova-clone-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _needs_bubblewrap() -> None:
    if "bubblewrap" not in AVAILABLE:
        pytest.skip("bubblewrap cannot run on this machine: nothing is hidden")


def test_a_clone_under_tmp_runs_sandboxed(under_tmp: Path, tmp_path: Path) -> None:
    _needs_bubblewrap()
    target, python = clone(under_tmp)
    out = subprocess.run(
        [str(python), "-c", PROBE, str(tmp_path)],
        cwd=target,
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.splitlines()[-1])
    assert row["nova"] == str(target / "bot" / "__init__.py")
    assert row["passed"], row["output"]
    assert row["output"].strip() == row["nova"]  # the run imports the clone's Nova


@pytest.mark.slow
def test_nova_testgen_from_a_clone_under_the_real_home_keeps_tests(
    under_home: Path, repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    _needs_bubblewrap()
    target, python = clone(under_home)
    sample = build_python_sample(repo)
    llm_env.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_good.py", "content": HEADER + GOOD}),
        text('{"summary": "tests"}'),
    )
    env = {k: v for k, v in os.environ.items() if k.startswith(("NOVA_LLM", "PATH", "LANG"))}
    job = subprocess.run(
        [str(python), "-m", "bot", "testgen", "HEAD", "--repo", str(sample.path), "-q"]
        + ["--patch-dir", str(tmp_path), "-o", "json", "--runs", "1"],
        cwd=target,
        env=env | {"HOME": str(under_home.parent)},  # the real HOME, hidden by bubblewrap
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert job.returncode == 0, job.stdout[-2000:] + job.stderr[-2000:]
    data = json.loads(job.stdout)
    assert data["isolation"]["name"] == "bubblewrap"
    assert "test_good" in {c["name"] for c in data["kept"]}, data["dropped"]
