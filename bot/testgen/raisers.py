"""Callables that raise what a changed ``except`` names.

A change to an ``except X`` clause (added, removed, widened, narrowed), a ``raise X`` or
an ``isinstance(e, X)`` check of an exception shows only when X happens where the clause
stands. When the function takes a callable (a predicate, a callback, a key function) the
exception most often comes out of it, and no test hands it one that raises: ``wait(pred)``
of a polling library, now catching the ``StopIteration`` a predicate raises, behaves the
same as before on every predicate the tests write. Such a parameter gets a stand-in that
raises X, and one raising a sibling type of X (another subclass of its base: what a
clause that narrows or widens treats differently) and its base:

    def _raises_stop_iteration(*args, **kwargs):
        raise StopIteration

A parameter takes a callable when the tests pass one there (a lambda), its hint says
``Callable``, its name says so (``predicate``, ``func``, ``callback``, ``on_*``,
``*_hook``, ...) or the function's body calls it; a function that hands ``*args`` on to
another of its module (``def wait(*args, **kwargs): ... iterwait(*args, **kwargs)``)
takes what that one takes. Only builtin exception types that build without arguments are
raised. The written test holds the helper (``with_helpers``); the side-runner gets it as
a line of the input's imports and shows the argument as written. Read, never run."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import replace

from bot.testgen.amplify_refs import Input
from bot.testgen.extremes import caught_types
from bot.testgen.inputs import Candidate
from bot.testgen.retype import called_def

__all__ = [
    "MAX_RAISERS",
    "PREFIX",
    "callable_params",
    "callable_args",
    "checked_types",
    "expanded",
    "helper_source",
    "raised_types",
    "raiser_inputs",
    "raiser_variants",
    "with_helpers",
]

MAX_RAISERS = 16  # inputs made this way, per function
MAX_TYPES = 4  # exception types raised, per function
MAX_FROM = 4  # the project's inputs a raiser is put into
PREFIX = "_raises_"  # a raiser helper's name: ``_raises_stop_iteration``

# (not ``key``, ``check`` or ``condition``: as often a dict key or a flag as a callable)
_CALLABLE_NAME = re.compile(
    r"(pred(icate)?|func(tion)?|fn|f|callback|callable|cb|handler|hook|factory|keyfunc|"
    r"on_\w+|\w+_(pred(icate)?|func(tion)?|fn|callback|cb|handler|hook|factory|getter))$"
)


def _exception(name: str) -> type[Exception] | None:
    """The builtin exception class ``name``, when it builds without arguments."""
    cls = getattr(builtins, name, None)
    if not isinstance(cls, type) or not issubclass(cls, Exception):
        return None
    try:
        cls()
    except Exception:  # UnicodeDecodeError and the like need their arguments
        return None
    return cls


def checked_types(source: str, lines: list[int]) -> list[str]:
    """The exception types an ``isinstance(e, X)`` on the changed lines names."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    changed = set(lines)
    out: list[str] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", "") == "isinstance"
            and len(node.args) == 2
            and changed.intersection(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        ):
            continue
        kinds = node.args[1]
        for part in kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]:
            name = getattr(part, "id", "")
            if _exception(name) is not None:
                out.append(name)
    return out


def raised_types(source: str, lines: list[int]) -> list[str]:
    """The builtin exception types to raise: each one the changed lines catch, raise or
    check for (the last of a clause first, as ``towards_exceptions`` orders them), then a
    sibling of it (another type of its base) and its base, where a clause that narrows
    or widens tells them apart."""
    return expanded([*caught_types(source, lines)[::-1], *checked_types(source, lines)])


