"""Nova pushes a proposal where ``git push origin`` would go: ``remote.origin.pushurl``
first (a fork, a mirror, a read-only fetch URL), then ``remote.origin.url``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.testgen.frameworks import detect_framework
from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo


def _bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def _branches(bare: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(bare), "branch", "--list", "nova/*"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_proposal_goes_to_the_push_url(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("calc.py", "def double(x):\n    return 2 * x\n")
    repo.commit("calc")
    fetch, push = _bare(tmp_path / "fetch.git"), _bare(tmp_path / "push.git")
    repo.git("remote", "add", "origin", str(fetch))
    repo.git("config", "remote.origin.pushurl", str(push))
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        assert ws.user.origin == str(push)
        ws.write_test("tests/test_nova_calc.py", "def test_one():\n    assert True\n")
        ws.commit("nova/tests-1", "tests")
        ws.push(ws.user.origin, "nova/tests-1")
    assert "nova/tests-1" in _branches(push)
    assert _branches(fetch) == ""


def test_without_a_push_url_the_url_is_used(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("calc.py", "X = 1\n")
    repo.commit("calc")
    fetch = _bare(tmp_path / "fetch.git")
    repo.git("remote", "add", "origin", str(fetch))
    with Workspace(repo.path, "HEAD", None) as ws:
        assert ws.user.origin == str(fetch)
