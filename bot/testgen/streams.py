"""What a call writes to stderr and stdout is part of its outcome (the differential generator).

Progress bars, command-line helpers, ``print`` diagnostics and libraries writing to
``sys.stderr`` change in releases while the value stays the same. The side-runner notes,
for each call, the words each stream got (``probe_streams.py``: runs of at least three
letters, split on anything else; paths, addresses, ids, tokens mixing letters and digits,
names of days, months and time zones and this machine's words left out, since they are
another in every run or on another machine; only words a second call in the same process
writes again). Output also holds timings, rates and how often a bar was redrawn: those
are numbers, never words, and a word that is not in every run of a side is not compared.

Per input and stream: a word head wrote in every one of its runs and the parent in none
is asserted present, one the parent wrote in every run and head never (in any form) is
asserted absent; never the whole text. The test takes ``capsys``, makes the call, splits
``capsys.readouterr()`` the same way and asserts the words. The value is asserted too
when it is steady (alike in every run of head); otherwise the call stands alone (or its
raising, by type, when every run's first call raised it; a value that read the clock or
the machine leaves the call alone). stdout is left out for an input whose outcome holds
what it printed (a call that returned None: the value's comparison pins that text).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["checks", "differ", "said", "streams_examples", "streams_head"]

MAX_STREAMS = 2  # tests of written words per name (each one of its own input)
MAX_SHOWN = 3  # words a test asserts present, and absent, per stream
STREAMS = ("err", "out")
WORD = r"[^\W\d_]{3,}"  # as probe_streams.WORD
_STEADY_KINDS = ("value", "raises")
_RETURNED = ("value", "object", "identity", "unrenderable")  # it returned: the call alone


def _words(result: dict[str, Any], stream: str, every: bool) -> set[str]:
    noted = (result.get("streams") or {}).get(stream) or [[], []]
    return set(noted[0]) if every else {*noted[0], *noted[1]}


def _every(results: list[dict[str, Any]], stream: str) -> set[str]:
    """The words every run wrote (steady)."""
    sets = [_words(r, stream, True) for r in results]
    return set.intersection(*sets) if sets else set()


def _any(results: list[dict[str, Any]], stream: str) -> set[str]:
    return set().union(*(_words(r, stream, False) for r in results))


def _differ(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per stream, the words head always wrote and the parent never (``present``), and
    the other way (``absent``)."""
    out: dict[str, Any] = {}
    printed = any("printed" in r.get("outcome", {}) for r in [*ours, *theirs])
    for stream in STREAMS:
        if stream == "out" and printed:
            continue  # its text is part of the value compared
        present = sorted(_every(ours, stream) - _any(theirs, stream))[:MAX_SHOWN]
        absent = sorted(_every(theirs, stream) - _any(ours, stream))[:MAX_SHOWN]
        if present or absent:
            out[stream] = {"present": present, "absent": absent}
    return out


def streams_examples(
    name: str,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
) -> tuple[list[Any], str]:
    """Tests of the inputs of ``name`` whose written words differ between head and
    parent, and a note (``""`` when none differ)."""
    entry = (first.get("functions") or {}).get(name) or {}
    from bot.testgen.warned import compared, fresh  # (it imports render, which imports this)

    out: list[Any] = []
    signatures: set[str] = set()
    for result, ours, theirs in compared(name, first, head, parent):
        if result.get("ambient") or len(ours) < 2 or not theirs or len(theirs) < len(parent):
            continue
        written = _differ(ours, theirs)
        if not written or not fresh(signatures, written):
            continue
        example = _example(result, entry, ours, written)
        if example is not None:
            out.append(example)
        if len(out) >= MAX_STREAMS:
            break
    if not out:
        return [], ""
    return out, f", {len(out)} where what it writes differs (a test of stderr/stdout words)"


def _example(
    result: dict[str, Any], entry: dict[str, Any], ours: list[dict[str, Any]], written: Any
) -> Any:
    from bot.testgen.render import Example  # (render imports this module's writer)

    outcome = dict(result["outcome"])
    outcomes = {json.dumps(r["outcome"], sort_keys=True) for r in ours}
    steady = outcome["kind"] in _STEADY_KINDS and outcomes == {json.dumps(outcome, sort_keys=True)}
    if not steady or result.get("pinned"):  # (the same with the clock moved: steady)
        # how the first call of each run ended (before any clock moved or pinned)
        ends = [r.get("streams_call") or _ended(r["outcome"]) for r in ours]
        ended = ends[0] if all(e == ends[0] for e in ends) else {}
        if ended.get("kind") == "raises":
            outcome = {"kind": "raises", "type": ended["type"], "imports": ended["imports"]}
        elif ended.get("kind") in _RETURNED:
            outcome = {"kind": "call"}  # its value is not steady: the call alone
        else:
            return None
    outcome.pop("printed", None)
    return Example.of(result, entry, outcome, _said(written, False), streams=written)


def _ended(outcome: dict[str, Any]) -> dict[str, Any]:
    """How a call ended, from its outcome (a run whose first call wrote nothing)."""
    return {k: outcome[k] for k in ("kind", "type", "imports") if k in outcome}


def _said(written: dict[str, Any], head: bool) -> str:
    """What the parent (or head) wrote: ``wrote 'SUBMITTING' to stderr; did not write ...``."""
    said = []
    for stream, words in written.items():
        where = "stderr" if stream == "err" else "stdout"
        wrote, not_wrote = (
            words["present" if head else "absent"],
            words["absent" if head else "present"],
        )
        said += [f"wrote {', '.join(map(repr, wrote))} to {where}"] if wrote else []
        said += [f"did not write {', '.join(map(repr, not_wrote))} to {where}"] if not_wrote else []
    return "; ".join(said)


def checks(written: dict[str, Any]) -> list[str]:
    """The lines after the call: its streams read and split into words, the words
    asserted present and absent."""
    lines = ["    written = capsys.readouterr()"]
    for stream, words in written.items():
        lines.append(f"    {stream} = set(re.findall({WORD!r}, written.{stream}))")
        lines += [f"    assert {w!r} in {stream}" for w in words["present"]]
        lines += [f"    assert {w!r} not in {stream}" for w in words["absent"]]
    return lines


def streams_head(written: dict[str, Any], value: str) -> str:
    """What head did, for the facts: the words, and the value when one is asserted."""
    return _said(written, True) + (f"; {value}" if value else "")


# the comparison and its wording, for the copies of a project's tests (amplify_streams)
differ, said = _differ, _said