def expanded(named: list[str]) -> list[str]:
    """The builtin exception types of ``named`` that build without arguments, then a
    sibling and the base of each."""
    found = [c for c in (_exception(n) for n in dict.fromkeys(named)) if c is not None]
    out = [c.__name__ for c in found]
    for cls in found:
        base = cls.__mro__[1]
        # a plain Exception's children are many: the usual ones
        common = [RuntimeError, ValueError] if base is Exception else base.__subclasses__()
        siblings = [
            s.__name__
            for s in common
            if s.__module__ == "builtins"
            and s is not cls
            and not issubclass(s, cls)
            and _exception(s.__name__) is not None
        ]
        out += siblings[:1]
        if base is not Exception and _exception(base.__name__) is not None:
            out.append(base.__name__)
    return list(dict.fromkeys(out))[:MAX_TYPES]


def helper_name(exc: str) -> str:
    return PREFIX + re.sub(r"(?<!^)(?=[A-Z])", "_", exc).lower()


def helper_source(exc: str) -> str:
    """The written test's helper that raises ``exc``, whatever it is called with."""
    return f"def {helper_name(exc)}(*args, **kwargs):\n    raise {exc}\n"


def _one_line(exc: str) -> str:
    """The helper as one line: what the side-runner executes among an input's imports."""
    return f"def {helper_name(exc)}(*args, **kwargs): raise {exc}"


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
        for n in ast.walk(node)
    )


def _callable_hint(annotation: ast.expr | None) -> bool:
    return annotation is not None and "callable" in ast.unparse(annotation).lower()


def callable_params(tree: ast.Module, qualname: str, depth: int = 0) -> list[tuple[int, str]]:
    """The parameters of ``qualname`` that take a callable, as (position, name): the
    position among the arguments a caller gives (``self`` left out), -1 for a
    keyword-only one."""
    node = called_def(tree, qualname)
    if node is None:
        return []
    a = node.args
    ordered = [*a.posonlyargs, *a.args]
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in node.decorator_list}
    if ("." in qualname or node.name == "__init__") and "staticmethod" not in decorators:
        ordered = ordered[1:]  # self, cls
    out: list[tuple[int, str]] = []
    for i, p in enumerate([*ordered, *a.kwonlyargs]):
        if _callable_hint(p.annotation) or _CALLABLE_NAME.match(p.arg) or _calls(node, p.arg):
            out.append((i if i < len(ordered) else -1, p.arg))
    if out or a.vararg is None or depth >= 2:
        return out
    # ``*args`` handed on to another function of the module: what that one takes
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        starred = [
            i
            for i, arg in enumerate(call.args)
            if isinstance(arg, ast.Starred) and getattr(arg.value, "id", "") == a.vararg.arg
        ]
        if not starred:
            continue
        offset = starred[0] - len(ordered)  # its arguments before ours
        for pos, name in callable_params(tree, call.func.id, depth + 1):
            if pos >= 0 and pos - offset >= len(ordered):
                out.append((pos - offset, name))
        if out:
            return out
    return out


def _from_tests(candidates: list[Candidate]) -> list[int]:
    """Positions where the tests pass a lambda."""
    return sorted(
        {
            i
            for c in candidates
            for i, a in enumerate(c.args)
            if a is not None and a.startswith("lambda")
        }
    )


def _put(c: Candidate, pos: int, name: str, raiser: str) -> Candidate | None:
    """``c`` with ``raiser`` for the parameter: in its place, or as a keyword; the
    tests' arguments that are not plain data are left out (they keep their defaults),
    and a candidate that needs one before the raiser is no input here."""
    args = list(c.args)
    kwargs = [(k, v) for k, v in c.kwargs if k != name]
    if pos >= 0 and pos < len(args):
        args[pos] = raiser
    elif pos >= 0 and pos == len(args):
        args.append(raiser)
    elif name:
        kwargs.append((name, raiser))
    else:  # a place known only from the tests' lambdas
        return None
    while args and args[-1] is None:
        args.pop()
    if None in args:
        return None
    kwargs = [(k, v) for k, v in kwargs if v is not None]
    return replace(c, args=tuple(args), kwargs=tuple(kwargs))


