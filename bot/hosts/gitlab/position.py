"""Where a diff thread goes on GitLab: a ``position`` computed from the parsed hunks. Pure.

GitLab's rule (``position_type: text`` with the merge request's ``diff_refs``): an ADDED
line takes ``new_line`` only, a REMOVED line ``old_line`` only, and an UNCHANGED (context)
line needs BOTH ``old_line`` and ``new_line``. Anything else is answered 400 ("line_code
can't be blank") and the thread is not created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.change import Change, FileDiff, Line

__all__ = ["line_position", "position"]


def line_position(f: FileDiff, line: Line) -> dict[str, int] | None:
    """The line fields of one diff line (None for a line GitLab cannot take)."""
    if line.kind == "added" and line.new_no is not None:
        return {"new_line": line.new_no}
    if line.kind == "context" and line.new_no is not None and line.old_no is not None:
        return {"old_line": line.old_no, "new_line": line.new_no}
    if line.kind == "removed" and line.old_no is not None:
        return {"old_line": line.old_no}
    return None


def position(
    change: Change, path: str | None, new_line: int | None, refs: Mapping[str, str]
) -> dict[str, Any] | None:
    """The ``position`` of a thread on NEW line ``new_line`` of ``path``, or None when that
    line is not in the change's diff (GitLab would refuse it)."""
    for f in change.files:
        if f.path != path or f.is_binary:
            continue
        for hunk in f.hunks:
            for line in hunk.lines:
                if line.new_no != new_line or line.kind == "removed":
                    continue
                fields = line_position(f, line)
                if fields is None:
                    return None
                return {
                    "position_type": "text",
                    "base_sha": refs["base_sha"],
                    "start_sha": refs.get("start_sha") or refs["base_sha"],
                    "head_sha": refs["head_sha"],
                    "old_path": f.old_path or f.new_path,
                    "new_path": f.new_path or f.old_path,
                    **fields,
                }
    return None
