"""reviewdog's Diagnostic format: ``rdjson`` (one DiagnosticResult object) and ``rdjsonl``
(one Diagnostic object a line). Severity: the diagnostic's, else the result's, else
``warning``; the rule is ``code.value`` with its ``code.url``."""

from __future__ import annotations

import json
from typing import Any

from bot.analyzers.report import Edit, Finding, Report, ResultsError, clip, positive
from bot.change import Severity

__all__ = ["parse", "parse_lines"]

_SEVERITY: dict[str, Severity] = {"ERROR": "error", "WARNING": "warning", "INFO": "info"}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _severity(value: object, default: Severity) -> Severity:
    return _SEVERITY.get(str(value).upper(), default) if value is not None else default


def _finding(diag: dict[str, Any], default: Severity) -> Finding | None:
    location = _dict(diag.get("location"))
    path = location.get("path")
    if not isinstance(path, str) or not path:
        return None
    rng = _dict(location.get("range"))
    line = positive(_dict(rng.get("start")).get("line"))
    end = positive(_dict(rng.get("end")).get("line"))
    code = _dict(diag.get("code"))
    rule, url = code.get("value"), code.get("url")
    suggestions = diag.get("suggestions")
    first = _dict(suggestions[0]) if isinstance(suggestions, list) and suggestions else {}
    return Finding(
        fix=_fix(first, line),
        path=path,
        line=line,
        end_line=end if line and end and end > line else None,
        message=clip(diag.get("message")),
        severity=_severity(diag.get("severity"), default),
        rule=clip(rule, 200) if isinstance(rule, str | int) and str(rule) else None,
        url=url if isinstance(url, str) and url.startswith(("https://", "http://")) else None,
    )


def _fix(suggestion: dict[str, Any], line: int | None) -> Edit | None:
    """reviewdog's first suggestion, when it replaces text inside the finding's line."""
    rng = _dict(suggestion.get("range"))
    start, end = _dict(rng.get("start")), _dict(rng.get("end") or rng.get("start"))
    text = suggestion.get("text")
    first, col = positive(start.get("line")), positive(start.get("column"))
    last, end_col = positive(end.get("line")), positive(end.get("column"))
    if (
        line is None
        or first != line
        or last != line
        or not col
        or not end_col
        or not isinstance(text, str)
    ):
        return None
    return Edit(line, col, end_col, text)


def _tool(source: object) -> str:
    return clip(_dict(source).get("name"), 100)


def _collect(diags: list[Any], default: Severity, tool: str) -> list[Report]:
    reports: dict[str, Report] = {}
    for raw in diags:
        diag = _dict(raw)
        finding = _finding(diag, default)
        if finding is None:
            continue
        name = _tool(diag.get("source")) or tool
        report = reports.setdefault(name, Report(tool=name))
        report.findings.append(finding)
        report.paths.add(finding.path)
    return list(reports.values()) or [Report(tool=tool)]


def parse(doc: object) -> list[Report]:
    """A DiagnosticResult: ``{"source": …, "severity": …, "diagnostics": [...]}``."""
    result = _dict(doc)
    diags = result.get("diagnostics")
    if not isinstance(diags, list):
        raise ResultsError("not rdjson: no 'diagnostics' list")
    return _collect(
        diags, _severity(result.get("severity"), "warning"), _tool(result.get("source"))
    )


def parse_lines(text: str) -> list[Report]:
    """One Diagnostic JSON object per line (blank lines skipped)."""
    diags = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            diags.append(json.loads(line))
        except ValueError as exc:
            raise ResultsError(f"line {number} is not JSON: {exc}") from exc
    if diags and not any(isinstance(d, dict) and "message" in d for d in diags):
        raise ResultsError("not rdjsonl: no line is a Diagnostic object")
    return _collect(diags, "warning", "")