def raiser_inputs(
    candidates: list[Candidate], source: str, qualname: str, lines: list[int]
) -> list[Candidate]:
    """The tests' calls of ``qualname`` (the first few) with a stand-in that raises
    each exception the changed lines name in place of each callable it takes; for a
    function, also the stand-in alone."""
    kinds = raised_types(source, lines)
    if not kinds:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    params = callable_params(tree, qualname)
    taken = {p for p, _n in params}
    params += [(i, "") for i in _from_tests(candidates) if i not in taken]
    if not params:
        return []
    member = any(c.ctor is not None for c in candidates)
    bases = [c for c in candidates if c.origin != "drawn"][:MAX_FROM]
    if not member:
        bases.append(Candidate((), (), (), "raiser alone"))
    out: list[Candidate] = []
    for exc in kinds:
        line = _one_line(exc)
        for base in bases:
            for pos, name in params:
                made = _put(base, pos, name, helper_name(exc))
                if made is not None:
                    origin = f"{base.origin} (raises {exc})"
                    out.append(replace(made, imports=(*made.imports, line), origin=origin))
    seen = set(candidates)
    return [c for c in dict.fromkeys(out) if c not in seen][:MAX_RAISERS]


def with_helpers(text: str) -> str:
    """A written test module with the raiser helpers its tests call, after its imports."""
    used = sorted(set(re.findall(rf"\b{PREFIX}(\w+)\b", text)))
    if not used:
        return text
    tree = ast.parse(text)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    kinds = {helper_name(k): k for k in _named_in(text)}
    helpers = [
        helper_source(kinds[PREFIX + u])
        for u in used
        if PREFIX + u in kinds and PREFIX + u not in defined
    ]
    if not helpers:
        return text
    top: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    if tree.body and isinstance(tree.body[0], ast.Expr):  # the docstring
        top.append(tree.body[0])
    at = max((n.end_lineno or n.lineno for n in top), default=0)
    rows = text.split("\n")
    block = ["", "", *"\n\n\n".join(helpers).rstrip("\n").split("\n")]
    return "\n".join([*rows[:at], *block, *rows[at:]])


def _named_in(text: str) -> list[str]:
    """Builtin exception names whose helper name ``text`` mentions."""
    return [
        name for name in dir(builtins) if helper_name(name) in text and _exception(name) is not None
    ]


# -- amplification: a copy of the project's test with a raiser for its callable -------

_NOT_CALLS = {"raises", "warns", "approx", "subTest", "skip", "fail", "xfail", "print"}


def _defined(body: list[ast.stmt]) -> set[str]:
    """Names bound to a function or a lambda in ``body``."""
    out: set[str] = set()
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def callable_args(tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The arguments of the test's calls that are callables: a lambda, a function the
    test or its module defines, a name or attribute named like one
    (``timeline.predicate``), the value of a keyword named like one (``callback=``)."""
    functions = _defined(tree.body) | _defined(func.body)
    out: list[ast.expr] = []
    for call in ast.walk(func):
        if not isinstance(call, ast.Call):
            continue
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        callee = callee or getattr(call.func, "id", "")
        if callee in _NOT_CALLS or callee.startswith("assert"):
            continue
        given = [(a, "") for a in call.args] + [(k.value, k.arg or "") for k in call.keywords]
        for arg, keyword in given:
            name = arg.attr if isinstance(arg, ast.Attribute) else getattr(arg, "id", "")
            if (
                isinstance(arg, ast.Lambda)
                or (isinstance(arg, ast.Name) and arg.id in functions)
                or (isinstance(arg, ast.Name | ast.Attribute) and _CALLABLE_NAME.match(name))
                or (keyword and _CALLABLE_NAME.match(keyword) and not isinstance(arg, ast.Constant))
            ):
                out.append(arg)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def raiser_variants(
    tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef, kinds: tuple[str, ...]
) -> list[tuple[Input, str]]:
    """Each callable argument of the test (the first four) with each raiser in turn, as
    inputs a copy replaces and the helper's name it puts there."""
    args = callable_args(tree, func)[:MAX_FROM]
    return [(Input(arg, None), helper_name(exc)) for exc in kinds for arg in args]
