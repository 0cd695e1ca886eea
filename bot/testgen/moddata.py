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
  then ``t.TABLE``; relative imports resolved). In another module, the public names that
  reach a reader (``reach``'s call graph) are what a test calls.
- **When a test runs a changed data line** (the changed-line gate, and the baseline's
  coverage): a changed line inside a function body counts when it ran; a changed line of a
  top-level statement counts when the test ran a line of the body of a function that
  reads a name the statement binds; when no reader is found anywhere (a name only read by
  ``getattr`` or ``globals()``), when the test ran a line of a function body of that module.
  Other changed top-level lines (imports, docstrings) never count: the module running at
  import is not the test's doing.
- **Inputs steered by the data.** The string and integer literals of the changed entries
  (and of the lines they replaced), the words of a changed regular expression
  (``(CASE|IN|VALUES)\\b`` gives ``IN``), and for integers written in hexadecimal (code
  points, almost always) the characters at each end of a changed range and just outside it.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from bot.testgen.inputs import Candidate, steer
from bot.testgen.reach import Entry, readers_entries

__all__ = [
    "DataChange",
    "Reader",
    "class_data_change",
    "covered_lines",
    "data_change",
    "data_inputs",
    "module_of",
]

MAX_READER_MODULES = 6  # other modules whose readers are probed
MAX_ENTRIES = 12  # public names called, over all modules
MAX_STRINGS = 8
MAX_CHARS = 12
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
    tree: ast.Module, bindings: dict[str, set[_T]], dotted: dict[str, set[_T]] | None = None
) -> None:
    """Top-level statements that read a bound name (or a ``dotted`` attribute chain) bind
    what they assign to the same origins: the changed lines in the data's own module
    (``_COMPILED = [re.compile(p) for p in PATTERNS]``), the changed names in a module
    importing it (``_ZERO = frozenset(table.ZERO)``)."""
    statements = [s for s in _top_statements(tree.body) if _bound(s)]
    grew = True
    while grew:
        grew = False
        for s in statements:
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
            elif not isinstance(child, ast.Lambda):
                walk(child, prefix)  # a def inside a top-level if / try

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
    tree: ast.Module, importer: str, is_package: bool, module: str, changed: set[str]
) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """How a module refers to ``module``'s changed names: local names, attribute chains,
    and the wanted keys of ``reach``'s call graph for them."""
    names: dict[str, str] = {}
    dotted: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(importer, is_package, node)
            for alias in node.names:
                if source == module and alias.name == "*":
                    names.update({n: n for n in changed})
                elif source == module and alias.name in changed:
                    names[alias.asname or alias.name] = alias.name
                elif f"{source}.{alias.name}" == module:
                    local = alias.asname or alias.name
                    dotted.update({f"{local}.{n}": n for n in changed})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module:
                    local = alias.asname or alias.name
                    dotted.update({f"{local}.{n}": n for n in changed})
    wanted = set(names) | {k for k in dotted if k.count(".") == 1}
    wanted |= {f"*.{n}" for k, n in dotted.items() if k.count(".") > 1}
    return names, dotted, wanted


def _bindings(
    tree: ast.AST, body: list[ast.stmt], lines: list[int]
) -> tuple[dict[str, set[int]], list[int]]:
    bindings: dict[str, set[int]] = {}
    spans = [_body_span(node) for _q, node in _functions(tree)]
    direct = [n for n in lines if any(a <= n <= b for a, b in spans)]
    for node in _top_statements(body):
        first, last = node.lineno, node.end_lineno or node.lineno
        hit = {n for n in lines if first <= n <= last and n not in direct}
        if hit:
            for name in _bound(node):
                bindings.setdefault(name, set()).update(hit)
    return bindings, direct


def _class(tree: ast.Module, qualname: str) -> ast.ClassDef | None:
    body: list[ast.stmt] = tree.body
    found: ast.ClassDef | None = None
    for part in qualname.split("."):
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if found is None:
            return None
        body = found.body
    return found


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
    node = _class(tree, qualname)
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
    change.entries = [(path, e) for e in readers_entries(source, wanted)][:MAX_ENTRIES]
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
    _derived(tree, found)
    spans = [_body_span(node) for _q, node in _functions(tree)]
    change = DataChange(
        path, {n: sorted(v) for n, v in found.items()}, direct, spans if found else []
    )
    if not found:
        return change
    change.readers = _readers(path, tree, {n: {n} for n in found}, {})
    # in its own module, "<module>" is what a name reaches (its changed lines steer there)
    change.entries = [(path, e) for e in readers_entries(source, set(found))][:MAX_ENTRIES]
    _other_readers(change, path, set(found), package_files())
    _steering(change, source, found, replaced)
    return change


def _steering(
    change: DataChange, source: str, found: dict[str, set[int]], replaced: Sequence[Replaced]
) -> None:
    rows = source.split("\n")
    bound = sorted({n for v in found.values() for n in v})
    added = [rows[n - 1] for n in bound if 0 < n <= len(rows)]
    removed = [text for hunk, texts in replaced if hunk & set(bound) for text in texts]
    change.strings, change.numbers, change.chars = _literals(_entries_first(added, removed))


