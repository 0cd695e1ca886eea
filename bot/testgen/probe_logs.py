"""The log records a call emits (the side-runner's part of bot/testgen/logged.py).

Only the standard library: it is copied beside the side-runner (``nova_probe_logs.py``)
and runs with the project's interpreter. When the plan names logger prefixes (the
change's lines call logging), each call records the records that loggers under them
emit, at every level from DEBUG up, whatever level the project set: ``Logger.isEnabledFor``
says yes to them for the call, and ``Logger.callHandlers`` notes each one and hands to
the project's own handlers only the records they would have had (so what they print does
not change). A record is noted as ``[logger, level name, message, exc_info attached]``,
the message with addresses, paths and ids replaced (as warnings' are), and only when it
reaches the root logger (where pytest's ``caplog`` listens). Both methods are restored
after the call. A record only the first call of a process gives is left out. While
records are noted, a record's own reads of the clock and the pid (``LogRecord.__init__``)
are not the call's: ``probe._watch`` passes over them.
"""

from __future__ import annotations

import contextlib
import logging
import re
import typing

PREFIXES: list[str] = []  # loggers whose records are noted (their names and children)
_noted: list[list[typing.Any]] = []  # the current call's records
_first: list[list[typing.Any]] = []  # those of an input's first call
_steady_seen: set[str] = set()  # records a second call gave again (of any input)
MAX_RECORDS = 40  # records noted per call (a loop's many lines: the first ones)
MAX_MESSAGE = 300
_NOT_STEADY = (
    (r"0x[0-9a-fA-F]+", "0x..."),  # an address
    (r"(?<![\w.])(?:[A-Za-z]:)?[\\/][^\s'\"]*", "<path>"),  # a path
    (r"\b\d{9,}\b", "<id>"),  # an id
)


# a record reads the clock, the pid: its own time and process, not what the value shows
# (while records are noted: then every call that logs makes one)
_RECORD = logging.LogRecord.__init__.__code__
RECORD: object = None


def configure(prefixes: object) -> None:
    PREFIXES[:] = [str(p) for p in prefixes] if isinstance(prefixes, list) else []
    global RECORD
    RECORD = _RECORD if PREFIXES else None


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PREFIXES)


def _reaches_root(logger: logging.Logger) -> bool:
    current: logging.Logger | None = logger
    while current is not None:
        if not current.propagate:
            return current.parent is None
        current = current.parent
    return True


def _normal(text: str) -> str:
    for pattern, stand_in in _NOT_STEADY:
        text = re.sub(pattern, stand_in, text)
    return text.strip()[:MAX_MESSAGE]


def _note(record: logging.LogRecord) -> None:
    if len(_noted) >= MAX_RECORDS:
        return
    try:
        message = _normal(record.getMessage())
    except Exception:  # a message its arguments do not format: not one to assert
        return
    exc = bool(record.exc_info and record.exc_info[0] is not None)
    _noted.append([record.name, record.levelname, message, exc])


def recording(stack: contextlib.ExitStack) -> None:
    """Note the call's records (nothing when no prefix is named), restored by ``stack``."""
    del _noted[:]
    if not PREFIXES:
        return
    enabled = logging.Logger.isEnabledFor
    handlers = logging.Logger.callHandlers

    def is_enabled_for(self: logging.Logger, level: int) -> bool:
        if enabled(self, level):
            return True
        return (
            level >= logging.DEBUG
            and _ours(self.name)
            and not self.disabled
            and self.manager.disable < level
        )

    def call_handlers(self: logging.Logger, record: logging.LogRecord) -> None:
        if _ours(record.name) and _reaches_root(self):
            _note(record)
        if enabled(self, record.levelno):  # what the project's handlers had anyway
            handlers(self, record)

    logging.Logger.isEnabledFor = is_enabled_for  # type: ignore[method-assign]
    logging.Logger.callHandlers = call_handlers  # type: ignore[method-assign]
    stack.callback(setattr, logging.Logger, "callHandlers", handlers)
    stack.callback(setattr, logging.Logger, "isEnabledFor", enabled)


def keep() -> None:
    """The records of an input's first call (later calls move or pin the clock)."""
    _first[:] = [list(r) for r in _noted]


def kept(again: typing.Callable[..., object], *args: object) -> dict[str, typing.Any]:
    """The first call's records that a second call (the same process) gives again: one a
    library gives once a process is not the call's behaviour (one seen again already is
    not asked twice)."""
    if not PREFIXES:
        return {}
    first = [list(r) for r in _first]
    if any(repr(r) not in _steady_seen for r in first):
        again(*args)
        _steady_seen.update(repr(r) for r in _noted)
    return {"logged": [r for r in first if repr(r) in _steady_seen]}
