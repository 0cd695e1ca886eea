"""ruff on the changed Python files of a change, filtered to added lines.

The repository is the working directory, so its own ruff configuration applies, and the work
tree is only read: files whose head content the checkout holds are checked in place by one
ruff process; any other file's head content goes on stdin with ``--stdin-filename``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.analyzers.base import Check, Workspace, version_of
from bot.analyzers.running import Target, on_disk
from bot.change import Comment, FileDiff, Severity
from bot.errors import AnalyzerError
from bot.hosts.base import TreeReader

__all__ = ["ANALYZER", "PYTHON_SUFFIXES", "rule_severity", "ruff_binary", "run_ruff"]

PYTHON_SUFFIXES = (".py", ".pyi")
TIMEOUT = 60


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return os.fsdecode(find_ruff_bin())
    except (ImportError, FileNotFoundError) as exc:
        raise AnalyzerError("ruff is not installed (pip install ruff)") from exc


def rule_severity(rule: str) -> Severity:
    """The severity of a pyflakes / pycodestyle / ruff rule code."""
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


@dataclass(frozen=True)
class _File:
    path: str
    added: dict[int, str]  # new line number -> text
    source: str  # the head content


def run_ruff(files: Sequence[FileDiff], tree: TreeReader, cwd: Path | None) -> list[Comment]:
    """Findings of ruff on the added lines of the changed Python files.

    A file whose head content is what the checkout ``cwd`` holds (CI checks out the change)
    is checked in place, by one ruff process for all of them; any other goes on stdin, one
    process per file, a few at once. Both ways the repository's configuration applies."""
    binary = ruff_binary()
    todo: list[_File] = []
    for f in files:
        if f.is_binary or f.status == "deleted" or not f.path.endswith(PYTHON_SUFFIXES):
            continue
        added = {ln.new_no: ln.text for h in f.hunks for ln in h.lines if ln.kind == "added"}
        source = tree.read_text(f.path) if added else None
        if source is not None:
            todo.append(_File(f.path, {n: t for n, t in added.items() if n is not None}, source))
    in_place: list[_File] = []
    piped: list[_File] = []
    for one in todo:
        (in_place if on_disk(cwd, Target(one.path, one.source)) else piped).append(one)
    found: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(in_place), _PATHS_PER_RUN):
        found |= _check_in_place(binary, in_place[start : start + _PATHS_PER_RUN], cwd)
    workers = max(1, min(len(piped), os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(lambda one: _check_piped(binary, one, cwd), piped)
        found |= {one.path: items for one, items in zip(piped, results, strict=True)}
    return [c for f in todo for c in _comments(f, found.get(f.path, []))]


_PATHS_PER_RUN = 400  # paths on one ruff command line (well under any ARG_MAX)


def _ruff(binary: str, args: list[str], cwd: Path | None, what: str, **kw: Any) -> Any:
    try:
        proc = subprocess.run(
            [binary, "check", "--output-format=json", "--no-cache", "--exit-zero", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=str(cwd) if cwd else None,
            check=False,
            **kw,
        )
    except subprocess.TimeoutExpired as exc:
        raise AnalyzerError(f"ruff timed out after {TIMEOUT}s on {what}") from exc
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise AnalyzerError(f"ruff failed on {what}: {detail[:200]}")
    return json.loads(proc.stdout or "[]")


def _check_piped(binary: str, f: _File, cwd: Path | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = _ruff(
        binary, ["--stdin-filename", f.path, "-"], cwd, f.path, input=f.source
    )
    return items


def _check_in_place(
    binary: str, files: list[_File], cwd: Path | None
) -> dict[str, list[dict[str, Any]]]:
    assert cwd is not None
    what = f"{len(files)} files" if len(files) > 1 else files[0].path
    by_file = {(cwd / f.path).resolve(): f.path for f in files}  # ruff names files its way
    found: dict[str, list[dict[str, Any]]] = {f.path: [] for f in files}
    for item in _ruff(binary, ["--", *(f.path for f in files)], cwd, what):
        path = by_file.get((cwd / (item.get("filename") or "")).resolve())
        if path is not None:
            found[path].append(item)
    return found


def _comments(f: _File, items: list[dict[str, Any]]) -> list[Comment]:
    lines = f.source.split("\n")  # git numbers lines by \\n only
    comments: list[Comment] = []
    for item in items:
        row = item["location"]["row"]
        if row not in f.added:
            continue
        rule = item.get("code") or "syntax"
        text = lines[row - 1] if row <= len(lines) else f.added[row]
        comments.append(
            Comment(
                path=f.path,
                line=row,
                body=f"{rule}: {item['message']}",
                severity=rule_severity(rule),
                suggestion=_suggestion(item, text),
                code=text,
                origin="ruff",
                rule=rule,
                url=item.get("url") or None,
            )
        )
    return comments


def _check(ws: Workspace) -> list[Comment]:
    if ws.head is None:
        raise AnalyzerError("the repository files are not available")
    return run_ruff(ws.files, ws.head, ws.root)


def _version() -> str | None:
    try:
        return version_of(ruff_binary(), ("--version",)) or "installed"
    except AnalyzerError:
        return None


ANALYZER = Check(
    name="ruff",
    wants=lambda path, tags: path.endswith(PYTHON_SUFFIXES),
    run=_check,
    available=_version,
)
