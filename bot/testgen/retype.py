"""Inputs of other types for parameters the project's tests only ever give one type.

A change about what numbers, ``None``, bytes or lists do is never exercised when every
test passes strings. ``typehints`` reads which kinds of value the changed lines test, and
for which names; here each hinted name is matched to the public call's parameters (or a
key of a dict it is given). A name the call does not have (a private helper's parameter)
is reached through what the call passes on: keyword arguments that land in ``**kwargs``,
the values of a dict argument, extra positional arguments; when it passes nothing on, any
parameter without an annotation. The project's own inputs are then tried with values of
the hinted kinds in those places (``name='Ann'`` also as ``name=5``), a bounded
number per function."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from bot.testgen.inputs import Candidate
from bot.testgen.typehints import ATTR, Hints

__all__ = ["MAX_TYPED", "called_def", "kind_values", "retype"]

MAX_TYPED = 32  # inputs of other types per function
MAX_VARIED = 8  # of the project's inputs, the first ones varied


@dataclass(frozen=True)
class _Params:
    """The public call's parameters, as a caller sees them (``self`` left out)."""

    positional: tuple[str, ...]
    named: frozenset[str]
    annotated: frozenset[str]
    star: bool
    double_star: bool


def _find(tree: ast.Module, qualname: str) -> ast.AST | None:
    """The function or class of a dotted qualname; for a class, its ``__init__`` when
    ``init`` is asked."""
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in qualname.split("."):
        found = [
            d
            for d in body
            if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and d.name == part
        ]
        if not found:
            return None
        node = found[-1]
        body = node.body if isinstance(node, ast.ClassDef) else []
    return node


def called_def(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function a call of ``qualname`` runs: itself, or a class's ``__init__``."""
    node = _find(tree, qualname)
    if isinstance(node, ast.ClassDef):
        node = _find(tree, f"{qualname}.__init__")
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _params(tree: ast.Module, qualname: str) -> _Params | None:
    node = called_def(tree, qualname)
    if node is None:
        return None
    a = node.args
    ordered = [*a.posonlyargs, *a.args]
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in node.decorator_list}
    method = "." in qualname or node.name == "__init__"
    if method and "staticmethod" not in decorators and ordered:
        ordered = ordered[1:]  # self, cls
    every = [*ordered, *a.kwonlyargs]
    return _Params(
        tuple(p.arg for p in ordered),
        frozenset(p.arg for p in every),
        frozenset(p.arg for p in every if p.annotation is not None),
        a.vararg is not None,
        a.kwarg is not None,
    )


def _attributes(tree: ast.Module, owner: str) -> dict[str, str]:
    """``self.x`` -> the constructor's parameter it is set from (``self._x = x``)."""
    init = called_def(tree, owner)
    if init is None:
        return {}
    a = init.args
    params = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    out: dict[str, str] = {}
    for node in ast.walk(init):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and node.value.id in params
            ):
                out.setdefault(target.attr, node.value.id)
    for name in params:
        out.setdefault(name, name)
    return out


def _as_parameters(hints: Hints, attributes: dict[str, str]) -> Hints:
    """The hints with ``self.x`` read as the constructor's parameter it comes from;
    attributes set from no parameter are left out."""
    out = Hints()
    for name, kinds in hints.kinds.items():
        plain = name
        if name.startswith(ATTR):
            if name[len(ATTR) :] not in attributes:
                continue
            plain = attributes[name[len(ATTR) :]]
        out.add(plain, *kinds)
        for v in hints.numbers.get(name, []):
            out.number(plain, v)
    return out


def _literal(source: str | None) -> tuple[bool, object]:
    if source is None:
        return False, None
    try:
        return True, ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


_Path = tuple[str, int, tuple[object, ...]]  # "args" | "kwargs", its index, a path inside


@dataclass(frozen=True)
class _Slot:
    where: _Path
    original: object
    kinds: tuple[str, ...]
    numbers: tuple[int | float, ...] = ()


