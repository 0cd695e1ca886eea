"""The side-runner of the differential generator. It runs in the sandbox with the project's
interpreter, in one tree (the change's head, or its parent), as

    python probe.py PLAN.json OUT.json

so it uses the standard library only, and Hypothesis: the project's, else Nova's own
lent through a directory of links (argv[3]) that holds nothing else. For each
function of the plan it evaluates the candidate inputs (expressions from the tests and
docstrings, or inputs rendered by an earlier run), draws a few more from the signature's
type hints when asked, calls the function on each, and writes what came out: the value
rendered as Python source that evaluates back to an equal value (``ast.literal_eval`` or an
``eval`` check with the imports it needs), or the exception's type. A call that writes
files, starts processes or opens sockets is stopped by an audit hook, and the function is
skipped with the reason; a call that runs past ``call_seconds`` is stopped by a signal.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import gc
import importlib
import io
import itertools
import json
import keyword
import math
import os
import re
import signal
import sys
import threading
import time
import types
import typing
import warnings

if __package__:  # imported by Nova (its tests)
    from bot.testgen import ambient, asyncs, scratch, seeded, wire
    from bot.testgen import probe_logs as logs
    from bot.testgen import probe_objects as objects
    from bot.testgen import probe_optdeps as optdeps
    from bot.testgen import probe_steady as steady
    from bot.testgen import probe_streams as streams
else:  # run as a script next to its copies
    import nova_ambient as ambient  # type: ignore[import-not-found,no-redef]
    import nova_asyncs as asyncs  # type: ignore[import-not-found,no-redef]
    import nova_probe_logs as logs  # type: ignore[import-not-found,no-redef]
    import nova_probe_objects as objects  # type: ignore[import-not-found,no-redef]
    import nova_probe_optdeps as optdeps  # type: ignore[import-not-found,no-redef]
    import nova_probe_steady as steady  # type: ignore[import-not-found,no-redef]
    import nova_probe_streams as streams  # type: ignore[import-not-found,no-redef]
    import nova_scratch as scratch  # type: ignore[import-not-found,no-redef]
    import nova_seeded as seeded  # type: ignore[import-not-found,no-redef]
    import nova_wire as wire  # type: ignore[import-not-found,no-redef]

if typing.TYPE_CHECKING:  # annotations only: the project's interpreter may be older
    from collections.abc import Callable, Iterator
    from types import ModuleType

    Args = tuple[list[object], dict[str, object]]  # one call's positional and named arguments
    Json = dict[str, typing.Any]  # an object of the plan or of the output (JSON)

FUNCTION_SECONDS = 6.0  # calls of one function per run, in all
RUN_SECONDS = [60.0]  # calls of all functions per run (the plan may set it)
_STARTED = time.monotonic()
MAX_SOURCE = 200  # characters of a rendered value; longer ones are not "small"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_EFFECTS = {
    "os.remove": "removes files",
    "os.unlink": "removes files",
    "os.rmdir": "removes files",
    "shutil.rmtree": "removes files",
    "os.rename": "moves files",
    "shutil.move": "moves files",
    "os.mkdir": "creates directories",
    "os.truncate": "writes files",
    "os.chmod": "changes files",
    "os.chown": "changes files",
    "os.utime": "changes files",
    "os.symlink": "creates links",
    "os.link": "creates links",
    "shutil.copyfile": "writes files",
    "subprocess.Popen": "starts processes",
    "os.system": "starts processes",
    "os.exec": "starts processes",
    "os.posix_spawn": "starts processes",
    "os.spawn": "starts processes",
    "os.fork": "starts processes",
    "os.kill": "signals processes",
    "socket.connect": "uses the network",
    "socket.bind": "uses the network",
    "socket.sendto": "uses the network",
    "socket.getaddrinfo": "uses the network",
    "urllib.Request": "uses the network",
    "http.client.connect": "uses the network",
    "smtplib.connect": "uses the network",
    "ftplib.connect": "uses the network",
}
_guard = {"on": False}
# what a value must not depend on to be pinned: calls that read the wall clock, draw
# random numbers or read the machine's environment (the run-twice check misses a value
# computed from today's date: two runs a second apart agree)
_CLOCK = {"time", "time_ns", "now", "utcnow", "today", "monotonic", "perf_counter"}
_CLOCK |= {f"{n}_ns" for n in ("monotonic", "perf_counter")}
_MACHINE = {"getcwd", "getpid", "gethostname", "getlogin", "getuid", "urandom", "getrandom"}
_MACHINE_MODULES = {"posix", "nt", "os", "socket", "_socket"}
_depends: list[str] = []  # what the current call read (filled while it runs)
_moved_reads = [0]  # reads of the clock made through a moved clock's stand-ins


class SideEffect(BaseException):
    """The function did something to the world outside its return value."""


class CallTimeout(BaseException):
    """The call ran past its time."""


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _guard["on"] or scratch.inside(event, args):  # a call's scratch directory
        return
    what = _EFFECTS.get(event) or scratch.creates(event, args)  # scratch.py
    if event == "open" and len(args) >= 3:
        mode, flags = args[1], args[2] or 0
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        ):
            what = f"writes files ({args[0]!r})"
    if what == "uses the network" and wire.ACTIVE[0]:  # its requests are recorded (wire.py)
        wire.refuse(event)
        return
    if what:
        _guard["on"] = False
        raise SideEffect(f"{what} ({event})")


def _watch(frame: typing.Any, event: str, arg: object) -> None:
    """A profile hook while a call runs: notes what its value may depend on (every kind
    of source once: a call that read the clock may also read the environment)."""
    found = ""
    if event == "c_call":
        if frame is not None and (
            frame.f_code.co_filename == _OWN_FILE or frame.f_code is logs.RECORD
        ):
            return  # the side-runner's own reads (a walk's time budget), a log record's
        name = getattr(arg, "__name__", "")
        owner = getattr(arg, "__self__", None)
        module = getattr(arg, "__module__", None) or getattr(owner, "__name__", "")
        if name in _CLOCK and (
            module == "time"
            or (isinstance(owner, type) and owner.__module__ in ("datetime", "_datetime"))
        ):
            if asyncs.machinery(frame):
                return  # the event loop's own clock (asyncio's timers), not the call's
            if steady.ACTIVE[0] and frame is not None and frame.f_code in steady.MOVED_CODES:
                _moved_reads[0] += 1  # read for a stand-in: the time it gives is moved
                return
            if frame is not None and _collecting(frame):
                return  # a garbage collector's callback timing a collection the call set off
            found = f"the clock ({getattr(owner, '__name__', module)}.{name})"
        elif owner is not None and type(owner).__module__ in ("random", "_random"):
            found = "" if seeded.seeded(owner) else f"randomness (random.{name})"
        elif name in _MACHINE and module in _MACHINE_MODULES:
            found = f"the machine ({module}.{name})"
    elif event == "call":
        code = frame.f_code
        if code not in _CALLED:  # each code object is read once: the hook runs on every call
            _CALLED[code] = _read_by(code)
        found = _CALLED[code]
        if found.startswith(seeded.RANDOM):  # a seeded generator's draws repeat (seeded.py)
            found = seeded.read(frame, found)
        if found and asyncs.asyncio_reads(frame):
            return  # asyncio's debug flag, read as a loop is made (asyncs.py)
        if found == ambient.ENV_READ and wire.configures(frame):
            return  # an HTTP library's proxies, read as a request is made (wire.py)
    if found and found not in _depends and found not in _QUIET:
        _depends.append(found)


def _collecting(frame: typing.Any) -> bool:
    """Whether ``frame`` is a ``gc.callbacks`` function's (hypothesis times collections
    with ``perf_counter``): a collection may start within any call, and its callback's
    reads are not the call's."""
    codes = {getattr(c, "__code__", None) for c in gc.callbacks}
    return frame.f_code in codes


