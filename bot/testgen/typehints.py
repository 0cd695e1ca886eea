"""What the changed lines test about the types of the values they are given, read from
the source (never run): ``isinstance(value, (int, float))``, ``type(x) is bool``,
``hasattr(x, "__iter__")``, ``x is None``, ``n >= 10``, ``str(x)`` / ``int(x)`` /
``len(x)``, ``x.decode()``, ``options["width"]`` / ``kwargs.get("width")``, an ``except
OverflowError``, ``hash(x)`` / ``isinstance(x, Hashable)`` (a tuple holding a list is
"Hashable" and does not hash). Each becomes the kinds of value worth trying for a name a
caller can give (a parameter of the function holding the line, or a dict key); ``retype``
puts them into the project's own inputs."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from bot.testgen.ghostwriter import _module_name

__all__ = ["ANY", "ATTR", "Hints", "imported_paths", "tree_hints", "type_hints"]

_NUMBERS = (int, float)

# a type named in a condition -> the kinds of value tried for it
_TYPE_KINDS: dict[str, tuple[str, ...]] = {
    "int": ("int",),
    "float": ("float",),
    "complex": ("complex",),
    "bool": ("bool",),
    "str": ("str",),
    "bytes": ("bytes",),
    "bytearray": ("bytes",),
    "list": ("list",),
    "tuple": ("tuple",),
    "set": ("list",),
    "frozenset": ("list",),
    "dict": ("dict",),
    "NoneType": ("none",),
    "Number": ("int", "float"),
    "Integral": ("int",),
    "Real": ("float", "int"),
    "Complex": ("complex",),
    "Decimal": ("decimal", "float"),
    "Fraction": ("fraction", "float"),
    "PathLike": ("path",),
    "PurePath": ("path",),
    "Path": ("path",),
    "Mapping": ("dict",),
    "MutableMapping": ("dict",),
    "Sequence": ("list", "tuple"),
    "MutableSequence": ("list",),
    "Iterable": ("list",),
    "Collection": ("list",),
    "Sized": ("list",),
    "Container": ("list",),
    "Hashable": ("unhashable",),
}
# a call on the name -> the kinds that call suggests it may be given
_CALL_KINDS: dict[str, tuple[str, ...]] = {
    "str": ("int", "float", "none"),
    "repr": ("int", "none"),
    "int": ("numeric", "float"),
    "float": ("numeric", "int"),
    "complex": ("int",),
    "len": ("empty", "list", "none"),
    "abs": ("negative", "float"),
    "round": ("float",),
    "bool": ("empty", "none"),
    "bytes": ("int", "str"),
    "iter": ("list", "str"),
    "list": ("str", "tuple"),
    "tuple": ("list",),
    "sorted": ("list",),
    "dict": ("list",),
    "floor": ("float",),
    "ceil": ("float",),
    "isnan": ("nonfinite", "float"),
    "isinf": ("nonfinite", "float"),
    "isfinite": ("nonfinite", "float"),
    "fspath": ("path",),
    "hash": ("unhashable",),
}
_MATH_CALLS = {"floor", "ceil", "isnan", "isinf", "isfinite", "fspath"}  # math.floor(x)
# a method called on the name -> the kinds it may be
_METHOD_KINDS: dict[str, tuple[str, ...]] = {
    "encode": ("str", "bytes"),
    "decode": ("bytes", "str"),
    "items": ("dict", "list"),
    "keys": ("dict", "list"),
    "values": ("dict", "list"),
    "is_integer": ("float", "int"),
    "isdigit": ("str", "int"),
    "isnumeric": ("str", "int"),
}
_ATTR_KINDS: dict[str, tuple[str, ...]] = {  # hasattr(x, "...")
    "__iter__": ("list", "int"),
    "__len__": ("list", "int"),
    "__getitem__": ("dict", "list"),
    "keys": ("dict", "list"),
    "items": ("dict", "list"),
    "__int__": ("int", "float"),
    "__index__": ("int", "float"),
    "__float__": ("float", "int"),
    "decode": ("bytes",),
    "encode": ("str", "bytes"),
    "read": ("str",),
    "__fspath__": ("path", "str"),
}
# an exception a changed line catches -> values that raise it
_EXCEPT_KINDS: dict[str, tuple[str, ...]] = {
    "OverflowError": ("huge",),
    "ZeroDivisionError": ("zero",),
    "TypeError": ("none", "int", "list"),
    "ValueError": ("empty", "negative"),
    "IndexError": ("empty",),
    "KeyError": ("empty",),
    "UnicodeDecodeError": ("bytes",),
    "UnicodeEncodeError": ("bytes",),
    "AttributeError": ("none", "int"),
}
ANY = ""  # kinds not tied to a name
_KEY = "key:"  # a name read as a key of a dict (``kwargs["x"]``), not a variable
ATTR = "self."  # an attribute of the instance (``self.value``): set from the constructor


@dataclass
class Hints:
    """What the changed lines test, by name: the kinds of value to try for it (in the
    order first seen), and the numbers it is compared with."""

    kinds: dict[str, list[str]] = field(default_factory=dict)
    numbers: dict[str, list[int | float]] = field(default_factory=dict)
    tested: set[str] = field(default_factory=set)  # a type check names it (isinstance)

    def add(self, name: str, *kinds: str) -> None:
        known = self.kinds.setdefault(name, [])
        for k in kinds:
            if k not in known:
                known.append(k)

    def number(self, name: str, value: int | float) -> None:
        known = self.numbers.setdefault(name, [])
        if value not in known and abs(value) < 10**9 and len(known) < 4:
            known.append(value)
        self.add(name, *(("float",) if isinstance(value, float) else ("int", "float")))

    def merge(self, other: Hints) -> None:
        for name, kinds in other.kinds.items():
            self.add(name, *kinds)
        for name, values in other.numbers.items():
            for v in values:
                self.number(name, v)

    def __bool__(self) -> bool:
        return bool(self.kinds)


def _subject(node: ast.expr) -> str | None:
    """The name a condition is about: ``x``, or the key of ``kwargs["x"]`` /
    ``options.get("x")`` (a value passed on through a dict), or ``self.x`` (what the
    constructor may have been given)."""
    if isinstance(node, ast.Name):
        return node.id
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return ATTR + node.attr
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return _KEY + node.slice.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return _KEY + node.args[0].value
    return None


def _type_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for e in node.elts for n in _type_names(e)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value is None
    ):
        return ["NoneType"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # int | float
        return _type_names(node.left) + _type_names(node.right)
    if isinstance(node, ast.Constant) and node.value is None:
        return ["NoneType"]
    return []


def _kinds_of_types(node: ast.expr) -> list[str]:
    return [k for t in _type_names(node) for k in _TYPE_KINDS.get(t, ())]


def _number(node: ast.expr) -> int | float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, _NUMBERS)
        and not isinstance(node.value, bool)
    ):
        return node.value
    return None


def _call_name(node: ast.Call) -> str:
    func = node.func
    return (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )


def _read_call(node: ast.Call, hints: Hints) -> None:
    name = _call_name(node)
    if name == "isinstance" and len(node.args) == 2:
        subject = _subject(node.args[0])
        if subject:
            hints.add(subject, *_kinds_of_types(node.args[1]))
            hints.tested.add(subject)
    elif name == "hasattr" and len(node.args) == 2:
        subject, attr = _subject(node.args[0]), node.args[1]
        if subject and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            hints.add(subject, *_ATTR_KINDS.get(attr.value, ("int", "none")))
            hints.tested.add(subject)
    elif (
        name in _CALL_KINDS
        and node.args
        and (isinstance(node.func, ast.Name) or name in _MATH_CALLS)
    ):
        subject = _subject(node.args[0])
        if subject:
            hints.add(subject, *_CALL_KINDS[name])
    if isinstance(node.func, ast.Attribute) and name in _METHOD_KINDS:
        subject = _subject(node.func.value)
        if subject:
            hints.add(subject, *_METHOD_KINDS[name])


def _infinite(node: ast.expr) -> bool:
    """``math.inf``, ``float("inf")``, ``-inf``."""
    if isinstance(node, ast.UnaryOp):
        return _infinite(node.operand)
    if isinstance(node, ast.Attribute | ast.Name):
        return (node.attr if isinstance(node, ast.Attribute) else node.id) in ("inf", "nan")
    return (
        isinstance(node, ast.Call)
        and _call_name(node) == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).strip("+-").lower() in ("inf", "infinity", "nan")
    )


def _read_compare(node: ast.Compare, hints: Hints) -> None:
    sides = [node.left, *node.comparators]
    for i, op in enumerate(node.ops):
        left, right = sides[i], sides[i + 1]
        for a, b in ((left, right), (right, left)):
            # type(x) is int / type(x) in (int, float)
            if (
                isinstance(a, ast.Call)
                and isinstance(a.func, ast.Name)
                and a.func.id == "type"
                and len(a.args) == 1
            ):
                subject = _subject(a.args[0])
                if subject:
                    hints.add(subject, *_kinds_of_types(b))
                    hints.tested.add(subject)
                continue
            subject = _subject(a)
            if not subject:
                continue
            if isinstance(b, ast.Constant) and b.value is None:
                hints.add(subject, "none")
            elif isinstance(b, ast.Constant) and isinstance(b.value, bool):
                hints.add(subject, "bool")
            elif _infinite(b):
                hints.add(subject, "nonfinite", "float")
            elif (isinstance(b, ast.Constant) and b.value in ("", b"")) or _empty(b):
                hints.add(subject, "empty")
            elif isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE | ast.Eq | ast.NotEq):
                value = _number(b)
                if value is not None:
                    hints.number(subject, value)
        # len(x) == 0 / len(x) > 3: x empty, or of another length
        for a in (left, right):
            if isinstance(a, ast.Call) and _call_name(a) == "len" and a.args:
                subject = _subject(a.args[0])
                if subject:
                    hints.add(subject, "empty")


def _empty(node: ast.expr) -> bool:
    """``[]``, ``()``, ``{}``, ``set()``: an empty container written out."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return (
        isinstance(node, ast.Call) and _call_name(node) in ("set", "list", "dict") and not node.args
    )