def _numeric(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


@dataclass(frozen=True)
class _Spelled:
    """A value written as source that needs an import (``decimal.Decimal('1.5')``) or
    has no literal (``float('inf')``); inside a list or dict it prints the same."""

    source: str
    imports: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return self.source


_INF = _Spelled("float('inf')")
_NAN = _Spelled("float('nan')")


def _values(kind: str, o: object, numbers: tuple[int | float, ...]) -> list[object]:
    """Values of ``kind`` to try in place of the project's value ``o``."""
    as_number = _numeric(o.strip()) if isinstance(o, str) else None
    ints = [int(n) for n in numbers if isinstance(n, int)]
    out: list[object]
    mine: list[int | float] = [] if as_number is None else [as_number]
    if kind == "int":
        out = [*(int(v) for v in mine), *(v for n in ints for v in (n, n + 1, n - 1)), 5, 0]
    elif kind == "float":
        out = [*(float(v) for v in mine), *(float(n) + 0.5 for n in numbers), 1.5, 0.0]
    elif kind == "numeric":  # int(x), float(x): a number written as text
        out = [str(o)] if isinstance(o, int | float) and not isinstance(o, bool) else []
        out += ["5", "1.5", "-1", ""]
    elif kind == "complex":
        out = [1j, complex(1, 2)]
    elif kind == "none":
        out = [None]
    elif kind == "bool":
        out = [True, False]
    elif kind == "bytes":
        out = [o.encode("utf-8") if isinstance(o, str) else str(o).encode("utf-8"), b""]
    elif kind == "str":
        out = [] if isinstance(o, str) else [str(o), ""]
    elif kind == "list":
        out = [[o], []]
    elif kind == "tuple":
        out = [(o,), ()]
    elif kind == "dict":
        out = [{str(o): o}, {}]
    elif kind == "unhashable":  # isinstance(x, Hashable) holds, hash(x) fails; a list
        out = [(o, [o]), [o]]
    elif kind == "empty":
        out = [type(o)()] if isinstance(o, str | bytes | list | tuple | dict) else ["", []]
    elif kind == "negative":
        out = [*(-abs(n) for n in ints if n), -1]
    elif kind == "zero":
        out = [0, 0.0]
    elif kind == "huge":
        out = [2**64, 1e308, -(2**63) - 1]
    elif kind == "nonfinite":
        out = [_INF, _Spelled("float('-inf')"), _NAN]
    elif kind == "decimal":
        number = mine[0] if mine else 1.5
        out = [_Spelled(f"decimal.Decimal({str(number)!r})", ("import decimal",))]
    elif kind == "fraction":
        out = [_Spelled("fractions.Fraction(3, 2)", ("import fractions",))]
    elif kind == "path":
        text = o if isinstance(o, str) and o else "a.txt"
        out = [_Spelled(f"pathlib.Path({text!r})", ("import pathlib",))]
    else:
        out = []
    seen: set[str] = set()
    kept = []
    for v in out:
        shown = repr(v)
        if (type(v) is type(o) and v == o) or shown in seen or len(shown) > 80:
            continue
        seen.add(shown)
        kept.append(v)
    return kept


def kind_values(kind: str, o: object, numbers: tuple[int | float, ...]) -> list[object]:
    """Values of ``kind`` to try in place of ``o`` (see ``_values``); a value that needs
    an import or has no literal is a ``_Spelled``, whose ``source`` and ``imports`` say
    how to write it."""
    return _values(kind, o, numbers)


_SCALARS = (str, bytes, int, float, bool, type(None))


def _first_leaf(value: object, depth: int = 0) -> tuple[object, ...] | None:
    """The path to the first plain value inside a list, tuple or dict (depth first)."""
    if depth > 4:
        return None
    items: list[tuple[object, object]] = []
    if isinstance(value, list | tuple):
        items = list(enumerate(value))
    elif isinstance(value, dict):
        items = list(value.items())
    for key, item in items:
        if isinstance(item, _SCALARS):
            return (key,)
        inner = _first_leaf(item, depth + 1)
        if inner is not None:
            return (key, *inner)
    return None


def _get(value: object, path: tuple[object, ...]) -> object:
    for key in path:
        value = value[key]  # type: ignore[index]
    return value


def _put(value: object, path: tuple[object, ...], new: object) -> object:
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, key: _put(value[key], rest, new)}
    assert isinstance(value, list | tuple) and isinstance(key, int)
    items = [*value[:key], _put(value[key], rest, new), *value[key + 1 :]]
    return items if isinstance(value, list) else tuple(items)


def _slots(
    c: Candidate, params: _Params | None, hints: Hints, loose: tuple[str, ...]
) -> tuple[list[_Slot], list[_Slot], list[_Slot]]:
    """Where in one call the hinted kinds go: a parameter (or dict key) a hinted name
    matches; what the call passes on (``**kwargs``, a dict's values, ``*args``) for the
    kinds of names it does not have; and, for those when nothing is passed on, any
    parameter without annotation and the first plain value inside a list argument."""
    mapped: list[_Slot] = []
    through: list[_Slot] = []
    rest: list[_Slot] = []

    def slot(where: _Path, original: object, name: str | None) -> _Slot:
        if name is not None and name in hints.kinds:
            kinds = tuple(hints.kinds[name])
            return _Slot(where, original, kinds, tuple(hints.numbers.get(name, ())))
        return _Slot(where, original, loose)

    places: list[tuple[str, int, str | None, str | None]] = []
    for i, source in enumerate(c.args):
        name = params.positional[i] if params and i < len(params.positional) else None
        places.append(("args", i, name, source))
    for j, (key, source) in enumerate(c.kwargs):
        places.append(("kwargs", j, key, source))
    for where, index, name, source in places:
        if source is None:
            continue
        ok, value = _literal(source)
        if name is not None and name in hints.kinds:
            mapped.append(slot((where, index, ()), value, name))
        elif params is not None and (
            (where == "args" and name is None and params.star)
            or (where == "kwargs" and name not in params.named and params.double_star)
        ):
            through.append(slot((where, index, ()), value, None))
        elif loose and (name is None or params is None or name not in params.annotated):
            rest.append(slot((where, index, ()), value, None))
        if not ok or not isinstance(value, dict | list | tuple):
            continue
        if isinstance(value, dict):
            keys = [k for k in value if isinstance(k, str)]
            mapped += [slot((where, index, (k,)), value[k], k) for k in keys if k in hints.kinds]
            rest_of = {k: v for k, v in value.items() if k not in hints.kinds}
            leaf = _first_leaf(rest_of) if loose else None  # a value, nested or not
            if leaf is not None:
                through.append(slot((where, index, leaf), _get(value, leaf), None))
        elif loose:
            leaf = _first_leaf(value)
            if leaf is not None:
                rest.append(slot((where, index, leaf), _get(value, leaf), None))
    return mapped, through, rest


