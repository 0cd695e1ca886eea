"""Objects the project's tests get from pytest fixtures, put in place (read, never run).

A test ``def test_x(signer): signer.unsign(value)`` names its object only as a parameter;
the object is built in a fixture (``@pytest.fixture def signer(): return Signer("key")``)
of the test's class (and its bases, in other files too), its module, or a ``conftest.py``
up the tree. This module rewrites each test file so that every test starts by binding its
fixture parameters the way the fixtures build them, in the order pytest would::

    def test_x(signer):
        signer = Signer('key')
        signer.unsign(value)

so the readers of the tests (``inputs``, ``scenarios``) follow them like any name a test
binds. A fixture's own parameters are fixtures too (looked up from the test, as pytest
does: a class may override a fixture that a conftest fixture uses), followed up to
``MAX_DEPTH``; the statements before its ``return`` / ``yield`` come along, its local names
renamed; ``request.param`` becomes each of the fixture's ``params=[...]`` (a copy of the
test per value). A fixture that hands back a callable (``partial(Signer, key=...)``, a
lambda, an inner ``def``) is applied where the test calls it. Names the fixture's file
imports or binds at its top come with it. pytest's own fixtures (``tmp_path``,
``monkeypatch``, ...) are never expanded, nor a value made inside a ``with`` or a loop:
such a name stays unbound and the readers leave what uses it alone; a fixture that uses
one of them (a patch, a temporary file), or needs a fixture left out, is left out too.
Test methods a class inherits run with the class's fixtures, so they are copied into it."""

from __future__ import annotations

import ast
import copy
import itertools
from dataclasses import replace

from bot.testgen.callables import apply_callables, body_of, stored_names
from bot.testgen.fixture_index import (
    MAX_VARIANTS,
    Fixture,
    SourceFile,
    class_and_bases,
    fixture_files,
    fixture_layers,
    module_index,
    needed_fixtures,
    parameters,
    parametrized,
    read_source,
)
from bot.testgen.inputs import _parametrize

__all__ = ["fixture_files", "replay_fixtures"]

MAX_COPIES = 12  # copies of one test, one per combination of those values


# pytest's (and common plugins') fixtures that patch, write files or capture output
_ACTING = {
    "monkeypatch",
    "tmp_path",
    "tmpdir",
    "tmp_path_factory",
    "tmpdir_factory",
    "capsys",
    "capsysbinary",
    "capfd",
    "capfdbinary",
    "caplog",
    "recwarn",
    "pytester",
    "testdir",
    "mocker",
    "freezer",
}


def replay_fixtures(tests: dict[str, str], support: dict[str, str]) -> dict[str, str]:
    """The test files (path -> source) with their tests' fixture parameters bound at the
    top of each test; ``support`` holds the other Python files near the tests (the
    ``conftest.py`` files, helper modules holding base classes or fixtures)."""
    files: dict[str, SourceFile] = {}
    for path, text in {**support, **tests}.items():
        try:
            files[path] = read_source(path, ast.parse(text))
        except (SyntaxError, ValueError, RecursionError):
            continue
    modules = module_index(files)
    out = dict(tests)
    for path in tests:
        file = files.get(path)
        if file is None:
            continue
        try:
            tree = _rewrite(file, files, modules)
            if tree is not None:
                out[path] = ast.unparse(ast.fix_missing_locations(tree))
        except (RecursionError, ValueError, TypeError, AttributeError):
            continue  # a shape the reader does not know: the file stays as written
    return out


