"""SARIF 2.1.0 (eslint's, semgrep's, CodeQL's, golangci-lint's … ``--format sarif``).

A result's file is ``locations[0].physicalLocation.artifactLocation`` (its ``uri``, or the
run's ``artifacts[index]``), resolved against ``originalUriBaseIds`` when it names a base
(``%SRCROOT%``); an unknown base leaves the path relative to the repository. The level
comes from the result, else its rule's ``defaultConfiguration``, else ``warning``.
Suppressed results, ``kind`` other than ``fail``, and ``baselineState: absent`` are left
out: the tool itself says they are not findings.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urljoin

from bot.analyzers.report import Edit, Finding, Report, ResultsError, clip, positive
from bot.change import Severity

__all__ = ["parse"]

_LEVEL: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "note": "info",
    "none": "info",
}
_BASE_DEPTH = 8  # uriBaseIds may chain; a loop must not


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(message: object) -> str:
    m = _dict(message)
    return clip(m.get("text") or m.get("markdown") or "")


def _base_uri(name: str | None, bases: dict[str, Any], depth: int = 0) -> str:
    """The URI a ``uriBaseId`` stands for ('' when the file does not say)."""
    if not name or depth > _BASE_DEPTH:
        return ""
    entry = _dict(bases.get(name))
    uri = entry.get("uri")
    if not isinstance(uri, str):
        return ""
    if not uri.endswith("/"):
        uri += "/"
    parent = _base_uri(entry.get("uriBaseId"), bases, depth + 1)
    return urljoin(parent, uri) if parent else uri


def _location_path(location: dict[str, Any], run: dict[str, Any]) -> str | None:
    artifact = _dict(_dict(location.get("physicalLocation")).get("artifactLocation"))
    index = artifact.get("index")
    if "uri" not in artifact and isinstance(index, int) and not isinstance(index, bool):
        artifacts = _list(run.get("artifacts"))
        if 0 <= index < len(artifacts):
            artifact = _dict(_dict(artifacts[index]).get("location"))
    uri = artifact.get("uri")
    if not isinstance(uri, str) or not uri:
        return None
    base = _base_uri(artifact.get("uriBaseId"), _dict(run.get("originalUriBaseIds")))
    full = urljoin(base, uri) if base else uri
    return full if full.startswith("file:") else unquote(full)


def _rules(run: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    tool = _dict(run.get("tool"))
    rules = [_dict(r) for r in _list(_dict(tool.get("driver")).get("rules"))]
    for ext in _list(tool.get("extensions")):
        rules += [_dict(r) for r in _list(_dict(ext).get("rules"))]
    return rules, {r["id"]: r for r in rules if isinstance(r.get("id"), str)}


def _fix(result: dict[str, Any], line: int | None) -> Edit | None:
    """The first fix, when it is one replacement inside the result's own line."""
    fixes = _list(result.get("fixes"))
    changes = _list(_dict(fixes[0]).get("artifactChanges")) if fixes else []
    replacements = _list(_dict(changes[0]).get("replacements")) if len(changes) == 1 else []
    if line is None or len(replacements) != 1:
        return None
    replacement = _dict(replacements[0])
    region = _dict(replacement.get("deletedRegion"))
    text = _dict(replacement.get("insertedContent")).get("text", "")
    start, end = positive(region.get("startColumn")), positive(region.get("endColumn"))
    if (
        positive(region.get("startLine")) != line
        or positive(region.get("endLine", line)) != line
        or not start
        or not end
        or not isinstance(text, str)
    ):
        return None
    return Edit(line, start, end, text)


def _is_finding(result: dict[str, Any]) -> bool:
    if result.get("kind", "fail") != "fail" or result.get("baselineState") == "absent":
        return False
    return not any(
        _dict(s).get("status", "accepted") == "accepted" for s in _list(result.get("suppressions"))
    )


def _finding(
    result: dict[str, Any],
    run: dict[str, Any],
    rules: list[dict[str, Any]],
    by_id: dict[str, dict[str, Any]],
) -> Finding | None:
    locations = _list(result.get("locations"))
    path = _location_path(_dict(locations[0]), run) if locations else None
    if path is None:
        return None
    rule_id = result.get("ruleId") or _dict(result.get("rule")).get("id")
    rule = by_id.get(rule_id) if isinstance(rule_id, str) else None
    index = result.get("ruleIndex")
    if rule is None and isinstance(index, int) and 0 <= index < len(rules):
        rule = rules[index]
        rule_id = rule.get("id")
    rule = rule or {}
    level = result.get("level") or _dict(rule.get("defaultConfiguration")).get("level")
    region = _dict(_dict(_dict(locations[0]).get("physicalLocation")).get("region"))
    line = positive(region.get("startLine"))
    end = positive(region.get("endLine"))
    url = rule.get("helpUri")
    return Finding(
        fix=_fix(result, line),
        path=path,
        line=line,
        end_line=end if line and end and end > line else None,
        message=_text(result.get("message")) or _text(rule.get("shortDescription")),
        severity=_LEVEL.get(str(level), "warning"),
        rule=clip(rule_id, 200) if isinstance(rule_id, str) and rule_id else None,
        url=url if isinstance(url, str) and url.startswith(("https://", "http://")) else None,
    )


def parse(doc: object) -> list[Report]:
    """One ``Report`` per run of the SARIF log ``doc`` (parsed JSON)."""
    runs = _dict(doc).get("runs")
    if not isinstance(runs, list):
        raise ResultsError("not a SARIF log: no 'runs' list")
    reports = []
    for raw in runs:
        run = _dict(raw)
        driver = _dict(_dict(run.get("tool")).get("driver"))
        report = Report(tool=clip(driver.get("name"), 100))
        rules, by_id = _rules(run)
        for artifact in _list(run.get("artifacts")):
            path = _location_path(
                {"physicalLocation": {"artifactLocation": _dict(_dict(artifact).get("location"))}},
                run,
            )
            if path:
                report.paths.add(path)
        for result in _list(run.get("results")):
            result = _dict(result)
            if not _is_finding(result):
                continue
            finding = _finding(result, run, rules, by_id)
            if finding is not None:
                report.findings.append(finding)
                report.paths.add(finding.path)
        reports.append(report)
    return reports
