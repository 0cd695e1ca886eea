"""The project's own ESLint, as the project configured it: when the repository has an
ESLint configuration and ESLint installed in its ``node_modules``, it checks the changed
JavaScript and TypeScript files instead of oxlint. An ESLint configuration is JavaScript
(plugins too), so it runs inside ``bot.sandbox`` with no token in its environment, like
generated tests."""

from __future__ import annotations

import json
from pathlib import Path

from bot.analyzers.base import Linter
from bot.analyzers.formats.eslint import parse as parse_reports
from bot.analyzers.oxlint import JS_SUFFIXES
from bot.analyzers.project import installed
from bot.analyzers.report import Finding

__all__ = ["ANALYZER", "CONFIGS"]

CONFIGS = tuple(
    [f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")]
    + [f".eslintrc{ext}" for ext in ("", ".js", ".cjs", ".json", ".yml", ".yaml")]
)


def _configured(root: Path) -> bool:
    if any((root / name).is_file() for name in CONFIGS):
        return True
    try:
        package = json.loads((root / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(package, dict) and "eslintConfig" in package


def locate(root: Path | None) -> str | None:
    """``node_modules/.bin/eslint`` of a checkout with an ESLint configuration."""
    return installed(root, "node_modules/.bin/eslint", _configured)


def _wants(path: str, tags: frozenset[str]) -> bool:
    return path.lower().endswith(JS_SUFFIXES)


def parse(data: bytes) -> list[Finding]:
    return [f for report in parse_reports(json.loads(data or b"[]")) for f in report.findings]


ANALYZER = Linter(
    name="eslint",
    wants=_wants,
    program="eslint",
    args=("--format=json", "--no-color"),
    parse=parse,
    package="the project's own (npm install eslint)",
    locate=locate,
    project=True,
    sandboxed=True,
    replaces="oxlint",
)
