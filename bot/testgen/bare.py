"""Receivers built without running ``__init__``, for a changed method whose class's
constructor cannot run in the probe (it opens a socket or a file, starts a process).

The tests' own scenarios (``client = Client("example.org", sep=";")`` then
``client.split_header("a; b")``) are kept, but the instance is made with
``Client.__new__(Client)`` and given exactly the attributes the method reads: its
``self.x`` loads, and those of the methods and properties of the class it reaches through
``self``. A value is set only where ``__init__`` gives it plainly: a literal, a parameter
(the value the test passed, else its default), or ``param or <literal>``. Everything else
stays unset, and the side-runner drops an input whose call reads an unset attribute (it is
not compared: see ``probe_objects.call_member``). A method that reads its instance in ways
that cannot be listed (``getattr(self, name)``, ``hasattr``, ``vars(self)``,
``self.__dict__``) or that catches ``AttributeError`` (or everything) around such reads is
not built bare at all: its outcome could depend on an attribute that is not there. Read,
never run."""

from __future__ import annotations

import ast
import re
import typing
from collections.abc import Callable
from dataclasses import replace

from bot.testgen.branch_keys import branch_keys, swapped
from bot.testgen.inputs import Candidate, parsed_mentioning

__all__ = ["BARE", "Bare", "bare_receivers", "init_effect", "without_init"]

BARE = "__new__"  # the factory of a receiver built by ``Cls.__new__(Cls)``, no ``__init__``
MAX_BARE = 24
_DYNAMIC = {"getattr", "hasattr", "vars", "setattr", "delattr"}
_BROAD = {"AttributeError", "Exception", "BaseException"}


def _class(tree: ast.Module, owner: str) -> ast.ClassDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            return node
    return None


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _self_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = [*fn.args.posonlyargs, *fn.args.args]
    return args[0].arg if args else ""


def _place(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _broad_except(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.ExceptHandler):
            if node.type is None:
                return True
            names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(isinstance(n, ast.Name) and n.id in _BROAD for n in names):
                return True
    return False


def attributes_read(source: str, owner: str, member: str) -> tuple[list[str], str]:
    """(the instance attributes ``owner.member`` reads, in order, through ``self`` and the
    methods and properties of its class it reaches that way; why it cannot be built
    bare, or "")."""
    try:
        cls = _class(ast.parse(source), owner)
    except SyntaxError:
        return [], "its source does not parse"
    if cls is None:
        return [], "its class is not defined in its module"
    methods = _methods(cls)
    if member not in methods:
        return [], "it is not a method of its class"
    read: list[str] = []
    todo, done = [member], set()
    while todo:
        name = todo.pop(0)
        if name in done or name not in methods:
            continue
        done.add(name)
        fn = methods[name]
        me = _self_name(fn)
        for node in sorted(ast.walk(fn), key=_place):  # in the order the source reads them
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in _DYNAMIC and any(
                    isinstance(a, ast.Name) and a.id == me for a in node.args
                ):
                    return [], f"{name} reads its instance through {node.func.id}()"
            if not (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == me
            ):
                continue
            if node.attr in ("__dict__", "__class__") or node.attr.startswith("__"):
                if node.attr == "__dict__":
                    return [], f"{name} reads its instance's __dict__"
                continue
            if node.attr in methods:
                todo.append(node.attr)  # a method called, or a property read
            elif node.attr not in read:
                read.append(node.attr)
        if read and _broad_except(fn):
            return [], f"{name} catches AttributeError around what it reads"
    return read, ""


def _class_names(cls: ast.ClassDef) -> set[str]:
    """The names its class body binds outside its methods (``sep = ","``)."""
    return {
        t.id
        for n in cls.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }


def _init_values(
    init: ast.FunctionDef | ast.AsyncFunctionDef | None,
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> dict[str, ast.expr | None]:
    """attribute -> the expression ``__init__`` assigns it once, at its top level and after
    any base class's ``__init__`` it calls (None: it is assigned otherwise: twice, in a
    branch, by ``+=``, in a method ``__init__`` calls through ``self``, or before a base
    class's ``__init__`` that may set it again)."""
    if init is None:
        return {}
    me = _self_name(init)
    seen: dict[str, int] = {}
    todo, done = ["__init__"], set()
    while todo:  # __init__ and the methods of its class it calls through self
        name = todo.pop(0)
        if name in done or name not in methods:
            continue
        done.add(name)
        this = _self_name(methods[name])
        for node in ast.walk(methods[name]):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == this and node.attr in methods:
                    todo.append(node.attr)
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == this
                ):
                    seen[t.attr] = seen.get(t.attr, 0) + (1 if name == "__init__" else 2)
    found: dict[str, ast.expr | None] = {}
    for stmt in init.body:
        if any(
            isinstance(n, ast.Attribute) and n.attr == "__init__" for n in ast.walk(stmt)
        ):  # a base class's __init__: what came before it may be set again
            found.clear()
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                if seen.get(t.attr) == 1:
                    found[t.attr] = stmt.value
    return {attr: found.get(attr) for attr in seen}


def _bound(
    init: ast.FunctionDef | ast.AsyncFunctionDef | None,
    ctor: tuple[tuple[str | None, ...], tuple[tuple[str, str | None], ...]],
) -> dict[str, str | None] | None:
    """Parameter -> the source of its value in the test's constructor call (its default
    when the test left it out; None when it is not plain); None when they do not fit."""
    if init is None:
        return {} if not ctor[0] and not ctor[1] else None
    a = init.args
    params = [p.arg for p in [*a.posonlyargs, *a.args]][1:]
    defaults = dict(zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d})
    out: dict[str, str | None] = {k: ast.unparse(v) for k, v in defaults.items()}
    if len(ctor[0]) > len(params):
        return None
    out.update(zip(params, ctor[0], strict=False))
    for key, value in ctor[1]:
        if key not in params and key not in {p.arg for p in a.kwonlyargs}:
            return None
        out[key] = value
    return out