def _loose(candidates: list[Candidate], params: _Params | None, hints: Hints) -> tuple[str, ...]:
    """The kinds of hinted names the call has no place for (a private helper's
    parameter, a key nobody passes), and those tied to no name."""
    present = set(params.named) if params else set()
    for c in candidates:
        for key, source in c.kwargs:
            present.add(key)
            ok, value = _literal(source)
            if ok and isinstance(value, dict):
                present |= {k for k in value if isinstance(k, str)}
        for source in c.args:
            ok, value = _literal(source)
            if ok and isinstance(value, dict):
                present |= {k for k in value if isinstance(k, str)}
    out: list[str] = []
    for name, kinds in hints.kinds.items():
        if name not in present:
            out += [k for k in kinds if k not in out]
    return tuple(out)


def retype(
    candidates: list[Candidate], source: str, qualname: str, hints: Hints
) -> list[Candidate]:
    """The project's inputs for ``qualname`` (defined in ``source``) tried with values of
    the kinds the changed lines test, in the places those values reach: the first value
    of each kind for the first inputs before more of either, at most ``MAX_TYPED``."""
    if not hints or not candidates:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
    on_instance = _as_parameters(hints, _attributes(tree, owner)) if owner else Hints()
    if (
        not owner
        or qualname.endswith(".__init__")
        or isinstance(_find(tree, qualname), ast.ClassDef)
    ):
        hints = _as_parameters(hints, _attributes(tree, qualname.removesuffix(".__init__")))
    else:
        hints = _as_parameters(hints, {})
    params = _params(tree, qualname)
    built = _params(tree, owner) if owner else None
    loose = _loose(candidates, params, hints)
    places = []
    for c in candidates:
        mapped, through, rest = _slots(c, params, hints, loose)
        if c.ctor is not None and not c.factory and on_instance:  # self.x: from the ctor
            ctor = Candidate(c.ctor[0], c.ctor[1])
            mapped += [
                replace(s, where=("ctor_" + s.where[0], *s.where[1:]))
                for s in _slots(ctor, built, on_instance, ())[0]
            ]
        if c.ctor is not None and not c.factory and loose:  # what the ctor passes on
            ctor = Candidate(c.ctor[0], c.ctor[1])
            through += [
                replace(s, where=("ctor_" + s.where[0], *s.where[1:]))
                for s in _slots(ctor, built, Hints(), loose)[1]
            ]
        places.append((c, (mapped, through, rest)))
    passed_on = any(through for _, (_, through, _) in places)
    ranked: list[tuple[tuple[int, int], int, Candidate]] = []
    varied = 0
    for c, (mapped, through, rest) in places:
        slots = [s for s in mapped + through + ([] if passed_on else rest) if s.kinds]
        if not slots:
            continue
        for s_index, s in enumerate(slots):
            kinds = [(k, _values(k, s.original, s.numbers)) for k in s.kinds]
            kinds = [(k, vs) for k, vs in kinds if vs]
            for k_index, (_, values) in enumerate(kinds):
                for v_index, value in enumerate(values[:4]):
                    # a diagonal: the first kinds of the first places before the
                    # later kinds of any, and every kind's first value before seconds
                    spread = k_index + (varied * 2 + s_index) // 3
                    ranked.append(((v_index, spread), len(ranked), _with(c, s.where, value)))
        varied += 1
        if varied >= MAX_VARIED:
            break
    ranked.sort(key=lambda r: (r[0], r[1]))
    out = [c for _, _, c in ranked if c not in candidates]
    return list(dict.fromkeys(out))[:MAX_TYPED]


def _with(c: Candidate, where: _Path, value: object) -> Candidate:
    part, index, path = where
    c = replace(c, origin=f"{c.origin} (typed)")
    if isinstance(value, _Spelled):
        c = replace(c, imports=tuple(dict.fromkeys((*c.imports, *value.imports))))
    args, kwargs = c.ctor if part.startswith("ctor_") and c.ctor else (c.args, c.kwargs)
    if part.endswith("args") and not part.endswith("kwargs"):
        _, whole = _literal(args[index])
        args = (*args[:index], repr(_put(whole, path, value)), *args[index + 1 :])
    else:
        key, source = kwargs[index]
        _, whole = _literal(source)
        kwargs = (*kwargs[:index], (key, repr(_put(whole, path, value))), *kwargs[index + 1 :])
    if part.startswith("ctor_"):
        return replace(c, ctor=(args, kwargs))
    return replace(c, args=args, kwargs=kwargs)
