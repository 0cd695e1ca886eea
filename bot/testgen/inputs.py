"""Candidate inputs for the differential generator, read (never run) from the repository:
the arguments of each call of a function in the existing tests, with the rows of a
``pytest.mark.parametrize`` followed into ``f(*args)`` / ``f(x)``, and the calls in the
function's doctest examples. An input is expression source plus the import lines of the file
it came from; the side-runner evaluates it in the sandbox and keeps it only when it is a
plain value that renders back to Python."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field

__all__ = ["Candidate", "inputs_from_doctests", "inputs_from_tests"]

MAX_PER_FUNCTION = 60
_PLAIN = (
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.UnaryOp,
    ast.BinOp,
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.keyword,
    ast.Load,
    ast.operator,
    ast.unaryop,
    ast.Starred,
)
_BUILTINS = {
    "float",
    "int",
    "str",
    "bytes",
    "complex",
    "frozenset",
    "set",
    "tuple",
    "list",
    "dict",
    "bool",
    "range",
    "True",
    "False",
    "None",
}
_PROMPT = re.compile(r"^\s*>>> (.*)$")


@dataclass(frozen=True)
class Candidate:
    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...] = ()
    imports: tuple[str, ...] = field(default=(), compare=False)
    origin: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, object]:
        return {"args": list(self.args), "kwargs": dict(self.kwargs), "imports": list(self.imports)}


def _plain(node: ast.AST, bound: set[str]) -> bool:
    """An expression made of literals, operators and calls of imported names only."""
    for sub in ast.walk(node):
        if not isinstance(sub, _PLAIN):
            return False
        if isinstance(sub, ast.Name) and sub.id not in bound | _BUILTINS:
            return False
    return True


def _imports(tree: ast.Module) -> tuple[list[str], set[str]]:
    lines, bound = [], set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            lines.append(ast.unparse(node))
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
    return lines, bound


def _parametrize(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, ast.expr]]:
    """The rows of the function's ``parametrize`` decorators (their product), each a
    mapping of argument name to its expression."""
    tables: list[list[dict[str, ast.expr]]] = []
    for deco in func.decorator_list:
        if not (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr == "parametrize"
            and len(deco.args) >= 2
        ):
            continue
        names_node, rows_node = deco.args[0], deco.args[1]
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",") if n.strip()]
            whole = len(names) == 1  # pytest: one name in a string, each row is the value
        elif isinstance(names_node, ast.List | ast.Tuple):
            names = [
                e.value
                for e in names_node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            whole = False
        else:
            continue
        if not isinstance(rows_node, ast.List | ast.Tuple):
            continue
        table = []
        for row in rows_node.elts:
            if (
                isinstance(row, ast.Call)
                and isinstance(row.func, ast.Attribute)
                and row.func.attr == "param"
            ):
                values = list(row.args)
            elif whole:
                values = [row]
            elif isinstance(row, ast.Tuple | ast.List):
                values = list(row.elts)
            else:
                continue
            if len(values) == len(names):
                table.append(dict(zip(names, values, strict=True)))
        tables.append(table)
    rows: list[dict[str, ast.expr]] = []
    for combo in itertools.islice(itertools.product(*tables), 200) if tables else []:
        merged: dict[str, ast.expr] = {}
        for part in combo:
            merged.update(part)
        rows.append(merged)
    return rows


def _expand(
    call: ast.Call, row: dict[str, ast.expr]
) -> tuple[list[ast.expr], list[ast.keyword]] | None:
    """The call's arguments with the row's values put in for the test's parameters."""
    args: list[ast.expr] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            inner = row.get(arg.value.id) if isinstance(arg.value, ast.Name) else None
            if not isinstance(inner, ast.List | ast.Tuple):
                return None
            args += inner.elts
        elif isinstance(arg, ast.Name) and arg.id in row:
            args.append(row[arg.id])
        else:
            args.append(arg)
    keywords = []
    for kw in call.keywords:
        if kw.arg is None:
            return None
        value = row.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
        keywords.append(ast.keyword(arg=kw.arg, value=value))
    return args, keywords


def _calls_of(node: ast.AST, names: set[str]) -> list[tuple[str, ast.Call]]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            callee = (
                sub.func.id
                if isinstance(sub.func, ast.Name)
                else sub.func.attr
                if isinstance(sub.func, ast.Attribute)
                else None
            )
            if callee in names:
                found.append((callee, sub))
    return found


def inputs_from_tests(files: dict[str, str], names: set[str]) -> dict[str, list[Candidate]]:
    """Each function name's candidate inputs from the test files (path -> source)."""
    out: dict[str, list[Candidate]] = {n: [] for n in names}
    for path, text in sorted(files.items()):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        imports, bound = _imports(tree)
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            rows = _parametrize(func) or [{}]
            for callee, call in _calls_of(func, names):
                for row in rows:
                    expanded = _expand(call, row)
                    if expanded is None:
                        continue
                    args, keywords = expanded
                    if not all(_plain(a, bound) for a in [*args, *(k.value for k in keywords)]):
                        continue
                    out[callee].append(
                        Candidate(
                            tuple(ast.unparse(a) for a in args),
                            tuple((str(k.arg), ast.unparse(k.value)) for k in keywords),
                            tuple(imports),
                            f"{path}:{call.lineno}",
                        )
                    )
    return {n: list(dict.fromkeys(c))[:MAX_PER_FUNCTION] for n, c in out.items()}


def inputs_from_doctests(source: str, name: str, path: str) -> list[Candidate]:
    """The calls of ``name`` in its docstring's ``>>>`` examples (with the examples'
    own import lines)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[Candidate] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name):
            continue
        lines = [
            m.group(1)
            for m in map(_PROMPT.match, (ast.get_docstring(node) or "").splitlines())
            if m
        ]
        imports: list[str] = []
        bound: set[str] = set()
        for line in lines:
            try:
                parsed = ast.parse(line)
            except SyntaxError:
                continue
            more, names = _imports(parsed)
            imports += more
            bound |= names
            for _, call in _calls_of(parsed, {name}):
                if (
                    all(_plain(a, bound) for a in [*call.args, *(k.value for k in call.keywords)])
                    and all(k.arg for k in call.keywords)
                    and not any(isinstance(a, ast.Starred) for a in call.args)
                ):
                    found.append(
                        Candidate(
                            tuple(ast.unparse(a) for a in call.args),
                            tuple((str(k.arg), ast.unparse(k.value)) for k in call.keywords),
                            tuple(imports),
                            f"{path} (doctest)",
                        )
                    )
    return list(dict.fromkeys(found))
