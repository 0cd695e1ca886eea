"""Log records are part of a call's outcome (the differential generator).

Many releases change what a library logs (a message, a level, a record no longer
emitted, a traceback replaced by a debug line) while the value stays the same. When the
change's lines (added or removed) call logging (``logging.*``, a logger's ``debug`` ...
``exception``/``log``, its level, handlers or ``propagate``), the side-runner notes, for
each call, the records that the project's loggers emit (``probe_logs.py``: at every level
from DEBUG up, without changing what the project's own handlers print): logger name,
level name, message (addresses, paths and ids replaced) and whether a traceback was
attached. Records a side gave in every one of its runs are steady; one head gave in every
run and the parent in none (or the other way) is asserted, and only those, never the whole
log: the test sets ``caplog.set_level(logging.DEBUG, logger=...)`` for their loggers,
makes the call, and asserts the ``(logger, level, message, traceback)`` tuples present on
head and absent on head (a message with a part replaced, or a time or a duration, is
matched by its start before it, when that says enough). The value is
asserted too when it is steady (alike in every run of head); otherwise the call stands
alone (or its raising, by type).
"""

from __future__ import annotations

import re
from typing import Any

from bot.testgen.ambient import changed_lines

__all__ = ["logged_examples", "loggers", "within_logs"]

MAX_LOGGED = 2  # tests of log records per name (each one of its own input)
MAX_SHOWN = 3  # records a test asserts present, and absent
_CALLS = re.compile(
    r"\blogging\.\w|"  # the module itself (getLogger, basicConfig, debug, disable...)
    r"\b\w*(?:log|LOG)\w*\s*\.\s*(?:debug|info|warning|warn|error|exception|critical|fatal|log"
    r"|setLevel|addHandler|removeHandler|propagate|handlers|disabled|addFilter)\b",
    re.IGNORECASE,
)
_ROOT = re.compile(r"\blogging\.(?:debug|info|warning|warn|error|exception|critical|fatal|log)\(")
_GET_LOGGER = re.compile(r"getLogger\(\s*['\"]([\w.\-]+)['\"]")
_PLACEHOLDERS = re.compile(r"0x\.\.\.|<path>|<id>")
# a time of day, a date, a duration: another in every run, or on a slower machine
_NUMBER = r"(?:\d+|<id>)(?:\.(?:\d+|<id>))?"  # (nine digits or more were replaced)
_TIMED = re.compile(
    rf"\d\d?:\d\d:\d\d|\d{{4}}-\d\d-\d\d|{_NUMBER}\s*(?:s|ms|us|µs|ns|sec|secs|seconds?"
    r"|milliseconds?)\b",
    re.IGNORECASE,
)
_STEADY_KINDS = ("value", "raises")
_RETURNED = ("value", "object", "identity", "unrenderable")  # it returned: the call alone

Record = tuple[str, str, str, bool]


def loggers(pairs: list[tuple[str | None, str]], modules: list[str]) -> list[str]:
    """The loggers whose records a call's outcome holds: none unless the changed lines of
    ``pairs`` (a module's text on the parent, None when absent, and on head) call logging;
    then the top packages of ``modules``, the names the modules' ``getLogger("...")``
    give, and the root logger when they call ``logging.info()`` and the like."""
    lines = [ln.split("#", 1)[0] for old, new in pairs for ln in changed_lines(old, new)]
    if not any(_CALLS.search(ln) for ln in lines):
        return []
    names = {m.split(".")[0] for m in modules}
    names |= {"root"} if any(_ROOT.search(ln) for ln in lines) else set()  # logging.info()
    for old, new in pairs:
        names.update(_GET_LOGGER.findall(f"{old or ''}\n{new}"))
    return sorted(n for n in names if n)


def _records(result: dict[str, Any]) -> set[Record]:
    return {(str(r[0]), str(r[1]), str(r[2]), bool(r[3])) for r in result.get("logged") or []}


def _every(results: list[dict[str, Any]]) -> set[Record]:
    """The records every run gave (steady)."""
    sets = [_records(r) for r in results]
    return set.intersection(*sets) if sets else set()


def _any(results: list[dict[str, Any]]) -> set[Record]:
    return set().union(*(_records(r) for r in results))


def _shown(record: Record) -> list[Any] | None:
    """``[logger, level, message or its steady start, traceback, exact]``: the start up to
    a part replaced or a time or duration; None when too little is left to match."""
    name, level, message, exc = record
    cuts = [m.start() for m in (_PLACEHOLDERS.search(message), _TIMED.search(message)) if m]
    if not cuts and len(message) < 300:
        return [name, level, message, exc, True]
    start = message[: min(cuts)] if cuts else message[:200]
    return [name, level, start, exc, False] if len(start.strip()) >= 8 else None


