"""Where the fixtures of a test are: the fixtures of each Python file of the tests (its
module level, its classes), the classes a test class inherits from (in other files too),
and the order pytest looks a fixture name up in (the test's class and bases, its module,
the ``conftest.py`` files from its directory up, the modules ``pytest_plugins`` names).
Read, never run; ``fixtures`` puts what they build in place."""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, field

from bot.testgen.inputs import _plain

__all__ = [
    "MAX_DEPTH",
    "MAX_VARIANTS",
    "Fixture",
    "SourceFile",
    "class_and_bases",
    "fixture_files",
    "fixture_layers",
    "module_index",
    "needed_fixtures",
    "parameters",
    "parametrized",
    "read_source",
]

MAX_DEPTH = 5  # fixtures through fixtures


MAX_VARIANTS = 6  # values of one fixture's ``params`` (or rows of a parametrize) read


_NOT_FIXTURES = {"self", "cls", "request"}


@dataclass
class Fixture:
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: SourceFile
    params: list[ast.expr] | None  # ``params=[...]``; None: the fixture has none
    autouse: bool = False


@dataclass
class SourceFile:
    path: str
    tree: ast.Module
    imports: dict[str, ast.stmt] = field(default_factory=dict)  # name -> its import line
    consts: dict[str, ast.expr] = field(default_factory=dict)  # plain module-level names
    fixtures: dict[str, Fixture] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    class_fixtures: dict[str, dict[str, Fixture]] = field(default_factory=dict)
    plugins: list[str] = field(default_factory=list)  # its ``pytest_plugins``


def _is_fixture(deco: ast.expr) -> ast.Call | bool:
    """The decorator's call when it is ``pytest.fixture(...)``, True for a bare one."""
    target = deco.func if isinstance(deco, ast.Call) else deco
    last = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    if last != "fixture":
        return False
    return deco if isinstance(deco, ast.Call) else True


def _fixture(node: ast.stmt, file: SourceFile) -> Fixture | None:
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
        return Fixture(name, node, file, params, autouse)
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


def read_source(path: str, tree: ast.Module) -> SourceFile:
    file = SourceFile(path, tree)
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
                if _plain(node.value, set()):  # literals, calls of builtins
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


def module_index(files: dict[str, SourceFile]) -> dict[str, str]:
    """Dotted module names (each tail of the path: ``tests.a.b``, ``a.b``, ``b``) -> path."""
    index: dict[str, str] = {}
    for path in sorted(files, key=lambda p: p.count("/")):
        parts = path[: -len(".py")].split("/") if path.endswith(".py") else []
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            index.setdefault(".".join(parts[start:]), path)
    return index


def class_and_bases(
    file: SourceFile, cls: ast.ClassDef, files: dict[str, SourceFile], modules: dict[str, str]
) -> list[tuple[SourceFile, ast.ClassDef]]:
    """The class and its bases that the reader can find (left to right, depth first)."""
    out: list[tuple[SourceFile, ast.ClassDef]] = []
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
    file: SourceFile, base: ast.expr, files: dict[str, SourceFile], modules: dict[str, str]
) -> tuple[SourceFile, ast.ClassDef] | None:
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
    file: SourceFile, files: dict[str, SourceFile], modules: dict[str, str]
) -> dict[str, Fixture]:
    """Fixtures a test module imports by name from another file of the project."""
    out: dict[str, Fixture] = {}
    for name, line in file.imports.items():
        if isinstance(line, ast.ImportFrom) and line.module in modules:
            other = files.get(modules[line.module])
            found = other.fixtures.get(line.names[0].name) if other is not None else None
            if found is not None:
                out[name] = found
    return out


def fixture_layers(
    file: SourceFile,
    classes: list[tuple[SourceFile, ast.ClassDef]],
    files: dict[str, SourceFile],
    modules: dict[str, str],
) -> list[dict[str, Fixture]]:
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


def needed_fixtures(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    layers: list[dict[str, Fixture]],
    skip: set[str],
) -> list[tuple[str, Fixture]]:
    """The fixtures a test uses, each after those it uses (pytest's order)."""
    order: list[tuple[str, Fixture]] = []
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
            for param in parameters(found.node):
                # a fixture that asks for its own name gets the one it overrides
                visit(param, index + 1 if param == name else 0, depth + 1)
            order.append((name, found))
            return

    # a test class's own ``autouse`` fixtures set it up (``self.signer = Signer(k)``),
    # as ``setUp`` does: the outermost first
    for layer in reversed(layers):
        for name, found in layer.items():
            if found.autouse and "self" in parameters(found.node):
                visit(name, 0, 0)
    for param in parameters(func):
        visit(param, 0, 0)
    return order


def parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]


def parametrized(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], set[str]]:
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
