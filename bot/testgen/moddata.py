"""A change in module-level data (a table, a dict / tuple / set literal, a regex list, a
constant) is tested through the functions that read it.

Such lines run once, when the module is imported, before any test: the inner lines of a
multi-line literal have no line events at all, and import alone proves nothing. So:

- **What binds what.** A changed top-level statement (also inside a top-level ``if`` /
  ``try``) binds names: ``TABLE = {...}``, ``TABLE: dict = ...``, ``TABLE += ...``, and a
  call on a name mutates it (``TABLE.update(...)``, ``KEYWORDS.extend(...)``). A later
  top-level statement that reads a bound name binds a derived one
  (``_COMPILED = [re.compile(rx) for rx in PATTERNS]``): its readers read the change too.
- **Who reads it.** Functions and methods whose body mentions a bound name: in the module
  itself, and in the other modules of the package that import it (``from .table import
  TABLE [as T]``, ``from pkg import table`` then ``table.TABLE``, ``import pkg.table as t``
  then ``t.TABLE``; relative imports resolved; names derived from it there; the same names
  re-exported by a module importing them, ``from .data import *`` in a package's
  ``__init__``). In another module, the public names that reach a reader (``reach``'s call
  graph) are what a test calls. A table in a class body is read as ``self.NAME`` /
  ``cls.NAME`` in the class's methods and ``Cls.NAME`` in its module.
- **When a test runs a changed data line** (the changed-line gate, and the baseline's
  coverage): a changed line inside a function body counts when it ran; a changed line of a
  top-level statement counts when the test ran a line of the body of a function that
  reads a name the statement binds; when no reader is found anywhere (a name only read by
  ``getattr`` or ``globals()``), when the test ran a line of a function body of that module.
  Other changed top-level lines (imports, docstrings) never count: the module running at
  import is not the test's doing.
- **Inputs steered by the data**: ``steer`` (the changed entries' literals, the
  strings a changed regular expression matches differently).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from bot.testgen.inputs import class_at
from bot.testgen.reach import Entry, readers_entries
from bot.testgen.steer import contrasts, literals

__all__ = [
    "DataChange",
    "callers_elsewhere",
    "Reader",
    "class_data_change",
    "covered_lines",
    "data_change",
    "module_of",
]

MAX_READER_MODULES = 6  # other modules whose readers are probed
MAX_ENTRIES = 12  # public names called, over all modules
MAX_ROWS = 1500  # changed rows read for literals, each side
Lines = dict[str, set[int]]
_T = TypeVar("_T")
Replaced = tuple[set[int], list[str]]  # a hunk's added lines, and the lines it removed


@dataclass(frozen=True)
class Reader:
    """A function whose body (lines ``first``..``last``) reads ``names`` of the change."""

    path: str
    qualname: str
    first: int
    last: int
    names: tuple[str, ...]


@dataclass
class DataChange:
    """What a changed module's top-level lines bind and who reads it."""

    path: str
    bindings: dict[str, list[int]]  # name -> changed lines of the statements binding it
    direct: list[int]  # changed lines inside a function body: they count when they run
    bodies: list[tuple[int, int]]  # the module's function bodies (no reader found: these)
    readers: list[Reader] = field(default_factory=list)
    entries: list[tuple[str, Entry]] = field(default_factory=list)  # other modules' names
    strings: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    chars: list[str] = field(default_factory=list)
    contrasts: list[str] = field(default_factory=list)  # strings a changed regex splits

    def countable(self) -> list[int]:
        """The changed lines a test can run (not an import, not a docstring)."""
        return sorted({*self.direct, *(n for v in self.bindings.values() for n in v)})

    def read_by(self) -> list[str]:
        return [f"{r.path}::{r.qualname}" for r in self.readers]


def module_of(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _top_statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Top-level statements, also those inside a top-level ``if`` / ``try`` / ``with``."""
    for node in body:
        if isinstance(node, ast.If | ast.Try | ast.With):
            yield from _top_statements(node.body)
            yield from _top_statements(getattr(node, "orelse", []))
            for handler in getattr(node, "handlers", []):
                yield from _top_statements(handler.body)
            yield from _top_statements(getattr(node, "finalbody", []))
        else:
            yield node


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds or mutates (none for a def, an import)."""
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        out = set()
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Name):
                    out.add(sub.id)
            if isinstance(t, ast.Subscript | ast.Attribute):  # TABLE["x"] = ...
                root = t.value
                while isinstance(root, ast.Subscript | ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name):
                    out.add(root.id)
        return out
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return {func.value.id}  # TABLE.update(...), KEYWORDS.extend(...)
    return set()


