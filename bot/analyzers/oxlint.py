"""oxlint on JavaScript and TypeScript: its default rules are the correctness ones (code
that is wrong or useless), so its findings are problems a reviewer would post. A project's
``.oxlintrc.json`` applies; a project with its own ESLint takes precedence
(``bot.analyzers.eslint``)."""

from __future__ import annotations

import json

from bot.analyzers.base import Linter
from bot.analyzers.report import Finding, clip, positive
from bot.change import Severity

__all__ = ["ANALYZER", "JS_SUFFIXES"]

JS_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")
# the script blocks of these too, as oxlint does when it walks a tree
COMPONENT_SUFFIXES = (".vue", ".svelte", ".astro")
_LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning"}


def _wants(path: str, tags: frozenset[str]) -> bool:
    return path.lower().endswith(JS_SUFFIXES + COMPONENT_SUFFIXES)


def parse(data: bytes) -> list[Finding]:
    # a line of its own may come first ("No files found to lint": every file was ignored)
    doc = json.loads(data[data.find(b"{") :] if b"{" in data else b"{}")
    found = []
    for item in doc.get("diagnostics", []) if isinstance(doc, dict) else []:
        labels = item.get("labels") or [{}]
        span = labels[0].get("span") or {}
        message = clip(item.get("message"))
        if item.get("help"):
            message = clip(f"{message} {item['help']}")
        found.append(
            Finding(
                path=str(item.get("filename", "")),
                line=positive(span.get("line")),
                message=message,
                severity=_LEVELS.get(str(item.get("severity")), "info"),
                rule=str(item.get("code") or "") or None,
                url=str(item.get("url") or "") or None,
            )
        )
    return found


ANALYZER = Linter(
    name="oxlint",
    wants=_wants,
    program="oxlint",
    args=("--format=json",),
    parse=parse,
    package="oxlint",
    configs=(".oxlintrc.json",),
)
