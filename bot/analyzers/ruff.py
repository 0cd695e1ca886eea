"""ruff on the changed Python files of a change, filtered to added lines.

Each file's head content is passed on stdin with ``--stdin-filename`` and the repository as
working directory, so the repository's own ruff configuration applies and the work tree is
never touched.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.change import Comment, FileDiff, Severity
from bot.errors import AnalyzerError
from bot.hosts.base import TreeReader

__all__ = ["ruff_binary", "run_ruff"]

PYTHON_SUFFIXES = (".py", ".pyi")
TIMEOUT = 60


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError) as exc:
        raise AnalyzerError("ruff is not installed (pip install ruff)") from exc


def _severity(rule: str) -> Severity:
    if rule.startswith(("E9", "F82", "F63", "F7")):
        return "error"
    if rule.startswith(("F", "B", "S")):
        return "warning"
    return "info"


def _suggestion(item: dict[str, Any], line_text: str) -> str | None:
    """A one-line replacement when ruff's fix touches only the finding's own line."""
    fix = item.get("fix") or {}
    edits = fix.get("edits") or []
    row = item["location"]["row"]
    if not edits or fix.get("applicability") not in ("safe", None):
        return None
    if len(edits) == 1:
        e = edits[0]
        whole_line = e["location"] == {"row": row, "column": 1} and e["end_location"] == {
            "row": row + 1,
            "column": 1,
        }
        if whole_line and not e.get("content"):
            return ""
    text = line_text
    for e in sorted(edits, key=lambda e: -e["location"]["column"]):
        if e["location"]["row"] != row or e["end_location"]["row"] != row:
            return None
        if "\n" in (e.get("content") or ""):
            return None
        start, end = e["location"]["column"] - 1, e["end_location"]["column"] - 1
        text = text[:start] + (e.get("content") or "") + text[end:]
    return text


def run_ruff(files: Sequence[FileDiff], tree: TreeReader, cwd: Path | None) -> list[Comment]:
    """Findings of ruff on the added lines of the changed Python files."""
    binary = ruff_binary()
    comments: list[Comment] = []
    for f in files:
        if f.is_binary or f.status == "deleted" or not f.path.endswith(PYTHON_SUFFIXES):
            continue
        added = {ln.new_no: ln.text for h in f.hunks for ln in h.lines if ln.kind == "added"}
        if not added:
            continue
        source = tree.read_text(f.path)
        if source is None:
            continue
        try:
            proc = subprocess.run(
                [
                    binary,
                    "check",
                    "--output-format=json",
                    "--no-cache",
                    "--exit-zero",
                    "--stdin-filename",
                    f.path,
                    "-",
                ],
                input=source,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=str(cwd) if cwd else None,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise AnalyzerError(f"ruff timed out after {TIMEOUT}s on {f.path}") from exc
        if proc.returncode != 0:
            detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise AnalyzerError(f"ruff failed on {f.path}: {detail[:200]}")
        lines = source.split("\n")  # git numbers lines by \\n only
        for item in json.loads(proc.stdout or "[]"):
            row = item["location"]["row"]
            if row not in added:
                continue
            rule = item.get("code") or "syntax"
            text = lines[row - 1] if row <= len(lines) else added[row]
            comments.append(
                Comment(
                    path=f.path,
                    line=row,
                    body=f"{rule}: {item['message']}",
                    severity=_severity(rule),
                    suggestion=_suggestion(item, text),
                    code=text,
                    origin="ruff",
                    rule=rule,
                    url=item.get("url") or None,
                )
            )
    return comments
