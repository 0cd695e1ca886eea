"""Inputs shaped like the changed function uses its parameters.

The project's tests may never call a changed function with a value of the kind its body
reads: ``parse(params)`` does ``'expires_in' in params`` and ``params.get('expires_in')``,
while every input harvested for it is a string or a number, so none reaches the change.
Here each parameter's SHAPE is read from the function's own body (never run):

- a mapping with literal keys: ``p['k']``, ``p.get('k')``, ``'k' in p``, ``p.pop('k')``,
  ``p.setdefault('k', ..)``, ``p.items()`` (a key may be a module constant, ``p[KEY]``);
- an object with attributes it only reads (``p.name``), written as
  ``types.SimpleNamespace(name=...)``; an object whose methods it calls is not shaped;
- a sequence (``p[0]``, ``len(p)``, ``for x in p``, ``p.append``), of items shaped the
  same way (``for x in p: x['k']``);
- text (string methods) is left to the other generators: the project's inputs are text.

A value read from a key or attribute may itself be shaped one level deeper
(``p.get('a', {}).get('b')``, ``p['rows'][0]``). A parameter the body assigns again has
no shape (what it is later says nothing about what callers give); a parameter handed to
another function of the module as is takes the shape that function's body reads.

Each shape is filled with values: the keys the changed lines read first (nearest changed
line first), each tried with values of the kinds the changed lines test for it
(``typehints``: ``isinstance`` types, ``is None``, compared numbers and their
neighbours), plus ``None`` and a list (a value none of the tests expect: the ``else``
branch); the other keys get the values the project's tests give for that key or name,
else what the whole function tests for them, else a small default. Every value is plain
data (dict, list, tuple, str, bytes, numbers, None) or a SimpleNamespace / Decimal /
Fraction / Path / non-finite float written with the import it needs, so a test can be
written from it; at most ``MAX_SHAPED`` inputs per function, put in the place of the
parameter in the project's own first inputs (or in a call of their own)."""

from __future__ import annotations

import ast
import decimal
import fractions
import keyword
import math
import pathlib
import re
import types
from copy import deepcopy
from dataclasses import dataclass, field, replace

from bot.testgen.inputs import Candidate, parsed_mentioning
from bot.testgen.retype import called_def, kind_values
from bot.testgen.typehints import Hints, tree_hints

__all__ = ["MAX_SHAPED", "Shape", "Shaped", "read_shapes", "render_value", "shaped_inputs"]

MAX_SHAPED = 24  # inputs shaped per function
MAX_FIELDS = 8  # keys or attributes of one shape
MAX_VALUES = 7  # values tried per changed key
BASES = 2  # of the project's inputs, the first ones given a shaped value

_GETTERS = {"get", "pop", "setdefault"}
_MAPPING_METHODS = {"items", "keys", "values", "update", "copy", "popitem"}
_SEQUENCE_METHODS = {"append", "extend", "insert", "sort", "reverse"}
_TEXT_METHODS = {
    "startswith",
    "endswith",
    "split",
    "rsplit",
    "splitlines",
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "casefold",
    "title",
    "partition",
    "rpartition",
    "encode",
    "decode",
    "isdigit",
    "isalpha",
    "isspace",
    "format",
    "zfill",
    "expandtabs",
}
_ITERATING = {"len", "iter", "list", "tuple", "sorted", "enumerate", "reversed", "zip", "set"}


@dataclass
class Shape:
    """How a body uses one value: ``kind`` is "mapping", "object", "sequence" or "text";
    ``fields`` the keys (or attributes) it reads, each with the shape of what it reads
    from it (None: used as a plain value) and how far, in lines, its nearest use is from
    a changed line; ``item`` the shape of a sequence's items."""

    kind: str
    fields: dict[str, Shape | None] = field(default_factory=dict)
    near: dict[str, int] = field(default_factory=dict)
    item: Shape | None = None
    sure: bool = True  # False: read only as ``'k' in p`` (text answers that too)


