"""The side-runner's objects: what a changed name is (function, method, property, static or
class method, constructor), how an instance is built the way the project's tests build it,
and how a value that is not plain data is observed (an iterator materialised with a
bound, an object through ``str`` or its contents). Standard library only: it runs with
the project's interpreter, next to ``probe.py`` (copied there as ``nova_probe_objects``).
"""

from __future__ import annotations

import abc
import ast
import collections.abc
import inspect
import itertools
import operator
import os
import sys
import time
import typing

# the walk's own clock: held where a moved or pinned clock's stand-ins are not bound
OWN_CLOCK = {"monotonic": time.monotonic}

if typing.TYPE_CHECKING:  # annotations only: the project's interpreter may be older
    from collections.abc import Callable

    Args = tuple[list[object], dict[str, object]]  # one call's positional and named arguments

LENT = [""]  # where Nova's own Hypothesis is linked (the probe's argv[3])

OBJ = "_nova_obj"  # the instance's name in mined steps; a test gives it a readable one
ITEMS = 20  # an iterator is materialised up to this many items
_DUNDER_FORMS = {
    "__len__",
    "__iter__",
    "__contains__",
    "__getitem__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__str__",
    "__repr__",
    "__bool__",
    "__call__",
    "__add__",
    "__sub__",
    "__or__",
    "__and__",
}


MAKER = "@"  # a factory so marked is a callable the tests import (``@parse``)


class NotReceiver(Exception):
    """A callable of the tests built something that is not an instance of the class."""


BARE = "__new__"  # built by ``Cls.__new__(Cls)``: no ``__init__`` (see bot/testgen/bare.py)
_BARE: list[object] = []  # the instances built so (their unset attributes are not behaviour)


def maker(owner: object, factory: str, scope: dict[str, object]) -> object:
    """What builds the instance: the class, a class method of it (``from_lines``), a
    callable the tests import (``@parse``, evaluated where their values are), or for
    ``BARE`` the class's ``__new__`` alone (the steps then set its attributes)."""
    if factory.startswith(MAKER):
        _BARE[:] = []
        return eval(factory[len(MAKER) :], dict(scope))  # a name of the tests' own imports
    if factory == BARE:
        return lambda: _bare(owner)
    _BARE[:] = []
    return getattr(owner, factory) if factory else owner


_MISSED: list[str] = []  # attributes the latest bare receiver was asked for and lacked


def _bare(cls: typing.Any) -> object:
    """``cls.__new__(cls)``; where it changes nothing else, of a subclass of the same name
    that notes each attribute it is asked for and lacks, so a read that does not raise
    (``hasattr(self, 'x')``, ``getattr(self, 'x', None)``) is seen too."""
    del _MISSED[:]
    plain = (
        type(cls) in (type, abc.ABCMeta)
        and all(
            n not in vars(c)
            for c in cls.__mro__[:-1]
            for n in ("__getattr__", "__getattribute__", "__init_subclass__")
        )
        and "__slots__" not in vars(cls)
    )
    made = cls
    if plain:
        space = {"__getattr__": _lacks, "__module__": cls.__module__}
        made = type(cls.__name__, (cls,), {**space, "__qualname__": cls.__qualname__})
    obj = cls.__new__(made)
    _BARE[:] = [obj]  # one call at a time: only the latest instance is the receiver
    return obj


