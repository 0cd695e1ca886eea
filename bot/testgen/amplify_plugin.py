"""Nova's observation plugin for test amplification (``-p nova_amp``). It runs in the
sandbox with the project's interpreter and pytest, so it uses the standard library only
(and the side-runner's value helpers, copied beside the plan as ``nova_probe*.py``).

While each selected test runs, a trace function records every call made from the test
function's own frame into the project's code (not its tests, not site-packages), into a
helper of the test module, or into a library's function (and whether a changed line ran
inside it): where in the test it was made (the test's line), what was
called (its qualname), which occurrence at that line, and how it ended — the value as
Python source where it renders, else a repr without addresses; for a method that
returned None, facts of its receiver afterwards; or the exception's type and message;
after an awaited call, how many cancellations the running task has pending; what a
list or dict passed to the call holds after it.
As each test's own body starts, the global random generators are seeded (``random``,
and numpy's when the project imported numpy), so a test whose values come from them
observes the same values in every run; the row names the generators the body drew from,
and the amplified test seeds those the same way (amplify_write.seeding).
Line events are asked only of the changed files' code: whether a test ran a changed line.
The plan (``--nova-amp=PLAN.json``) names the files; the observations go to one JSON-lines
file, a line per test as it ends (a run stopped by its time limit still tells).
"""

from __future__ import annotations

import dis
import json
import os
import random
import re
import sys
import threading
import time
import typing
import warnings

import pytest

_PLAN: dict[str, typing.Any] = {}
_STATE: dict[str, typing.Any] = {
    "node": None,
    "code": None,
    "counts": {},
    "open": {},
    "hits": 0,
    "seeds": None,
}
_OUT: dict[str, dict[str, typing.Any]] = {}
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")
_GEN = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, async generator, iterable coroutine
_COROUTINE = 0x80  # an ``async def``: observed at its end (its awaits are not ends)
FACTS_SECONDS = 0.15  # objects walked per test, in all
SHOWN = 300  # characters of a value kept
# characters of a text kept whole (a str or bytes value, an exception's message): a dump,
# a rendered document or a message that names what went wrong is often longer than
# SHOWN, and what differs may be anywhere in it (the order of its lines)
LONG = 2000


def pytest_addoption(parser: typing.Any) -> None:
    parser.addoption("--nova-amp", default="", help="Nova's amplification plan (JSON)")


def pytest_configure(config: typing.Any) -> None:
    plan = config.getoption("--nova-amp")
    if not plan:
        return
    with open(plan, encoding="utf-8") as f:
        _PLAN.update(json.load(f))
    sys.path.insert(0, os.path.dirname(plan))  # the side-runner's helpers
    _PLAN["tests"] = {os.path.realpath(p) for p in _PLAN["test_files"]}
    _PLAN["changed_real"] = {os.path.realpath(p): set(n) for p, n in _PLAN["changed"].items()}
    _PLAN["root_real"] = os.path.realpath(_PLAN["root"]) + os.sep
    _PLAN["files"] = {}  # filename -> "test" | "project" | "changed" | ""
    _PLAN["lines"] = {}  # filename -> its changed lines


def pytest_collection_modifyitems(config: typing.Any, items: list[typing.Any]) -> None:
    if not _PLAN:
        return
    select = set(_PLAN.get("select") or ())
    if select:
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid not in select])
        items[:] = [i for i in items if i.nodeid in select]
    cap = int(_PLAN.get("max_tests") or 0)
    if cap and len(items) > cap:
        config.hook.pytest_deselected(items=items[cap:])
        _PLAN["capped"] = len(items)
        del items[cap:]


def _kind(filename: str) -> str:
    files = _PLAN["files"]
    found = files.get(filename)
    if found is None:
        real = os.path.realpath(filename)
        if real in _PLAN["tests"]:
            found = "test"
        elif real in _PLAN["changed_real"]:
            found = "changed"
        elif (
            real.startswith(_PLAN["root_real"])
            and "site-packages" not in real
            and real.endswith(".py")
            and not _test_file(real)
        ):
            found = "project"
        else:
            found = ""
        files[filename] = found
    return typing.cast(str, found)


