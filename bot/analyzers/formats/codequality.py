"""GitLab's Code Quality report (what ``biome lint --reporter=gitlab`` and ``ty
--output-format=gitlab`` print): a list of issues, each with ``description``,
``check_name``, ``severity`` (info, minor, major, critical, blocker) and ``location`` —
``path`` and either ``lines.begin`` or ``positions.begin.line``."""

from __future__ import annotations

from typing import Any

from bot.analyzers.report import Finding, Report, ResultsError, clip, positive
from bot.change import Severity

__all__ = ["parse"]

_SEVERITY: dict[str, Severity] = {
    "blocker": "error",
    "critical": "error",
    "major": "warning",
    "minor": "info",
    "info": "info",
}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _finding(issue: dict[str, Any]) -> Finding | None:
    location = _dict(issue.get("location"))
    path = location.get("path")
    if not isinstance(path, str) or not path:
        return None
    lines = _dict(location.get("lines"))
    positions = _dict(location.get("positions"))
    line = positive(lines.get("begin")) or positive(_dict(positions.get("begin")).get("line"))
    end = positive(lines.get("end")) or positive(_dict(positions.get("end")).get("line"))
    rule = issue.get("check_name")
    return Finding(
        path=path,
        line=line,
        end_line=end if line and end and end > line else None,
        message=clip(issue.get("description")),
        severity=_SEVERITY.get(str(issue.get("severity")).lower(), "warning"),
        rule=clip(rule, 200) if isinstance(rule, str) and rule else None,
    )


def parse(doc: object, tool: str = "") -> list[Report]:
    """The issues of one report, as one ``Report`` of ``tool``."""
    if not isinstance(doc, list):
        raise ResultsError("not a Code Quality report: not a list of issues")
    report = Report(tool=tool)
    for issue in doc:
        finding = _finding(_dict(issue))
        if finding is not None:
            report.findings.append(finding)
            report.paths.add(finding.path)
    return [report]