def _lacks(self: object, name: str) -> object:
    if not (name.startswith("__") and name.endswith("__")):  # a protocol's probe is no state
        _MISSED.append(name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _unset(obj: object, exc: AttributeError) -> str:
    """The attribute a receiver built without ``__init__`` lacked, when that is what
    ``exc`` is about ("" otherwise: an attribute error of the project's own)."""
    name = getattr(exc, "name", None)  # Python 3.10+; else read from the message
    if not isinstance(name, str):
        text = str(exc)
        name = text.rsplit("attribute ", 1)[-1].strip("'\"") if "attribute " in text else ""
    if name and getattr(exc, "obj", obj) is obj and not hasattr(obj, name):
        return name
    return ""


def built(owner: object, factory: str, obj: object) -> object:
    """``obj`` when it is an instance of the class; a callable of the tests that built
    something else raises ``NotReceiver`` (the input is not one of this member)."""
    if factory.startswith(MAKER) and not isinstance(obj, typing.cast(type, owner)):
        raise NotReceiver(type(obj).__name__)
    return obj


_OPERATOR_FORMS = {  # a binary special method as the operator the written test uses
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
    "__add__": operator.add,
    "__sub__": operator.sub,
    "__or__": operator.or_,
    "__and__": operator.and_,
}


class Named(typing.NamedTuple):
    """What a qualname of the plan is in the module."""

    kind: str  # function | static | method | property | init
    owner: object  # the class (None for a function)
    attr: str
    func: object  # what is called (for a method: the unbound function)


def resolve(module: object, qualname: str) -> Named:
    """Raises AttributeError when the name is not there (not on this side)."""
    parts = qualname.split(".")
    owner: object = module
    for part in parts[:-1]:
        owner = getattr(owner, part)
    attr = parts[-1]
    if owner is module:
        return Named("function", None, attr, getattr(module, attr))
    if not isinstance(owner, type):
        raise AttributeError(f"{qualname}: not a class member")
    static = inspect.getattr_static(owner, attr)
    if attr == "__init__":
        return Named("init", owner, attr, owner)
    if isinstance(static, (staticmethod, classmethod)):
        return Named("static", owner, attr, getattr(owner, attr))
    if isinstance(static, property):
        return Named("property", owner, attr, static)
    return Named("method", owner, attr, getattr(owner, attr))


def signature_of(named: Named) -> inspect.Signature | None:
    target = named.owner.__init__ if named.kind == "init" else named.func  # type: ignore[misc]
    if named.kind == "property":
        return None
    try:
        sig = inspect.signature(target)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if named.kind in ("method", "init"):  # drop self
        params = list(sig.parameters.values())[1:]
        sig = sig.replace(parameters=params)
    return sig


class _Unplain:
    """A mined value that was not plain data (the plan has no source for it)."""

    def __repr__(self) -> str:
        return "<not plain>"


UNPLAIN = _Unplain()  # not None: ``f(x, sep=None)`` of the tests is a call like any other


def drop_unplain(
    sig: inspect.Signature | None, args: list[object], kwargs: dict[str, object]
) -> tuple[list[object], dict[str, object]] | None:
    """A mined call whose value for an optional parameter was not plain data (a helper of
    the tests, a fixture) keeps the default instead; None when a required one was not."""
    if any(a is UNPLAIN for a in args):
        return None
    out = {}
    for key, value in kwargs.items():
        if value is not UNPLAIN:
            out[key] = value
            continue
        param = sig.parameters.get(key) if sig is not None else None
        if param is None or param.default is param.empty:
            return None
    return args, out


def imports_used(lines: list[str], steps: list[str]) -> tuple[str, ...]:
    """The import lines that bind a name the steps use (``Section`` in
    ``obj.add_section(Section('Note'))``): the steps are source, and a later run or the
    written test has only the imports its values need."""
    used: set[str] = set()
    for step in steps:
        try:
            used |= {n.id for n in ast.walk(ast.parse(step)) if isinstance(n, ast.Name)}
        except SyntaxError:
            continue
    out = []
    for line in lines:
        try:
            nodes = ast.parse(line).body
        except SyntaxError:
            continue
        for node in nodes:
            if isinstance(node, ast.Import):
                if {(a.asname or a.name).split(".")[0] for a in node.names} & used:
                    out.append(line)
            elif isinstance(node, ast.ImportFrom):  # only the names used: another may be new
                names = [
                    f"{a.name} as {a.asname}" if a.asname else a.name
                    for a in node.names
                    if (a.asname or a.name) in used
                ]
                if names:
                    what = ", ".join(names)
                    out.append(f"from {'.' * node.level}{node.module or ''} import {what}")
    return tuple(out)


_SIZE_WORDS = ("size", "max", "count", "len", "limit", "num", "ttl", "capacity", "n")


def guessed_args(sig: inspect.Signature | None) -> list[dict[str, str]]:
    """Constructor arguments when nothing was mined: the defaults alone, or small numbers
    for required parameters whose names say they count something (``maxsize``, ``ttl``)."""
    if sig is None:
        return []
    required = [
        p
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if not required:
        return [{}]
    if all(any(w in p.name.lower() for w in _SIZE_WORDS) for p in required):
        return [{p.name: str(n) for p in required} for n in (2, 10)]
    return []


def no_arguments_needed(sig: inspect.Signature) -> bool:
    """Whether a call with no arguments is a call with every default."""
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in sig.parameters.values()
    )


def is_iterator(value: object) -> bool:
    return isinstance(value, collections.abc.Iterator) and not isinstance(value, (str, bytes, dict))


def materialise(value: object) -> tuple[object, str]:
    """(the value to render, how a test gets it from the call): ``list`` for an iterator
    that ended within the bound, ``islice`` for one that goes on."""
    if not is_iterator(value):
        return value, ""
    try:
        items = list(itertools.islice(typing.cast("typing.Iterator[object]", value), ITEMS + 1))
    except AttributeError as exc:  # a generator method reads its receiver as it goes
        unset_read(exc)
        raise
    except Exception:
        unset_read()
        raise
    unset_read()
    if len(items) <= ITEMS:
        return items, "list"
    return items[:ITEMS], "islice"


def has_own_str(value: object) -> bool:
    cls = type(value)
    return cls.__str__ is not object.__str__ or cls.__repr__ is not object.__repr__


def state_view(obj: object) -> tuple[str, object] | None:
    """How a test sees an instance's state after a call that returned None: its contents
    (a mapping as a dict, a sized iterable as a list), else None."""
    try:
        if isinstance(obj, collections.abc.Mapping):
            return "dict", dict(obj)
        if isinstance(obj, collections.abc.Iterable) and isinstance(obj, collections.abc.Sized):
            if len(obj) <= ITEMS:
                return "list", list(obj)
    except Exception:  # the project's code: a broken __iter__ is no state to show
        return None
    return None


def call_member(named: Named, obj: object, args: list[object], kwargs: dict[str, object]) -> object:
    """Call the changed member on ``obj`` as a test would write it. On a receiver built
    without ``__init__``, reading an attribute that was never set raises ``NotReceiver``:
    the input is not compared (the outcome would be of a state no constructor made)."""
    try:
        value = _use(named, obj, args, kwargs)
    except AttributeError as exc:
        unset_read(exc)
        raise
    except Exception:
        unset_read()  # another error, after a read of what was never set
        raise
    unset_read()
    return value


def unset_read(exc: AttributeError | None = None) -> None:
    """``NotReceiver`` when the latest receiver built without ``__init__`` was asked for
    an attribute it lacks (``exc``: what the call raised, if that), also while its
    iterator is materialised."""
    missing = _unset(_BARE[0], exc) if _BARE and exc is not None else ""
    missing = missing or (_MISSED[0] if _BARE and _MISSED else "")
    if missing:
        _BARE[:], _MISSED[:] = [], []  # told once: a later call is not of this receiver
        raise NotReceiver(f"unset attribute {missing}") from None


def _use(named: Named, obj: object, args: list[object], kwargs: dict[str, object]) -> object:
    if named.kind == "property":
        return getattr(obj, named.attr)
    if named.attr == "__iter__":
        return list(typing.cast("typing.Iterable[object]", obj))
    written = _OPERATOR_FORMS.get(named.attr)
    if written is not None and len(args) == 1 and not kwargs:
        # as a test writes it (``a == b``): NotImplemented falls back as Python does
        return written(obj, args[0])
    member: Callable[..., object] = getattr(obj, named.attr)
    return member(*args, **kwargs)


def dunder_form(attr: str) -> bool:
    return attr in _DUNDER_FORMS


# -- inputs drawn from type hints ------------------------------------------------------


_SMALL: dict[typing.Any, list[typing.Any]] = {
    int: [0, 1, -1, 2, 7, 10, 100, 1000, -1000, 10**6],
    float: [0.0, 0.5, -1.5, 1e-05, 3.14159, 123.456, 1e20, -1e-20],
    str: ["", "a", "hello world", "0", "-1", "ÄÖ", " x "],
    bool: [True, False],
    bytes: [b"", b"abc"],
}


def _strategy(hint: typing.Any, strings: list[str] = ()) -> typing.Any:  # type: ignore[assignment]
    from hypothesis import strategies as st

    if hint is str and len(strings) >= 2:  # the project's own words, not random ones
        return st.sampled_from(sorted({"", *strings}))  # and the empty string, always
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
    func: Callable[..., object], skip_self: bool = False
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
        ][1 if skip_self else 0 :]
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


