"""Warnings are part of a call's outcome (the differential generator).

The side-runner records, for each call, the warnings it emits (``probe._note_warning``:
category, message with addresses, paths and ids replaced, in order, each once; those a
second call in the same process emits again; not those of a module imported on the way).
Many releases fix a deprecation: the changed call stops warning, or starts to, while its
value stays the same or reads the environment and is never pinned. Where head and parent
differ in the warnings of an input (each side alike in its runs), a test asserts them:

- a warning the parent gave and head does not: the call runs under
  ``warnings.simplefilter("error", Category)`` (``filterwarnings`` with the message when
  head gives another warning of that category), so the parent raises it;
- a warning head gives and the parent did not: ``pytest.warns(Category, match=...)``.

The value is asserted too when it is steady (a value or an exception alike in every run
of head); otherwise the call stands alone in the block.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from bot.testgen.render import Example

__all__ = ["warned_examples"]

MAX_WARNED = 2  # warnings tests per name (each one is a behaviour of its own input)
_PLACEHOLDERS = re.compile(r"0x\.\.\.|<path>|<id>")
_STEADY_KINDS = ("value", "raises")


def _by_key(run: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    from bot.testgen.differential import _key  # (it imports this module)

    entry = (run.get("functions") or {}).get(name) or {}
    return {_key(r): r for r in entry.get("results") or []}


Side = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]


def compared(
    name: str, first: dict[str, Any], head: list[dict[str, Any]], parent: list[dict[str, Any]]
) -> Iterator[Side]:
    """Each result of ``name`` in the first head run, with the same input's results in
    every head run (``ours``, that result first) and in the parent's runs (``theirs``);
    nothing when there is no parent or the name is new there (nothing to compare)."""
    from bot.testgen.differential import _key  # (it imports this module)

    if not parent or any(
        ((r.get("functions") or {}).get(name) or {}).get("missing") for r in parent
    ):
        return
    head_runs = [_by_key(r, name) for r in head]
    parent_runs = [_by_key(r, name) for r in parent]
    for result in ((first.get("functions") or {}).get(name) or {}).get("results") or []:
        key = _key(result)
        ours = [result, *(r[key] for r in head_runs if key in r)]
        yield result, ours, [r[key] for r in parent_runs if key in r]


def fresh(signatures: set[str], *shown: object) -> bool:
    """Whether what a test would show is new among ``signatures`` (then added to them)."""
    signature = json.dumps(shown, sort_keys=True)
    if signature in signatures:
        return False
    signatures.add(signature)
    return True


def _seen(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(w[0]), str(w[1])) for w in result.get("warned") or []]


def _alike(results: list[dict[str, Any]]) -> list[tuple[str, str]] | None:
    """The warnings every run of one side gave an input; None when they differ."""
    seen = [_seen(r) for r in results]
    return seen[0] if seen and all(s == seen[0] for s in seen) else None


def _raising(side: Side) -> bool:
    return str(side[0].get("outcome", {}).get("kind")) != "value"


def prefix(message: str) -> str:
    """The steady start of a message (up to a part replaced as not steady), to match."""
    found = _PLACEHOLDERS.search(message)
    text = message[: found.start()] if found else message
    return text[:60].rstrip() if len(text) > 60 else text


def _short(message: str) -> str:
    return message if len(message) <= 60 else message[:57] + "..."


def warned_examples(
    name: str,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
) -> tuple[list[Example], str]:
    """Tests of the inputs of ``name`` whose warnings differ between head and parent,
    and a note (``""`` when none differ)."""
    entry = (first.get("functions") or {}).get(name) or {}
    out: list[Example] = []
    signatures: set[str] = set()
    # a call that returns first: its test shows the warning of a working call, not of
    # one an input the library refuses makes raise (a key of the wrong size)
    sides = sorted(compared(name, first, head, parent), key=_raising)
    for result, mine, theirs in sides:
        ours = _alike(mine)
        before = _alike(theirs)
        if not theirs or ours is None or before is None or ours == before:
            continue
        imports = {str(w[0]): list(w[2]) for w in [*result.get("warned", [])]}
        for r in theirs:
            imports.update({str(w[0]): list(w[2]) for w in r.get("warned", [])})
        gone = [w for w in before if w not in ours]
        new = [w for w in ours if w not in before]
        head_categories = {c for c, _ in ours}
        errors = [
            [c, "" if c not in head_categories else prefix(m), imports.get(c, [])] for c, m in gone
        ]
        if any(e[1] == "" and e[0] in head_categories for e in errors):
            continue  # no steady text to tell the parent's warning from head's
        warns = [new[0][0], prefix(new[0][1]), imports.get(new[0][0], [])] if new else None
        if not fresh(signatures, errors, warns):
            continue
        said = "; ".join(
            [f"warned {c}({_short(m)!r})" for c, m in gone] + [f"did not warn {c}" for c, _ in new]
        )
        out.append(_example(result, entry, mine, errors, warns, said))
        if len(out) >= MAX_WARNED:
            break
    if not out:
        return [], ""
    return out, f", {len(out)} where its warnings differ (a test of the warnings)"


def _example(
    result: dict[str, Any],
    entry: dict[str, Any],
    ours: list[dict[str, Any]],
    errors: list[list[Any]],
    warns: list[Any] | None,
    said: str,
) -> Example:
    outcome = dict(result["outcome"])
    outcomes = {json.dumps(r["outcome"], sort_keys=True) for r in ours}
    steady = outcome["kind"] in _STEADY_KINDS and outcomes <= {json.dumps(outcome, sort_keys=True)}
    if not steady or result.get("pinned") or result.get("clock"):
        ended = result.get("warned_call") or {}
        outcome = (
            {"kind": "raises", "type": ended["type"], "imports": ended.get("imports", [])}
            if ended.get("kind") == "raises"
            else {"kind": "call"}  # its value is not steady: the call alone
        )
    outcome.pop("printed", None)
    return Example.of(result, entry, outcome, said, warned={"errors": errors, "warns": warns})
