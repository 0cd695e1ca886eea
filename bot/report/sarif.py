"""A review as SARIF 2.1.0, fit for GitHub code scanning (``upload-sarif``).

- Every result carries ``partialFingerprints["nova/v1"]``: the fingerprint the publishers
  use to recognise a finding across runs (file, the line's text and occurrence, origin,
  rule — never the model's words), unique within the run.
- Every result has a location (code scanning rejects a whole upload when one has none), its
  ``uri`` relative to ``%SRCROOT%`` (the checkout). A finding that could not be placed on a
  line is reported at the top of its file, the message saying why; one whose path is not a
  file of the change (none, absolute, ``..``, a file the model made up) becomes a tool
  notification instead, as do the summary and its notes, so nothing is lost.
- Rules carry ``shortDescription``, ``fullDescription``, ``help`` and, when the analyzer
  links its documentation (``Comment.url``), ``helpUri``.
- Code scanning's limits hold: at most ``MAX_RESULTS`` results (the most severe kept; it
  shows no more than 5,000 of a run), messages cut to ``MAX_MESSAGE`` characters; a note in
  the run's notifications says what was cut.
- No ``automationDetails``: the upload's ``category`` names the analysis (the workflow in
  ci/github/ sets ``category: nova``), and a category in the file would clash with it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from bot import __version__
from bot.change import Placement, severity_rank
from bot.report.fingerprint import finding_fingerprints
from bot.review.result import ReviewResult

__all__ = ["FINGERPRINT_KEY", "MAX_MESSAGE", "MAX_RESULTS", "SRCROOT", "rule_id", "to_sarif"]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "nova/v1"
SRCROOT = "%SRCROOT%"
MAX_RESULTS = 5_000  # code scanning shows the top 5,000 of a run (hard limit: 25,000)
MAX_MESSAGE = 4_000  # characters of one message; the whole file must stay under 10 MB gzip
MAX_DESCRIPTION = 1_000  # shortDescription: code scanning takes up to 1,024
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SHA = re.compile(r"[0-9a-f]{40}")
_REPO_URL = re.compile(r"^(https?://[^?#\s]+?)/(?:pull|-/merge_requests|merge_requests)/\d+")
_OWN_RULES = {
    "llm": (
        "Finding of Nova's model review",
        "A model reviewed the change's numbered diff and wrote this finding on a line it "
        "added or kept. Model findings can be wrong: read the line before acting.",
    ),
    "secrets": (
        "Committed secret",
        "A line of the change holds what looks like a credential (a token, a key). "
        "Revoke it, remove it from the history, and load it from the environment.",
    ),
    "mcp": (
        "Finding reported over MCP",
        "An agent reported this finding through Nova's MCP tools.",
    ),
}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    note = f" … (cut: {len(text) - limit:,}+ characters over the limit)"
    return text[: max(0, limit - len(note))] + note


def _uri(path: str | None) -> str | None:
    """``path`` as a URI reference relative to the checkout, or None when it is not one."""
    if not path:
        return None
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or path.startswith(("/", "\\")) or ".." in parts:
        return None
    return quote("/".join(parts), safe="/")  # "a:b" too: a colon is %3A, never a scheme


def rule_id(p: Placement) -> str:
    """``ruff/F401``: the tool's rule under its origin (two tools may share a code)."""
    c = p.comment
    return f"{c.origin}/{c.rule}" if c.rule else f"nova/{c.origin}"


def _rule(p: Placement) -> dict[str, Any]:
    c = p.comment
    own = _OWN_RULES.get(c.origin) if not c.rule else None
    if own is not None:
        short, full = own
    else:
        name = c.url.rstrip("/").rsplit("/", 1)[-1] if c.url else ""
        short = f"{c.origin} {c.rule or 'finding'}" + (f" ({name})" if name else "")
        full = f"Rule {c.rule or '(none)'} of {c.origin}, on a line this change added." + (
            f" Documentation: {c.url}" if c.url else ""
        )
    short = _cut(short, MAX_DESCRIPTION)
    rule: dict[str, Any] = {
        "id": rule_id(p),
        "name": c.rule or c.origin,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": full, "markdown": f"[{c.rule}]({c.url})" if c.url else full},
        "defaultConfiguration": {"level": _LEVEL[c.severity]},
        "properties": {"tags": ["nova", c.origin]},
    }
    if c.url and c.url.startswith(("https://", "http://")):
        rule["helpUri"] = c.url
    else:
        del rule["help"]["markdown"]
    return rule