def draw(
    func: Callable[..., object],
    count: int,
    skip_self: bool = False,
    strings: list[str] = (),  # type: ignore[assignment]
) -> list[Args]:
    """Up to ``count`` argument lists from the signature's type hints (required
    parameters positional, optional ones by keyword): Hypothesis' strategies when the
    project has Hypothesis (derandomized: the same on every run), else a few small values
    of the simple types."""
    found: list[Args] = []
    params = _drawable(func, skip_self) if count else None
    if not params or not (params[0] or params[1]):
        return found
    required, optional = params
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st
    except ImportError:  # the project has no Hypothesis: Nova lends its own, if it can
        if LENT[0] and LENT[0] not in sys.path:
            sys.path.append(LENT[0])
        try:
            from hypothesis import HealthCheck, Phase, given, settings
            from hypothesis import strategies as st
        except (ImportError, SyntaxError):  # another Python version than Nova's
            return _small_values(required, count)
    try:
        positional = st.tuples(*(_strategy(t, strings) for _, t in required))
        named = st.fixed_dictionaries({}, optional={n: _strategy(t, strings) for n, t in optional})

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


# -- the structure of a value whose repr does not evaluate back -----------------------


FACTS = 400  # facts of one value at most (the shallowest first)
DEPTH = 6  # objects below the value
SHOWN = 200  # characters of one fact's value
WALK_SECONDS = 0.25  # a value's walk stops here: the facts of every run are compared
VALUE = "{r}"  # the value's place in a fact's expression
_SHORT = ""  # a repr that is not a value: the object is walked instead


