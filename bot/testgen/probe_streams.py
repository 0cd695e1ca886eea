"""What a call writes to stderr and stdout (the side-runner's part of bot/testgen/streams.py).

Only the standard library: it is copied beside the side-runner (``nova_probe_streams.py``)
and runs with the project's interpreter. Each call writes into a bounded buffer per
stream (``sys.stdout`` and ``sys.stderr`` as the call sees them; the first
``MAX_CHARS`` characters are kept). The call's words are noted per stream: the runs of
letters (at least ``MIN_LETTERS``; split on anything else) of its text, in two lists:

- ``words``: those a test may assert, from the text with what is another in every run or
  on every machine taken out first (paths, addresses, tokens mixing letters and digits,
  hex ids and uuids), and without the names of days, months and time zones, nor the
  words of this machine's user, host, platform and directories;
- ``also``: the other words of the raw text (a word a test asserts absent must be in
  neither).

While a call runs, a log record no handler takes is not printed to stderr by
``logging.lastResort``, nor a thread's uncaught exception or an error in ``__del__`` by
their hooks (under pytest its logging plugin takes the record and the others become
warnings, so the test would not see that text). An input's words are those of its first
call that a second call (the same process) writes again: output a library gives once a
process is not the call's (one seen again already is not asked twice).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import threading
import typing

MAX_CHARS = 65536  # characters of a stream kept per call (a progress bar redraws often)
MAX_WORDS = 200  # distinct words noted per stream
MIN_LETTERS = 3
WORD = r"[^\W\d_]{3,}"  # MIN_LETTERS or more (the written test splits its text so)
STREAMS = ("err", "out")
_NOT_STEADY = re.compile(
    r"(?<![\w.])(?:[A-Za-z]:)?[\\/][^\s'\"]*"  # a path
    r"|0x[0-9a-fA-F]+"  # an address
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # a uuid
    r"|\b[0-9a-fA-F]{8,}\b"  # a hash, an id in hex
    r"|(?<![^\W_])[^\W_]*\d[^\W_]*"  # letters and digits in one token (an id, a version)
)
_TIMES = (
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs"
    " fri sat sun january february march april may june july august september october"
    " november december jan feb mar apr jun jul aug sep sept oct nov dec utc gmt cet cest"
    " eet eest wet west bst ist est edt cst cdt mst mdt pst pdt jst kst aest aedt"
).split()

_noted: dict[str, list[list[str]]] = {}  # the current call's words per stream
_first: dict[str, list[list[str]]] = {}  # those of an input's first call
_ended: dict[str, typing.Any] = {}  # how that call ended (kind, exception type)
_steady_seen: set[str] = set()  # "stream word" a second call wrote again (of any input)


class Bounded(io.StringIO):
    """A text stream that keeps its first ``MAX_CHARS`` characters."""

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # (what the real stream would refuse)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = MAX_CHARS - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)

    def isatty(self) -> bool:
        return False


def _machine() -> set[str]:
    """The words of this machine (user, host, platform, directories) and of the running
    program: the same in each run here, another elsewhere or under pytest."""
    import platform
    import tempfile

    texts = [os.getcwd(), sys.prefix, sys.executable, tempfile.gettempdir(), sys.platform]
    texts += sys.argv[:1]  # the program's name (``usage: nova_probe.py``; pytest's in a test)
    texts += [os.path.expanduser("~"), platform.node(), platform.system(), platform.machine()]
    texts += [os.environ.get(k, "") for k in ("USER", "USERNAME", "LOGNAME", "HOSTNAME")]
    import time

    texts += list(time.tzname)
    return {w.lower() for t in texts for w in re.findall(WORD, str(t))}


_MACHINE = _machine()  # (at import: a call's reads would be watched)
_SILENT = logging.NullHandler()


def _silent(*args: object) -> None:
    """A thread's uncaught exception, an error in ``__del__``: not written while a call
    runs (pytest reports them as warnings, so a test would not see the text)."""


def _words(text: str, limit: int = MAX_WORDS) -> list[str]:
    out: list[str] = []
    for word in re.findall(WORD, text):
        if word not in out:
            out.append(word)
            if len(out) >= limit:
                break
    return out


def _noted_words(text: str) -> list[list[str]]:
    """``[words, also]`` of one stream's text. Its lines are read once each, digits
    aside (a progress bar redraws one line with other numbers, many times)."""
    text = "\n".join(dict.fromkeys(re.sub(r"\d", "0", text).splitlines()))
    kept = [
        w
        for w in _words(_NOT_STEADY.sub(" ", text))
        if w.lower() not in _MACHINE and w.lower() not in _TIMES
    ]
    return [kept, [w for w in _words(text, 2 * MAX_WORDS) if w not in kept]]


@contextlib.contextmanager
def redirected(stdout: typing.Any) -> typing.Iterator[None]:
    """The call's stderr (a bounded buffer) and its stdout (``stdout``, the side-runner's
    buffer) redirected, no log record printed by ``logging.lastResort``; the words it
    wrote noted after it."""
    _noted.clear()
    buffers = {"err": Bounded(), "out": stdout}
    last = logging.lastResort
    hooks = (getattr(threading, "excepthook", None), getattr(sys, "unraisablehook", None))
    logging.lastResort = _SILENT
    if hooks[0] is not None:  # (pytest turns these into warnings, not text)
        threading.excepthook = _silent
    if hooks[1] is not None:
        sys.unraisablehook = _silent
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(buffers["err"]):
            yield
    finally:
        logging.lastResort = last
        if hooks[0] is not None:
            threading.excepthook = hooks[0]
        if hooks[1] is not None:
            sys.unraisablehook = hooks[1]
        for stream in STREAMS:
            text = buffers[stream].getvalue()[:MAX_CHARS]
            _noted[stream] = _noted_words(text) if text else [[], []]


def keep(outcome: dict[str, typing.Any]) -> None:
    """The words of an input's first call (later calls move or pin the clock), and how
    it ended (its value may read the clock or the machine, its raising may not)."""
    _ended.clear()
    _ended.update({k: outcome[k] for k in ("kind", "type", "imports") if k in outcome})
    _first.clear()
    _first.update({s: [list(w) for w in ws] for s, ws in _noted.items()})


def kept(again: typing.Callable[..., object], *args: object) -> dict[str, typing.Any]:
    """The first call's words per stream, those a second call (the same process) writes
    again kept as steady (``words``), the others with the rest (``also``); nothing when
    the first call wrote nothing."""
    first = {s: [list(w) for w in ws] for s, ws in _first.items()}
    if not any(ws[0] or ws[1] for ws in first.values()):
        return {}
    if any(f"{s} {w}" not in _steady_seen for s, ws in first.items() for w in ws[0]):
        again(*args)
        _steady_seen.update(f"{s} {w}" for s, ws in _noted.items() for w in ws[0])
    out = {}
    for stream, (words, also) in first.items():
        steady = [w for w in words if f"{stream} {w}" in _steady_seen]
        out[stream] = [steady, also + [w for w in words if w not in steady]]
    return {"streams": out, "streams_call": dict(_ended)}