def _reads(node: ast.AST) -> set[str]:
    return {s.id for s in ast.walk(node) if isinstance(s, ast.Name) and isinstance(s.ctx, ast.Load)}


def _derived(
    tree: ast.Module,
    rows: list[str],
    bindings: dict[str, set[_T]],
    dotted: dict[str, set[_T]] | None = None,
) -> None:
    """Top-level statements that read a bound name (or a ``dotted`` attribute chain) bind
    what they assign to the same origins: the changed lines in the data's own module
    (``_COMPILED = [re.compile(p) for p in PATTERNS]``), the changed names in a module
    importing it (``_ZERO = frozenset(table.ZERO)``). ``rows``: the module's lines (a
    statement whose text names none of them is not walked: a table can be huge)."""
    statements = [s for s in _top_statements(tree.body) if _bound(s)]
    grew = True
    while grew:
        grew = False
        words = {w for k in [*bindings, *(dotted or {})] for w in k.split(".")}
        for s in statements:
            # a statement reading only the names it binds adds nothing
            text = "\n".join(rows[s.lineno - 1 : s.end_lineno or s.lineno])
            if not (words - _bound(s)) & set(_WORD.findall(text)):
                continue
            value = s.value if isinstance(s, ast.Assign | ast.AugAssign) and s.value else s
            origins: set[_T] = set()
            for n in _reads(value):
                origins |= bindings.get(n, set())
            if dotted:
                for sub in ast.walk(value):
                    if isinstance(sub, ast.Attribute):
                        origins |= dotted.get(ast.unparse(sub), set())
            if not origins:
                continue
            for name in _bound(s):
                if not origins <= bindings.get(name, set()):
                    bindings.setdefault(name, set()).update(origins)
                    grew = True


def _functions(tree: ast.AST) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((prefix + child.name, child))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                walk(child, prefix)  # a def inside a top-level if / try (not in a table)

    walk(tree, "")
    return out


def _body_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """The lines of a function's body: its ``def`` and decorator lines run at import."""
    return node.body[0].lineno, node.end_lineno or node.body[-1].lineno


def _readers(
    path: str,
    tree: ast.Module,
    names: dict[str, set[str]],
    dotted: dict[str, set[str]],
    within: str = "",
) -> list[Reader]:
    """Functions of ``tree`` reading a local name (``names``: local -> the changed names it
    holds) or an attribute chain (``dotted``: ``"table.TABLE"`` -> the changed names)."""
    out = []
    for qualname, node in _functions(tree):
        if not qualname.startswith(within):
            continue
        seen: set[str] = set()
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and sub.id in names:
                    seen |= names[sub.id]
                elif isinstance(sub, ast.Attribute) and dotted:
                    seen |= dotted.get(ast.unparse(sub), set())
        if seen:
            first, last = _body_span(node)
            out.append(Reader(path, qualname, first, last, tuple(sorted(seen))))
    return out


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, *([node.module] if node.module else [])])


def _imported(
    tree: ast.Module, importer: str, is_package: bool, module: str, exported: dict[str, str]
) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """How a module refers to names ``module`` exports (``exported``: its name -> the
    changed name it holds): local names, attribute chains (``"table.TABLE"``), and the
    local names its top-level imports bind (it re-exports them)."""
    names: dict[str, str] = {}
    dotted: dict[str, str] = {}
    top = {id(s) for s in _top_statements(tree.body)}
    again: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(importer, is_package, node)
            for alias in node.names:
                local = alias.asname or alias.name
                if source == module and alias.name == "*":
                    names.update(exported)
                    again.update(exported if id(node) in top else {})
                elif source == module and alias.name in exported:
                    names[local] = exported[alias.name]
                    again.update({local: names[local]} if id(node) in top else {})
                elif f"{source}.{alias.name}" == module:
                    dotted.update({f"{local}.{n}": o for n, o in exported.items()})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    local = alias.asname or alias.name
                    dotted.update({f"{local}.{n}": o for n, o in exported.items()})
    return names, dotted, again