_QUIET: set[str] = set()  # reads a setting applied stands for (ambient.ENVIRON's)
_CALLED: dict[object, str] = {}  # code object -> what calling it reads ("": nothing)
_OWN_FILE = objects.__file__


def _read_by(code: typing.Any) -> str:
    where = code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
    # os is a frozen module from 3.11 on: its code's file is '<frozen os>'
    if where in ("os.py", "<frozen os>") and code.co_name in ("__getitem__", "getenv"):
        return ambient.ENV_READ
    if where in ("random.py", "secrets.py", "uuid.py"):
        return f"randomness ({where[:-3]}.{code.co_name})"
    return ""


def _on_alarm(signum: int, frame: object) -> None:
    raise CallTimeout()


# -- rendering values as Python source -----------------------------------------------------


def render(value: object, depth: int = 0) -> tuple[str, list[str]] | None:
    """(source, import lines) that evaluate to a value equal to ``value``, or None."""
    if depth > 16:  # deeper (or a list that holds itself): not a readable value
        return None
    if isinstance(value, enum.Enum):  # its repr is <Cls.NAME: value>, not Python
        return _render_member(value)
    if value is None or isinstance(value, (bool, str, bytes)):
        return repr(value), []
    if isinstance(value, int) and type(value) is int:
        return (repr(value), []) if len(repr(value)) <= 60 else None
    if isinstance(value, io.StringIO | io.BytesIO) and type(value) in (io.StringIO, io.BytesIO):
        text = value.getvalue()  # a parser's input, not read yet
        fits = value.tell() == 0 and len(text) <= 2000
        return (f"io.{type(value).__name__}({text!r})", ["import io"]) if fits else None
    if type(value) is float:
        if math.isnan(value):
            return None  # nan equals nothing: it cannot be asserted with ==
        if math.isinf(value):
            return ("math.inf" if value > 0 else "-math.inf"), ["import math"]
        return repr(value), []
    if isinstance(value, (list, tuple, set, frozenset)) and type(value) in (
        list,
        tuple,
        set,
        frozenset,
    ):  # exactly these: a subclass's repr differs
        return _render_collection(value, depth)
    if type(value) is dict:
        items, imports = [], []
        for k, v in value.items():
            rk, rv = render(k, depth + 1), render(v, depth + 1)
            if rk is None or rv is None:
                return None
            items.append(f"{rk[0]}: {rv[0]}")
            imports += rk[1] + rv[1]
        return "{" + ", ".join(items) + "}", imports
    if type(value) is types.SimpleNamespace:  # an object the shaped inputs only read
        fields, imports = [], ["import types"]
        for k, v in vars(value).items():
            rv = render(v, depth + 1)
            if rv is None or not k.isidentifier() or keyword.iskeyword(k):
                return None
            fields.append(f"{k}={rv[0]}")
            imports += rv[1]
        return f"types.SimpleNamespace({', '.join(fields)})", imports
    return _render_by_repr(value)


def _render_member(value: enum.Enum) -> tuple[str, list[str]] | None:
    """``Cls.NAME`` (``Outer.Cls.NAME``) with the import of the class from its module."""
    cls = type(value)
    path = cls.__qualname__
    module = sys.modules.get(cls.__module__)
    name = value.name
    if module is None or "<" in path or not isinstance(name, str) or not name.isidentifier():
        return None  # a class made in a function, a combination of flags
    top = path.split(".")[0]
    found: object = module
    for part in path.split("."):
        found = getattr(found, part, None)
    if found is not cls or getattr(cls, name, None) is not value:
        return None
    return f"{path}.{name}", [f"from {cls.__module__} import {top}"]


