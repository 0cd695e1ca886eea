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
import importlib
import inspect
import io
import json
import math
import os
import signal
import sys
import time
import typing

if typing.TYPE_CHECKING:  # annotations only: the project's interpreter may be older
    from collections.abc import Callable
    from types import ModuleType

    Args = tuple[list[object], dict[str, object]]  # one call's positional and named arguments
    Json = dict[str, typing.Any]  # an object of the plan or of the output (JSON)

FUNCTION_SECONDS = 30.0  # calls of one function per run, in all
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


class SideEffect(BaseException):
    """The function did something to the world outside its return value."""


class CallTimeout(BaseException):
    """The call ran past its time."""


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _guard["on"]:
        return
    what = _EFFECTS.get(event)
    if event == "open" and len(args) >= 3:
        mode, flags = args[1], args[2] or 0
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        ):
            what = f"writes files ({args[0]!r})"
    if what:
        _guard["on"] = False
        raise SideEffect(f"{what} ({event})")


def _on_alarm(signum: int, frame: object) -> None:
    raise CallTimeout()


# -- rendering values as Python source -----------------------------------------------------


def render(value: object, depth: int = 0) -> tuple[str, list[str]] | None:
    """(source, import lines) that evaluate to a value equal to ``value``, or None."""
    if depth > 16:  # deeper (or a list that holds itself): not a readable value
        return None
    if value is None or isinstance(value, (bool, str, bytes)):
        return repr(value), []
    if isinstance(value, int) and type(value) is int:
        return (repr(value), []) if len(repr(value)) <= 60 else None
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
    return _render_by_repr(value)


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
        except Exception:  # not a module: the repr cannot be evaluated
            return None
        imports.append(f"import {name}")
    try:
        again = eval(compile(tree, "<repr>", "eval"), namespace)  # in the sandbox
        equal = type(again) is type(value) and bool(again == value)
    except Exception:
        return None
    return (text, imports) if equal and len(text) <= MAX_SOURCE else None