def _no_arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the method is called with nothing but its instance."""
    a = fn.args
    positional = len(a.posonlyargs) + len(a.args) - len(a.defaults)
    return positional <= 1 and all(d is not None for d in a.kw_defaults)


def _literal(source: str | None) -> str | None:
    if source is None:
        return None
    try:
        ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return source


def _value(expr: ast.expr, params: dict[str, str | None]) -> str | None:
    """The source of what ``expr`` gives when it is plain: a literal, a parameter, or
    ``a or b`` of those (the first that is truthy)."""
    if isinstance(expr, ast.Name) and expr.id in params:
        return _literal(params[expr.id])
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        for part in expr.values:
            source = _value(part, params)
            if source is None:
                return None
            if ast.literal_eval(source) or part is expr.values[-1]:
                return source
        return None
    if any(isinstance(n, ast.Name) for n in ast.walk(expr)):
        return None  # a value of another name: not known here
    return _literal(ast.unparse(expr))


def init_effect(source: str, owner: str, effect_of: Callable[[str, str], str | None]) -> str:
    """What the class's ``__init__`` does that the probe cannot run (``effect_of``: the
    differential's static reading of one function), there or in a method of the class it
    calls through ``self``; "" when nothing."""
    try:
        cls = _class(ast.parse(source), owner.rsplit(".", 1)[-1])
    except SyntaxError:
        return ""
    methods = _methods(cls) if cls is not None else {}
    todo, done = ["__init__"], set()
    while todo:
        name = todo.pop(0)
        if name in done or name not in methods:
            continue
        done.add(name)
        effect = effect_of(source, f"{owner}.{name}")
        if effect:
            return effect
        me = _self_name(methods[name])
        todo += [
            n.attr
            for n in ast.walk(methods[name])
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me
        ]
    return ""


def bare_receivers(
    source: str,
    qualname: str,
    candidates: list[Candidate],
    built: list[Candidate],
    effect: str,
) -> tuple[list[Candidate], str]:
    """The candidates of ``qualname`` (``Cls.method``) for a class whose ``__init__``
    cannot run: each receiver the tests build with the class (their scenarios; and each
    instance they build, ``built``, with each call of the method the tests make on
    anything) made bare, ``Cls.__new__(Cls)`` and the attributes the method reads that
    ``__init__`` sets plainly from those arguments. Calls with no receiver are kept; no
    candidate builds the class for real. And a note."""
    loose = [c for c in candidates if c.ctor is None]
    owner, member = qualname.rsplit(".", 1)
    short = owner.rsplit(".", 1)[-1]
    read, why = attributes_read(source, short, member)
    if why:
        return loose, f"skipped its receivers: __init__ {effect}, and {why}"
    cls = _class(ast.parse(source), short)
    assert cls is not None
    methods = _methods(cls)
    init = methods.get("__init__")
    values = _init_values(init, methods)
    class_names = _class_names(cls)
    shadowed = sorted(a for a in class_names & set(read) if a in values)
    if any(values[a] is None for a in shadowed):  # the class's own value would stand in
        return loose, (
            f"skipped its receivers: __init__ {effect}, and {member} reads "
            f"{', '.join(shadowed)}, which __init__ sets in a way not read here"
        )
    why = effect.split(" (", 1)[0]  # "uses the network", without the call that does
    comment = f"# built without __init__ (it {why}): only what {member} reads is set"
    out: list[Candidate] = []
    unset: set[str] = set()
    made = [c for c in built if c.ctor is None and not c.steps]  # ``Cls(...)`` in the tests
    # the instances the tests build, with the calls of the method they make on anything
    crossed = [
        replace(call, ctor=(m.args, m.kwargs), imports=m.imports or call.imports)
        for m in made[:6]
        for call in (loose or ([Candidate(())] if _no_arguments(methods[member]) else []))[:12]
    ]
    for c in [*candidates, *crossed]:
        if c.ctor is None or c.factory or c.steps:
            continue  # steps would read more of the instance than the method does
        params = _bound(init, c.ctor)
        if params is None:
            continue
        steps = [comment]
        for attr in read:
            expr = values.get(attr)
            value = _value(expr, params) if expr is not None else None
            if value is not None:
                steps.append(f"_nova_obj.{attr} = {value}")
            elif attr in values or attr not in class_names:
                unset.add(attr)
        out.append(replace(c, ctor=((), ()), factory=BARE, steps=tuple(steps)))
    out = list(dict.fromkeys(out))[:MAX_BARE]
    note = f"{len(out)} inputs on receivers built without __init__ (it {effect})"
    if unset:
        listed = ", ".join(sorted(unset)[:8]) + (", ..." if len(unset) > 8 else "")
        note += f"; left unset: {listed} (no plain value in __init__; an input whose call "
        note += "reads one that is missing is dropped)"
    return loose + out, note


class Bare(typing.NamedTuple):
    """What a receiver built bare is made from: the member's module source and qualname,
    the project's tests (path -> source), the changed lines of the member, and the
    differential's static reading of what one function does (``static_side_effect``)."""

    source: str
    qualname: str
    tests: dict[str, str]
    lines: list[int]
    effect_of: Callable[[str, str], str | None]


