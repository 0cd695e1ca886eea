"""The project's own flake8, as the project configured it, in the sandbox: a real flake8
from PyPI in the project's own virtualenv (skipped where the registry is not at hand), and
a local plugin — code of the project's — that reports what it can see (a token in its
environment) and do (write to the checkout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bot.analyzers.flake8 import parse
from tests.analyzers.projects import assert_confined, install
from tests.conftest import GitRepo, run

pytestmark = pytest.mark.slow

CONFIG = """[flake8]
max-line-length = 100

[flake8:local-plugins]
extension =
    PRB = probe:Probe
paths = ./lint
"""
PLUGIN = """import os


class Probe:
    name = "probe"
    version = "1"

    def __init__(self, tree):
        self.tree = tree

    def run(self):
        try:
            with open("written-by-plugin.txt", "w") as f:
                f.write("x")
            wrote = "yes"
        except OSError:
            wrote = "no"
        token = os.environ.get("GITHUB_TOKEN", "absent")
        yield 1, 0, f"PRB100 token={token} wrote={wrote}", type(self)
"""


@pytest.fixture(scope="module")
def with_flake8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory whose ``.venv`` has flake8 installed from PyPI (once for the module)."""
    root = tmp_path_factory.mktemp("flake8-project")
    venv = root / ".venv"
    install([sys.executable, "-m", "venv", str(venv)], root, "a virtualenv")
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    install([*pip, "flake8"], root, "flake8 (from PyPI)")
    return root


def test_the_projects_flake8_runs_sandboxed_beside_ruff(
    with_flake8: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notarealtokenatall")
    repo = GitRepo(with_flake8)
    repo.write(".gitignore", ".venv/\n")
    repo.write(".flake8", CONFIG)
    repo.write("lint/probe.py", PLUGIN)
    repo.write("src/a.py", "x = 1\n")
    repo.commit("base")
    repo.write("src/a.py", "import os\ny=2\nx = 1\n")
    repo.commit("f")
    result = run("review", "HEAD", "--repo", str(repo.path), "-o", "json", "-q")
    assert result.exit_code == 0, result.output
    comments = json.loads(result.stdout)["comments"]
    got = {(c["origin"], c["line"], c["rule"]): c for c in comments}
    assert ("flake8", 2, "E225") in got  # pycodestyle's, not among ruff's default rules
    # F401 is both ruff's and flake8's: reported once, as ruff's (with its fix)
    assert [c["origin"] for c in comments if c["rule"] == "F401"] == ["ruff"]
    probe = got[("flake8", 1, "PRB100")]["body"]
    assert_confined(probe, repo.path / "written-by-plugin.txt")
    # a range the checkout does not hold: the project's flake8 does not run, ruff does
    repo.git("checkout", "-q", "HEAD~1")
    result = run("review", "HEAD..main", "--repo", str(repo.path), "-o", "json", "-q")
    origins = {c["origin"] for c in json.loads(result.stdout)["comments"]}
    assert origins == {"ruff"}


def test_a_flake8_that_failed_is_a_failure_not_a_clean_file() -> None:
    with pytest.raises(ValueError, match="no report"):
        parse(b"")
    assert parse(b"0\n") == []
    [finding] = parse(b"./src/a.py:3:1: F821 undefined name 'y'\n1\n")
    assert (finding.path, finding.line, finding.rule, finding.severity) == (
        "./src/a.py",
        3,
        "F821",
        "error",
    )
