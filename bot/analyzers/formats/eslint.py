"""eslint's ``-f json`` (a list of file results) and ``-f json-with-metadata`` (``results``
plus ``metadata.rulesMeta``, whose ``docs.url`` links each rule). Every linted file is
listed, clean ones too, so the report says which files eslint covered. Severity 2 is an
error, 1 a warning; a ``fatal`` message (a parse error) is an error."""

from __future__ import annotations

from typing import Any

from bot.analyzers.report import Finding, Report, ResultsError, clip, positive

__all__ = ["parse"]

_CORE_DOCS = "https://eslint.org/docs/latest/rules/"


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _url(rule: str | None, meta: dict[str, Any]) -> str | None:
    if not rule:
        return None
    url = _dict(_dict(meta.get(rule)).get("docs")).get("url")
    if isinstance(url, str) and url.startswith(("https://", "http://")):
        return url
    return _CORE_DOCS + rule if "/" not in rule and "@" not in rule else None


def parse(doc: object) -> list[Report]:
    meta: dict[str, Any] = {}
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        meta = _dict(_dict(doc.get("metadata")).get("rulesMeta"))
        doc = doc["results"]
    if not isinstance(doc, list):
        raise ResultsError("not eslint JSON: expected a list of file results")
    report = Report(tool="eslint")
    for entry in doc:
        entry = _dict(entry)
        path = entry.get("filePath")
        if not isinstance(path, str) or not path:
            continue
        report.paths.add(path)
        messages = entry.get("messages")
        for raw in messages if isinstance(messages, list) else []:
            message = _dict(raw)
            level = message.get("severity")
            if level not in (1, 2) and not message.get("fatal"):
                continue
            rule = message.get("ruleId")
            rule = clip(rule, 200) if isinstance(rule, str) and rule else None
            line = positive(message.get("line"))
            end = positive(message.get("endLine"))
            report.findings.append(
                Finding(
                    path=path,
                    line=line,
                    end_line=end if line and end and end > line else None,
                    message=clip(message.get("message")),
                    severity="error" if level == 2 or message.get("fatal") else "warning",
                    rule=rule,
                    url=_url(rule, meta),
                )
            )
    return [report]