@dataclass
class _Uses:
    """The evidence gathered for one value."""

    keys: dict[str, Shape | None] = field(default_factory=dict)
    attrs: dict[str, Shape | None] = field(default_factory=dict)
    near: dict[str, int] = field(default_factory=dict)
    mapping: bool = False  # a getter, a str subscript, .items()
    weak_keys: bool = False  # only ``'k' in p``
    sequence: bool = False  # p[0], p.append
    iterated: bool = False  # len(p), for x in p
    text: bool = False
    called: bool = False  # p.method(): an object whose behaviour matters
    item: Shape | None = None

    def shape(self) -> Shape | None:
        if self.text and not self.mapping:
            return Shape("text")
        if self.mapping or (self.keys and self.weak_keys):
            fields = dict(list(self.keys.items())[:MAX_FIELDS])
            return Shape("mapping", fields, {k: self.near[k] for k in fields}, sure=self.mapping)
        if self.attrs and not self.called:
            fields = dict(list(self.attrs.items())[:MAX_FIELDS])
            return Shape("object", fields, {k: self.near[k] for k in fields})
        if self.sequence or self.iterated:
            return Shape("sequence", item=self.item)
        return None


class _Module:
    """What the reader needs of the module: its string constants (``KEY = 'k'``), its
    top-level functions, the changed lines and the parent map of one function."""

    def __init__(self, tree: ast.Module, lines: list[int]) -> None:
        self.lines = sorted(lines)
        self.consts: dict[str, str] = {}
        self.defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                self.consts[node.targets[0].id] = node.value.value
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defs[node.name] = node

    def key(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        return None

    def distance(self, node: ast.AST) -> int:
        line = getattr(node, "lineno", 0)
        end = getattr(node, "end_lineno", line) or line
        if not self.lines:
            return 0
        return min(0 if line <= n <= end else min(abs(n - line), abs(n - end)) for n in self.lines)


def _parents(node: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}


def _stored(fn: ast.AST, name: str, allowed: ast.AST | None = None) -> bool:
    """Whether the body binds ``name`` again (an assignment, a loop or ``with`` target,
    ``del``, a nested function's parameter of that name aside)."""
    for node in ast.walk(fn):
        if node is allowed:
            continue
        if (
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Store | ast.Del)
        ):
            if allowed is not None and any(n is node for n in ast.walk(allowed)):
                continue
            return True
    return False


def _occurrences(fn: ast.AST, name: str) -> list[ast.Name]:
    return [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    a = fn.args
    ordered = [p.arg for p in [*a.posonlyargs, *a.args]]
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in fn.decorator_list}
    if method and "staticmethod" not in decorators and ordered:
        ordered = ordered[1:]
    return ordered + [p.arg for p in a.kwonlyargs]


