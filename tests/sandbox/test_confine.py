"""A project's own ``.venv`` in a checkout under the real ``/tmp`` (a directory, or a link
to one elsewhere; how a CI checkout or bench/testgen_corpora.py lays it out) runs the
project's tests: under bubblewrap, whose ``/tmp`` is a stand-in, and under every other
isolation; Nova never falls back to its own Python for it."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.sandbox.run import choose_isolation
from bot.testgen.environment import python_environment
from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo
from tests.sandbox.test_sandbox import AVAILABLE
from tests.testgen.test_differential import project_venv
from tests.testgen.test_testgen import nova_testgen

RECORDS_PREFIX = (
    "import sys\n\nfrom calc import double\n\n\n"
    "def test_double() -> None:\n"
    "    print('PREFIX=' + sys.prefix)\n"
    "    assert double(2) == 4\n"
)


@pytest.fixture(params=["dir", "link", "link-var-tmp"])
def checkout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitRepo]:
    """A repository under the real /tmp (not pytest's base dir) with a changed function,
    and its .venv: a directory in it, or a link to one beside it; or both under /var/tmp,
    where bubblewrap hides the checkout behind an empty stand-in (as for a CI checkout)."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # the repository's .venv is chosen
    where = "/var/tmp" if request.param.endswith("var-tmp") else "/tmp"
    base = Path(tempfile.mkdtemp(dir=where, prefix="nova-venv-"))
    repo = GitRepo(base / "repo")
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("calc.py", "def double(x: int) -> int:\n    return 2 * x\n")
    repo.write("tests/test_calc.py", RECORDS_PREFIX)
    repo.commit("base")
    repo.write(
        "calc.py", "def double(x: int) -> int:\n    if x < 0:\n        return 0\n    return 2 * x\n"
    )
    repo.commit("double clamps negatives at zero")
    (repo.path / ".git" / "info" / "exclude").write_text(".venv\n")
    if request.param == "dir":
        project_venv(repo.path / ".venv")
    else:
        project_venv(base / "venvs" / "calc")
        (repo.path / ".venv").symlink_to(base / "venvs" / "calc", target_is_directory=True)
    yield repo
    shutil.rmtree(base, ignore_errors=True)


def test_bubblewrap_runs_the_tests_with_the_checkouts_venv(checkout: GitRepo) -> None:
    if "bubblewrap" not in AVAILABLE:
        pytest.skip("bubblewrap cannot run on this machine (see test_sandbox.py)")
    iso = choose_isolation("bubblewrap")
    venv = checkout.path / ".venv"
    env = python_environment(checkout.path, None, None, None, iso)
    assert (env.python, env.note) == (str(venv / "bin" / "python"), None)  # no fallback
    with Workspace(checkout.path, "HEAD", None, bin_dirs=env.bin_dirs, isolation=iso) as ws:
        run = ws.run([env.python, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"])
    assert run.passed, run.output
    assert f"PREFIX={venv}\n" in run.output
    assert run.outside == ()  # the mount points made for the .venv are not the run's writes


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted({"bubblewrap", "none"} & set(AVAILABLE)))
@pytest.mark.parametrize("checkout", ["link", "link-var-tmp"], indirect=True)
def test_nova_testgen_uses_the_checkouts_venv_on_every_isolation(
    name: str, checkout: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_TEST_ISOLATION", name)
    result = nova_testgen(checkout, tmp_path, "-o", "json")
    data = json.loads(result.stdout)
    assert data["isolation"]["name"] == name
    assert data["environment"] == {
        "python": str(checkout.path / ".venv" / "bin" / "python"),
        "why": "the repository's .venv/",
    }, data["notes"]
    assert data["kept"], data  # the change got a test, run by the project's interpreter