def _test_file(real: str) -> bool:
    rel = real[len(_PLAN["root_real"]) :]
    name = os.path.basename(rel)
    parts = rel.split(os.sep)
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or real in _PLAN["tests"]  # the files run: test.py, the project's python_files
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def _trace(frame: typing.Any, event: str, arg: object) -> typing.Any:
    if event != "call" or _STATE["node"] is None:
        return None
    code = frame.f_code
    if code is _STATE["code"] and _STATE["seeds"] is None:
        _STATE["seeds"] = _seed()  # the test's body starts (once: not at an await's resume)
    kind = _kind(code.co_filename)
    caller = frame.f_back
    local = _lines if kind == "changed" else None
    if caller is None or not _from_test(caller):
        return local
    if code.co_name.startswith("<"):
        return local
    if code.co_flags & _GEN and not code.co_flags & _COROUTINE:
        return local  # a generator: its "returns" are its yields
    if not kind:  # a library's (not the test runner's own helpers)
        if _RUNNER.search(code.co_filename):
            return local
        return _Call(frame, caller.f_lineno, kind).event
    if kind == "test" and code.co_name.startswith("test"):
        return local
    if code.co_flags & _COROUTINE:
        # an awaited coroutine: every resumption is a new "call" of the same frame
        opened = _STATE["open"].get(id(frame))
        if opened is None:
            opened = _STATE["open"][id(frame)] = _Call(frame, caller.f_lineno, kind)
        return opened.event
    return _Call(frame, caller.f_lineno, kind).event


# the test runner's own helpers a test calls (pytest.raises, self.assertEqual, mocks): the
# top-level package or module right under site-packages or the standard library's folder
# (not any folder of that name: a clone under ~/typing/ keeps its libraries observed)
_RUNNER = re.compile(
    r"(?:site-packages|python3\.\d+)[/\\]"
    r"(?:_pytest|pytest|unittest|pluggy|_?hypothesis|typing|contextlib)[/\\.]"
)

_COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>")  # their own frames up to 3.11


def _from_test(caller: typing.Any) -> bool:
    """A call made by the test function's body (or a comprehension of it)."""
    if caller.f_code is _STATE["code"]:
        return True
    outer = caller.f_back
    return (
        caller.f_code.co_name in _COMPREHENSIONS
        and outer is not None
        and outer.f_code is _STATE["code"]
    )


_GENERATOR = 0x20 | 0x200  # inspect.CO_GENERATOR | CO_ASYNC_GENERATOR: a yield returns too


def _returned(frame: typing.Any) -> bool:
    """Whether a coroutine's "return" event is its end, not a suspension at an await
    (the instruction it stopped at returns: RETURN_VALUE, or RETURN_CONST from 3.12)."""
    try:
        op: str = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    except (IndexError, TypeError):
        return True
    return op.startswith("RETURN")


def _lines(frame: typing.Any, event: str, arg: object) -> typing.Any:
    if event == "line":
        name = frame.f_code.co_filename
        lines = _PLAN["lines"].get(name)
        if lines is None:
            lines = _PLAN["lines"][name] = _PLAN["changed_real"].get(os.path.realpath(name), ())
        if frame.f_lineno in lines:
            _STATE["hits"] += 1
            row = _record()
            row["changed"] = True
            row["hit"].add(f"{name}:{frame.f_lineno}")
    return _lines