def _render_collection(value: typing.Iterable[object], depth: int) -> tuple[str, list[str]] | None:
    parts, imports = [], []
    for item in value:
        r = render(item, depth + 1)
        if r is None:
            return None
        parts.append(r[0])
        imports += r[1]
    if type(value) in (set, frozenset):
        parts.sort()  # a set's order changes with the hash seed; its value does not
    if type(value) is list:
        return "[" + ", ".join(parts) + "]", imports
    if type(value) is tuple:
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")", imports
    inner = "{" + ", ".join(parts) + "}" if parts else ""
    if type(value) is set:
        return (inner or "set()"), imports
    return f"frozenset({inner})", imports


def _render_by_repr(value: object) -> tuple[str, list[str]] | None:
    """repr that evaluates back to an equal value of the same type, with the imports its
    names need (a module of that name, or the value's own class from its module)."""
    try:
        text = repr(value)
        tree = ast.parse(text, mode="eval")
    except Exception:  # any repr may fail: then it cannot be rendered
        return None
    names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    namespace: dict[str, object] = {}
    imports = []
    for name in names:
        cls = type(value)
        if name == cls.__name__ and getattr(sys.modules.get(cls.__module__), name, None) is cls:
            namespace[name] = cls
            imports.append(f"from {cls.__module__} import {name}")
            continue
        try:
            namespace[name] = importlib.import_module(name)
        except Exception:  # not a module: a name of the module that defines the class
            found = _module_global(cls, name)
            if found is None:
                return None
            namespace[name] = found
            imports.append(f"from {cls.__module__} import {name}")
            continue
        imports.append(f"import {name}")
    try:
        again = eval(compile(tree, "<repr>", "eval"), namespace)  # in the sandbox
        equal = type(again) is type(value) and bool(again == value)
    except Exception:
        return None
    return (text, imports) if equal and len(text) <= MAX_SOURCE else None


def _module_global(cls: type, name: str) -> object | None:
    """``name`` in the module that defines ``cls``, when that module is importable under
    its name (a repr like ``Token.Keyword`` names its module's root object)."""
    module = sys.modules.get(cls.__module__)
    if module is None or cls.__module__ in ("builtins", "__main__"):
        return None
    return getattr(module, name, None)


def exception_name(exc: BaseException) -> tuple[str, list[str]]:
    """How a test names the exception's class: a builtin by name, else module.Class (or
    the nearest base class that can be reached that way)."""
    return class_name(type(exc))


def class_name(of: type) -> tuple[str, list[str]]:
    """``exception_name`` of a class (a warning's category)."""
    for cls in of.__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__, []
        module = sys.modules.get(cls.__module__)
        if module is not None and getattr(module, cls.__qualname__, None) is cls:
            return f"{cls.__module__}.{cls.__qualname__}", [f"import {cls.__module__}"]
    return "Exception", []


# -- inputs -----------------------------------------------------------------------------


def _scope(imports: list[str], named: objects.Named) -> dict[str, object]:
    """Where a mined expression is evaluated: the import lines of the file it came from,
    and the changed class under its own name."""
    scope: dict[str, object] = {}
    for line in imports:
        try:
            exec(line, scope)  # an import line from the project's own tests
        except Exception:
            pass
    if isinstance(named.owner, type):
        scope[named.owner.__name__] = named.owner
    return scope


def _evaluate(spec: Json, scope: dict[str, object]) -> Args | None:
    """Values of a call's mined arguments; a value that was not plain is ``UNPLAIN`` (an
    optional parameter then keeps its default), a ``None`` of the tests stays None."""
    try:
        args = [
            objects.UNPLAIN if a is None else eval(a, dict(scope)) for a in spec.get("args", [])
        ]
        kwargs = {
            k: objects.UNPLAIN if v is None else eval(v, dict(scope))
            for k, v in spec.get("kwargs", {}).items()
        }
    except Exception:  # a name the tests define elsewhere, a fixture: not a plain value
        return None
    return args, kwargs


def _rendered(args: list[object], kwargs: dict[str, object]) -> Json | None:
    maybe = [render(a) for a in args]
    named = {k: render(v) for k, v in kwargs.items()}
    if any(r is None for r in maybe) or any(r is None for r in named.values()):
        return None
    parts = [r for r in [*maybe, *named.values()] if r is not None]
    return {
        "args": [r[0] for r in maybe if r is not None],
        "kwargs": {k: r[0] for k, r in named.items() if r is not None},
        "imports": sorted({i for r in parts for i in r[1]}),
    }


class _Case(typing.NamedTuple):
    ctor: Args | None
    steps: list[str]
    args: Args
    scope: dict[str, object]
    origin: str
    factory: str = ""  # the class method that builds the instance ("": the class)
    lines: tuple[str, ...] = ()  # the import lines its steps need (they are source)
    given: Json | None = None  # the mined sources of its arguments, with their imports