def _result(p: Placement, fp: str, uri: str) -> dict[str, Any]:
    body = p.comment.body or "(no text)"
    region: dict[str, int] = {"startLine": 1}
    if p.placed:
        region["startLine"] = max(1, p.line or 1)
        if p.end_line and p.end_line > region["startLine"]:
            region["endLine"] = p.end_line
    else:
        claimed = f" (claimed line {p.comment.line})" if p.comment.line else ""
        body = f"{body}\n\nNot placed on a line{claimed}: {p.reason}; shown at the top of the file."
    return {
        "ruleId": rule_id(p),
        "level": _LEVEL[p.comment.severity],
        "message": {"text": _cut(body, MAX_MESSAGE)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri, "uriBaseId": SRCROOT},
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fp},
        "properties": {"origin": p.comment.origin, "placed": p.placed},
    }


def _notification(text: str, level: str) -> dict[str, Any]:
    return {"message": {"text": _cut(text, MAX_MESSAGE)}, "level": level}


def _provenance(result: ReviewResult) -> list[dict[str, Any]]:
    change = result.change
    match = _REPO_URL.match(change.url or "")
    if match is None:
        return []
    entry: dict[str, Any] = {"repositoryUri": match.group(1), "mappedTo": {"uriBaseId": SRCROOT}}
    if change.head_ref and _SHA.fullmatch(change.head_ref):
        entry["revisionId"] = change.head_ref
    return [entry]


def to_sarif(result: ReviewResult, *, max_results: int = MAX_RESULTS) -> dict[str, Any]:
    """The SARIF log of ``result`` (one run)."""
    rules: dict[str, dict[str, Any]] = {}
    results: list[tuple[int, dict[str, Any]]] = []
    notes = [_notification(t, "note") for t in [result.summary.strip(), *result.notes] if t]
    notes += [_notification(e, "error") for e in result.errors]
    in_change = {f.path for f in result.change.files}
    for p, fp in zip(result.placements, finding_fingerprints(result), strict=True):
        path = p.path if p.placed else (p.path or p.comment.path)
        uri = _uri(path) if p.placed or path in in_change else None
        if uri is None:
            where = f"{path}:{p.comment.line or '?'}" if path else "no file"
            notes.append(
                _notification(
                    f"{p.comment.severity} ({where}, not a file of this change): {p.comment.body} "
                    f"(not placed: {p.reason or 'no path'})",
                    _LEVEL[p.comment.severity],
                )
            )
            continue
        rules.setdefault(rule_id(p), _rule(p))
        results.append((severity_rank(p.comment.severity), _result(p, fp, uri)))
    if len(results) > max_results:
        notes.append(
            _notification(
                f"{len(results) - max_results} of {len(results)} results left out (code scanning "
                f"takes {max_results} per run): the most severe are kept.",
                "warning",
            )
        )
        kept = sorted(range(len(results)), key=lambda i: -results[i][0])[:max_results]
        results = [results[i] for i in sorted(kept)]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "nova", "version": __version__, "rules": list(rules.values())}},
        "originalUriBaseIds": {
            SRCROOT: {
                "description": {
                    "text": "The root of the repository checkout the change was reviewed in."
                }
            }
        },
        "invocations": [
            {"executionSuccessful": not result.errors, "toolExecutionNotifications": notes}
        ],
        "results": [r for _, r in results],
    }
    provenance = _provenance(result)
    if provenance:
        run["versionControlProvenance"] = provenance
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
