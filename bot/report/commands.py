"""Inside GitHub Actions nothing Nova prints can start a workflow command.

The runner reads every line of a step's stdout and stderr (split at CR, LF and CRLF) and runs
a line as a command when, after leading whitespace, it starts with ``::`` (``::error::…``,
``::add-mask::…``, ``::stop-commands::…``), or when it holds ``##[`` anywhere (the legacy
form). It compares culture-sensitively, so invisible characters (a zero-width space, a soft
hyphen) may not stop it. Model output, the diff's paths, the repository's files and error
messages that quote them are all untrusted, and reach stdout and stderr by many paths (the
report, progress lines, errors, library logs, a traceback).

So the CLI wraps ``sys.stdout`` and ``sys.stderr`` in a ``CommandGuard`` while it runs in
Actions: every line that could be read as a command is escaped (a ``\\`` before it, and before
each ``#``), whoever wrote it. Nova's own commands (annotations) go through ``write_command``,
and a report shown verbatim goes between ``::stop-commands::TOKEN`` and ``::TOKEN::`` with a
fresh random token (``write_fenced``). Escaping is per line and keeps no state the runner
could see differently, so stdout and stderr may interleave in any order.
"""

from __future__ import annotations

import atexit
import io
import re
import secrets
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = [
    "CommandGuard",
    "fence_commands",
    "guard_process",
    "guard_text",
    "guarded_streams",
    "is_command",
    "neutralize",
    "write_command",
    "write_fenced",
]

_BREAK = re.compile(r"\r\n|\r|\n")
# a partial line longer than this is let out, escaped, and ended (a line break is added: the
# rest must start a line of its own, or a "#" at the cut and "#[" after it would meet)
_PENDING_LIMIT = 1 << 16
# Hangul fillers: letters (Lo) that collation ignores like format characters
_IGNORED_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")


def _invisible(ch: str) -> bool:
    """Characters the runner's culture-sensitive compare may skip, or its trim removes:
    whitespace, controls, format characters, marks, separators, unassigned code points."""
    return ch.isspace() or unicodedata.category(ch)[0] in "CZM" or ch in _IGNORED_LETTERS


def _visible(line: str) -> str:
    if line.isascii() and line.isprintable():
        return line.replace(" ", "")
    return "".join(ch for ch in line if not _invisible(ch))


def is_command(line: str) -> bool:
    """Whether the runner could read ``line`` (one line, no CR/LF) as a workflow command.
    Errs on the side of yes: invisible characters are ignored wherever they are."""
    seen = _visible(line)
    return seen.startswith("::") or "##[" in seen


def neutralize(line: str) -> str:
    """``line`` as the runner cannot run it, otherwise as written: unchanged when it is not
    a command; else a backslash before it and before each ``#``."""
    if not is_command(line):
        return line
    line = line.replace("#", "\\#")
    return "\\" + line if _visible(line).startswith("::") else line


def guard_text(text: str) -> str:
    """Every line of ``text`` neutralized, its line breaks kept."""
    parts = _BREAK.split(text)
    breaks = _BREAK.findall(text)
    return "".join(
        neutralize(p) + (breaks[i] if i < len(breaks) else "") for i, p in enumerate(parts)
    )


def fence_commands(text: str) -> str:
    """``text`` between ``::stop-commands::TOKEN`` and ``::TOKEN::``: the runner runs no
    command in between, and the token is fresh, so the text cannot end the fence itself."""
    token = f"nova-{secrets.token_hex(16)}"
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"::stop-commands::{token}\n{body}::{token}::\n"


class CommandGuard(io.TextIOBase):
    """A text stream that escapes every line that could be a workflow command before it
    reaches ``stream``. A partial line is held until its end is known (a command can be
    written in pieces), and let out, escaped, by ``release``."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream
        self._pending = ""

    # -- what anyone may write ---------------------------------------------------------
    def write(self, s: str) -> int:
        text = self._pending + s
        cut = max(text.rfind("\n"), text.rfind("\r"))
        if text.endswith("\r"):  # a CR may be the first half of a CRLF: wait for the next
            cut = max(text.rfind("\n", 0, len(text) - 1), text.rfind("\r", 0, len(text) - 1))
        if cut < 0 and len(text) < _PENDING_LIMIT:
            self._pending = text
            return len(s)
        if cut < 0:
            self._pending = ""
            self.stream.write(guard_text(text) + "\n")
            return len(s)
        whole, self._pending = text[: cut + 1], text[cut + 1 :]
        self.stream.write(guard_text(whole))
        return len(s)

    def flush(self) -> None:
        self.stream.flush()

    # -- Nova's own commands -------------------------------------------------------------
    def command(self, line: str) -> None:
        """One workflow command Nova means to run (its data already escaped)."""
        self._end_line()
        self.stream.write(line.replace("\r", " ").replace("\n", " ") + "\n")

    def fenced(self, text: str) -> None:
        """``text`` verbatim, between stop-commands markers."""
        self._end_line()
        self.stream.write(fence_commands(text))

    def release(self) -> None:
        """Let out a held partial line (escaped) and flush."""
        if self._pending:
            self.stream.write(guard_text(self._pending))
            self._pending = ""
        self.stream.flush()

    def _end_line(self) -> None:
        if self._pending:  # a command must start its own line
            self.stream.write(guard_text(self._pending) + "\n")
            self._pending = ""

    # -- the rest of a text stream ---------------------------------------------------------
    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.stream.isatty())

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.stream, "errors", None)

    def __getattr__(self, name: str) -> Any:
        # the rest, ``buffer`` too: bytes pass unescaped (``nova mcp serve`` speaks JSON-RPC
        # on stdout's buffer to its client; Nova writes its own text through ``write``)
        return getattr(self.stream, name)


def write_command(stream: IO[str], line: str) -> None:
    """Nova's own workflow command: through the guard's trusted path when there is one."""
    if isinstance(stream, CommandGuard):
        stream.command(line)
    else:
        stream.write(line + "\n")
    stream.flush()


def write_fenced(stream: IO[str], text: str) -> None:
    """``text`` shown verbatim and inert to the runner."""
    if isinstance(stream, CommandGuard):
        stream.fenced(text)
    else:
        stream.write(fence_commands(text))
    stream.flush()


def guard_process() -> None:
    """``sys.stdout`` and ``sys.stderr`` guarded until the process ends (``nova``'s entry
    point in Actions: also a traceback printed at exit is guarded)."""
    if isinstance(sys.stdout, CommandGuard):
        return
    sys.stdout, sys.stderr = CommandGuard(sys.stdout), CommandGuard(sys.stderr)
    for guard in (sys.stdout, sys.stderr):
        atexit.register(guard.release)


@contextmanager
def guarded_streams(active: bool) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` guarded while the block runs (when ``active`` and
    not guarded already); held partial lines are let out at the end."""
    if not active or isinstance(sys.stdout, CommandGuard):
        yield
        return
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CommandGuard(out), CommandGuard(err)
    try:
        yield
    finally:
        guards = (sys.stdout, sys.stderr)
        sys.stdout, sys.stderr = out, err
        for guard in guards:
            if isinstance(guard, CommandGuard):
                guard.release()
