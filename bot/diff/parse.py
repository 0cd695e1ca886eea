"""Parse unified diffs (git's extended format, plain ``diff -u``) into ``FileDiff``s.

Pure: text in, data out. Our own parser rather than ``unidiff``: on a 98k-line diff unidiff
took 0.51 s before any rendering (bench/parse_render.py), over the whole budget; this
single pass takes a fraction of that and counts hunk lines exactly, so a malformed hunk is
reported with its line number instead of being silently mis-numbered.
"""

from __future__ import annotations

import gc
import re

from bot.change import FileDiff, FileStatus, Hunk, Line
from bot.errors import DiffParseError
from bot.text import decode_text

__all__ = ["parse_diff", "decode_diff"]

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_GIT_HEADER_RE = re.compile(r"^diff --git (.+)$")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    '"': '"',
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "r": "\r",
}


def decode_diff(data: bytes | str) -> str:
    """The one way every source decodes a diff: invalid UTF-8 (latin-1 files, say) becomes
    U+FFFD, never an error; text that arrived decoded (stdin read with ``surrogateescape``, a
    host's JSON) has its lone surrogates replaced the same way, so no encoder fails later."""
    return decode_text(data)


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of paths with unusual characters ("a/tab\\there")."""
    if not (len(path) >= 2 and path[0] == '"' and path[-1] == '"'):
        return path
    body = path[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and i + 3 < len(body) + 1 and body[i + 1 : i + 4].isdigit():
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode())
            i += 2
            continue
        out.extend(ch.encode())
        i += 1
    return out.decode("utf-8", errors="replace")


def _strip_prefix(path: str) -> str:
    path = _unquote(path.split("\t", 1)[0].rstrip("\r"))
    if path[:2] in ("a/", "b/", "i/", "w/", "c/", "o/"):
        return path[2:]
    return path


def _split_git_header(rest: str) -> tuple[str | None, str | None]:
    """Best guess at the two paths of ``diff --git a/X b/Y`` (--- / +++ / rename win later)."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        end = rest.find('"', 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find('"', end + 1)
        if end > 0:
            return _strip_prefix(rest[: end + 1]), _strip_prefix(rest[end + 1 :].strip())
    # Unquoted and symmetric: "a/<p> b/<p>" — split in the middle.
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half][2:] == rest[half + 1 :][2:]:
        return _strip_prefix(rest[:half]), _strip_prefix(rest[half + 1 :])
    parts = rest.split(" b/", 1)
    if len(parts) == 2:
        return _strip_prefix(parts[0]), parts[1]
    return None, None


class _FileBuilder:
    __slots__ = (
        "old_path",
        "new_path",
        "status",
        "binary",
        "hunks",
        "old_mode",
        "new_mode",
        "similarity",
        "start",
    )

    def __init__(self, start: int) -> None:
        self.old_path: str | None = None
        self.new_path: str | None = None
        self.status: FileStatus = "modified"
        self.binary = False
        self.hunks: list[Hunk] = []
        self.old_mode: str | None = None
        self.new_mode: str | None = None
        self.similarity: int | None = None
        self.start = start

    def build(self) -> FileDiff:
        old, new = self.old_path, self.new_path
        if self.status == "added":
            old = None
        elif self.status == "deleted":
            new = None
        if old is None and new is None:
            raise DiffParseError(f"diff line {self.start}: file header without a path")
        return FileDiff(
            old_path=old,
            new_path=new,
            status=self.status,
            is_binary=self.binary,
            hunks=tuple(self.hunks),
            old_mode=self.old_mode,
            new_mode=self.new_mode,
            similarity=self.similarity,
        )


def parse_diff(text: str) -> list[FileDiff]:
    """Parse ``text`` into one ``FileDiff`` per file. Empty text gives ``[]``.

    Raises ``DiffParseError`` (with the 1-based diff line) for text that is not a diff or a
    hunk whose body does not match its header's line counts.
    """
    # A big diff allocates one tuple per line; the cyclic GC would rescan them over and
    # over (none can form a cycle), costing ~15% of the parse. Paused, then restored.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(text)
    finally:
        if was_enabled:
            gc.enable()


