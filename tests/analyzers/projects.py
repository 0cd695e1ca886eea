"""Projects with their own linters installed from the registries, for the tests of the
project's own linters (skipped, saying why, where the tool or the registry is not at
hand), and what those tests check of a probe run in the sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.sandbox.run import choose_isolation

__all__ = ["assert_confined", "install", "npm_project"]


def install(argv: list[str], cwd: Path, what: str) -> None:
    """Run an installer; skip the test when it cannot run or fails."""
    try:
        subprocess.run(argv, cwd=cwd, capture_output=True, timeout=180, check=True)
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"{what} could not be installed: {exc}")


def npm_project(root: Path, spec: str, **package: str) -> Path:
    """``root`` as an npm package (``package.json`` with ``package``'s fields) with
    ``spec`` (``eslint@9``) installed in its ``node_modules``."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    fields = {"name": "probe", "version": "1.0.0", **package}
    (root / "package.json").write_text(json.dumps(fields))
    install([npm, "install", "--no-audit", "--no-fund", "--silent", spec], root, spec)
    return root


def assert_confined(probe: str, written: Path) -> None:
    """A probe's report (``token=… wrote=…``) from a run in the sandbox: no token, and,
    with bubblewrap, a read-only checkout."""
    assert "token=absent" in probe
    if choose_isolation().name == "bubblewrap":
        assert "wrote=no" in probe
        assert not written.exists()
