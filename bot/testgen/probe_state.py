"""The side-runner of ``modstate``: import each module of the plan in one tree (the change's
head, or its parent) and describe the module-level objects it names, as

    python probe_state.py PLAN.json OUT.json

with the project's interpreter, next to the differential generator's side-runner (whose
``render`` and object facts it uses): standard library only. A value that renders as
Python source is shown as that source (with a dict's items and a collection's members
rendered one by one); another object by the facts of its structure
(``probe_objects.facts``); a class, function or module is an identity, not a value.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import re
import signal
import sys
import types
import typing

if __package__:  # imported by Nova (its tests)
    from bot.testgen import probe as probe
    from bot.testgen import probe_objects as objects
else:  # run as a script next to the side-runner's copies
    import nova_probe as probe  # type: ignore[import-not-found,no-redef]
    import nova_probe_objects as objects  # type: ignore[import-not-found,no-redef]

Json = dict[str, typing.Any]

IMPORT_SECONDS = 10.0  # importing one module
SHOWN = 200  # characters of a value pinned whole
MEMBERS = 400  # items of a collection rendered one by one
LONG_DEPTH = 3  # levels below a name searched for long texts
LONG_NODES = 300  # objects visited in that search
_IDENTITIES = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
)


class _Late(BaseException):
    """The import ran past its time."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Late()


def _members(value: object) -> Json:
    """A dict's items and a list's, tuple's or set's members, each rendered (when every
    one renders): what changed in a big table is told entry by entry."""
    out: Json = {}
    if type(value) is dict and len(value) <= MEMBERS:
        items = [(probe.render(k), probe.render(v)) for k, v in value.items()]
        if all(k is not None and v is not None for k, v in items):
            out["items"] = [[k[0], v[0]] for k, v in items if k is not None and v is not None]
    elif type(value) in (list, tuple, set, frozenset):
        shown = [probe.render(m) for m in typing.cast("typing.Iterable[object]", value)]
        if len(shown) <= MEMBERS and all(m is not None for m in shown):
            out["members"] = sorted({m[0] for m in shown if m is not None})
    return out


def observe(value: object) -> Json:
    """What a test can assert of one module-level object."""
    if isinstance(value, types.FunctionType) and objects.attributes(value):
        # what its decorators attached (``pytest_impl``, ``pytestmark``, click's params)
        found = objects.facts(value, probe.render)
        return {"kind": "object", "type": "function", "facts": [list(f) for f in found]}
    if isinstance(value, _IDENTITIES):
        return {"kind": "identity", "type": type(value).__name__}
    if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        # its whole text and flags: the repr cuts a long pattern, objects.facts sees a type
        shown = {"pattern": value.pattern, "flags": value.flags}
        return {"kind": "pattern", "type": "Pattern", **shown}
    rendered = probe.render(value)
    out: Json = {"type": type(value).__name__}
    if rendered is not None:
        out.update(_members(value))
        if len(rendered[0]) <= SHOWN:
            return {**out, "kind": "value", "value": rendered[0], "imports": rendered[1]}
        digest = hashlib.sha256(rendered[0].encode("utf-8", "replace")).hexdigest()
        return {**out, "kind": "long", "size": len(rendered[0]), "digest": digest}
    found = objects.facts(value, probe.render)
    out["long"] = _long_texts(value)
    return {**out, "kind": "object", "facts": [list(f) for f in found]}


def _long_texts(value: object) -> dict[str, str]:
    """expression -> digest of each text too long for a fact (a template in a loader's
    mapping), a few levels below ``value``: a difference there is named, not pinned."""
    out: dict[str, str] = {}
    queue: list[tuple[object, str, int]] = [(value, objects.VALUE, 0)]
    seen = {id(value)}
    while queue and len(seen) < LONG_NODES:
        obj, expr, depth = queue.pop(0)
        if isinstance(obj, str):
            if len(obj) > SHOWN:
                out[expr] = hashlib.sha256(obj.encode("utf-8", "replace")).hexdigest()
            continue
        if depth >= LONG_DEPTH or isinstance(obj, _IDENTITIES):
            continue
        try:
            parts = [(f"{expr}.{n}", a) for n, a in objects.attributes(obj)]
            if type(obj) is dict and len(obj) <= MEMBERS:
                parts += [(f"{expr}[{k!r}]", v) for k, v in obj.items() if type(k) in (str, int)]
        except Exception:  # the project's descriptors
            continue
        for where, part in parts:
            if id(part) not in seen:
                seen.add(id(part))
                queue.append((part, where, depth + 1))
    return out


def probe_module(name: str, names: list[str]) -> Json:
    signal.setitimer(signal.ITIMER_REAL, IMPORT_SECONDS)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            module = importlib.import_module(name)
    except BaseException as exc:  # the module may not import on this side
        return {"import_error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    out: Json = {}
    for attr in names:
        if not hasattr(module, attr):
            out[attr] = {"kind": "missing"}
            continue
        try:
            out[attr] = observe(getattr(module, attr))
        except Exception as exc:  # the project's __repr__ / descriptors
            out[attr] = {"kind": "unobservable", "why": type(exc).__name__}
    return {"names": out}


def main() -> None:
    plan = json.loads(open(sys.argv[1], encoding="utf-8").read())
    signal.signal(signal.SIGALRM, _on_alarm)
    out = {m["module"]: probe_module(m["module"], m["names"]) for m in plan["modules"]}
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump({"modules": out}, handle)


if __name__ == "__main__":
    main()
