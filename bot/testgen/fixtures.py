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
import posixpath
from dataclasses import dataclass, field, replace

from bot.testgen.inputs import _parametrize

__all__ = ["fixture_files", "replay_fixtures"]

MAX_DEPTH = 5  # fixtures through fixtures
MAX_VARIANTS = 6  # values of one fixture's ``params`` (or rows of a parametrize) read
MAX_COPIES = 12  # copies of one test, one per combination of those values
_NOT_FIXTURES = {"self", "cls", "request"}
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


@dataclass
class _Fixture:
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: _File
    params: list[ast.expr] | None  # ``params=[...]``; None: the fixture has none
    autouse: bool = False


@dataclass
class _File:
    path: str
    tree: ast.Module
    imports: dict[str, ast.stmt] = field(default_factory=dict)  # name -> its import line
    consts: dict[str, ast.expr] = field(default_factory=dict)  # plain module-level names
    fixtures: dict[str, _Fixture] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    class_fixtures: dict[str, dict[str, _Fixture]] = field(default_factory=dict)
    plugins: list[str] = field(default_factory=list)  # its ``pytest_plugins``


def replay_fixtures(tests: dict[str, str], support: dict[str, str]) -> dict[str, str]:
    """The test files (path -> source) with their tests' fixture parameters bound at the
    top of each test; ``support`` holds the other Python files near the tests (the
    ``conftest.py`` files, helper modules holding base classes or fixtures)."""
    files: dict[str, _File] = {}
    for path, text in {**support, **tests}.items():
        try:
            files[path] = _read(path, ast.parse(text))
        except (SyntaxError, ValueError, RecursionError):
            continue
    modules = _module_index(files)
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


# -- reading ---------------------------------------------------------------------------


def _is_fixture(deco: ast.expr) -> ast.Call | bool:
    """The decorator's call when it is ``pytest.fixture(...)``, True for a bare one."""
    target = deco.func if isinstance(deco, ast.Call) else deco
    last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    if last != "fixture":
        return False
    return deco if isinstance(deco, ast.Call) else True


def _fixture(node: ast.stmt, file: _File) -> _Fixture | None:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    for deco in node.decorator_list:
        found = _is_fixture(deco)
        if not found:
            continue
        name, params, autouse = node.name, None, False
        for kw in found.keywords if isinstance(found, ast.Call) else []:
            value = kw.value
            if isinstance(value, ast.Name):
                value = file.consts.get(value.id, value)
            if kw.arg == "name" and isinstance(value, ast.Constant):
                name = str(value.value)
            elif kw.arg == "params" and isinstance(value, ast.List | ast.Tuple):
                params = [_param_value(e) for e in value.elts[:MAX_VARIANTS]]
            elif kw.arg == "autouse" and isinstance(value, ast.Constant):
                autouse = value.value is True
        return _Fixture(name, node, file, params, autouse)
    return None


