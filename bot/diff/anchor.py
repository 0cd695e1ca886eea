"""Place proposed comments on commentable NEW lines, or move them to the summary with a reason.

A line is commentable when it is an added or context line inside a hunk: those are the
lines GitHub accepts with ``side: RIGHT`` and Phabricator shows on the new side. Rules, in
order (DESIGN.md "Anchoring"):

1. The path must be in the change: exact, ``a/``/``b/``/``./`` stripped, the old path of a
   renamed file, or a unique suffix / basename match.
2. ``code`` (the text of the line meant) is compared whitespace-insensitively with every
   commentable line, as a prefix, since models cut quotes short (a trailing ``...`` is
   dropped); when nothing starts with it, a quote of 10+ characters may be inside a line.
   One match wins whatever the number. Several matches are ambiguous unless the claim
   singles one out: it names that line (as a new number, or as an old number translated
   to it), or it is within 2 lines of one match and every other match is at least 10 lines
   further. A named line the quote only starts must have no line of other text matching
   within 2 of it (a cut-short quote may be the whole of a neighbour, the number off by
   one). An ambiguous comment is unplaced with the lines it matched: when the text
   repeats, the number is all that tells them apart, and a number that does not name a
   line is not to be trusted (old numbers, off by one or two, out of the file).
3. Without usable ``code``: a commentable claimed number is kept; the old number of a
   context line is translated to its new number; anything else is unplaced.

Nothing is dropped: every input comment yields exactly one ``Placement``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from bot.change import Comment, FileDiff, Placement

__all__ = ["FileIndex", "anchor", "anchor_one", "build_index", "normalize_code"]

_RENDER_PREFIX = re.compile(r"^\s*(?:NEW_LINE_\d+:|\d+\s)?\s*\+?\s*")
_MIN_SUBSTRING = 10


def normalize_code(text: str) -> str:
    return " ".join(text.split())


@dataclass
class FileIndex:
    file: FileDiff
    commentable: dict[int, str] = field(default_factory=dict)  # new_no -> text
    hunk_of: dict[int, int] = field(default_factory=dict)  # new_no -> hunk index
    old_to_new: dict[int, int] = field(default_factory=dict)  # context lines only
    removed: dict[int, str] = field(default_factory=dict)  # old_no -> text
    by_text: dict[str, list[int]] = field(default_factory=dict)
    normalized: dict[int, str] = field(default_factory=dict)  # new_no -> normalize_code(text)

    def matches(self, code: str) -> list[int]:
        """Commentable lines that start with ``code`` (the line itself or a quote cut short),
        else, for a quote long enough to mean something, lines that contain it."""
        key = normalize_code(code)
        if not key:
            return []
        found = [n for n, t in self.normalized.items() if t.startswith(key)]
        if not found and len(key) >= _MIN_SUBSTRING:
            found = [n for n, t in self.normalized.items() if key in t]
        return sorted(found)


def build_index(files: Sequence[FileDiff]) -> dict[str, FileIndex]:
    index: dict[str, FileIndex] = {}
    for f in files:
        fi = FileIndex(f)
        if not f.is_binary and f.status != "deleted":
            for hi, h in enumerate(f.hunks):
                for kind, old_no, new_no, text, _ in h.lines:
                    if new_no is None:  # a removed line
                        if old_no is not None:
                            fi.removed[old_no] = text
                        continue
                    fi.commentable[new_no] = text
                    fi.hunk_of[new_no] = hi
                    fi.normalized[new_no] = normalize_code(text)
                    fi.by_text.setdefault(fi.normalized[new_no], []).append(new_no)
                    if kind == "context" and old_no is not None:
                        fi.old_to_new[old_no] = new_no
        index[f.path] = fi
    return index


def _resolve_path(path: str, index: dict[str, FileIndex]) -> tuple[str | None, str | None]:
    """Return (path in the change, None) or (None, reason)."""
    p = path.strip().replace("\\", "/")
    candidates = [p]
    while p.startswith("./") or p.startswith("/"):
        p = p[2:] if p.startswith("./") else p[1:]
        candidates.append(p)
    if p[:2] in ("a/", "b/"):
        candidates.append(p[2:])
    for c in candidates:
        if c in index:
            return c, None
    for c in candidates:
        for key, fi in index.items():
            if fi.file.old_path == c and fi.file.status in ("renamed", "copied"):
                return key, None
    tail = candidates[-1]
    if not tail:
        return None, "no file path given"
    suffix = [k for k in index if k.endswith("/" + tail) or tail.endswith("/" + k)]
    if len(suffix) == 1:
        return suffix[0], None
    if len(suffix) > 1:
        return None, f"path {path!r} matches several files: {', '.join(sorted(suffix)[:4])}"
    base = tail.rsplit("/", 1)[-1]
    named = [k for k in index if k.rsplit("/", 1)[-1] == base]
    if len(named) == 1:
        return named[0], None
    if len(named) > 1:
        return None, f"path {path!r} matches several files: {', '.join(sorted(named)[:4])}"
    return None, f"{path!r} is not a file of this change"


def _first_code_line(code: str | None) -> str:
    for raw in (code or "").split("\n"):
        if raw.strip():
            return raw
    return ""


_NEAR = 2  # a claim this close to one match singles it out ...
_APART = 10  # ... when every other match is at least this much further


def _rivals(line: int, key: str, matches: list[int], fi: FileIndex) -> bool:
    """Whether a quote that is only the start of ``line`` also matches a line of other text
    near it: a cut-short quote can be the whole of a neighbour, so naming is not enough."""
    text = fi.normalized[line]
    return text != key and any(abs(m - line) <= _NEAR and fi.normalized[m] != text for m in matches)


def _single_out(
    key: str, matches: list[int], claimed: int | None, fi: FileIndex
) -> tuple[int | None, str, str | None]:
    """(line, how, reason): the match the claim singles out, or why none is."""
    if len(matches) == 1:
        return matches[0], "exact" if matches[0] == claimed else "code", None
    if claimed in matches:
        if not _rivals(claimed, key, matches, fi):
            return claimed, "exact", None
    elif claimed is not None:
        near = [m for m in matches if abs(m - claimed) <= _NEAR]
        translated = fi.old_to_new.get(claimed)
        if translated is not None and translated in matches:
            # read as a new number, the claim may also point at another twin
            if not [m for m in near if m != translated] and not _rivals(
                translated, key, matches, fi
            ):
                return translated, "translated", None
        elif len(near) == 1:
            best = abs(near[0] - claimed)
            if all(abs(m - claimed) - best >= _APART for m in matches if m != near[0]):
                return near[0], "code", None
    shown = ", ".join(map(str, matches[:6])) + (
        f" and {len(matches) - 6} more" if len(matches) > 6 else ""
    )
    why = (
        "no line number was given" if claimed is None else f"line {claimed} does not single one out"
    )
    return (
        None,
        "",
        (f"ambiguous: the quoted code matches {len(matches)} lines ({shown}) and {why}"),
    )


def _quote_matches(code: str, fi: FileIndex) -> tuple[str, list[int]]:
    """(quote, its matches), as given, else without a rendering prefix or a trailing ``...``."""
    tries = [code, _RENDER_PREFIX.sub("", code, count=1)]
    tries += [t.rstrip().removesuffix("...").removesuffix("\u2026") for t in tries]
    for text in dict.fromkeys(tries):
        found = fi.matches(text)
        if found:
            return normalize_code(text), found
    return "", []


def _place_line(c: Comment, fi: FileIndex) -> tuple[int | None, str, str | None]:
    """(new line, how, reason) for comment ``c`` in file ``fi``."""
    claimed = c.line
    code = _first_code_line(c.code)
    if code.strip():
        key, matches = _quote_matches(code, fi)
        if matches:
            return _single_out(key, matches, claimed, fi)
        key = normalize_code(code)
        deleted = [o for o, t in fi.removed.items() if normalize_code(t) == key]
        if deleted:
            return (
                None,
                "",
                (
                    f"quotes a deleted line (was line {deleted[0]}); deleted lines "
                    "are not in the new file"
                ),
            )
        if claimed in fi.commentable and _similar(key, normalize_code(fi.commentable[claimed])):
            return claimed, "number", None
        return None, "", f"quoted code not found among the lines of this diff in {fi.file.path}"
    if claimed is None:
        return None, "", "no line number and no quoted code"
    if claimed in fi.commentable:
        return claimed, "number", None
    if claimed in fi.old_to_new:
        return fi.old_to_new[claimed], "translated", None
    if claimed in fi.removed:
        return None, "", f"line {claimed} is a deleted line, not in the new file"
    return None, "", f"line {claimed} is outside the diff of {fi.file.path}"


def _similar(a: str, b: str) -> bool:
    return bool(a and b) and SequenceMatcher(None, a, b).ratio() >= 0.75


def anchor_one(c: Comment, index: dict[str, FileIndex]) -> Placement:
    path, reason = _resolve_path(c.path, index)
    if path is None:
        return Placement(c, reason=reason)
    fi = index[path]
    if fi.file.is_binary:
        return Placement(c, path=path, reason=f"{path} is binary; it has no lines to comment on")
    if fi.file.status == "deleted":
        return Placement(c, path=path, reason=f"{path} is deleted in this change")
    if not fi.commentable:
        return Placement(c, path=path, reason=f"{path} has no changed lines to comment on")
    line, how, reason = _place_line(c, fi)
    if line is None:
        return Placement(c, path=path, reason=reason)
    end_line, suggestion = _place_range(c, fi, line)
    return Placement(c, path=path, line=line, end_line=end_line, suggestion=suggestion, how=how)


def _place_range(c: Comment, fi: FileIndex, line: int) -> tuple[int | None, str | None]:
    """Keep ``end_line`` (shifted like ``line``) only when the whole range is commentable in
    one hunk; a suggestion survives only on a range that is exactly the comment's."""
    if c.end_line is None or c.line is None or c.end_line <= c.line:
        return None, c.suggestion
    end = c.end_line + (line - c.line)
    hunk = fi.hunk_of[line]
    if all(fi.hunk_of.get(n) == hunk for n in range(line, end + 1)):
        return end, c.suggestion
    return None, None


def anchor(comments: Sequence[Comment], files: Sequence[FileDiff]) -> list[Placement]:
    """One ``Placement`` for each comment, in the same order."""
    index = build_index(files)
    return [anchor_one(c, index) for c in comments]
