"""The project's own Biome, as the project configured it: when the repository has a
``biome.json`` (or ``biome.jsonc``) and Biome installed in its ``node_modules``, it checks
the changed JavaScript, TypeScript, JSON and CSS files, instead of oxlint on the first two.
A Biome configuration may load plugins and ``extends`` other packages' configs: it runs
inside ``bot.sandbox`` with no token in its environment, like the project's ESLint.

Its report is GitLab's Code Quality format (``--reporter=gitlab``): Biome 1.9 and 2.x both
print it the same way (``rdjson`` exists only from 2.x)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from bot.analyzers.base import Linter
from bot.analyzers.formats.codequality import parse as parse_issues
from bot.analyzers.oxlint import JS_SUFFIXES
from bot.analyzers.project import installed
from bot.analyzers.report import Finding

__all__ = ["ANALYZER", "CONFIGS"]

CONFIGS = ("biome.json", "biome.jsonc")
SUFFIXES = (*JS_SUFFIXES, ".json", ".jsonc", ".css")
_RULE = re.compile(r"lint/[a-z]+/([A-Za-z0-9]+)")


def locate(root: Path | None) -> str | None:
    """``node_modules/.bin/biome`` of a checkout with a Biome configuration."""
    return installed(
        root, "node_modules/.bin/biome", lambda r: any((r / n).is_file() for n in CONFIGS)
    )


def _url(rule: str | None) -> str | None:
    """The rule's page: ``lint/suspicious/noDebugger`` → ``…/linter/rules/no-debugger``."""
    found = _RULE.fullmatch(rule or "")
    if found is None:
        return None
    name = re.sub(r"(?<!^)(?=[A-Z])", "-", found.group(1)).lower()
    return f"https://biomejs.dev/linter/rules/{name}"


def parse(data: bytes) -> list[Finding]:
    if not data.strip():  # Biome stopped before linting: its configuration is invalid
        raise ValueError("Biome printed no report (is its configuration valid?)")
    return [
        replace(f, url=_url(f.rule))
        for report in parse_issues(json.loads(data), "biome")
        for f in report.findings
    ]


ANALYZER = Linter(
    name="biome",
    wants=lambda path, tags: path.lower().endswith(SUFFIXES),
    program="biome",
    args=(
        "lint",
        "--reporter=gitlab",
        "--colors=off",
        "--no-errors-on-unmatched",
        "--files-ignore-unknown=true",
    ),
    parse=parse,
    package="the project's own (npm install @biomejs/biome)",
    locate=locate,
    project=True,
    sandboxed=True,
    replaces="oxlint",
)