class _Call:
    """One call from the test into the code: its outcome when it ends."""

    def __init__(self, frame: typing.Any, line: int, kind: str) -> None:
        self.line, self.changed = line, kind == "changed"
        self.error: BaseException | None = None
        self.last: BaseException | None = None  # the last exception seen, even if caught
        # a library's function the test calls (``json.dumps(x, cls=MyEncoder)``,
        # ``CliRunner().invoke(cli, args)``, ``schema.dump(obj)``): said whether a changed
        # line ran inside it (on the parent it may stop before them: a usage error); its
        # receiver is the library's, not observed
        self.through, self.hits = not kind, _STATE["hits"]
        code = frame.f_code
        self.coroutine = bool(code.co_flags & _COROUTINE)
        self.tees = None if self.coroutine else _tee().start()  # what it writes (probe_tee)
        self.name = getattr(code, "co_qualname", code.co_name)
        # a helper the test's own body defines (``def get(args): ...`` then ``get([...])``)
        # is named as the test calls it, not ``test_x.<locals>.get``
        own = getattr(frame.f_back.f_code, "co_qualname", "") + ".<locals>."
        if kind == "test" and frame.f_back.f_code is _STATE["code"] and self.name.startswith(own):
            self.name = self.name[len(own) :]
        names = code.co_varnames[: code.co_argcount]
        # the receiver of a method of the project's (a test's helper's is the test case)
        mine = kind != "test" and names and names[0] == "self"
        self.receiver = frame.f_locals.get(names[0]) if mine and kind else None
        # the containers passed in, which the call may fill: name -> (position, object)
        self.filled = {
            n: (i - bool(mine), v)
            for i, n in enumerate(names)
            if (i or not mine) and isinstance(v := frame.f_locals.get(n), (list, dict, bytearray))
        }

    def event(self, frame: typing.Any, event: str, arg: typing.Any) -> typing.Any:
        if event == "line":
            self.error = None  # an exception raised inside and caught
            if self.changed:
                _lines(frame, event, arg)
        elif event == "exception":
            self.error = self.last = arg[1]
        elif event == "return":
            if self.coroutine and self.error is None and not _returned(frame):
                return self.event  # suspended at an await: it goes on later
            if self.error is None and arg is None and self.last is not None:
                # an ``except`` clause that did not match is a line of its own (a "line"
                # event after the exception), and the exception then leaves the frame
                # with no new event: it returned only if it stopped at a return
                if not frame.f_code.co_flags & _GENERATOR and not _returned(frame):
                    self.error = self.last
            _STATE["open"].pop(id(frame), None)
            _observe(self, arg)
        return self.event


def _record() -> dict[str, typing.Any]:
    node = _STATE["node"]
    return _OUT.setdefault(node, {"changed": False, "calls": [], "passed": None, "hit": set()})


def _observe(call: _Call, value: object) -> None:
    counts = _STATE["counts"]
    where = (call.line, call.name)
    index = counts[where] = counts.get(where, -1) + 1
    row: dict[str, typing.Any] = {"line": call.line, "name": call.name, "index": index}
    written = _tee().stop(call.tees)
    if written:
        row["streams"] = written
    if call.through:  # a library's: whether the changed lines ran inside it, this time
        row.update(library=True, ran=_STATE["hits"] > call.hits)
    if call.error is not None and value is None:
        row.update(_raised(call.error))
    else:
        row.update(_value(value, call.receiver))
    filled = _filled(call)
    if filled:
        row["filled"] = filled
    if call.coroutine:
        task = _cancelling()
        if task is not None:
            row["task"] = task
    _record()["calls"].append(row)


def _tee() -> typing.Any:
    import nova_probe_tee as tee  # type: ignore[import-not-found]

    return tee


def _filled(call: _Call) -> dict[str, list[typing.Any]]:
    """What the containers passed to the call hold after it: name -> [position, source]."""
    import nova_probe as probe  # type: ignore[import-not-found]

    out: dict[str, list[typing.Any]] = {}
    for name, (position, value) in call.filled.items():
        try:
            shown = probe.render(value)
        except Exception:  # the project's __repr__ of an item
            shown = None
        if shown is not None and len(shown[0]) <= SHOWN and not shown[1]:
            out[name] = [position, shown[0]]
    return out