def _cases(named: objects.Named, spec: Json) -> list[_Case]:
    """Every call to try: mined ones as the tests made them, then drawn ones; a member of
    a class on instances built as the tests build them, else from guessed arguments."""
    sig = objects.signature_of(named)
    init = objects.signature_of(objects.Named("init", named.owner, "__init__", named.owner))
    needs_obj = named.kind in ("method", "property")
    cases: list[_Case] = []
    pool: list[tuple[Args, dict[str, object], str]] = []  # instances without steps
    loose: list[tuple[Args, dict[str, object]]] = []  # member arguments without an instance
    for item in spec.get("inputs", []):
        scope = _scope(item.get("imports", []), named)
        values = scratch.filled(sig, _evaluate(item, scope), objects.UNPLAIN)  # scratch.py
        values = objects.drop_unplain(sig, *values) if values is not None else None
        if values is None:
            continue
        ctor = item.get("ctor")
        built = _evaluate(ctor, scope) if isinstance(ctor, dict) else None
        factory = str(ctor.get("factory") or "") if isinstance(ctor, dict) else ""
        maker = init
        if factory:
            try:
                made = objects.maker(named.owner, factory, scope)
            except Exception:  # a name the tests' imports do not bind here
                continue
            maker = objects.signature_of(objects.Named("static", named.owner, factory, made))
        built = scratch.filled(maker, built, objects.UNPLAIN)
        built = objects.drop_unplain(maker, *built) if built is not None else None
        origin = str(item.get("origin", "tests"))
        if not needs_obj:  # a value that is not data shown as written (a raiser's stand-in)
            given = None if seeded.unsteady_source(item) else item  # not a value of now
            cases.append(_Case(None, [], values, scope, origin, given=given))
        elif built is not None:
            steps = list(item.get("steps", []))
            lines = objects.imports_used(item.get("imports", []), steps)
            if factory.startswith(objects.MAKER):
                lines = objects.imports_used(item.get("imports", []), [*steps, factory[1:]])
            cases.append(_Case(built, steps, values, scope, origin, factory, lines, item))
            if not item.get("steps"):
                pool.append((built, scope, factory))
            loose.append((values, scope))  # its arguments, on the instances others built
        else:
            loose.append((values, scope))
    count = int(spec.get("draw", 0))
    strings = [str(w) for w in spec.get("strings", [])]
    if needs_obj and count and not any(c.factory == objects.BARE for c in cases):
        scope = _scope([], named)
        guessed = objects.guessed_args(init)
        pool += [(([], {k: eval(v, scope) for k, v in g.items()}), scope, "") for g in guessed]
        pool += [(d, scope, "") for d in objects.draw(named.owner.__init__, 5, True)]  # type: ignore[misc]
    if named.kind == "property":
        loose = [(([], {}), _scope([], named))]
    elif needs_obj and count:
        loose += [(d, {}) for d in objects.draw(named.func, count, True, strings)]  # type: ignore[arg-type]
        if sig is not None and objects.no_arguments_needed(sig):
            loose.append((([], {}), {}))
    elif count:
        drawn = objects.draw(named.func, count, strings=strings)  # type: ignore[arg-type]
        cases += [_Case(None, [], d, {}, "drawn") for d in drawn]
        if sig is not None and objects.no_arguments_needed(sig):
            cases.append(_Case(None, [], ([], {}), {}, "defaults"))  # every default
    pool, loose = _distinct(pool), _distinct(loose)
    pairs = itertools.islice(itertools.product(pool[:6], loose[:12]), 72)
    for (built, scope, factory), (values, _) in pairs:
        cases.append(_Case(built, [], values, scope, "drawn", factory))
    if scratch.WANTED[0]:  # path-like parameters given names in the scratch directory
        cases += scratch.offer_paths(
            sig, cases, init, lambda c, a, b: c._replace(args=a, ctor=b, given=None)
        )
    if AMBIENT and pool:  # more of the tests' arguments, on one instance (ambient.py)
        built, scope, factory = pool[0]
        more = loose[12 : 12 + AMBIENT_INPUTS]
        cases += [_Case(built, [], values, scope, "drawn", factory) for values, _ in more]
    return cases


_T = typing.TypeVar("_T", bound=tuple)  # type: ignore[type-arg]


def _distinct(items: list[_T]) -> list[_T]:
    """First of each distinct value (by its repr: the values may not compare)."""
    seen: set[str] = set()
    out = []
    for item in items:
        try:
            key = repr(item[0])
        except Exception:  # the project's repr: anything can come out
            continue
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# -- calling -----------------------------------------------------------------------------


def _act(named: objects.Named, case: _Case, stage: list[str]) -> tuple[object, str, Json | None]:
    """Build, step, call, and observe: (the value, how it was observed, the instance's
    state after a call that returned None). A coroutine function's (an async generator's)
    call is built, made and awaited (collected) inside one fresh event loop (asyncs.py)."""
    how = asyncs.mode(named.func)
    if not how:
        try:
            obj, value = _made(named, case, stage)
        except RuntimeError as exc:  # built (or called) outside a running loop: in one
            if SET_UP in stage or not asyncs.needs_loop(exc):
                raise
            how = asyncs.INSIDE
        else:
            how = asyncs.pending(value)  # a plain callable that returned a coroutine:
            if not how:  # made again inside a loop (what built it may need one too)
                return _observed(named, obj, value, "", stage)
            asyncs.discard(value)
        del stage[:]
        seeded.reseed()  # made again: from the same seed
    _awaited[0] = how
    made = asyncs.run(lambda: _made(named, case, stage), objects.ITEMS, objects.unset_read)
    obj, value, settled = made
    how = settled or how
    _awaited[0] = how
    if how == asyncs.ITERATE:
        assert isinstance(value, list)
        view = "list" if len(value) <= objects.ITEMS else "islice"
        return _observed(named, obj, value[: objects.ITEMS], view, stage)
    return _observed(named, obj, value, "", stage)


def _made(named: objects.Named, case: _Case, stage: list[str]) -> tuple[object, object]:
    """Build the instance, take the steps, call: (the instance, the call's value)."""
    obj: object = None
    args, kwargs = case.args
    if named.kind in ("method", "property"):
        assert case.ctor is not None
        make = objects.maker(named.owner, case.factory, case.scope)
        obj = typing.cast("Callable[..., object]", make)(*case.ctor[0], **case.ctor[1])
        obj = objects.built(named.owner, case.factory, obj)
        for step in case.steps:
            exec(step, {**case.scope, objects.OBJ: obj})  # a mined step of the project's tests
        stage.append(SET_UP)  # an exception from here on comes out of the member
        value = objects.call_member(named, obj, args, kwargs)
    elif named.kind == "init":
        value = obj = typing.cast("Callable[..., object]", named.owner)(*args, **kwargs)
    else:
        value = typing.cast("Callable[..., object]", named.func)(*args, **kwargs)
    return obj, value