def _bindings(
    tree: ast.AST, body: list[ast.stmt], lines: list[int]
) -> tuple[dict[str, set[int]], list[int]]:
    bindings: dict[str, set[int]] = {}
    spans = [_body_span(node) for _q, node in _functions(tree)]
    direct = [n for n in lines if any(a <= n <= b for a, b in spans)]
    rest = sorted(set(lines) - set(direct))
    for node in _top_statements(body):
        first, last = node.lineno, node.end_lineno or node.lineno
        hit = set(rest[bisect_left(rest, first) : bisect_right(rest, last)])
        if hit:
            for name in _bound(node):
                bindings.setdefault(name, set()).update(hit)
    return bindings, direct


def class_data_change(
    path: str, source: str, qualname: str, lines: list[int], replaced: Sequence[Replaced] = ()
) -> DataChange | None:
    """The same for changed lines in the body of the class ``qualname``, outside its
    methods (``ESCAPES = {...}``): read as ``self.ESCAPES`` / ``cls.ESCAPES`` in its
    methods and as ``Cls.ESCAPES`` anywhere in its module. None when ``qualname`` is not
    a class or the lines bind no class attribute (the constructor is called, as before)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    node = class_at(tree, qualname)
    if node is None:
        return None
    found, direct = _bindings(node, node.body, lines)
    if not found:
        return None
    short = qualname.rsplit(".", 1)[-1]
    spans = [_body_span(f) for _q, f in _functions(node)]
    change = DataChange(path, {n: sorted(v) for n, v in found.items()}, direct, spans)
    inside = {f"{who}.{n}": {n} for n in found for who in ("self", "cls", short)}
    readers = _readers(path, tree, {}, inside, within=qualname + ".")
    readers += [
        r
        for r in _readers(path, tree, {}, {f"{short}.{n}": {n} for n in found})
        if r not in readers
    ]
    change.readers = readers
    wanted = {f"{q}.{n}" for n in found for q in {qualname, short}}
    change.entries = [(path, e) for e in readers_entries(tree, wanted)][:MAX_ENTRIES]
    _steering(change, source, found, replaced)
    return change


def data_change(
    path: str,
    source: str,
    lines: list[int],
    package_files: Callable[[], dict[str, str]],
    replaced: Sequence[Replaced] = (),
) -> DataChange | None:
    """What the changed top-level ``lines`` of the module at ``path`` bind, and who reads
    it; ``package_files`` gives the other Python files of the project (path -> text);
    ``replaced`` is, per hunk, its added lines and the text of the lines it removed (the
    removed entries of a changed table steer inputs too). None when the source does not
    parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found, direct = _bindings(tree, tree.body, lines)
    _derived(tree, source.split("\n"), found)
    spans = [_body_span(node) for _q, node in _functions(tree)]
    change = DataChange(
        path, {n: sorted(v) for n, v in found.items()}, direct, spans if found else []
    )
    if not found:
        return change
    change.readers = _readers(path, tree, {n: {n} for n in found}, {})
    # in its own module, "<module>" is what a name reaches (its changed lines steer there)
    change.entries = [(path, e) for e in readers_entries(tree, set(found))][:MAX_ENTRIES]
    _other_readers(change, path, set(found), package_files())
    _steering(change, source, found, replaced)
    return change


def _steering(
    change: DataChange, source: str, found: dict[str, set[int]], replaced: Sequence[Replaced]
) -> None:
    rows = source.split("\n")
    bound = {n for v in found.values() for n in v}
    added = [rows[n - 1] for n in sorted(bound) if 0 < n <= len(rows)][:MAX_ROWS]
    removed = [text for hunk, texts in replaced if hunk & bound for text in texts][:MAX_ROWS]
    change.strings, change.numbers, change.chars = literals(added, removed)
    change.contrasts = contrasts(added, removed)