def _cancelling() -> int | None:
    """How many cancellations the running task has pending, after an awaited call (what
    the test's body sees of its own task: ``asyncio.current_task().cancelling()``)."""
    asyncio = sys.modules.get("asyncio")
    try:
        task = asyncio.current_task() if asyncio is not None else None
        return int(task.cancelling()) if task is not None else None
    except (RuntimeError, AttributeError):  # no running loop; before Python 3.11
        return None


def _raised(exc: BaseException) -> dict[str, typing.Any]:
    import nova_probe as probe

    name, imports = probe.exception_name(exc)
    out = {"kind": "raises", "type": name, "imports": imports, "message": probe._message(exc)}
    if not out["message"]:  # too long or several lines for a match=: the text itself
        try:
            text = str(exc)
        except Exception:  # the project's __str__
            text = ""
        if text and len(text) <= LONG and not _ADDRESS.search(text):
            out["text"] = text
    return out


def _value(value: object, receiver: object) -> dict[str, typing.Any]:
    import nova_probe as probe

    try:
        shown = probe.render(value)
    except Exception:  # the project's __eq__ or __repr__
        shown = None
    if shown is not None and len(shown[0]) <= SHOWN:
        return {"kind": "value", "value": shown[0], "imports": shown[1]}
    if shown is not None and type(value) in (str, bytes) and len(shown[0]) <= LONG:
        return {"kind": "value", "value": shown[0], "imports": shown[1]}
    if value is None and receiver is not None:
        return {"kind": "after", "facts": _facts(receiver)}
    try:
        text = repr(value)
    except Exception:  # the project's __repr__
        text = ""
    plain = text if text and len(text) <= SHOWN and not _ADDRESS.search(text) else None
    # what a test can assert of it: its repr when that is steady text, else its facts
    return {"kind": "object", "repr": plain, "facts": _facts(value)}


def _facts(receiver: object) -> list[list[typing.Any]]:
    import nova_probe as probe
    import nova_probe_objects as objects  # type: ignore[import-not-found]

    spent = _STATE.setdefault("walked", 0.0)
    if spent > FACTS_SECONDS:
        return []
    started = time.monotonic()
    objects.WALK_SECONDS = 0.03
    objects.FACTS = 80
    try:
        found = objects.facts(receiver, probe.render)
    except Exception:  # the project's descriptors
        found = []
    _STATE["walked"] = spent + time.monotonic() - started
    return [list(f) for f in found]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: typing.Any, nextitem: typing.Any) -> typing.Any:
    if not _PLAN:
        yield
        return
    function: typing.Any = getattr(item, "function", None)
    while hasattr(function, "__wrapped__"):  # a decorated test: its own body's code
        function = function.__wrapped__
    _STATE.update(node=item.nodeid, counts={}, walked=0.0, open={}, hits=0, seeds=None)
    _STATE["code"] = getattr(function, "__code__", None)
    _record()["params"] = _params(item)
    spec = getattr(item, "callspec", None)
    if spec is not None:  # name -> the case's place in its parametrize list
        _record()["indices"] = dict(getattr(spec, "indices", {}) or {})
    previous = sys.gettrace()
    sys.settrace(_trace)
    threading.settrace(_trace)
    try:
        yield
    finally:
        sys.settrace(previous)
        threading.settrace(previous)
        _STATE.update(node=None, code=None)


SEED = 0  # seeded.SEED (the side-runner's, and the written tests')


def _generators() -> dict[str, typing.Any]:
    """The global generators a test may draw from, by the module that holds them."""
    found: dict[str, typing.Any] = {"random": random}
    numpy = sys.modules.get("numpy")  # never imported here: only when the project did
    if numpy is not None and hasattr(getattr(numpy, "random", None), "seed"):
        found["numpy"] = numpy.random
    return found