def _parse(text: str) -> list[FileDiff]:
    lines = text.split("\n")
    has_cr = "\r" in text
    if lines and lines[-1] == "":
        lines.pop()
    files: list[FileDiff] = []
    cur: _FileBuilder | None = None
    n = len(lines)
    i = 0
    while i < n:
        raw = lines[i]
        if raw.startswith("diff --git "):
            if cur is not None:
                files.append(cur.build())
            cur = _FileBuilder(i + 1)
            cur.old_path, cur.new_path = _split_git_header(raw[11:])
            i += 1
            continue
        if raw.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            if cur is None or cur.hunks:
                if cur is not None:
                    files.append(cur.build())
                cur = _FileBuilder(i + 1)
            old = raw[4:].split("\t", 1)[0].rstrip("\r")
            new = lines[i + 1][4:].split("\t", 1)[0].rstrip("\r")
            if old == "/dev/null":
                cur.status = "added"
            else:
                cur.old_path = _strip_prefix(old)
            if new == "/dev/null":
                cur.status = "deleted"
            else:
                cur.new_path = _strip_prefix(new)
            i += 2
            continue
        if raw.startswith("@@ "):
            if cur is None:
                raise DiffParseError(f"diff line {i + 1}: hunk header before any file header")
            i = _parse_hunk(lines, i, cur, has_cr)
            continue
        if cur is not None and not cur.hunks:
            _parse_extended_header(raw, cur)
        i += 1
    if cur is not None:
        files.append(cur.build())
    if not files and text.strip():
        raise DiffParseError("input is not a unified diff: no 'diff --git' or '---/+++' header")
    return files


def _parse_extended_header(raw: str, cur: _FileBuilder) -> None:
    line = raw.rstrip("\r")
    if line.startswith("new file mode "):
        cur.status, cur.new_mode = "added", line[14:]
    elif line.startswith("deleted file mode "):
        cur.status, cur.old_mode = "deleted", line[18:]
    elif line.startswith("old mode "):
        cur.old_mode = line[9:]
    elif line.startswith("new mode "):
        cur.new_mode = line[9:]
    elif line.startswith("rename from "):
        cur.status, cur.old_path = "renamed", _unquote(line[12:])
    elif line.startswith("rename to "):
        cur.status, cur.new_path = "renamed", _unquote(line[10:])
    elif line.startswith("copy from "):
        cur.status, cur.old_path = "copied", _unquote(line[10:])
    elif line.startswith("copy to "):
        cur.status, cur.new_path = "copied", _unquote(line[8:])
    elif line.startswith("similarity index "):
        cur.similarity = int(line[17:].rstrip("%") or 0)
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        cur.binary = True
        if line.startswith("Binary files ") and line.endswith(" differ"):
            pair = line[13:-7]
            old, sep, new = pair.partition(" and ")
            if sep:
                if old == "/dev/null":
                    cur.status = "added"
                if new == "/dev/null":
                    cur.status = "deleted"


def _parse_hunk(lines: list[str], i: int, cur: _FileBuilder, has_cr: bool) -> int:
    header = lines[i].rstrip("\r")
    m = _HUNK_RE.match(header)
    if not m:
        raise DiffParseError(f"diff line {i + 1}: malformed hunk header {header[:80]!r}")
    old_start, new_start = int(m.group(1)), int(m.group(3))
    old_len = int(m.group(2)) if m.group(2) is not None else 1
    new_len = int(m.group(4)) if m.group(4) is not None else 1
    old_left, new_left = old_len, new_len
    old_no, new_no = old_start, new_start
    out: list[Line] = []
    append = out.append
    make = tuple.__new__  # ~3x cheaper than Line(...) on 100k-line diffs (bench/parse_render.py)
    i += 1
    n = len(lines)
    while (old_left or new_left) and i < n:
        raw = lines[i]
        tag = raw[:1]
        if tag == "+":
            if not new_left:
                break
            text = raw[1:]
            if has_cr and text[-1:] == "\r":
                text = text[:-1]
            append(make(Line, ("added", None, new_no, text, False)))
            new_no += 1
            new_left -= 1
        elif tag == "-":
            if not old_left:
                break
            text = raw[1:]
            if has_cr and text[-1:] == "\r":
                text = text[:-1]
            append(make(Line, ("removed", old_no, None, text, False)))
            old_no += 1
            old_left -= 1
        elif tag == " " or raw == "" or raw == "\r":
            if not old_left or not new_left:
                break
            text = raw[1:]
            if has_cr and text[-1:] == "\r":
                text = text[:-1]
            append(make(Line, ("context", old_no, new_no, text, False)))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
        elif tag == "\\":
            if out:
                out[-1] = out[-1]._replace(no_newline=True)
        else:
            break
        i += 1
    if old_left or new_left:
        where = cur.new_path or cur.old_path or "?"
        raise DiffParseError(
            f"diff line {i + 1}: hunk {header[:60]!r} of {where} ends early "
            f"({old_len - old_left}/{old_len} old and {new_len - new_left}/{new_len} new lines)"
        )
    if i < n and lines[i].startswith("\\"):
        if out:
            out[-1] = out[-1]._replace(no_newline=True)
        i += 1
    cur.hunks.append(Hunk(old_start, old_len, new_start, new_len, m.group(5), tuple(out)))
    return i