def _other_readers(change: DataChange, path: str, changed: set[str], files: dict[str, str]) -> None:
    """The readers in the package's other modules: of the data module's names, then of
    the same names re-exported by a module importing them (``from .data import *`` in a
    package's ``__init__``, then ``pkg.TABLE`` elsewhere)."""
    module = module_of(path)
    package = module.split(".")[0]
    if "." not in module:
        return  # a top-level module: its readers are its own
    found: dict[tuple[str, str], Reader] = {}
    sources = {module: {n: n for n in changed}}
    for _round in range(2):
        reexports: dict[str, dict[str, str]] = {}
        for other, text in sorted(files.items()):
            importer = module_of(other)
            if other == path or not (importer == package or importer.startswith(package + ".")):
                continue
            for source, exported in sources.items():
                if source.rsplit(".", 1)[-1] not in text:  # cheap: most modules do not
                    continue
                again = _read_in(change, other, text, importer, source, exported, found)
                if again and importer != module:
                    reexports.setdefault(importer, {}).update(again)
        sources = {m: e for m, e in reexports.items() if m not in sources}
        if not sources:
            break
    change.readers += list(found.values())


def _read_in(
    change: DataChange,
    path: str,
    text: str,
    importer: str,
    source: str,
    exported: dict[str, str],
    found: dict[tuple[str, str], Reader],
) -> dict[str, str]:
    """The readers in one module of names ``source`` exports (into ``found``), and their
    public callers (into the change's entries); returns what it re-exports."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    names, dotted, again = _imported(tree, importer, path.endswith("__init__.py"), source, exported)
    if not names and not dotted:
        return again
    local = {k: {v} for k, v in names.items()}
    _derived(tree, text.split("\n"), local, {k: {v} for k, v in dotted.items()})
    readers = _readers(path, tree, local, {k: {v} for k, v in dotted.items()})
    modules = {r.path for r in found.values()}
    if not readers or (path not in modules and len(modules) >= MAX_READER_MODULES):
        return again
    for r in readers:
        known = found.get((r.path, r.qualname))
        merged = sorted({*r.names, *(known.names if known else ())})
        found[(r.path, r.qualname)] = replace(r, names=tuple(merged))
    wanted = set(local) | {k for k in dotted if k.count(".") == 1}
    wanted |= {f"*.{n.rsplit('.', 1)[-1]}" for n in dotted if n.count(".") > 1}
    label = ", ".join(sorted({n for r in readers for n in r.names}))
    for entry in readers_entries(tree, wanted):
        known_entries = {(p, e.qualname) for p, e in change.entries}
        if len(change.entries) < MAX_ENTRIES and (path, entry.qualname) not in known_entries:
            change.entries.append((path, replace(entry, via=f"{module_of(change.path)}.{label}")))
    return again


def callers_elsewhere(path: str, name: str, files: dict[str, str]) -> list[tuple[str, Entry]]:
    """The public names of the package's other modules that reach the module-level
    function ``name`` of ``path``, imported there by name (``from .utils import _load``)
    or through its module (``utils._load``): a private helper no public name of its own
    module calls is the package's helper, called from its other modules."""
    module = module_of(path)
    package = module.split(".")[0]
    if "." not in module:
        return []  # a top-level module: its callers are its own
    out: list[tuple[str, Entry]] = []
    for other, text in sorted(files.items()):
        importer = module_of(other)
        if other == path or not (importer == package or importer.startswith(package + ".")):
            continue
        if name not in text:  # cheap: most modules do not name it
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names, dotted, _again = _imported(
            tree, importer, other.endswith("__init__.py"), module, {name: name}
        )
        wanted = set(names) | {k for k in dotted if k.count(".") == 1}
        if wanted:
            out += [(other, replace(e, via=name)) for e in readers_entries(tree, wanted)]
    return out[:MAX_ENTRIES]


_WORD = re.compile(r"\w+")


def covered_lines(change: DataChange, executed: Lines) -> list[int]:
    """The changed lines of ``change``'s module that a run executed (the module
    docstring's rule): direct lines that ran, and the lines binding a name whose reader
    ran."""
    mine = executed.get(change.path, set())
    out = {n for n in change.direct if n in mine}

    def ran(path: str, first: int, last: int) -> bool:
        return any(first <= n <= last for n in executed.get(path, ()))

    if change.readers:
        names = {n for r in change.readers if ran(r.path, r.first, r.last) for n in r.names}
        out |= {n for name in names for n in change.bindings.get(name, [])}
    elif any(ran(change.path, a, b) for a, b in change.bodies):
        out |= {n for v in change.bindings.values() for n in v}  # read, but not by name
    return sorted(out)
