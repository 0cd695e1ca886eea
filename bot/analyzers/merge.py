"""Join the analyzers' findings with the model's before they are anchored.

- A model comment that says what an analyzer already said (same file, the same or an
  overlapping line, and it names the rule or reads alike) is merged into the analyzer's
  finding: one comment with the analyzer's rule and link, the higher severity, and both
  sources in its body. Its origin stays the analyzer's, so a re-run without the model's
  remark fingerprints the same.
- An analyzer's line number is the tool's own NEW line number: it is anchored as it is
  (never searched by text, never translated as if it were an old number). A finding on a
  line outside the diff or on a file outside the change (filter modes ``file`` and
  ``nofilter``) goes to the summary with its reason, never inline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from difflib import SequenceMatcher

from bot.change import Comment, FileDiff, Placement, severity_rank
from bot.diff.anchor import anchor_one, build_index

__all__ = ["MODEL_ORIGINS", "combine", "is_analyzer", "says_the_same"]

MODEL_ORIGINS = frozenset({"llm", "mcp"})
_WORD = re.compile(r"[a-z0-9_]+")
_NEAR = 1  # lines: a model's number may be off by one from the tool's


def is_analyzer(c: Comment) -> bool:
    return c.origin not in MODEL_ORIGINS


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1}


def says_the_same(finding: Comment, remark: str) -> bool:
    """Whether the model's ``remark`` names the finding's rule or reads like its message."""
    text = remark.lower()
    if (
        finding.rule
        and len(finding.rule) > 2
        and re.search(rf"(?<![\w-]){re.escape(finding.rule.lower())}(?![\w-])", text)
    ):
        return True
    message = finding.body.split(": ", 1)[-1] if finding.rule else finding.body
    a, b = _words(message), _words(remark)
    if a and b and len(a & b) / len(a | b) >= 0.5:
        return True
    return SequenceMatcher(None, message.lower(), text).ratio() >= 0.6


def _overlaps(finding: Comment, line: int) -> bool:
    if finding.line is None:
        return False
    end = finding.end_line or finding.line
    return finding.line - _NEAR <= line <= end + _NEAR


def _merged(finding: Comment, remark: Comment) -> Comment:
    severity = max(finding.severity, remark.severity, key=severity_rank)
    body = f"{finding.body}\n\nThe model says the same: {remark.body.strip()}"
    return replace(
        finding,
        severity=severity,
        body=body,
        suggestion=finding.suggestion if finding.suggestion is not None else remark.suggestion,
    )


def _merge(
    findings: list[Comment], remarks: Sequence[Comment], files: Sequence[FileDiff]
) -> tuple[list[Comment], list[Comment]]:
    """(findings with the duplicate remarks folded in, the remarks left)."""
    index = build_index(files)
    merged = list(findings)
    left = []
    for remark in remarks:
        placed = anchor_one(remark, index)
        match = None
        if placed.placed and placed.line is not None:
            match = next(
                (
                    i
                    for i, f in enumerate(merged)
                    if is_analyzer(f)
                    and f.path == placed.path
                    and _overlaps(f, placed.line)
                    and f.body.count("\n\nThe model says the same: ") == 0
                    and says_the_same(f, remark.body)
                ),
                None,
            )
        if match is None:
            left.append(remark)
        else:
            merged[match] = _merged(merged[match], remark)
    return merged, left


def _held(c: Comment, commentable: dict[str, set[int]]) -> Placement | None:
    """The summary placement of an analyzer finding that must not go inline, else None."""
    lines = commentable.get(c.path)
    if lines is None:
        return Placement(
            c,
            path=c.path,
            reason=f"{c.path} is not a file of this change (summary only)",
        )
    if c.line is None:
        return Placement(c, path=c.path, reason="the finding is about the whole file")
    if c.line not in lines:
        return Placement(c, path=c.path, reason=f"line {c.line} is outside the diff (summary only)")
    return None


def combine(
    findings: Sequence[Comment], remarks: Sequence[Comment], files: Sequence[FileDiff]
) -> tuple[list[Comment], list[Placement]]:
    """(the comments to anchor, the analyzer findings that go to the summary as they are).
    ``findings``: the analyzers'; ``remarks``: the model's."""
    merged, left = _merge(list(findings), remarks, files)
    commentable = {
        f.path: {ln.new_no for h in f.hunks for ln in h.lines if ln.new_no is not None}
        for f in files
        if f.status != "deleted" and not f.is_binary
    }
    to_anchor: list[Comment] = []
    held: list[Placement] = []
    for c in merged:
        hold = _held(c, commentable) if is_analyzer(c) else None
        if hold is not None:
            held.append(hold)
        else:
            to_anchor.append(c)
    return to_anchor + left, held
