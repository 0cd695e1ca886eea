"""Render parsed diffs as the numbered text the model sees, or as JSON-ready structures.

Every line that exists in the new file carries its NEW line number; a deleted line carries
none and is marked as not in the new file. Two styles, measured by bench/prompt_size.py:

``compact`` (default)::

    File: src/app.py (modified)
    @@ new lines 12-15 @@ def main():
    12   setup()
    13 + state = load()
       - old = 1
    14   run(state)

``labeled`` (the shape of DESIGN.md, ~2x the characters)::

    NEW_LINE_12:   setup()
    NEW_LINE_13: + state = load()
    DELETED (was line 14): - old = 1

The marker column (``+`` or a space) is always present: without it a context line whose
text starts with "+ " reads like an added line (found by tests/test_properties.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from bot.models import FileDiff, Hunk

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


def _hunk_label(h: Hunk) -> str:
    if h.new_len == 0:
        label = "@@ no new lines @@"
    else:
        label = f"@@ new lines {h.new_start}-{h.new_start + h.new_len - 1} @@"
    return f"{label} {h.header}" if h.header else label


def _render_hunk_compact(h: Hunk, out: list[str]) -> None:
    width = len(str(h.new_start + h.new_len))
    deleted = " " * width + " - "
    append = out.append
    for kind, _old_no, new_no, text, _ in h.lines:
        if kind == "context":
            append(str(new_no).rjust(width) + "   " + text)
        elif kind == "added":
            append(str(new_no).rjust(width) + " + " + text)
        else:
            append(deleted + text)


def _render_hunk_labeled(h: Hunk, out: list[str]) -> None:
    append = out.append
    for kind, old_no, new_no, text, _ in h.lines:
        if kind == "context":
            append(f"NEW_LINE_{new_no}:   {text}")
        elif kind == "added":
            append(f"NEW_LINE_{new_no}: + {text}")
        else:
            append(f"DELETED (was line {old_no}): - {text}")


def render_file(f: FileDiff, style: Style = "compact", out: list[str] | None = None) -> list[str]:
    """Append the lines of one file's rendering to ``out`` (a new list when None)."""
    out = [] if out is None else out
    out.append(f"File: {describe_file(f)}")
    if f.is_binary or f.status == "deleted":
        return out
    body = _render_hunk_compact if style == "compact" else _render_hunk_labeled
    for h in f.hunks:
        out.append(_hunk_label(h))
        body(h, out)
    return out


def render_files(files: Iterable[FileDiff], style: Style = "compact") -> str:
    """The numbered diff of ``files``, one blank line between files."""
    out: list[str] = []
    for index, f in enumerate(files):
        if index:
            out.append("")
        render_file(f, style, out)
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