def exception_name(exc: BaseException) -> tuple[str, list[str]]:
    """How a test names the exception's class: a builtin by name, else module.Class (or
    the nearest base class that can be reached that way)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__, []
        module = sys.modules.get(cls.__module__)
        if module is not None and getattr(module, cls.__qualname__, None) is cls:
            return f"{cls.__module__}.{cls.__qualname__}", [f"import {cls.__module__}"]
    return "Exception", []


# -- inputs -----------------------------------------------------------------------------


def _evaluate(spec: Json, namespace: dict[str, object]) -> Args | None:
    scope = dict(namespace)
    for line in spec.get("imports", []):
        try:
            exec(line, scope)  # an import line from the project's own tests
        except Exception:
            pass
    try:
        args = [eval(a, scope) for a in spec["args"]]
        kwargs = {k: eval(v, scope) for k, v in spec.get("kwargs", {}).items()}
    except Exception:  # a name the tests define elsewhere, a fixture: not a plain value
        return None
    return args, kwargs


_SMALL: dict[typing.Any, list[typing.Any]] = {
    int: [0, 1, -1, 2, 7, 10, 100, 1000, -1000, 10**6],
    float: [0.0, 0.5, -1.5, 1e-05, 3.14159, 123.456, 1e20, -1e-20],
    str: ["", "a", "hello world", "0", "-1", "ÄÖ", " x "],
    bool: [True, False],
    bytes: [b"", b"abc"],
}


def _strategy(hint: typing.Any) -> typing.Any:
    from hypothesis import strategies as st

    if hint in (int, float, str, bool, bytes):
        small = {
            int: st.integers(-10, 100),
            float: st.floats(-1e6, 1e6, width=32),
            str: st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8),
            bool: st.booleans(),
            bytes: st.binary(max_size=8),
        }
        return small[hint]
    return st.from_type(hint)


def _drawable(
    func: Callable[..., object],
) -> tuple[list[tuple[str, object]], list[tuple[str, object]]] | None:
    """(required, optional) parameters with their type hints; None when a required
    parameter has no hint (nothing can be drawn for it). Optional ones without a hint keep
    their default."""
    try:
        hints = typing.get_type_hints(func)
        params = [
            p
            for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    except Exception:
        return None
    required = [p for p in params if p.default is p.empty]
    if any(p.name not in hints for p in required):
        return None
    return (
        [(p.name, hints[p.name]) for p in required],
        [
            (p.name, hints[p.name])
            for p in params
            if p.default is not p.empty and p.name in hints and p.kind != p.POSITIONAL_ONLY
        ],
    )


def _small_values(required: list[tuple[str, object]], count: int) -> list[Args]:
    if not all(t in _SMALL for _, t in required):
        return []
    columns = [_SMALL[t] for _, t in required]
    return [([c[(i + k) % len(c)] for k, c in enumerate(columns)], {}) for i in range(count)]


def draw(func: Callable[..., object], count: int) -> list[Args]:
    """Up to ``count`` argument lists from the signature's type hints (required
    parameters positional, optional ones by keyword): Hypothesis' strategies when the
    project has Hypothesis (derandomized: the same on every run), else a few small values
    of the simple types."""
    found: list[Args] = []
    params = _drawable(func) if count else None
    if not params or not (params[0] or params[1]):
        return found
    required, optional = params
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st
    except ImportError:  # the project has no Hypothesis: Nova lends its own, if it can
        if _LENT and _LENT not in sys.path:
            sys.path.append(_LENT)
        try:
            from hypothesis import HealthCheck, Phase, given, settings
            from hypothesis import strategies as st
        except (ImportError, SyntaxError):  # another Python version than Nova's
            return _small_values(required, count)
    try:
        positional = st.tuples(*(_strategy(t) for _, t in required))
        named = st.fixed_dictionaries({}, optional={n: _strategy(t) for n, t in optional})

        @settings(
            max_examples=count * 2,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(positional, named)
        def collect(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
            found.append((list(args), kwargs))

        collect()
    except Exception:  # a type Hypothesis cannot build: no drawn inputs
        return found[:count]
    return found[:count]


# -- calling -----------------------------------------------------------------------------


def call(
    func: Callable[..., object], args: list[object], kwargs: dict[str, object], seconds: float
) -> Json:
    """Call once: the outcome as data (value, raises, or why it cannot be used)."""
    caught: BaseException | None = None
    signal.setitimer(signal.ITIMER_REAL, seconds)
    _guard["on"] = True
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            value = func(*args, **kwargs)
    except BaseException as exc:  # the project's code: anything can come out
        caught = exc
    finally:
        _guard["on"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    if isinstance(caught, SideEffect):
        return {"kind": "side effect", "why": str(caught)}
    if isinstance(caught, CallTimeout):
        return {"kind": "timeout", "seconds": seconds}
    if isinstance(caught, (MemoryError, RecursionError)):
        return {"kind": "resources", "why": type(caught).__name__}
    if caught is not None:
        name, imports = exception_name(caught)
        return {"kind": "raises", "type": name, "imports": imports}
    rendered = render(value)
    if rendered is None:
        return {"kind": "unrenderable", "type": type(value).__name__}
    return {"kind": "value", "value": rendered[0], "imports": rendered[1]}


def _function(module: ModuleType, qualname: str) -> object:
    target: object = module
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def probe_function(module: ModuleType, spec: Json, seconds: float) -> Json:
    try:
        func = _function(module, spec["qualname"])
    except AttributeError:
        return {"missing": True, "results": []}
    if not callable(func):
        return {"skipped": "not callable", "results": []}
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        params = []
    candidates = []
    for item in spec.get("inputs", []):
        values = _evaluate(item, {})
        if values is not None:
            candidates.append(values)
    candidates += draw(func, int(spec.get("draw", 0)))
    results, seen = [], set()
    deadline = time.monotonic() + FUNCTION_SECONDS
    for args, kwargs in candidates:
        if time.monotonic() > deadline:  # a slow function gets fewer inputs, not the job
            break
        maybe = [render(a) for a in args]
        maybe_named = {k: render(v) for k, v in kwargs.items()}
        rendered = [r for r in maybe if r is not None]
        named = {k: r for k, r in maybe_named.items() if r is not None}
        if len(rendered) < len(maybe) or len(named) < len(maybe_named):
            continue
        key = json.dumps(
            [[r[0] for r in rendered], {k: r[0] for k, r in named.items()}], sort_keys=True
        )
        if key in seen:
            continue
        seen.add(key)
        outcome = call(func, args, kwargs, seconds)
        if outcome["kind"] == "side effect":
            return {"skipped": outcome["why"], "params": params, "results": []}
        results.append(
            {
                "args": [r[0] for r in rendered],
                "kwargs": {k: r[0] for k, r in named.items()},
                "imports": sorted({i for r in [*rendered, *named.values()] for i in r[1]}),
                "outcome": outcome,
            }
        )
    return {"params": params, "results": results}


_LENT = ""  # where Nova's own Hypothesis is linked (argv[3])


def probe_module(name: str, functions: list[Json], seconds: float) -> Json:
    out: Json = {"functions": {}}
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # the module may not exist on this side, or not import
        out["import_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return out
    for spec in functions:
        out["functions"][spec["qualname"]] = probe_function(module, spec, seconds)
    return out


def main() -> None:
    global _LENT
    plan = json.loads(open(sys.argv[1], encoding="utf-8").read())
    _LENT = sys.argv[3] if len(sys.argv) > 3 else ""
    sys.addaudithook(_audit)  # silent until a call turns the guard on
    signal.signal(signal.SIGALRM, _on_alarm)
    seconds = float(plan.get("call_seconds", 2.0))
    out = {
        "modules": {
            m["module"]: probe_module(m["module"], m["functions"], seconds) for m in plan["modules"]
        }
    }
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump(out, handle)


if __name__ == "__main__":
    main()
