"""A project with a linter installed from npm, for the tests of the project's own linters
(skipped, saying why, where npm or the registry is not at hand)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["npm_project"]


def npm_project(root: Path, spec: str, **package: str) -> Path:
    """``root`` as an npm package (``package.json`` with ``package``'s fields) with
    ``spec`` (``eslint@9``) installed in its ``node_modules``."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    fields = {"name": "probe", "version": "1.0.0", **package}
    (root / "package.json").write_text(json.dumps(fields))
    try:
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", spec],
            cwd=root,
            capture_output=True,
            timeout=180,
            check=True,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"{spec} could not be installed from npm: {exc}")
    return root