def _observed(
    named: objects.Named, obj: object, value: object, view: str, stage: list[str]
) -> tuple[object, str, Json | None]:
    """How a call's value is seen (materialised, its state or structure), and the
    instance's state after a call that returned None."""
    if not view:
        stage.append("materialise")  # an exception from here on comes out of iterating
        value, view = objects.materialise(value)
    if render(value) is None:
        seen = objects.state_view(value) if named.kind == "init" and not view else None
        if seen is not None and render(seen[1]) is None:
            seen = None  # contents that are not values: the instance's structure shows them
        found = objects.facts(value, render) if seen is None else []
        if seen is not None:
            view, value = seen
        elif (
            objects.has_own_str(value) and not view and not {e for e, _, _ in found} - {_TYPE, _STR}
        ):
            view, value = "str", str(value)  # nothing to show but its text
        elif found:
            value = _Facts(found)  # its structure: type names, items, attributes
    state = None
    if value is None and named.kind == "method":
        seen = objects.state_view(obj)
        shown = render(seen[1]) if seen is not None else None
        if seen is not None and shown is not None:
            state = {"view": seen[0], "value": shown[0], "imports": shown[1]}
        elif render(obj) is None:  # the instance's structure after the call
            found = objects.facts(obj, render)
            if {e for e, _, _ in found} - {_TYPE, _STR}:
                value, view = _Facts(found), AFTER
    return value, view, state


SET_UP = "set up"  # the instance was built and its steps taken
AFTER = "after"  # a method returned None: the facts are of its instance after the call
_TYPE = f"type({objects.VALUE}).__name__"
_STR = f"str({objects.VALUE})"


class _Facts(list):  # type: ignore[type-arg]
    """What a value whose repr is not a value showed (``objects.facts``)."""


def call(named: objects.Named, case: _Case, seconds: float) -> Json:
    """Call once: the outcome as data (value, raises, or why it cannot be used). One that
    read the clock is called again with the clock moved ahead (``probe_steady``): when it
    comes out the same each time, it is kept, marked ``clock``. Else it is called twice
    with the clock pinned (``probe_steady.pinned_clock``): when both agree, that outcome
    is kept, marked ``pinned`` (a test of it pins the clock the same way; the parent is
    probed the same way); else it depends."""
    started = time.monotonic()
    outcome = _call(named, case, seconds)
    _took[0] = time.monotonic() - started
    _first_warned[:] = _warned
    logs.keep()  # its log records (probe_logs.py)
    streams.keep(outcome)  # what it wrote to stderr and stdout (probe_streams.py)
    wire.keep(outcome)  # its HTTP requests (wire.py)
    _first_ended.clear()
    _first_ended.update({k: outcome[k] for k in _ENDED if k in outcome})
    read = list(_depends)
    if not read or outcome["kind"] == "side effect":
        return outcome
    if (
        outcome["kind"] in _PINNABLE
        and all(r.startswith(_CLOCK_READ) for r in read)
        and not seeded.seeded_here()  # its own generator's seed may be the time
    ):
        moved = False
        with steady.moved() as shift:
            for ahead in steady.SHIFTS:
                shift[0] = ahead
                _moved_reads[0] = 0
                again = _call(named, case, seconds)
                if again != outcome or _depends or not _moved_reads[0]:
                    break  # another outcome, a read not moved, or the clock not read
            else:
                moved = True
        # the same at every move may still show a duration (each move shifts both of
        # its ends): with the clock pinned a second a read, it is the same only if not
        pinned = _pinned(named, case, seconds, outcome if moved else None)
        if pinned is outcome or (moved and pinned is None):
            return {**outcome, "clock": f"the same with {read[0]} moved ahead"}
        if pinned is not None:
            return {**pinned, "pinned": f"the same twice with {read[0]} pinned"}
    again = steady.repeated(lambda: _call(named, case, seconds), outcome, read)
    return {"kind": "depends", "on": read[0], **again}  # its steady parts: steady_parts.py


def _pinned(named: objects.Named, case: _Case, seconds: float, real: Json | None) -> Json | None:
    """``real`` when one call with the clock pinned comes out as it did; else the outcome
    of two calls with the clock pinned when they agree, every read of the clock went
    through the pinned clock and there was one; else None."""
    seen = []
    for _ in range(2):
        with steady.pinned_clock(_PINNED_AT) as reads:
            again = _call(named, case, seconds)
        if _depends or not reads[0] or again["kind"] not in _PINNABLE:
            return None
        if again == real:
            return real
        seen.append(again)
    return seen[0] if seen[0] == seen[1] else None


NOT_RECEIVER = "not a receiver"
_PINNED_AT: list[typing.Any] = []  # where the clock is bound (see probe_steady.pinned_clock)
_took = [0.0]  # seconds of the last first call (the calls with a moved clock not counted)
_PINNABLE = ("value", "raises", "object")
_CLOCK_READ = "the clock"


def _call(named: objects.Named, case: _Case, seconds: float) -> Json:
    """One call's outcome; an awaited one (asyncs.py) is marked so: the written test
    awaits (collects) it too."""
    _awaited[0] = ""
    root = scratch.enter()  # a call that writes files: in a fresh directory (scratch.py)
    try:
        out = _call_once(named, case, seconds)
    finally:
        files = scratch.leave(root)
    if files and out["kind"] in _PINNABLE:
        out["files"] = files
    if _awaited[0] and out["kind"] in _PINNABLE:
        out["awaited"] = _awaited[0]
    return out


_awaited = [""]  # how the current call's value was settled in an event loop ("": not)