def _own_str(value: object) -> str | None:
    """``str(value)`` when its class defines one and it names no address."""
    if type(value).__str__ is object.__str__ and type(value).__repr__ is object.__repr__:
        return None
    if isinstance(value, (list, tuple, dict)) and type(value).__str__ in (
        list.__str__,
        tuple.__str__,
        dict.__str__,
        object.__str__,
    ):
        return None  # the items' reprs: each item has its own facts
    text = str(value)
    return text if len(text) <= SHOWN and "0x" not in text.lower() else None


def attributes(value: object) -> list[tuple[str, object]]:
    """Public data attributes: a namedtuple's, dataclass' or attrs class' fields, the
    ``__slots__`` of its classes, ``vars()``; no callables, modules or classes."""
    names: list[str] = []
    fields = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and isinstance(fields, tuple):
        names += [str(f) for f in fields]
    names += [f.name for f in getattr(type(value), "__dataclass_fields__", {}).values()]
    names += [a.name for a in getattr(type(value), "__attrs_attrs__", ())]
    for cls in reversed(type(value).__mro__):
        slots = cls.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [str(s) for s in slots]
    own = getattr(value, "__dict__", None)
    if isinstance(own, dict):
        names += [str(k) for k in own]
    out = []
    for name in dict.fromkeys(names):
        if name.startswith("_") or not name.isidentifier():
            continue
        try:
            attr = getattr(value, name)
        except Exception:  # an unset slot, a failing descriptor: nothing to show
            continue
        if callable(attr) or isinstance(attr, type(sys)):
            continue
        out.append((name, attr))
    return out