def without_init(
    bare: Bare, candidates: list[Candidate], found: dict[str, list[Candidate]]
) -> tuple[list[Candidate], str]:
    """The candidates of a member whose class's ``__init__`` cannot run in the probe,
    on receivers built bare (``found``: the tests' calls by name, the class's among them),
    and a note; the candidates as they are, and "", for any other name."""
    source, qualname = bare.source, bare.qualname
    if "." not in qualname or qualname.endswith(".__init__"):
        return candidates, ""
    owner = qualname.rsplit(".", 1)[0]
    effect = init_effect(source, owner, bare.effect_of)
    if not effect or _static(source, qualname):
        return candidates, ""
    built = found.get(owner.rsplit(".", 1)[-1], [])
    if not any(c.ctor is None for c in candidates) and _one_argument(source, qualname):
        # the tests never call it with a value: their texts, towards the changed branch
        candidates = [*candidates, *_texts(bare, owner.rsplit(".", 1)[-1])]
    return bare_receivers(source, qualname, candidates, built, effect)


MAX_TEXTS = 24


def _static(source: str, qualname: str) -> bool:
    """A static or class method: called with no instance."""
    owner, member = qualname.rsplit(".", 1)
    cls = _class(ast.parse(source), owner.rsplit(".", 1)[-1])
    fn = _methods(cls).get(member) if cls is not None else None
    names = {ast.unparse(d) for d in fn.decorator_list} if fn is not None else set()
    return bool(names & {"staticmethod", "classmethod"})


def _one_argument(source: str, qualname: str) -> bool:
    owner, member = qualname.rsplit(".", 1)
    cls = _class(ast.parse(source), owner.rsplit(".", 1)[-1])
    fn = _methods(cls).get(member) if cls is not None else None
    if fn is None:
        return False
    a = fn.args
    return len(a.posonlyargs) + len(a.args) - len(a.defaults) == 2 and not fn.decorator_list


def _texts(bare: Bare, owner: str) -> list[Candidate]:
    """One-line string and bytes literals of the test files that name the class, each
    also with the key of another branch of a dispatch replaced by the changed branch's
    (``branch_keys``): those first."""
    keys = branch_keys(bare.source, bare.qualname, bare.lines)
    plain: list[Candidate] = []
    steered: list[Candidate] = []
    for path, tree in parsed_mentioning(bare.tests, re.compile(rf"\b{re.escape(owner)}\b")):
        for node in ast.walk(tree):
            value = node.value if isinstance(node, ast.Constant) else None
            if not isinstance(value, str | bytes) or not value or len(value) > 60:
                continue
            if len(value.splitlines()) > 1:
                continue
            plain.append(Candidate((repr(value),), (), (), f"{path} (literal)"))
            steered += [
                Candidate((repr(v),), (), (), f"{path} (literal, changed branch)")
                for v in swapped(value, keys)
            ]
    return list(dict.fromkeys(steered + plain))[:MAX_TEXTS]