def logged_examples(
    name: str,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
) -> tuple[list[Any], str]:
    """Tests of the inputs of ``name`` whose log records differ between head and parent,
    and a note (``""`` when none differ)."""
    entry = (first.get("functions") or {}).get(name) or {}
    if not any("logged" in r for r in entry.get("results") or []):
        return [], ""  # the change's lines do not log: not recorded
    from bot.testgen.warned import compared, fresh  # (it imports render, which imports this)

    out: list[Any] = []
    signatures: set[str] = set()
    for result, ours, theirs in compared(name, first, head, parent):
        if result.get("ambient") or "logged" not in result:
            continue
        if len(ours) < 2 or len(theirs) < len(parent) or not theirs:
            continue
        new = _every(ours) - _any(theirs)
        gone = _every(theirs) - _any(ours)
        present = [s for s in map(_shown, sorted(new)) if s is not None][:MAX_SHOWN]
        absent = [s for s in map(_shown, sorted(gone)) if s is not None]
        # an absent record matched by its start must not match one head gives
        absent = [a for a in absent if a[4] or not _matches(a, _any(ours))][:MAX_SHOWN]
        if not (present or absent) or not fresh(signatures, present, absent):
            continue
        example = _example(result, entry, ours, present, absent)
        if example is not None:
            out.append(example)
        if len(out) >= MAX_LOGGED:
            break
    if not out:
        return [], ""
    return out, f", {len(out)} where its log records differ (a test of the records)"


def _matches(shown: list[Any], records: set[Record]) -> bool:
    return any(
        (n, lv, x) == (shown[0], shown[1], shown[3]) and m.startswith(shown[2])
        for n, lv, m, x in records
    )


def _said(record: list[Any]) -> str:
    message = record[2] if len(record[2]) <= 50 else record[2][:47] + "..."
    return f"{record[0]} {record[1]} {message!r}" + (" with a traceback" if record[3] else "")


def _example(
    result: dict[str, Any],
    entry: dict[str, Any],
    ours: list[dict[str, Any]],
    present: list[list[Any]],
    absent: list[list[Any]],
) -> Any:
    from bot.testgen.render import Example  # (render imports this module's writer)

    outcome = dict(result["outcome"])
    outcomes = [r["outcome"] for r in ours]
    steady = outcome["kind"] in _STEADY_KINDS and all(o == outcome for o in outcomes)
    if not steady or result.get("pinned") or result.get("clock"):
        if all(
            o.get("kind") == "raises" and o.get("type") == outcome.get("type") for o in outcomes
        ):
            outcome = {"kind": "raises", "type": outcome["type"], "imports": outcome["imports"]}
        elif all(o.get("kind") in _RETURNED for o in outcomes):
            outcome = {"kind": "call"}  # its value is not steady: the call alone
        else:
            return None
    outcome.pop("printed", None)
    said = "; ".join(
        [f"logged {_said(r)}" for r in absent] + [f"did not log {_said(r)}" for r in present]
    )
    return Example.of(result, entry, outcome, said, logged={"present": present, "absent": absent})


_SEEN = [
    "    logged = [",
    "        (r.name, r.levelname, r.getMessage(), bool(r.exc_info and r.exc_info[0]))",
    "        for r in caplog.records",
    "    ]",
]


def _check(record: list[Any], there: bool) -> list[str]:
    name, level, message, exc, exact = record
    if exact:
        return [f"    assert {(name, level, message, exc)!r} {'in' if there else 'not in'} logged"]
    return [
        f"    assert {'' if there else 'not '}any(",
        f"        r[:2] == {(name, level)!r} and r[2].startswith({message!r}) and r[3] is {exc}",
        "        for r in logged",
        "    )",
    ]


def within_logs(lines: list[str], body: list[str], logged: dict[str, Any]) -> list[str]:
    """A test's lines with the records it asserts: ``caplog`` at DEBUG for their loggers
    before the call, the records present and absent after it."""
    present, absent = logged.get("present") or [], logged.get("absent") or []
    names = sorted({str(r[0]) for r in [*present, *absent]})
    signature = lines[0]
    lines = [
        signature.replace("():", "(caplog):", 1)
        if signature.endswith("():")
        else signature.replace("):", ", caplog):", 1),
        *lines[1:],
    ]
    setup = [
        f"    caplog.set_level(logging.DEBUG{'' if n == 'root' else f', logger={n!r}'})"
        for n in names
    ]
    checks = [line for r in present for line in _check(r, True)]
    checks += [line for r in absent for line in _check(r, False)]
    return lines + setup + body + _SEEN + checks


def logged_head(logged: dict[str, Any], value: str) -> str:
    """What head did, for the facts: the records, and the value when one is asserted."""
    said = [f"logs {_said(r)}" for r in logged.get("present") or []]
    said += [f"does not log {_said(r)}" for r in logged.get("absent") or []]
    return ", ".join(said) + (f"; {value}" if value else "")
