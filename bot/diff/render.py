"""Render parsed diffs as the numbered text the model sees, or as JSON-ready structures.

Every line that exists in the new file carries its NEW line number; a deleted line carries
none and is marked as not in the new file. Two styles, measured by bench/prompt_size.py:

``compact`` (default)::

    File: src/app.py (modified)
    @@ +12-15 @@ def main():
    12   setup()
    13 + state = load()
    - old = 1
    14   run(state)

``labeled`` (the shape of DESIGN.md, ~2x the characters)::

    NEW_LINE_12:   setup()
    NEW_LINE_13: + state = load()
    DELETED (was line 14): - old = 1

The marker column (``+`` or a space) is always present: without it a context line whose
text starts with "+ " reads like an added line (found by tests/diff/test_diff_properties.py).

Compaction, measured on a real release diff (bench/prompt_size.py), keeps every NEW line
number true: numbers are as wide as they are (no padding), an empty line has no trailing
blanks, only CONTEXT unchanged lines are shown around a change (a hunk whose changes are
far apart is shown as two), and a run of more than DELETED_RUN deleted lines shows its
first lines and ``~ N more deleted lines``. Every added line is always shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from bot.change import FileDiff, Hunk, Line

__all__ = ["Style", "describe_file", "diff_to_dict", "render_file", "render_files"]

Style = Literal["compact", "labeled"]


def describe_file(f: FileDiff) -> str:
    """``path (status, details)`` — the header line of a file in the rendering."""
    details: list[str] = [f.status]
    if f.status in ("renamed", "copied") and f.old_path:
        details[0] = f"{f.status} from {f.old_path}"
    if f.is_binary:
        details.append("binary, cannot be commented on")
    elif f.status == "deleted":
        details.append("not in the new tree, cannot be commented on")
    elif not f.hunks:
        if f.old_mode and f.new_mode and f.old_mode != f.new_mode:
            details.append(f"mode {f.old_mode} -> {f.new_mode}")
        details.append("no content change")
    return f"{f.path} ({', '.join(details)})"


CONTEXT = 2  # unchanged lines shown around a change (git's default is 3)
MIN_GAP = 3  # a hunk is split only where that hides at least this many unchanged lines
DELETED_RUN = 4  # a longer run of deleted lines shows its first DELETED_HEAD lines...
DELETED_HEAD = 2  # ... and a count of the rest


def _views(h: Hunk, context: int) -> list[list[Line]]:
    """The hunk's lines as shown: unchanged lines more than ``context`` lines away from a
    change are left out, which may split the hunk in two where its changes are far apart."""
    changed = [i for i, ln in enumerate(h.lines) if ln.kind != "context"]
    if not changed:
        return [list(h.lines)] if h.lines else []
    keep = [False] * len(h.lines)
    for i in changed:
        for j in range(max(0, i - context), min(len(h.lines), i + context + 1)):
            keep[j] = True
    kept = [i for i, k in enumerate(keep) if k]
    for a, b in zip(kept, kept[1:], strict=False):
        if b - a <= MIN_GAP:  # a split costs a label line: hide at least MIN_GAP lines
            keep[a:b] = [True] * (b - a)
    views: list[list[Line]] = []
    for i, ln in enumerate(h.lines):
        if keep[i]:
            if i == 0 or not keep[i - 1]:
                views.append([])
            views[-1].append(ln)
    return views


def _label(lines: Sequence[Line], header: str) -> str:
    numbers = [ln.new_no for ln in lines if ln.new_no is not None]
    label = f"@@ +{numbers[0]}-{numbers[-1]} @@" if numbers else "@@ no new lines @@"
    return f"{label} {header}" if header else label


def _shorten_deletions(lines: Sequence[Line]) -> list[Line | int]:
    """Runs of more than DELETED_RUN deleted lines: the first DELETED_HEAD, then the count of
    the others (an int). The model cannot comment on a deleted line anyway."""
    out: list[Line | int] = []
    run: list[Line] = []
    for ln in [*lines, None]:
        if ln is not None and ln.kind == "removed":
            run.append(ln)
            continue
        if len(run) > DELETED_RUN:
            out += [*run[:DELETED_HEAD], len(run) - DELETED_HEAD]
        else:
            out += run
        run = []
        if ln is not None:
            out.append(ln)
    return out


def _row_compact(ln: Line | int) -> str:
    if isinstance(ln, int):
        return f"~ {ln} more deleted lines"
    kind, _old_no, new_no, text, _ = ln
    if kind == "removed":
        return f"- {text}" if text else "-"
    mark = "+" if kind == "added" else " "
    return f"{new_no} {mark} {text}" if text else f"{new_no} {mark}".rstrip()


def _row_labeled(ln: Line | int) -> str:
    if isinstance(ln, int):
        return f"~ {ln} more deleted lines"
    kind, old_no, new_no, text, _ = ln
    if kind == "context":
        return f"NEW_LINE_{new_no}:   {text}"
    if kind == "added":
        return f"NEW_LINE_{new_no}: + {text}"
    return f"DELETED (was line {old_no}): - {text}"


def render_file(
    f: FileDiff, style: Style = "compact", out: list[str] | None = None, context: int = CONTEXT
) -> list[str]:
    """Append the lines of one file's rendering to ``out`` (a new list when None)."""
    out = [] if out is None else out
    out.append(f"File: {describe_file(f)}")
    if f.is_binary or f.status == "deleted":
        return out
    row = _row_compact if style == "compact" else _row_labeled
    for h in f.hunks:
        for index, view in enumerate(_views(h, context)):
            out.append(_label(view, "" if index else h.header))  # git's header: the first
            out.extend(row(ln) for ln in _shorten_deletions(view))
    return out


def render_files(
    files: Iterable[FileDiff], style: Style = "compact", context: int = CONTEXT
) -> str:
    """The numbered diff of ``files``, one blank line between files."""
    out: list[str] = []
    for index, f in enumerate(files):
        if index:
            out.append("")
        render_file(f, style, out, context)
    return "\n".join(out) + ("\n" if out else "")


def diff_to_dict(files: Sequence[FileDiff]) -> dict[str, object]:
    """The parsed structure printed by ``nova diff --format json``."""
    return {
        "files": [
            {
                "path": f.path,
                "old_path": f.old_path,
                "status": f.status,
                "binary": f.is_binary,
                "hunks": [
                    {
                        "old_start": h.old_start,
                        "new_start": h.new_start,
                        "lines": [
                            {"kind": ln[0], "old": ln[1], "new": ln[2], "text": ln[3]}
                            for ln in h.lines
                        ],
                    }
                    for h in f.hunks
                ],
            }
            for f in files
        ]
    }