def _param_value(node: ast.expr) -> ast.expr:
    """``pytest.param(x, id=...)`` -> ``x``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "param"
        and node.args
    ):
        return node.args[0]
    return node


def _read(path: str, tree: ast.Module) -> _File:
    file = _File(path, tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and not (
            isinstance(node, ast.ImportFrom) and node.level
        ):
            for alias in node.names:
                if alias.name != "*":
                    line = type(node)(**{**node.__dict__, "names": [alias]})
                    file.imports[(alias.asname or alias.name).split(".")[0]] = line
    counts: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
                if _constant(node.value):
                    file.consts[target.id] = node.value
    file.consts = {k: v for k, v in file.consts.items() if counts.get(k) == 1}
    named = file.consts.get("pytest_plugins")
    for item in named.elts if isinstance(named, ast.List | ast.Tuple) else [named]:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            file.plugins.append(item.value)
    for node in tree.body:
        found = _fixture(node, file)
        if found is not None:
            file.fixtures[found.name] = found
        if isinstance(node, ast.ClassDef):
            file.classes[node.name] = node
            own = [f for f in map(lambda n: _fixture(n, file), node.body) if f is not None]
            file.class_fixtures[node.name] = {f.name: f for f in own}
    return file


def _constant(node: ast.expr) -> bool:
    """A value made of literals only (a key, a table of the tests)."""
    allowed = (
        ast.Constant,
        ast.List,
        ast.Tuple,
        ast.Set,
        ast.Dict,
        ast.UnaryOp,
        ast.BinOp,
        ast.Load,
        ast.operator,
        ast.unaryop,
    )
    return all(isinstance(n, allowed) for n in ast.walk(node))


def _module_index(files: dict[str, _File]) -> dict[str, str]:
    """Dotted module names (each tail of the path: ``tests.a.b``, ``a.b``, ``b``) -> path."""
    index: dict[str, str] = {}
    for path in sorted(files, key=lambda p: p.count("/")):
        parts = path[: -len(".py")].split("/") if path.endswith(".py") else []
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            index.setdefault(".".join(parts[start:]), path)
    return index


# -- looking up ------------------------------------------------------------------------


def _mro(
    file: _File, cls: ast.ClassDef, files: dict[str, _File], modules: dict[str, str]
) -> list[tuple[_File, ast.ClassDef]]:
    """The class and its bases that the reader can find (left to right, depth first)."""
    out: list[tuple[_File, ast.ClassDef]] = []
    todo = [(file, cls)]
    while todo and len(out) < 12:
        where, node = todo.pop(0)
        if any(node is c for _, c in out):
            continue
        out.append((where, node))
        bases = []
        for base in node.bases:
            found = _base(where, base, files, modules)
            if found is not None:
                bases.append(found)
        todo = bases + todo
    return out


def _base(
    file: _File, base: ast.expr, files: dict[str, _File], modules: dict[str, str]
) -> tuple[_File, ast.ClassDef] | None:
    if not isinstance(base, ast.Name):
        return None
    if base.id in file.classes:
        return file, file.classes[base.id]
    line = file.imports.get(base.id)
    if isinstance(line, ast.ImportFrom) and line.module:
        path = modules.get(line.module)
        other = files.get(path) if path else None
        name = line.names[0].name
        if other is not None and name in other.classes:
            return other, other.classes[name]
    return None


def _imported_fixtures(
    file: _File, files: dict[str, _File], modules: dict[str, str]
) -> dict[str, _Fixture]:
    """Fixtures a test module imports by name from another file of the project."""
    out: dict[str, _Fixture] = {}
    for name, line in file.imports.items():
        if isinstance(line, ast.ImportFrom) and line.module in modules:
            other = files.get(modules[line.module])
            found = other.fixtures.get(line.names[0].name) if other is not None else None
            if found is not None:
                out[name] = found
    return out


def _layers(
    file: _File,
    classes: list[tuple[_File, ast.ClassDef]],
    files: dict[str, _File],
    modules: dict[str, str],
) -> list[dict[str, _Fixture]]:
    """Where a test's fixtures are looked up, nearest first: its class and the bases,
    its module, the conftest.py files from its directory up."""
    layers = [where.class_fixtures.get(node.name, {}) for where, node in classes]
    layers.append({**_imported_fixtures(file, files, modules), **file.fixtures})
    plugins = list(file.plugins)
    folder = posixpath.dirname(file.path)
    while True:
        conftest = files.get(posixpath.join(folder, "conftest.py") if folder else "conftest.py")
        if conftest is not None and conftest is not file:
            layers.append(conftest.fixtures)
            plugins += conftest.plugins
        if not folder:
            break
        folder = posixpath.dirname(folder)
    # the modules ``pytest_plugins`` names hold fixtures for every test
    for name in plugins:
        plugin = files.get(modules.get(name, ""))
        if plugin is not None:
            layers.append(plugin.fixtures)
    return [layer for layer in layers if layer]


def _needed(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    layers: list[dict[str, _Fixture]],
    skip: set[str],
) -> list[tuple[str, _Fixture]]:
    """The fixtures a test uses, each after those it uses (pytest's order)."""
    order: list[tuple[str, _Fixture]] = []
    seen: set[tuple[str, int]] = set()

    def visit(name: str, start: int, depth: int) -> None:
        if name in _NOT_FIXTURES or name in skip or depth > MAX_DEPTH:
            return
        for index in range(start, len(layers)):
            found = layers[index].get(name)
            if found is None:
                continue
            if (name, index) in seen:
                return
            seen.add((name, index))
            for param in _parameters(found.node):
                # a fixture that asks for its own name gets the one it overrides
                visit(param, index + 1 if param == name else 0, depth + 1)
            order.append((name, found))
            return

    # a test class's own ``autouse`` fixtures set it up (``self.signer = Signer(k)``),
    # as ``setUp`` does: the outermost first
    for layer in reversed(layers):
        for name, found in layer.items():
            if found.autouse and "self" in _parameters(found.node):
                visit(name, 0, 0)
    for param in _parameters(func):
        visit(param, 0, 0)
    return order


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]


