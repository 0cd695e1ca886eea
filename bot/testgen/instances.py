"""Instances of the classes a changed ``isinstance`` tests a parameter against.

A release widens or narrows which exceptions are retried, which errors are wrapped, which
objects take a fast path: ``isinstance(exception, (ConnectError, TimeoutException))``.
The project's tests pass the instances they happened to need (a ``ConnectTimeout``), so
the class the change names is never given. Here, for a changed ``isinstance(p, X)`` on a
parameter ``p`` of the function, ``X`` is built the way an exception is (``X('nova')``,
and ``X()``) and put in ``p``'s place in the project's first inputs (or alone, for a
function of one parameter). ``X`` is imported in the test as the module imports it (a
relative import made absolute; a class of the module itself from the module). Built-in
types are left to ``retype.py``. A class that does not build so raises the same on both
sides: nothing is claimed.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace

from bot.testgen.inputs import Candidate
from bot.testgen.retype import called_def

__all__ = ["MAX_INSTANCES", "class_instances"]

MAX_INSTANCES = 16  # inputs per function
MAX_BASES = 4  # of the project's inputs, the first ones varied
_BUILT = ("'nova'", "")  # how a class is called: an exception's message, or nothing


def _checked(func: ast.AST, lines: set[int], params: list[str]) -> list[tuple[int, str]]:
    """(parameter index, class expression) of each ``isinstance(param, X)`` on the
    changed lines (``X`` a name or dotted name, or a tuple of them)."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(func):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in params
            and getattr(node, "lineno", 0) in lines
        ):
            continue
        kinds = node.args[1]
        for kind in kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]:
            if not isinstance(kind, ast.Name | ast.Attribute):
                continue
            text = ast.unparse(kind)
            if text in dir(builtins) or not all(p.isidentifier() for p in text.split(".")):
                continue  # a built-in type: retype.py's
            pair = (params.index(node.args[0].id), text)
            if pair not in out:
                out.append(pair)
    return out


def _absolute(node: ast.ImportFrom, module: str) -> str | None:
    """``node``'s module as an absolute name (a relative import resolved from ``module``,
    the dotted name of the file that holds it)."""
    if not node.level:
        return node.module
    package = module.split(".")
    base = package[: len(package) - node.level]
    if not base:
        return None
    return ".".join([*base, node.module] if node.module else base)


def _import_of(tree: ast.Module, name: str, module: str) -> str | None:
    """The import line that makes ``name`` (the first part of a class expression)
    available in a test: as the module imports it, or from the module itself."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    return ast.unparse(ast.Import([alias]))
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module)
            for alias in node.names:
                if source and (alias.asname or alias.name) == name:
                    return ast.unparse(ast.ImportFrom(source, [alias], 0))
        elif isinstance(node, ast.ClassDef | ast.Assign) and name in _bound(node):
            return f"from {module} import {name}"
    return None


def _bound(node: ast.ClassDef | ast.Assign) -> set[str]:
    if isinstance(node, ast.ClassDef):
        return {node.name}
    return {t.id for t in node.targets if isinstance(t, ast.Name)}


def class_instances(
    candidates: list[Candidate], source: str, qualname: str, lines: list[int], module: str
) -> list[Candidate]:
    """The project's first inputs of ``qualname`` with an instance of each class a
    changed ``isinstance`` tests one of its parameters against, in that parameter's
    place (and alone, when it takes one parameter); at most ``MAX_INSTANCES``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    func = called_def(tree, qualname)
    if func is None:
        return []
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    method = "." in qualname and bool(params) and params[0] in ("self", "cls")
    params = params[1:] if method else params
    checked = _checked(func, set(lines), params)
    if not checked:
        return []
    bases = [c for c in candidates if c.origin != "drawn"][:MAX_BASES]
    member = any(c.ctor is not None for c in candidates)
    out: list[Candidate] = []
    for index, kind in checked:
        line = _import_of(tree, kind.split(".")[0], module)
        if line is None:
            continue
        for built in _BUILT:
            value = f"{kind}({built})"
            origin = f"{module} (instance of {kind}) (typed)"
            for base in bases:
                imports = (*base.imports, line)
                named = dict(base.kwargs)
                if params[index] in named:  # given by name
                    named[params[index]] = value
                    kwargs = tuple(named.items())
                    out.append(replace(base, kwargs=kwargs, imports=imports, origin=origin))
                elif index < len(base.args):
                    args = (*base.args[:index], value, *base.args[index + 1 :])
                    out.append(replace(base, args=args, imports=imports, origin=origin))
            if len(params) == 1 and not member:
                out.append(Candidate((value,), (), (line,), origin))
    seen = set(candidates)
    return [c for c in dict.fromkeys(out) if c not in seen][:MAX_INSTANCES]
