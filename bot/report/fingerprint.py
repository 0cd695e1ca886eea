"""Identities that let re-runs recognise what Nova already posted, whatever the wording.

A finding's identity is its file, the text of its line, *which* line of that text it is
(the occurrence among the change's new-file lines with the same text, top to bottom), its
origin and its rule — never the model's words. So a reworded finding is recognised, a push
that moves the line keeps it, and findings on three different ``if a:`` lines stay three.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from bot.change import Change, Placement, severity_rank
from bot.diff.anchor import normalize_code
from bot.review.result import ReviewResult

__all__ = [
    "Group",
    "LineIds",
    "finding_fingerprints",
    "fingerprint",
    "group_findings",
    "line_ids",
    "line_key",
    "line_texts",
]

LineIds = dict[tuple[str | None, int | None], tuple[str, int]]  # (path, line) -> (text, nth)
Group = tuple[str, list[Placement]]  # one fingerprint and the findings that share it


def fingerprint(p: Placement, line_text: str, occurrence: int = 0) -> str:
    """File + the text of the line + its occurrence + origin + rule: never the model's words."""
    key = "\0".join(
        [
            p.path or "",
            normalize_code(line_text),
            str(occurrence),
            p.comment.origin,
            p.comment.rule or "",
        ]
    )
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def line_key(path: str, line_text: str, occurrence: int = 0) -> str:
    """Identity of a line by its content and occurrence: stays when lines above it move."""
    key = f"{path}\0{normalize_code(line_text)}\0{occurrence}"
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def line_texts(change: Change) -> dict[tuple[str | None, int | None], str]:
    """(path, new line) -> text, for every line of the change that is in the new file."""
    return {
        (f.path, ln.new_no): ln.text
        for f in change.files
        for h in f.hunks
        for ln in h.lines
        if ln.new_no is not None
    }


def line_ids(change: Change) -> LineIds:
    """(path, new line) -> (text, occurrence of that text in the file's new lines)."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    out: LineIds = {}
    for f in change.files:
        rows = sorted(
            (ln.new_no, ln.text) for h in f.hunks for ln in h.lines if ln.new_no is not None
        )
        for number, text in rows:
            key = (f.path, normalize_code(text))
            out[(f.path, number)] = (text, seen[key])
            seen[key] += 1
    return out


def group_findings(result: ReviewResult, ids: LineIds) -> list[Group]:
    """The placed findings by fingerprint (one inline comment each), most severe first."""
    grouped: dict[str, list[Placement]] = defaultdict(list)
    for p in result.placed:
        grouped[fingerprint(p, *ids.get((p.path, p.line), ("", 0)))].append(p)
    return sorted(
        grouped.items(),
        key=lambda kv: (
            -max(severity_rank(p.comment.severity) for p in kv[1]),
            kv[1][0].path or "",
            kv[1][0].line or 0,
        ),
    )


def finding_fingerprints(result: ReviewResult, ids: LineIds | None = None) -> list[str]:
    """One fingerprint per finding (``result.placements`` order), unique within the result:
    the publishers' own (``fingerprint``; an unplaced finding by its claimed line), and for
    a second finding with the same identity (two on one line) one derived from it by count."""
    ids = line_ids(result.change) if ids is None else ids
    seen: set[str] = set()
    out = []
    for p in result.placements:
        if p.placed:
            fp = fingerprint(p, *ids.get((p.path, p.line), ("", 0)))
        else:
            fp = fingerprint(p, f"unplaced:{p.comment.line}")
        unique, n = fp, 0
        while unique in seen:
            n += 1
            unique = hashlib.sha1(f"{fp}:{n}".encode()).hexdigest()[:16]
        seen.add(unique)
        out.append(unique)
    return out