def _items(value: object) -> list[object] | None:
    """The items of a list or tuple (not a namedtuple: its fields are shown)."""
    if isinstance(value, (list, tuple)) and not hasattr(type(value), "_fields"):
        return list(value)
    return None


def _keys(value: object) -> list[str | int] | None:
    """The keys of a dict whose keys are all short strings or integers, in order."""
    if not isinstance(value, dict) or len(value) > ITEMS * 2:
        return None
    keys = list(value)
    plain = all(  # and no brace: an expression's ``{r}`` is the value's place
        type(k) is int or (type(k) is str and len(k) <= 40 and "{" not in k) for k in keys
    )
    return typing.cast("list[str | int]", keys) if plain else None


def _here(source: str) -> bool:
    """Whether a value names this run's tree or interpreter (a worktree's path differs
    between head and parent: it is not behaviour)."""
    return any(place in source for place in _PLACES if place and place != "/")


_PLACES = [os.getcwd(), sys.prefix, sys.base_prefix]


def facts(
    value: object, render: Callable[[object], tuple[str, list[str]] | None]
) -> list[tuple[str, str, list[str]]]:
    """What a test can assert about a value whose repr is not a value: (an expression
    with ``{r}`` for the value, the source of what it evaluates to, the imports that
    source needs), the shallowest first: type names, ``str`` when the class defines it,
    a list's length and its items' type names, then each item and public data attribute
    (as a value where it renders, else walked in turn). Each object is walked once (a
    back-reference to a parent is not followed); nothing that names an address."""
    out: list[tuple[str, str, list[str]]] = []
    seen: set[int] = {id(value)}
    queue: list[tuple[object, str, int]] = [(value, VALUE, 0)]
    stop = OWN_CLOCK["monotonic"]() + WALK_SECONDS
    while queue and len(out) < FACTS and OWN_CLOCK["monotonic"]() < stop:
        obj, expr, depth = queue.pop(0)
        out.append((f"type({expr}).__name__", repr(type(obj).__name__), []))
        try:
            text = _own_str(obj)
            items = _items(obj)
            keys = _keys(obj)
            attrs = attributes(obj)
        except Exception:  # the project's __str__ or descriptors: only the type is sure
            continue
        if text is not None and not _here(text):
            out.append((f"str({expr})", repr(text), []))
        parts: list[tuple[str, object]] = []
        if keys is not None:
            out.append((f"list({expr})", repr(keys), []))
            parts += [(f"{expr}[{k!r}]", typing.cast("dict[object, object]", obj)[k]) for k in keys]
        if items is not None:
            if len(items) <= ITEMS * 2:  # the items' types first: they say the most
                names = [type(i).__name__ for i in items]
                out.append((f"[type(item).__name__ for item in {expr}]", repr(names), []))
            out.append((f"len({expr})", str(len(items)), []))
            texts = [_own_str(i) for i in items[: ITEMS * 2]]
            if items and not any(t is None or _here(t) for t in texts) and len(str(texts)) <= SHOWN:
                out.append((f"[str(item) for item in {expr}]", repr(texts), []))
            parts += [(f"{expr}[{n}]", item) for n, item in enumerate(items[:ITEMS])]
        parts += [(f"{expr}.{name}", attr) for name, attr in attrs]
        for where, part in parts:
            try:
                shown = render(part)
            except Exception:  # the project's __eq__ or __repr__
                shown = None
            if shown is not None and len(shown[0]) <= SHOWN:
                if not _here(shown[0]):
                    out.append((where, shown[0], shown[1]))
            elif shown is None and id(part) not in seen and depth < DEPTH:
                seen.add(id(part))
                queue.append((part, where, depth + 1))
    return out[:FACTS]