def _state(module: typing.Any) -> typing.Any:
    state = module.getstate() if module is random else module.get_state(legacy=True)
    if module is random:
        return state
    return (state[1].tobytes(), *state[2:])  # the key array, its position, the gauss cache


def _seed() -> dict[str, typing.Any]:
    """Seeds the global generators; each one's module and state after seeding."""
    seeded: dict[str, typing.Any] = {}
    for name, module in _generators().items():
        try:
            module.seed(SEED)
            seeded[name] = (module, _state(module))
        except Exception:  # a numpy that does not seed so: not seeded
            continue
    return seeded


def _drew(seeded: dict[str, typing.Any]) -> list[str]:
    """The generators whose state moved since they were seeded."""
    out = []
    for name, (module, state) in seeded.items():
        try:
            moved = _state(module) != state
        except Exception:
            moved = True
        if moved:
            out.append(name)
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: typing.Any) -> typing.Any:
    heard: list[list[str]] = []
    shown = getattr(warnings, "_showwarnmsg_impl", None)
    if _PLAN and callable(shown):  # heard, then passed on (pytest's record, recwarn)
        warnings._showwarnmsg_impl = _teed(shown, heard)  # type: ignore[attr-defined]
    try:
        yield
    finally:  # before the teardown's report writes the test's row
        if shown is not None and getattr(warnings, "_showwarnmsg_impl", None) is not shown:
            warnings._showwarnmsg_impl = shown  # type: ignore[attr-defined]
        if heard and item.nodeid in _OUT:
            _OUT[item.nodeid]["warned"] = heard
        seeded = _STATE.get("seeds")
        if _PLAN and seeded and item.nodeid in _OUT and (drew := _drew(seeded)):
            _OUT[item.nodeid]["seeded"] = drew


_NOT_HEARD = (ResourceWarning,)  # given when an object is collected, not by the test


def _teed(shown: typing.Any, heard: list[list[str]]) -> typing.Any:
    """The warnings the test's body gives (amplify_warns): a row each, in order, once:
    its category's first built-in class, its own qualname, its message; not those a
    module's import gives on the way (the first test to import it hears them)."""

    def tee(message: typing.Any) -> None:
        try:
            category = message.category
            frame: typing.Any = sys._getframe(1)
            while frame is not None and not _RUNNER.search(frame.f_code.co_filename):
                code = frame.f_code
                if code.co_name == "<module>" and not code.co_filename.startswith("<"):
                    break
                frame = frame.f_back
            else:
                base = next(c for c in category.__mro__ if c.__module__ == "builtins")
                row = [base.__name__, category.__qualname__, str(message.message)[:LONG]]
                if not issubclass(category, _NOT_HEARD) and row not in heard:
                    heard.append(row)
        except Exception:  # a warning whose parts do not read: not heard
            pass
        shown(message)

    return tee


def _params(item: typing.Any) -> dict[str, typing.Any] | None:
    """A parametrized case's arguments as source (None where one does not render)."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return None
    import nova_probe as probe

    out: dict[str, typing.Any] = {}
    for name, value in spec.params.items():
        try:
            shown = probe.render(value)
        except Exception:  # the project's __repr__
            shown = None
        out[name] = list(shown) if shown is not None and len(shown[0]) <= SHOWN * 4 else None
    return out


def pytest_runtest_logreport(report: typing.Any) -> None:
    if not _PLAN or report.nodeid not in _OUT:
        return
    row = _OUT[report.nodeid]
    if report.failed:
        row["passed"] = False
    elif report.when == "call" and row["passed"] is None:
        row["passed"] = report.passed
    if report.when == "teardown":  # one line a test: a run stopped midway still tells
        row = _OUT.pop(report.nodeid)
        _write({"test": report.nodeid, **row, "hit": sorted(row["hit"])})


def _write(row: dict[str, typing.Any]) -> None:
    with open(_PLAN["out"], "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def pytest_sessionfinish(session: typing.Any) -> None:
    if _PLAN:
        _write({"capped": _PLAN.get("capped", 0)})