def _stops_here(stmt: ast.stmt) -> bool:
    """Whether a ``return`` / ``yield`` of the fixture itself is inside the statement
    (not one of an inner function's)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom):
            return True
        if node is not stmt and isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


class _Names(ast.NodeTransformer):
    """Renames names, puts expressions in place of loaded names and ``request.param``."""

    def __init__(self, renamed: dict[str, str], values: dict[str, ast.expr]) -> None:
        self.renamed, self.values = renamed, values
        self.param: ast.expr | None = None
        self.wanted_param = False

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renamed:
            return ast.copy_location(ast.Name(id=self.renamed[node.id], ctx=node.ctx), node)
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node

    def _named(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        node.name = self.renamed.get(node.name, node.name)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        inner = node.value
        if (
            isinstance(inner, ast.Attribute)
            and inner.attr in ("cls", "instance")
            and isinstance(inner.value, ast.Name)
            and inner.value.id == "request"
        ):  # ``request.cls.signer = ...`` in a class's fixture: ``self.signer``
            return ast.copy_location(
                ast.Attribute(
                    value=ast.Name(id="self", ctx=ast.Load()), attr=node.attr, ctx=node.ctx
                ),
                node,
            )
        if isinstance(node.value, ast.Name) and node.value.id == "request" and node.attr == "param":
            self.wanted_param = True
            if self.param is not None:
                return copy.deepcopy(self.param)
        self.generic_visit(node)
        return node


def _acts(fx: Fixture) -> bool:
    """Whether the fixture uses one of pytest's fixtures that act on the world (patches,
    temporary files, captured output): the object it makes may depend on what they did."""
    used = {
        n.id for n in ast.walk(fx.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return bool(used & set(parameters(fx.node)) & _ACTING)


def _bind(fx: Fixture, name: str) -> list[list[ast.stmt]] | None:
    """The statements that bind ``name`` as the fixture builds it: one list per value of
    its ``params``; None when its value cannot be read (made inside a ``with``, a loop, a
    branch, or from a ``request.param`` it has no ``params`` for)."""
    pre: list[ast.stmt] = []
    value: ast.expr | None = None
    for stmt in body_of(fx.node):
        if isinstance(stmt, ast.Return):
            value = stmt.value
            break
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
            value = stmt.value.value
            break
        if _stops_here(stmt):
            return None
        pre.append(stmt)
    if value is None and not fx.autouse:
        return None  # an autouse fixture sets things up; any other makes a value
    local = stored_names(pre)
    renamed = {n: f"_{fx.name}_{n}" for n in local}
    if isinstance(value, ast.Name) and value.id in local:
        renamed[value.id] = name  # ``s = Signer(k); s.setup(); return s``: s is the fixture
    keep = local | set(parameters(fx.node))
    consts = {k: v for k, v in fx.file.consts.items() if k not in keep}
    out = []
    for param in fx.params if fx.params is not None else [None]:
        names = _Names(renamed, consts)
        names.param = param
        stmts = [names.visit(copy.deepcopy(s)) for s in pre]
        result = names.visit(copy.deepcopy(value)) if value is not None else ast.Name(id=name)
        if names.wanted_param and param is None:
            return None
        if not (isinstance(result, ast.Name) and result.id == name):
            stmts.append(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=result))
        out.append(stmts)
    return out


def _transplant(stmts: list[ast.stmt], source: SourceFile, target: SourceFile) -> list[ast.stmt]:
    """Statements from another file with the import lines of the names they use."""
    if source is target:
        return stmts
    used = {
        n.id
        for s in stmts
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    lines = [source.imports[n] for n in sorted(used - stored_names(stmts)) if n in source.imports]
    return [copy.deepcopy(line) for line in lines] + stmts


def _expanded(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    layers: list[dict[str, Fixture]],
    file: SourceFile,
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test with its fixtures bound at its top (a copy per value of ``params``)."""
    options: list[list[list[ast.stmt]]] = []
    unmade: set[str] = set()  # fixtures left out, and those that need one of them
    direct, indirect = parametrized(func)
    table = _parametrize(func)[:MAX_VARIANTS]
    for name, fx in needed_fixtures(func, layers, direct):
        if name in indirect:
            fx = replace(fx, params=[row[name] for row in table if name in row] or None)
        alternatives = None if _acts(fx) or unmade & set(parameters(fx.node)) else _bind(fx, name)
        if alternatives is None:
            unmade.add(name)
        else:
            options.append([_transplant(a, fx.file, file) for a in alternatives])
    if not options:
        return [func]
    # the test's own parametrize rows, bound like the fixtures (a fixture may use them,
    # and the readers of an instance's steps follow names bound in the test)
    rows: list[list[ast.stmt]] = [
        [
            ast.Assign(targets=[ast.Name(id=k, ctx=ast.Store())], value=copy.deepcopy(v))
            for k, v in row.items()
            if k not in indirect
        ]
        for row in table
    ]
    rows = [row for row in rows if row]
    if rows:
        options.insert(0, rows)
    combos = list(itertools.islice(itertools.product(*options), MAX_COPIES))
    out = []
    for i, combo in enumerate(combos):
        new = copy.deepcopy(func)
        new.body = apply_callables([s for part in combo for s in part] + body_of(new)) or [
            ast.Pass()
        ]
        if len(combos) > 1:
            new.name = f"{func.name}_nova_fixture_{i}"
        out.append(new)
    return out


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _rewrite(
    file: SourceFile, files: dict[str, SourceFile], modules: dict[str, str]
) -> ast.Module | None:
    """A copy of the file's tree with its tests expanded (None: nothing to expand); the
    file itself stays as written, for the files that inherit from its classes."""
    changed = False
    module_layers = fixture_layers(file, [], files, modules)
    tree = copy.deepcopy(file.tree)
    body: list[ast.stmt] = []
    for node in tree.body:
        if _is_test(node):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            made = _expanded(node, module_layers, file)
            changed |= made != [node]
            body += made
            continue
        if isinstance(node, ast.ClassDef):
            changed |= _rewrite_class(file, node, files, modules)
        body.append(node)
    tree.body = body
    return tree if changed else None


def _rewrite_class(
    file: SourceFile, cls: ast.ClassDef, files: dict[str, SourceFile], modules: dict[str, str]
) -> bool:
    """The class's tests, and those it inherits (run with its own fixtures), expanded."""
    mro = class_and_bases(file, cls, files, modules)
    layers = fixture_layers(file, mro, files, modules)
    defined = {n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    inherited: list[ast.stmt] = []
    for where, base in mro[1:]:
        for node in base.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and _is_test(node)
                and node.name not in defined
            ):
                defined.add(node.name)
                copied = copy.deepcopy(node)
                copied.body = _transplant(copied.body, where, file)
                inherited.append(copied)
    body: list[ast.stmt] = []
    changed = bool(inherited)
    for node in [*cls.body, *inherited]:
        if _is_test(node):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            made = _expanded(node, layers, file)
            changed |= made != [node]
            body += made
        else:
            body.append(node)
    cls.body = body
    return changed