def _read_truth(node: ast.expr, hints: Hints) -> None:
    """``if rows:``, ``while not queue``, ``x or default``: the name tested for truth,
    worth trying empty (``[]``, ``""``, ``0``) and None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _read_truth(node.operand, hints)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _read_truth(value, hints)
    else:
        subject = _subject(node)
        if subject:
            hints.add(subject, "empty", "none")


def _read_binop(node: ast.BinOp, hints: Hints) -> None:
    """``x + 1``, ``x * 2.5``: arithmetic with a number. ``"%s" % x`` is not."""
    if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        return
    for a, b in ((node.left, node.right), (node.right, node.left)):
        subject, value = _subject(a), _number(b)
        if subject and value is not None:
            hints.number(subject, value)


def _touches(node: ast.AST, lines: set[int]) -> bool:
    start = getattr(node, "lineno", None)
    end = getattr(node, "end_lineno", start)
    return start is not None and any(n in lines for n in range(start, (end or start) + 1))


class _Reader(ast.NodeVisitor):
    """Collects the hints of the nodes that touch a changed line, about names a caller
    can give: the parameters of the enclosing functions, and dict keys."""

    def __init__(self, lines: set[int]) -> None:
        self.lines = lines
        self.found: list[tuple[tuple[int, int], Hints, frozenset[str]]] = []
        self.params: frozenset[str] = frozenset()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        outer = self.params
        a = node.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]
        self.params = outer | {p.arg for p in every}
        self.generic_visit(node)
        self.params = outer

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _read(self, node: ast.AST, read: object) -> None:
        if _touches(node, self.lines):
            hints = Hints()
            read(node, hints)  # type: ignore[operator]
            if hints:
                where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
                self.found.append((where, hints, self.params))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._read(node, _read_call)

    def visit_Compare(self, node: ast.Compare) -> None:
        self._read(node, _read_compare)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._read(node, _read_binop)

    def _truth(self, node: ast.If | ast.While | ast.IfExp) -> None:
        if _touches(node.test, self.lines):
            hints = Hints()
            _read_truth(node.test, hints)
            if hints:
                where = (node.test.lineno, node.test.col_offset)
                self.found.append((where, hints, self.params))
        self.generic_visit(node)

    visit_If = visit_While = visit_IfExp = _truth

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None and node.lineno in self.lines:
            hints = Hints()
            for name in _type_names(node.type):
                hints.add(ANY, *_EXCEPT_KINDS.get(name, ()))
            if hints.kinds.get(ANY):
                self.found.append(((node.lineno, node.col_offset), hints, self.params))
        self.generic_visit(node)


def type_hints(source: str, lines: list[int]) -> Hints:
    """What the changed lines of ``source`` test about the types of names: every call,
    comparison and arithmetic whose own span holds a changed line (a condition written
    over several lines counts), and the exceptions a changed ``except`` catches; in the
    order they are written. A local variable is no name a caller gives: only a type check
    of one (``isinstance(v, bool)``) counts, for no name in particular."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Hints()
    return tree_hints(tree, lines)


def tree_hints(tree: ast.AST, lines: list[int]) -> Hints:
    """``type_hints`` of a parsed module (or a function's node)."""
    hints = Hints()
    reader = _Reader(set(lines))
    reader.visit(tree)
    for _, found, params in sorted(reader.found, key=lambda f: f[0]):
        for name, kinds in found.kinds.items():
            if name == ANY or name in params or name.startswith((_KEY, ATTR)):
                plain = name.removeprefix(_KEY)
                hints.add(plain, *kinds)
                for v in found.numbers.get(name, []):
                    hints.number(plain, v)
            elif name in found.tested:
                # a local the change checks the type of (``for v in value:``,
                # ``isinstance(v, bool)``): values of that type flow in from somewhere
                hints.add(ANY, *kinds)
    return hints


def imported_paths(source: str, path: str, changed: list[str]) -> list[str]:
    """Of the ``changed`` module paths, those ``source`` (the module at ``path``)
    imports: what its functions are given may flow into their changed code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    package = _module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            stem = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            names.add(stem)
            names |= {f"{stem}.{a.name}" for a in node.names}
    return [p for p in changed if p != path and _module_name(p) in names]