def _parametrized(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], set[str]]:
    """Names a ``parametrize`` decorator gives: directly (they override a fixture of that
    name), and ``indirect`` ones (the fixture of that name gets each as ``request.param``)."""
    direct: set[str] = set()
    indirect: set[str] = set()
    for deco in func.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and isinstance(deco.func, ast.Attribute)
            and deco.func.attr == "parametrize"
            and deco.args
        ):
            names_node = deco.args[0]
            names: set[str] = set()
            if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
                names = {n.strip() for n in names_node.value.split(",")}
            elif isinstance(names_node, ast.List | ast.Tuple):
                names = {str(e.value) for e in names_node.elts if isinstance(e, ast.Constant)}
            via = next((k.value for k in deco.keywords if k.arg == "indirect"), None)
            if isinstance(via, ast.Constant) and via.value is True:
                chosen = names
            elif isinstance(via, ast.List | ast.Tuple):
                chosen = names & {str(e.value) for e in via.elts if isinstance(e, ast.Constant)}
            else:
                chosen = set()
            indirect |= chosen
            direct |= names - chosen
    return direct, indirect


# -- binding ---------------------------------------------------------------------------


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


def _stored(stmts: list[ast.stmt]) -> set[str]:
    """Names the statements bind (their locals)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(node.name)
    return out


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


def _body(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


def _acts(fx: _Fixture) -> bool:
    """Whether the fixture uses one of pytest's fixtures that act on the world (patches,
    temporary files, captured output): the object it makes may depend on what they did."""
    used = {
        n.id for n in ast.walk(fx.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return bool(used & set(_parameters(fx.node)) & _ACTING)


def _bind(fx: _Fixture, name: str) -> list[list[ast.stmt]] | None:
    """The statements that bind ``name`` as the fixture builds it: one list per value of
    its ``params``; None when its value cannot be read (made inside a ``with``, a loop, a
    branch, or from a ``request.param`` it has no ``params`` for)."""
    pre: list[ast.stmt] = []
    value: ast.expr | None = None
    for stmt in _body(fx.node):
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
    local = _stored(pre)
    renamed = {n: f"_{fx.name}_{n}" for n in local}
    if isinstance(value, ast.Name) and value.id in local:
        renamed[value.id] = name  # ``s = Signer(k); s.setup(); return s``: s is the fixture
    keep = local | set(_parameters(fx.node))
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


def _transplant(stmts: list[ast.stmt], source: _File, target: _File) -> list[ast.stmt]:
    """Statements from another file with the import lines of the names they use."""
    if source is target:
        return stmts
    used = {
        n.id
        for s in stmts
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    lines = [source.imports[n] for n in sorted(used - _stored(stmts)) if n in source.imports]
    return [copy.deepcopy(line) for line in lines] + stmts


# -- callables a fixture hands back ----------------------------------------------------


def _is_partial(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "partial"
        and bool(node.args)
        and not isinstance(node.args[0], ast.Starred)
    )


def _callables(body: list[ast.stmt]) -> dict[str, ast.expr | ast.FunctionDef]:
    """Names bound once to a ``partial(...)``, a lambda, or a one-``return`` function."""
    found: dict[str, ast.expr | ast.FunctionDef] = {}
    count: dict[str, int] = {}
    for stmt in body:
        for name in _stored([stmt]):
            count[name] = count.get(name, 0) + 1
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and (
                _is_partial(stmt.value) or isinstance(stmt.value, ast.Lambda)
            ):
                found[target.id] = stmt.value
        elif isinstance(stmt, ast.FunctionDef):
            inner = _body(stmt)
            if len(inner) == 1 and isinstance(inner[0], ast.Return) and inner[0].value:
                found[stmt.name] = stmt
    return {k: v for k, v in found.items() if count.get(k) == 1}


def _applied(made: ast.expr | ast.FunctionDef, call: ast.Call) -> ast.expr | None:
    """The call of a partial / lambda / one-return function, as the call it makes."""
    if isinstance(made, ast.Call):  # partial(F, *a, **k)(*b, **kk) -> F(*a, *b, **k | kk)
        given = {k.arg for k in call.keywords}
        keywords = [k for k in made.keywords if k.arg is None or k.arg not in given]
        return ast.Call(
            func=made.args[0], args=[*made.args[1:], *call.args], keywords=keywords + call.keywords
        )
    if isinstance(made, ast.Lambda):
        return _substituted(made.args, made.body, call)
    if not isinstance(made, ast.FunctionDef):
        return None
    ret = _body(made)[0]
    assert isinstance(ret, ast.Return) and ret.value is not None
    return _substituted(made.args, ret.value, call)


def _substituted(params: ast.arguments, body: ast.expr, call: ast.Call) -> ast.expr | None:
    positional = [*params.posonlyargs, *params.args]
    names = [a.arg for a in positional]
    values: dict[str, ast.expr] = {}
    if params.defaults:
        values.update(zip(names[-len(params.defaults) :], params.defaults, strict=True))
    values.update(
        {a.arg: d for a, d in zip(params.kwonlyargs, params.kw_defaults, strict=True) if d}
    )
    extra: list[ast.expr] = []
    extra_kw: list[ast.keyword] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if i < len(names):
            values[names[i]] = arg
        elif params.vararg:
            extra.append(arg)
        else:
            return None
    known = set(names) | {a.arg for a in params.kwonlyargs}
    for kw in call.keywords:
        if kw.arg in known:
            values[kw.arg] = kw.value
        elif params.kwarg and kw.arg is not None:
            extra_kw.append(kw)
        else:
            return None
    if known - set(values):
        return None  # a required parameter the call does not give
    star = {params.vararg.arg: extra} if params.vararg else {}
    stars = {params.kwarg.arg: extra_kw} if params.kwarg else {}
    out = _Spread(values, star, stars).visit(copy.deepcopy(body))
    leftover = {n.id for n in ast.walk(out) if isinstance(n, ast.Name)} & {*star, *stars}
    return None if leftover else out


class _Spread(ast.NodeTransformer):
    """Parameters put in place: names, ``*args`` and ``**kwargs`` in the calls made."""

    def __init__(
        self,
        values: dict[str, ast.expr],
        star: dict[str, list[ast.expr]],
        stars: dict[str, list[ast.keyword]],
    ) -> None:
        self.values, self.star, self.stars = values, star, stars

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.values.get(node.id)
        return copy.deepcopy(value) if value is not None else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        args: list[ast.expr] = []
        for arg in node.args:
            if (
                isinstance(arg, ast.Starred)
                and isinstance(arg.value, ast.Name)
                and arg.value.id in self.star
            ):
                args += self.star[arg.value.id]
            else:
                args.append(arg)
        keywords: list[ast.keyword] = []
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id in self.stars:
                keywords += self.stars[kw.value.id]
            else:
                keywords.append(kw)
        node.args, node.keywords = args, keywords
        return node


class _Apply(ast.NodeTransformer):
    def __init__(self, made: dict[str, ast.expr | ast.FunctionDef]) -> None:
        self.made = made

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        for _ in range(3):  # a partial of a partial
            func = node.func
            target: ast.expr | ast.FunctionDef | None = None
            if isinstance(func, ast.Name):
                target = self.made.get(func.id)
            elif _is_partial(func):
                target = func
            found = _applied(target, node) if target is not None else None
            if not isinstance(found, ast.Call):
                return found if found is not None else node
            node = ast.copy_location(found, node)
        return node


def _apply_callables(body: list[ast.stmt]) -> list[ast.stmt]:
    made = _callables(body)
    apply = _Apply(made)
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and stmt.value in made.values():
            out.append(stmt)  # the binding itself stays as written
            continue
        out.append(apply.visit(stmt))
    return out


# -- rewriting -------------------------------------------------------------------------


def _expanded(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    layers: list[dict[str, _Fixture]],
    file: _File,
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test with its fixtures bound at its top (a copy per value of ``params``)."""
    options: list[list[list[ast.stmt]]] = []
    unmade: set[str] = set()  # fixtures left out, and those that need one of them
    direct, indirect = _parametrized(func)
    table = _parametrize(func)[:MAX_VARIANTS]
    for name, fx in _needed(func, layers, direct):
        if name in indirect:
            fx = replace(fx, params=[row[name] for row in table if name in row] or None)
        alternatives = None if _acts(fx) or unmade & set(_parameters(fx.node)) else _bind(fx, name)
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
        new.body = _apply_callables([s for part in combo for s in part] + _body(new)) or [
            ast.Pass()
        ]
        if len(combos) > 1:
            new.name = f"{func.name}_nova_fixture_{i}"
        out.append(new)
    return out


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _rewrite(file: _File, files: dict[str, _File], modules: dict[str, str]) -> ast.Module | None:
    """A copy of the file's tree with its tests expanded (None: nothing to expand); the
    file itself stays as written, for the files that inherit from its classes."""
    changed = False
    module_layers = _layers(file, [], files, modules)
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
    file: _File, cls: ast.ClassDef, files: dict[str, _File], modules: dict[str, str]
) -> bool:
    """The class's tests, and those it inherits (run with its own fixtures), expanded."""
    mro = _mro(file, cls, files, modules)
    layers = _layers(file, mro, files, modules)
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


def fixture_files(paths: list[str], tests: dict[str, str]) -> list[str]:
    """The Python files a test's fixtures and base classes may come from: every
    ``conftest.py``, and the other modules beside the test files and below their
    directories (``tests/fixtures/signers.py``, a plugin of the tests)."""
    folders = {posixpath.dirname(p) for p in tests}

    def near(path: str) -> bool:
        folder = posixpath.dirname(path)
        return folder in folders or any(f and folder.startswith(f + "/") for f in folders)

    return [
        p
        for p in paths
        if p.endswith(".py")
        and p not in tests
        and (p.rsplit("/", 1)[-1] == "conftest.py" or near(p))
    ]