def _call_once(named: objects.Named, case: _Case, seconds: float) -> Json:
    caught: BaseException | None = None
    stage: list[str] = []
    stack = contextlib.ExitStack()
    seeded.reseed()  # the global generators, the same before every call (seeded.py)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    _guard["on"] = True
    wire.start()  # its HTTP requests recorded, when the plan asks (wire.py)
    del _depends[:]
    printed = streams.Bounded()  # (probe_streams.py)
    del _warned[:]
    try:
        with streams.redirected(printed):  # what it writes (probe_streams.py)
            _recording(stack)
            sys.setprofile(_watch)
            try:
                value, view, state = _act(named, case, stage)
            finally:
                sys.setprofile(None)
    except BaseException as exc:  # the project's code: anything can come out
        caught = exc
    finally:
        _guard["on"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        wire.stop()  # (its threads' requests: after the timer, which would stop the wait)
        stack.close()
        seeded.note_drawn()
    if isinstance(caught, SideEffect):
        return {"kind": "side effect", "why": str(caught)}
    if isinstance(caught, CallTimeout):
        return {"kind": "timeout", "seconds": seconds}
    if isinstance(caught, (MemoryError, RecursionError)):
        return {"kind": "resources", "why": type(caught).__name__}
    if isinstance(caught, objects.NotReceiver):
        return {"kind": NOT_RECEIVER, "type": str(caught)}
    if caught is not None:
        name, imports = exception_name(caught)
        out: Json = {"kind": "raises", "type": name, "imports": imports}
        if "materialise" in stage:
            out["view"] = "list"  # raised while the iterator was consumed
        if named.kind in ("method", "property") and SET_UP not in stage:
            out["at"] = "setup"  # building the instance (or a step on it) raised
        message = _message(caught)
        if message:
            out["message"] = message
        return out
    shown = _printed(printed.getvalue())
    if isinstance(value, _Facts) and view == AFTER and shown:
        value, view = None, ""  # what it printed shows what it did, not its instance
    if isinstance(value, _Facts):
        out = {"kind": "object", "type": ast.literal_eval(value[0][1]), "facts": value}
        return {**out, "view": view} if view else out
    ids = steady.identity(value, *case.args) if named.kind != "init" else None
    if ids:  # another number in every run; what it is the id of is the same
        return {"kind": "identity", "value": ids, "on": "object ids"}
    rendered = render(value)
    if rendered is None or (view == "str" and "0x" in str(value)):
        return {"kind": "unrenderable", "type": type(value).__name__}
    out = {"kind": "value", "value": rendered[0], "imports": rendered[1]}
    if _ordered(value):
        out["ordered"] = True  # its repr is the same in every run: a test may pin it
    if view:
        out["view"] = view
    if state:
        out["state"] = state
    if value is None and shown:
        out["printed"] = shown  # a call that returns None: what it wrote to stdout
    return out


# -- warnings a call emits (bot/testgen/warned.py compares them) -------------------------

_warned: list[list[typing.Any]] = []  # [category, message, imports] of the current call
_first_warned: list[list[typing.Any]] = []  # those of the first call of an input
_first_ended: Json = {}  # how it ended (kind, exception type), before any clock or depends
_ENDED = ("kind", "type", "imports")
_steady_seen: set[str] = set()  # warnings seen again on a second call (of any input)
# what a message holds that is another in every run or on every machine
_NOT_STEADY = (
    (r"0x[0-9a-fA-F]+", "0x..."),  # an address
    (r"(?<![\w.])(?:[A-Za-z]:)?[\\/][^\s'\"]*", "<path>"),  # a path
    (r"\b\d{9,}\b", "<id>"),  # an id
)


def _recording(stack: contextlib.ExitStack) -> None:
    """Every warning the call emits, its own (not one of a module it imports on the way)."""
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("always")
    warnings.showwarning = _note_warning
    logs.recording(stack)  # and its log records (probe_logs.py)


def _note_warning(message: typing.Any, category: type, *rest: object, **more: object) -> None:
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename not in (__file__, _OWN_FILE):
        if frame.f_code.co_name == "<module>" and not frame.f_code.co_filename.startswith("<"):
            return  # a module's top level runs: its import warned, not the call
        frame = frame.f_back  # type: ignore[assignment]
    text = str(message)
    for pattern, stand_in in _NOT_STEADY:
        text = re.sub(pattern, stand_in, text)
    if issubclass(category, ResourceWarning):
        return  # given when an object is collected: whenever that happens, not the call
    name, imports = class_name(category)
    seen = [name, text.strip()[:300], imports]
    if seen not in _warned:
        _warned.append(seen)


def _steady_warnings(named: objects.Named, case: _Case, seconds: float) -> Json:
    """The first call's warnings that a second call (the same process, a fresh instance)
    emits again (one a library gives once per process is not the call's behaviour; one
    seen again already is not asked twice), and how the first call ended (``warned_call``:
    its value may not be steady, its raising is)."""
    first, ended = list(_first_warned), dict(_first_ended)
    if any(json.dumps(w) not in _steady_seen for w in first):
        _call(named, case, seconds)
        _steady_seen.update(json.dumps(w) for w in _warned)
    warned = [w for w in first if json.dumps(w) in _steady_seen]
    return {"warned": warned, "warned_call": ended} if warned else {}


MAX_PRINTED = 2000  # characters of stdout a test may pin


def _printed(text: str) -> str:
    """What a call wrote to stdout, when a test can pin it (short, no address)."""
    return text if 0 < len(text) <= MAX_PRINTED and "0x" not in text else ""


def _ordered(value: object, depth: int = 0) -> bool:
    """No set inside (whose order changes with the hash seed): the repr is stable."""
    if depth > 16 or isinstance(value, (set, frozenset)):
        return False
    if isinstance(value, dict):
        return all(_ordered(k, depth + 1) and _ordered(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_ordered(v, depth + 1) for v in value)
    return True


# characters of an exception's message compared and matched: a path or a list of choices
# in it is often what a release changes (a cookie file under ``testnet3``, not ``testnet``)
MESSAGE_CHARS = 400


def _message(exc: BaseException) -> str:
    """The exception's message when a test can match it (at most ``MESSAGE_CHARS``, one
    line, no address)."""
    try:
        group = getattr(exc, "message", None) if hasattr(exc, "exceptions") else None
        text = group if isinstance(group, str) else str(exc)  # pytest matches a group's
    except Exception:  # message, not its str (which counts the sub-exceptions)
        return ""
    return text if 0 < len(text) <= MESSAGE_CHARS and "\n" not in text and "0x" not in text else ""


def _owner_name(owner: object) -> str | None:
    """How a test names a member's class: its qualified name for a class nested in
    another (``Export.image``: the test imports ``Export``), else its name."""
    name = getattr(owner, "__name__", None)
    qualified = getattr(owner, "__qualname__", None)
    if isinstance(qualified, str) and "<" not in qualified and "." in qualified:
        return qualified
    return name


def probe_function(module: ModuleType, spec: Json, seconds: float) -> Json:
    """A function's inputs and outcomes; in scratch directories (scratch.py) when the
    plan says so or a call was refused for writing files."""
    scratch.WANTED[0] = scratch.wanted(spec)
    out = _probe_function(module, spec, seconds)
    if not scratch.WANTED[0] and scratch.offered(out.get("skipped", "")):
        scratch.WANTED[0] = True
        again = _probe_function(module, spec, seconds)
        out = again if again["results"] else out  # else it writes outside any directory
    for row in out.get("results", []) if scratch.WANTED[0] else []:
        row["scratch"] = True  # the next runs (and the parent's) probe it so from the start
    scratch.WANTED[0] = False
    return out


def _probe_function(module: ModuleType, spec: Json, seconds: float) -> Json:
    try:
        named = objects.resolve(module, spec["qualname"])
    except AttributeError:
        return {"missing": True, "results": []}
    if named.kind in ("function", "static", "method") and not callable(named.func):
        return {"skipped": "not callable", "results": []}
    sig = objects.signature_of(named)
    params = list(sig.parameters) if sig is not None else []
    owner = _owner_name(named.owner)
    results, seen = [], set()
    cases = _cases(named, spec)  # drawing them can take seconds: the calls get their own
    deadline = time.monotonic() + FUNCTION_SECONDS
    for case in cases:
        now = time.monotonic()
        if now > deadline or now - _STARTED > RUN_SECONDS[0]:  # fewer inputs, not the job
            break
        shown = _rendered(*case.args) or _as_written(case)
        built = _rendered(*case.ctor) if case.ctor is not None else None
        if shown is None or (case.ctor is not None and built is None):
            continue
        if built is not None:
            shown["imports"] = sorted({*shown["imports"], *built.pop("imports"), *case.lines})
            if case.factory:
                built["factory"] = case.factory
        shown.update(ctor=built, steps=case.steps)
        if case.origin == "drawn" and not _readable(shown):
            continue  # a reviewer would not accept it as a realistic value
        key = json.dumps(shown, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        outcome = call(named, case, seconds)
        environ = outcome["kind"] == "depends" and set(_depends) == {ambient.ENV_READ}
        if (
            outcome["kind"] == "side effect"
            and scratch.WANTED[0]
            and scratch.offered(outcome["why"])
        ):
            continue  # in scratch mode: this input writes outside the directory
        if outcome["kind"] == "side effect":
            return {"skipped": outcome["why"], "params": params, "results": []}
        if outcome["kind"] == NOT_RECEIVER:
            continue  # a callable of the tests built something else: not an input here
        ms = round(_took[0] * 1000)
        warned = _steady_warnings(named, case, seconds)
        timeless = outcome.pop("clock", None)  # not part of the outcome: the parent may not
        pinned = outcome.pop("pinned", None)
        results.append({**shown, "outcome": outcome, "origin": case.origin, "ms": ms})
        if timeless:
            results[-1]["clock"] = timeless
        if pinned:
            results[-1]["pinned"] = pinned
        results[-1].update(warned)
        results[-1].update(logs.kept(_call, named, case, seconds))
        results[-1].update(streams.kept(_call, named, case, seconds))  # probe_streams.py
        results[-1].update(wire.kept())  # its HTTP requests (wire.py)
        results[-1].update(seeded.drawn())  # the generators it drew from, seeded (seeded.py)
        answered = wire.answered(spec["qualname"], call, named, case, seconds)
        results[-1].update(answered)  # its outcomes under canned answers (wire.py)
        if outcome["kind"] in _PINNABLE and not pinned and len(seen) <= AMBIENT_INPUTS:
            results += _under_settings(
                named, case, seconds, {**shown, "origin": case.origin, "ms": ms}
            )
        elif environ and len(seen) <= AMBIENT_INPUTS:
            # its value is another on another machine: with no variable set, it is not
            row = {**shown, "origin": case.origin, "ms": ms}
            results += _under_settings(named, case, seconds, row, [ambient.ENVIRON])
    return {"kind": named.kind, "owner": owner, "params": params, "results": results}


AMBIENT: list[str] = []  # process-wide settings the change may read (ambient.py; the plan's)
AMBIENT_INPUTS = 240  # inputs of a function also called under each setting


def _under_settings(
    named: objects.Named, case: _Case, seconds: float, row: Json, keys: list[str] | None = None
) -> list[Json]:
    """The input of ``row`` called under each relevant process-wide setting: a row of
    its own (``ambient``: the setting) when the call reads neither the clock, randomness
    nor the machine (beyond what the setting itself stands for). Steady means the same
    in both runs of a side (each its own process), as for any input: a second call here
    would double the cost of every input. ``keys``: these settings, not the plan's (an
    input that read the environment is called with none set, ``ambient.ENVIRON``)."""
    out = []
    for key in AMBIENT if keys is None else keys:
        setting = ambient.setting(key, lambda: _setter_watch(seconds))
        tolerated = _MACHINE & set(setting.reads)
        try:
            _MACHINE.difference_update(tolerated)
            _QUIET.update(setting.reads)
            with setting.apply():
                again = _call(named, case, seconds)
        # a project's setter failed (ambient.py): a CLI's ``main()`` that parses the
        # side-runner's own arguments exits, and must end that setting, not the run
        except (Exception, SystemExit, SideEffect, CallTimeout):
            continue
        finally:
            _MACHINE.update(tolerated)
            _QUIET.clear()
        if not _depends and again["kind"] in _PINNABLE:
            out.append({**row, "outcome": again, "ambient": key, **wire.noted(), **seeded.drawn()})
    return out


@contextlib.contextmanager
def _setter_watch(seconds: float) -> Iterator[None]:
    """A project's setter (ambient.py) runs watched as a call is: no effects, in time."""
    signal.setitimer(signal.ITIMER_REAL, seconds)
    _guard["on"] = True
    try:
        yield
    finally:
        _guard["on"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)


def _as_written(case: _Case) -> Json | None:
    """The arguments of a mined call as the tests wrote them, where a value is not plain
    data but its source is (``other == parse(text)``: another instance built the way the
    tests build one); None when a value has neither."""
    if case.given is None:
        return None
    sources = [*case.given.get("args", []), *case.given.get("kwargs", {}).values()]
    values = [*case.args[0], *case.args[1].values()]
    if len(sources) != len(values):
        return None  # a value the call left to its default
    shown, written = [], []
    for i, value in enumerate(values):  # (no zip(strict=): the project's Python may be older)
        source = sources[i]
        seen = render(value)
        if seen is None and source is None:
            return None
        shown.append(seen[0] if seen is not None else source)
        written += [] if seen is None else seen[1]
        written += objects.imports_used(case.given.get("imports", []), [source or ""])
    written += [i for i in case.given.get("imports", []) if str(i).startswith("def ")]
    count = len(case.args[0])
    return {
        "args": shown[:count],
        "kwargs": {k: shown[count + i] for i, k in enumerate(case.args[1])},
        "imports": sorted(set(written)),
    }


def _readable(shown: Json) -> bool:
    """Short, plain-ASCII argument sources (no ``'\\U0006b12a'`` soup)."""
    ctor = shown.get("ctor") or {}
    sources = [*shown["args"], *shown["kwargs"].values()]
    sources += [*ctor.get("args", []), *ctor.get("kwargs", {}).values()]
    return all(
        len(a) <= 80
        and a.isascii()
        and a.isprintable()
        and "\\x" not in a
        and "\\u" not in a.lower()
        for a in sources
    )


def probe_module(name: str, functions: list[Json], seconds: float, out: Json | None = None) -> Json:
    """Each function of the plan probed in turn, its answer put into ``out`` (the run's
    watchdog writes what is there) once it is whole; ``PROBING`` names the one under way."""
    out = {"functions": {}} if out is None else out
    try:
        module = steady.imported(name)  # after the module it imports in a cycle, if any
    except BaseException as exc:  # the module may not exist on this side, or not import
        out["import_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return out
    out.update({"after": steady.AFTER[name]} if name in steady.AFTER else {})
    for spec in functions:
        PROBING[:] = [name, spec["qualname"]]
        out["functions"][spec["qualname"]] = probe_function(module, spec, seconds)
    PROBING[:] = []
    return out


def main() -> None:
    plan = json.loads(open(sys.argv[1], encoding="utf-8").read())
    objects.LENT[0] = sys.argv[3] if len(sys.argv) > 3 else ""
    sys.addaudithook(_audit)  # silent until a call turns the guard on
    signal.signal(signal.SIGALRM, _on_alarm)
    seconds = float(plan.get("call_seconds", 2.0))
    RUN_SECONDS[0] = float(plan.get("run_seconds", RUN_SECONDS[0]))
    AMBIENT[:] = [k for k in plan.get("ambient", []) if ambient.known(k)]
    logs.configure(plan.get("logs"))  # the loggers whose records are noted (logged.py)
    wire.configure(plan.get("wire"))  # HTTP requests recorded, connections refused (wire.py)
    out: Json = {"modules": {}}
    _watchdog(RUN_SECONDS[0] + RUN_GRACE, out, sys.argv[2])
    if plan.get("optdeps"):  # the changed modules imported with a library blocked (optdeps.py)
        out["optdeps"] = optdeps.observe(plan["optdeps"])
    for m in plan["modules"]:
        out["modules"][m["module"]] = {"functions": {}}
        probe_module(m["module"], m["functions"], seconds, out["modules"][m["module"]])
    _written_out(out, sys.argv[2], 0)


RUN_GRACE = 20.0  # seconds past a run's budget before its watchdog ends it
_ending = threading.Lock()  # one of the run's end and its watchdog writes the output
PROBING: list[str] = []  # the module and function being probed (the watchdog names it)


def _written_out(out: Json, path: str, code: int) -> None:
    """Write the output and end the process: threads the project's calls started (a
    connection's retry loop, an executor's workers) may never end, and the interpreter
    joins them on its way out."""
    if not _ending.acquire(blocking=False):
        return  # the other one is writing it
    _guard["on"] = False  # the audit hook stops a call's writes: this one is the run's
    text = ""
    for _ in range(3):  # from the watchdog's thread: the run may add an answer meanwhile
        with contextlib.suppress(RuntimeError):
            text = json.dumps(out)
            break
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text or json.dumps({"modules": {}, "stopped": out.get("stopped")}))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _watchdog(seconds: float, out: Json, path: str) -> None:
    """End the run ``seconds`` from now with the modules probed so far: a call can block
    where the call's timer cannot stop it (a lock waited for again in a ``finally`` after
    the timer's exception, a thread joined in a loop's clean-up)."""

    def end() -> None:
        hung = {"hung": list(PROBING)} if PROBING else {}
        _written_out({"modules": out["modules"], "stopped": seconds, **hung}, path, 0)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    main()
