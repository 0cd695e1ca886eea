"""A sample project for one `nova testgen` run with no model: a git repository in tmp
(a base commit, then the change), its own virtualenv, and Nova's JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.testgen.test_differential import project_venv
from tests.testgen.test_testgen import nova_testgen

PYPROJECT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


def sample_testgen(
    tmp: Path,
    base: dict[str, str],
    change: dict[str, str],
    message: str,
    exits: tuple[int, ...] = (0,),
) -> tuple[GitRepo, dict[str, Any]]:
    """Commit ``base`` (path -> text; a pyproject naming `tests` unless given), then
    ``change``, and run `nova testgen HEAD` with the repository's own `.venv`; it must
    end with one of ``exits`` (1: tests written, none kept; 4: nothing to propose)."""
    repo = GitRepo(tmp / "repo")
    for path, text in {"pyproject.toml": PYPROJECT, **base}.items():
        repo.write(path, text)
    repo.commit("base")
    for path, text in change.items():
        repo.write(path, text)
    repo.commit(message)
    return repo, run_testgen(repo, tmp, exits)


def run_testgen(repo: GitRepo, tmp: Path, exits: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """`nova testgen HEAD -o json` on ``repo`` with its own `.venv` (made here, kept out
    of git), which must end with one of ``exits``; its report."""
    (repo.path / ".git" / "info" / "exclude").write_text(".venv/\n")
    project_venv(repo.path / ".venv")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VIRTUAL_ENV", raising=False)
        result = nova_testgen(repo, tmp, "-o", "json")
    assert result.exit_code in exits, result.stdout + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def caught(data: dict[str, Any], call: str) -> list[dict[str, Any]]:
    """The facts of the kept tests claimed as catching whose call contains ``call``."""
    return [
        fact
        for case in data["kept"]
        if case["evidence"].get("catches_change")
        for fact in case["evidence"].get("calls", [])
        if call in fact["call"]
    ]