class _Reader:
    def __init__(self, module: _Module, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.module = module
        self.fn = fn
        self.parent = _parents(fn)
        self.aliases: dict[str, tuple[str, str]] = {}  # local -> (value's name, its key)

    def of_name(self, name: str, depth: int, allowed: ast.AST | None = None) -> Shape | None:
        if _stored(self.fn, name, allowed):
            return None
        uses = _Uses()
        for occurrence in _occurrences(self.fn, name):
            self._use(occurrence, uses, depth, name)
        return uses.shape()

    def _nested(self, node: ast.expr, depth: int) -> Shape | None:
        """The shape of what a key or attribute read gives, one level deep; through a
        local it is assigned to (``v = p.get('k')``) too."""
        if depth >= 1:
            return None
        uses = _Uses()
        self._use(node, uses, depth + 1, None)
        parent = self.parent.get(node)
        if (
            isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
        ):
            local = parent.targets[0].id
            if not _stored(self.fn, local, parent):
                for occurrence in _occurrences(self.fn, local):
                    self._use(occurrence, uses, depth + 1, None)
        return uses.shape()

    def _field(self, uses: _Uses, into: str, key: str, node: ast.expr, depth: int) -> None:
        table = uses.keys if into == "keys" else uses.attrs
        nested = self._nested(node, depth)
        if table.get(key) is None:
            table[key] = nested
        uses.near[key] = min(uses.near.get(key, 10**6), self.module.distance(node))

    def _alias(self, node: ast.expr, name: str | None, key: str) -> None:
        parent = self.parent.get(node)
        if (
            name is not None
            and isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
        ):
            self.aliases.setdefault(parent.targets[0].id, (name, key))

    def _use(self, node: ast.expr, uses: _Uses, depth: int, name: str | None) -> None:
        parent = self.parent.get(node)
        grand = self.parent.get(parent) if parent is not None else None
        if isinstance(parent, ast.Subscript) and parent.value is node:
            key = self.module.key(parent.slice)
            if key is not None:
                uses.mapping = True
                self._field(uses, "keys", key, parent, depth)
                self._alias(parent, name, key)
            elif isinstance(parent.slice, ast.Constant) and type(parent.slice.value) is int:
                uses.sequence = True
                if uses.item is None:
                    uses.item = self._nested(parent, depth)
            elif isinstance(parent.slice, ast.Slice):
                uses.iterated = True
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            self._attribute(parent, grand, uses, depth, name)
        elif (
            isinstance(parent, ast.Compare)
            and node in parent.comparators
            and isinstance(parent.ops[parent.comparators.index(node)], ast.In | ast.NotIn)
        ):
            left = ([parent.left, *parent.comparators])[parent.comparators.index(node)]
            key = self.module.key(left)
            if key is not None and key.isidentifier():
                uses.weak_keys = True
                self._field(uses, "keys", key, parent, depth)
            elif key is not None:
                uses.text = True
        elif isinstance(parent, ast.Call) and node in parent.args:
            self._passed(parent, parent.args.index(node), uses, depth)
        elif isinstance(parent, ast.For | ast.comprehension) and parent.iter is node:
            uses.iterated = True
            target = parent.target
            if isinstance(target, ast.Name) and uses.item is None and depth < 1:
                uses.item = self.of_name(target.id, depth + 1, target)

    def _attribute(
        self,
        attr: ast.Attribute,
        grand: ast.AST | None,
        uses: _Uses,
        depth: int,
        name: str | None,
    ) -> None:
        called = isinstance(grand, ast.Call) and grand.func is attr
        if called and attr.attr in _GETTERS:
            assert isinstance(grand, ast.Call)
            key = self.module.key(grand.args[0]) if grand.args else None
            if key is not None:
                uses.mapping = True
                self._field(uses, "keys", key, grand, depth)
                self._alias(grand, name, key)
        elif called and attr.attr in _MAPPING_METHODS:
            uses.mapping = True
        elif called and attr.attr in _SEQUENCE_METHODS:
            uses.sequence = True
        elif called and attr.attr in _TEXT_METHODS:
            uses.text = True
        elif called or attr.attr.startswith("__"):
            uses.called = True
        else:
            self._field(uses, "attrs", attr.attr, attr, depth)

    def _passed(self, call: ast.Call, index: int, uses: _Uses, depth: int) -> None:
        """A value handed on as is: to ``len`` and the like (a sequence), or to another
        function of the module, whose body says how it is used."""
        callee = call.func.id if isinstance(call.func, ast.Name) else ""
        if callee in _ITERATING:
            uses.iterated = True
            return
        target = self.module.defs.get(callee)
        if target is None or target is self.fn or depth >= 1:
            return
        params = _params(target, method=False)
        if index >= len(params):
            return
        inner = _Reader(self.module, target).of_name(params[index], depth + 1)
        if inner is None:
            return
        if inner.kind == "mapping":
            uses.mapping = True
            for key, shape in inner.fields.items():
                uses.keys.setdefault(key, shape)
                uses.near[key] = min(uses.near.get(key, 10**6), inner.near.get(key, 10**6))
        elif inner.kind == "object":
            for key, shape in inner.fields.items():
                uses.attrs.setdefault(key, shape)
                uses.near[key] = min(uses.near.get(key, 10**6), inner.near.get(key, 10**6))
        elif inner.kind == "sequence":
            uses.sequence = True
            uses.item = uses.item or inner.item
        elif inner.kind == "text":
            uses.text = True


def read_shapes(source: str, qualname: str, lines: list[int]) -> dict[str, Shape]:
    """parameter -> its shape, for the function ``qualname`` of ``source`` (a class: its
    constructor); ``lines`` are the changed lines (how near each key's use is)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    fn = called_def(tree, qualname)
    if fn is None:
        return {}
    module = _Module(tree, lines)
    method = "." in qualname or fn.name == "__init__"
    reader = _Reader(module, fn)
    out: dict[str, Shape] = {}
    for name in _params(fn, method):
        shape = reader.of_name(name, 0)
        if shape is not None and shape.kind != "text":
            out[name] = shape
    return out


def _hint_tree(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, shapes: dict[str, Shape], consts: dict[str, str]
) -> ast.AST:
    """A copy of ``fn`` where ``p.attr`` of an object-shaped parameter, a local that
    holds ``p['k']`` of a parameter, and a key named by a module constant read as
    ``p['k']``: ``typehints`` then names the key or attribute a changed line tests
    (``v = p.get(KEY)``; ``isinstance(v, float)``)."""
    params = set(_params(fn, method=False))
    copy = deepcopy(fn)
    aliases: dict[str, str] = {}
    parents = _parents(copy)
    for node in ast.walk(copy):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value = node.value
        key = None
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            index = value.slice
            key = (
                index.value
                if isinstance(index, ast.Constant)
                else consts.get(index.id)
                if isinstance(index, ast.Name)
                else None
            )
            owner = value.value.id
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in _GETTERS
            and isinstance(value.func.value, ast.Name)
            and value.args
            and isinstance(value.args[0], ast.Constant | ast.Name)
        ):
            first = value.args[0]
            key = first.value if isinstance(first, ast.Constant) else consts.get(first.id)
            owner = value.func.value.id
        if isinstance(key, str) and owner in params:
            aliases.setdefault(node.targets[0].id, key)

    class _Keys(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in aliases and isinstance(node.ctx, ast.Load):
                return ast.copy_location(_subscript("_", aliases[node.id], node), node)
            if node.id in consts and isinstance(node.ctx, ast.Load):  # p.get(KEY)
                return ast.copy_location(ast.Constant(consts[node.id]), node)
            return node

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            self.generic_visit(node)
            value = node.value
            if (
                isinstance(value, ast.Name)
                and value.id in shapes
                and shapes[value.id].kind == "object"
                and node.attr in shapes[value.id].fields
                and not isinstance(parents.get(node), ast.Call)
            ):
                return ast.copy_location(_subscript(value.id, node.attr, node), node)
            return node

    out: ast.AST = _Keys().visit(copy)
    return out


def _subscript(owner: str, key: str, at: ast.AST) -> ast.Subscript:
    node = ast.Subscript(ast.Name(owner, ast.Load()), ast.Constant(key), ast.Load())
    for sub in ast.walk(node):
        ast.copy_location(sub, at)
    return node


def _function_lines(fn: ast.AST) -> list[int]:
    start = getattr(fn, "lineno", 0)
    return list(range(start, (getattr(fn, "end_lineno", start) or start) + 1))


# ---- values ---------------------------------------------------------------------------


def _materialize(value: object) -> object | None:
    """A value of ``kind_values`` as a Python object (a spelled one evaluated); None for
    NaN (it equals nothing, not even itself, so no test can assert it came back)."""
    source = getattr(value, "source", None)
    if isinstance(source, str):
        scope = {"decimal": decimal, "fractions": fractions, "pathlib": pathlib}
        value = eval(source, scope)  # our own spelling: float('inf'), Decimal('1.5')
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


_DEFAULTS = {"mapping": {}, "sequence": [], "text": "a"}


def _default(shape: Shape | None) -> object:
    if shape is None:
        return "a"
    if shape.kind == "object":
        return types.SimpleNamespace(**{k: _default(s) for k, s in shape.fields.items()})
    if shape.kind == "mapping":
        return {k: _default(s) for k, s in shape.fields.items()}
    return _DEFAULTS.get(shape.kind, "a")


@dataclass
class _Fill:
    """What a key's values come from."""

    changed: Hints  # the changed lines' hints, by key or attribute
    whole: Hints  # the whole function's
    pool: dict[str, list[object]]  # the project's tests' values, by key or name


def _plain(key: str, fill: _Fill, shape: Shape | None) -> object:
    """The value a key gets when it is not the one varied."""
    if key in fill.pool:
        return fill.pool[key][0]
    if shape is not None:
        return _default(shape)
    for kind in fill.whole.kinds.get(key, []):
        for v in kind_values(kind, None, tuple(fill.whole.numbers.get(key, ()))):
            value = _materialize(v)
            if value is not None:
                return value
    return "a"


def _varied(key: str, fill: _Fill, shape: Shape | None) -> list[object]:
    """Values for a key a changed line reads: the kinds the changed lines test first,
    then the project's own values for it, then None and a list (neither expected)."""
    numbers = tuple(fill.changed.numbers.get(key, ()))
    base = fill.pool.get(key, ["a"])[0]
    kinds = [*fill.changed.kinds.get(key, []), *fill.whole.kinds.get(key, [])]
    each = [
        ["a", ""] if kind == "str" and key not in fill.pool else kind_values(kind, base, numbers)
        for kind in dict.fromkeys(kinds)
    ]
    # the numbers a changed line compares it with and their neighbours, then every
    # kind's first value before any second one
    out: list[object] = [
        v for n in numbers for v in ((n, n - 1, n + 1) if type(n) is int else (n, n - 0.5))
    ]
    out += [vs[i] for i in range(2) for vs in each if i < len(vs)]
    out += fill.pool.get(key, [])[:2]
    if shape is not None:
        out.insert(0, _default(shape))
    seen: list[object] = []
    for v in out:
        value = _materialize(v)
        if value is not None and not _among(value, seen):
            seen.append(value)
    # None and a list close the list: the branch for a value no test expects
    first = seen[: MAX_VALUES - 2]
    unexpected: list[object] = [None, []]
    return first + [v for v in unexpected if not _among(v, first)]


def _among(value: object, seen: list[object]) -> bool:
    return any(type(value) is type(s) and value == s for s in seen)


def _instances(shape: Shape, fill: _Fill) -> list[object]:
    """Values of ``shape``: each field near a changed line varied (in a value holding
    only it and in one holding every field), nearest first; then every field plain."""
    if shape.kind == "sequence":
        items = _instances(shape.item, fill) if shape.item is not None else ["a"]
        return [[items[0]], [], *([i] for i in items[1:4])]
    keys = sorted(shape.fields, key=lambda k: shape.near.get(k, 10**6))
    full = {k: _plain(k, fill, shape.fields[k]) for k in shape.fields}
    out: list[dict[str, object]] = []
    near = [k for k in keys if k in fill.changed.kinds or shape.near.get(k, 10**6) <= 2]
    for key in near or keys[:1]:
        for value in _varied(key, fill, shape.fields[key]):
            out += [{key: value}, {**full, key: value}]
    out += [full, {}]
    unique: list[dict[str, object]] = []
    for d in out:
        if d not in unique:
            unique.append(d)
    if shape.kind == "object":
        return [types.SimpleNamespace(**d) for d in unique]
    return list(unique)


# ---- source ---------------------------------------------------------------------------


def render_value(value: object) -> tuple[str, tuple[str, ...]] | None:
    """Source that evaluates back to ``value`` (an equal value of the same type), and the
    import lines it needs; None for a value it cannot write."""
    if value is None or isinstance(value, bool | int | str | bytes):
        return repr(value), ()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return f"float({str(value)!r})", ()
        return repr(value), ()
    if isinstance(value, decimal.Decimal):
        return f"decimal.Decimal({str(value)!r})", ("import decimal",)
    if isinstance(value, fractions.Fraction):
        return f"fractions.Fraction({value.numerator}, {value.denominator})", ("import fractions",)
    if isinstance(value, pathlib.PurePath):
        return f"pathlib.{type(value).__name__}({str(value)!r})", ("import pathlib",)
    if isinstance(value, list | tuple):
        parts = [render_value(v) for v in value]
        if any(p is None for p in parts):
            return None
        texts = [p[0] for p in parts if p]
        imports = tuple(i for p in parts if p for i in p[1])
        if isinstance(value, tuple):
            return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")", imports
        return "[" + ", ".join(texts) + "]", imports
    if isinstance(value, dict):
        pairs = [(render_value(k), render_value(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        texts = [f"{k[0]}: {v[0]}" for k, v in pairs if k and v]
        imports = tuple(i for k, v in pairs if k and v for i in (*k[1], *v[1]))
        return "{" + ", ".join(texts) + "}", imports
    if type(value) is types.SimpleNamespace:
        fields = [(k, render_value(v)) for k, v in vars(value).items()]
        if any(v is None or not k.isidentifier() or keyword.iskeyword(k) for k, v in fields):
            return None
        texts = [f"{k}={v[0]}" for k, v in fields if v]
        imports = ("import types", *(i for _, v in fields if v for i in v[1]))
        return f"types.SimpleNamespace({', '.join(texts)})", imports
    return None


# ---- candidates -----------------------------------------------------------------------


def _test_values(tests: dict[str, str], names: set[str]) -> dict[str, list[object]]:
    """key or name -> the plain values the tests give it: in dict literals (``{'k': 3}``)
    and as keyword arguments (``f(k=3)``)."""
    found: dict[str, list[object]] = {}

    def add(name: str, node: ast.expr) -> None:
        try:
            value = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return
        known = found.setdefault(name, [])
        if value not in known and len(known) < 4 and render_value(value) is not None:
            known.append(value)

    # a file is parsed only when it writes one of the names as a key or a keyword
    spelled = re.compile(
        "|".join(rf"""['"]{re.escape(n)}['"]|\b{re.escape(n)}\s*=""" for n in sorted(names))
    )
    for _, tree in parsed_mentioning(tests, spelled) if names else ():
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value in names:
                        add(str(k.value), v)
            elif isinstance(node, ast.keyword) and node.arg in names:
                add(node.arg, node.value)
    return found


def _field_names(shape: Shape) -> set[str]:
    names = set(shape.fields)
    for inner in [*shape.fields.values(), shape.item]:
        if inner is not None:
            names |= _field_names(inner)
    return names


@dataclass
class Shaped:
    """The inputs made for one function, and the parameters they were shaped for."""

    candidates: list[Candidate]
    params: list[str]


def _already(candidates: list[Candidate], slot: tuple[int, str], shape: Shape) -> bool:
    """Whether the project's inputs already give the parameter a value of its shape
    (a dict holding one of its keys, a list) or anything that is not plain data where
    an object is read (then the tests build the real object)."""
    index, name = slot
    for c in candidates:
        sources = [s for k, s in c.kwargs if k == name]
        if index < len(c.args):
            sources.append(c.args[index])
        for source in sources:
            if source is None:
                continue
            try:
                value = ast.literal_eval(source)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                if shape.kind == "object":
                    return True
                continue
            if shape.kind == "mapping" and isinstance(value, dict):
                if set(value) & set(shape.fields):
                    return True
            if shape.kind == "sequence" and isinstance(value, list | tuple) and value:
                return True
            if ((shape.kind == "sequence" and shape.item is None) or not shape.sure) and isinstance(
                value, str | bytes
            ):
                return True  # ``len(text)``, ``'k' in text``: text is read like that too
    return False


def _given(c: Candidate, slot: tuple[int, str]) -> object:
    """The plain value ``c`` gives the parameter in ``slot``; None when it gives none."""
    index, name = slot
    sources = [s for k, s in c.kwargs if k == name]
    if index < len(c.args):
        sources.append(c.args[index])
    try:
        return ast.literal_eval(sources[0]) if sources and sources[0] else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _place(c: Candidate, slot: tuple[int, str], value: object) -> Candidate | None:
    """``c`` with ``value`` in the parameter's place (merged into the dict the project
    gives there: the keys its tests always pass stay); None when it cannot be written."""
    given = _given(c, slot)
    if isinstance(given, dict) and isinstance(value, dict):
        value = {**given, **value}
    rendered = render_value(value)
    if rendered is None:
        return None
    source, imports = rendered
    index, name = slot
    if any(k == name for k, _ in c.kwargs):
        kwargs = tuple((k, source if k == name else s) for k, s in c.kwargs)
        made = replace(c, kwargs=kwargs)
    elif index < len(c.args) or (index == len(c.args) and index >= 0):
        made = replace(c, args=(*c.args[:index], source, *c.args[index + 1 :]))
    else:
        made = replace(c, kwargs=(*c.kwargs, (name, source)))
    return replace(
        made,
        imports=tuple(dict.fromkeys((*c.imports, *imports))),
        origin=f"{c.origin or 'shaped'} (shaped from {name}) (typed)",
    )


def shaped_inputs(
    candidates: list[Candidate],
    source: str,
    qualname: str,
    lines: list[int],
    tests: dict[str, str],
) -> Shaped:
    """Inputs for ``qualname`` whose shaped parameters hold values of the shape its body
    reads, changed-key variations first, at most ``MAX_SHAPED``; none for a parameter
    the project's inputs already give a value of that shape."""
    shapes = read_shapes(source, qualname, lines)
    if not shapes:
        return Shaped([], [])
    tree = ast.parse(source)
    fn = called_def(tree, qualname)
    assert fn is not None  # read_shapes found it
    method = "." in qualname or fn.name == "__init__"
    params = _params(fn, method)
    positional = len(params) - len(fn.args.kwonlyargs)
    required = positional - len(fn.args.defaults)
    consts = _Module(tree, lines).consts
    hinted = _hint_tree(fn, shapes, consts)
    changed = tree_hints(hinted, lines)
    for other in ast.walk(tree):  # a helper it hands its parameters to
        if isinstance(other, ast.FunctionDef | ast.AsyncFunctionDef) and other is not fn:
            if any(n in lines for n in _function_lines(other)):
                changed.merge(tree_hints(_hint_tree(other, {}, consts), lines))
    names = set().union(*(_field_names(s) for s in shapes.values())) | set(params)
    fill = _Fill(
        changed,
        tree_hints(hinted, _function_lines(fn)),
        _test_values(tests, names),
    )
    # a method is called on the instances the tests build: with none, it is not shaped
    member = "." in qualname and not qualname.endswith(".__init__")
    bases = [c for c in candidates if (c.ctor is not None) == member][:BASES]
    if member and not bases:
        return Shaped([], [])
    per_param: list[list[Candidate]] = []
    used: list[str] = []
    for index, name in enumerate(params):
        shape = shapes.get(name)
        if shape is None:
            continue
        slot = (index if index < positional else 10**6, name)
        if _already(candidates, slot, shape):
            continue
        own = bases or [_synthesized(params[: max(required, 0)], fill, shapes)]
        made: list[Candidate] = []
        for value in _instances(shape, fill):
            made += [p for p in (_place(c, slot, value) for c in own) if p is not None]
        if made:
            per_param.append(list(dict.fromkeys(made)))
            used.append(name)
    out: list[Candidate] = []
    for row in range(max((len(p) for p in per_param), default=0)):
        out += [p[row] for p in per_param if row < len(p)]
    return Shaped([c for c in dict.fromkeys(out) if c not in candidates][:MAX_SHAPED], used)


def _synthesized(required: list[str], fill: _Fill, shapes: dict[str, Shape]) -> Candidate:
    """A call of its own when the project has no input for the function: each required
    parameter a plain value (the tests' value for that name, a shaped default)."""
    args: list[str | None] = []
    imports: list[str] = []
    for p in required:
        value = _default(shapes[p]) if p in shapes else fill.pool.get(p, [None])[0]
        rendered = render_value(value) or ("None", ())
        args.append(rendered[0])
        imports += rendered[1]
    return Candidate(tuple(args), (), tuple(imports), "shaped")