def _entries_first(added: list[str], removed: list[str]) -> list[str]:
    """The changed rows, those new or gone first (a table rewritten as a whole, or only
    re-indented, still shows which entries really changed), then the moved ones."""
    old = {r.strip() for r in removed}
    new = {a.strip() for a in added}
    return (
        [a for a in added if a.strip() not in old]
        + [r for r in removed if r.strip() not in new]
        + [a for a in added if a.strip() in old]
    )


def _other_readers(change: DataChange, path: str, changed: set[str], files: dict[str, str]) -> None:
    module = module_of(path)
    package = module.split(".")[0]
    if "." not in module:
        return  # a top-level module: its readers are its own
    modules = 0
    for other, text in sorted(files.items()):
        importer = module_of(other)
        if other == path or not (importer == package or importer.startswith(package + ".")):
            continue
        if module.rsplit(".", 1)[-1] not in text or not any(n in text for n in changed):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names, dotted, wanted = _imported(
            tree, importer, other.endswith("__init__.py"), module, changed
        )
        if not names and not dotted:
            continue
        local = {k: {v} for k, v in names.items()}
        _derived(tree, local, {k: {v} for k, v in dotted.items()})
        wanted |= set(local)
        readers = _readers(other, tree, local, {k: {v} for k, v in dotted.items()})
        if not readers:
            continue
        change.readers += readers
        modules += 1
        label = ", ".join(sorted({n for r in readers for n in r.names}))
        for entry in readers_entries(text, wanted):
            if len(change.entries) < MAX_ENTRIES:
                change.entries.append((other, replace(entry, via=f"{module}.{label}")))
        if modules >= MAX_READER_MODULES:
            return


_LOOKS_REGEX = re.compile(r"\\.|\|\w|\(\?|\[[^\]]+\]|[+*]\??\)|\.\*")
_REGEX_WORD = re.compile(r"(?<![\\\w])[A-Za-z][A-Za-z_]+")


def _regex_words(value: str) -> list[str] | None:
    """The literal words of a regular expression (``(NOT\\s+)?(IN)\\b`` gives NOT, IN);
    None when the string does not look like one."""
    if not _LOOKS_REGEX.search(value) or len(value) > 200:
        return None
    try:
        re.compile(value)
    except re.error:
        return None
    return [w for w in _REGEX_WORD.findall(re.sub(r"\[[^\]]*\]", " ", value)) if len(w) <= 20]


def _literals(rows: list[str]) -> tuple[list[str], list[int], list[str]]:
    """Strings, integers and code-point characters of the changed entries, in order,
    without repeats."""
    strings: list[str] = []
    numbers: list[int] = []
    chars: list[str] = []
    for code in rows:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code.strip() + "\n").readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        points: list[int] = []
        for tok in tokens:
            try:
                value = (
                    ast.literal_eval(tok.string)
                    if tok.type in (tokenize.STRING, tokenize.NUMBER)
                    else None
                )
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, str) and value:
                words = _regex_words(value)
                strings += words if words is not None else [value] if len(value) <= 20 else []
            elif type(value) is int:
                if tok.string.lower().startswith("0x") and 0 < value <= 0x10FFFF:
                    points.append(value)
                elif abs(value) < 10**6:
                    numbers.append(value)
        # a range (lo, hi): its ends, then just outside it (where a shrunk range changed)
        around = [points[0] - 1, points[-1] + 1] if len(points) == 2 else []
        chars += [chr(p) for p in [*points, *around] if 0 < p <= 0x10FFFF and not _surrogate(p)]
    return (
        list(dict.fromkeys(strings))[:MAX_STRINGS],
        list(dict.fromkeys(numbers))[:MAX_STRINGS],
        list(dict.fromkeys(chars))[:MAX_CHARS],
    )


def _surrogate(point: int) -> bool:
    return 0xD800 <= point <= 0xDFFF


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


def data_inputs(
    changes: Iterable[DataChange],
    path: str,
    qualname: str,
    candidates: list[Candidate],
    one_parameter: bool,
) -> list[Candidate]:
    """More inputs for the public name ``qualname`` of ``path`` when it reads changed data:
    the tests' inputs steered by the data's literals (in its own module the changed
    lines' strings and numbers already steer: only the characters are added), and for a
    one-parameter function the literals alone. The changes take turns, so one big table
    does not crowd out another's entries."""
    chars: list[list[str]] = []
    words: list[list[str]] = []
    numbers: list[int] = []
    for change in changes:
        if not any(p == path and e.qualname == qualname for p, e in change.entries):
            continue
        chars.append(change.chars)
        if change.path != path:
            words.append(change.strings)
            numbers += change.numbers
    strings = list(dict.fromkeys(_turns(chars) + _turns(words)))
    numbers = list(dict.fromkeys(numbers))
    out = steer(candidates, strings, numbers)
    if one_parameter:
        out += [
            Candidate((repr(v),), (), (), f"{path} (changed data)") for v in [*strings, *numbers]
        ]
    return out


def _turns(groups: list[list[str]]) -> list[str]:
    """The first of each group, then the second of each, ..."""
    return [g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)]
