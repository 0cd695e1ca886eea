"""Input variants that query another entry of the test's own data (for ``amplify_inputs``).

A frequent kind of test writes a data document — a TOML, JSON, YAML or INI text, a dict
literal, a file it writes into ``tmp_path`` — and then queries it by key or path
(``"person.age"``, ``"a/b"``, ``"x[1]"``, ``["get", "--key", "name"]``). A change often
concerns one kind of value (a boolean, a null, an empty list, a nested table) that the
document holds but the test never queries: its copies that change one literal towards
the changed lines never reach it. Here a copy replaces one query literal by the path of
another entry of the same document, written the way the test writes its paths:

- **Documents** (``documents``): the string literals of the test, of its class (and its
  ``setUp``), of its module's constants and of the module's fixtures it takes, and its
  dict literals (``data_docs``: JSON, TOML, INI, YAML-like and ``key=value`` texts; an
  expression in a dict literal is a value of another kind).
- **Queries** (``queries``): a string input of the test (``amplify_inputs._Inputs``) that
  is a key of a document or a path whose parts are keys (``.`` or ``/`` between them, an
  index as ``[n]`` or as a part), resolved from the document's top or from a table in it.
- **Entries**: the document's keys and its arrays' first items, at any depth, with the
  kind of their value (bool, none, empty, table, tables, array, float, int, datetime,
  str). An entry no query resolves to goes first when the changed lines name its key,
  then when its kind is one no query of the test reaches (a kind the changed lines test
  for first: ``isinstance(v, bool)``, ``v is None``, ``v == []``), siblings of a query
  first; one entry of each kind before a second of any.

Each entry replaces the query nearest it (the longest common path, the same depth
first), rendered in that query's style; a single key is given a path only in the style of
another query of the same document. At most ``MAX_KEYED`` copies a test.
"""

from __future__ import annotations

import ast
import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.testgen.amplify_refs import Input
from bot.testgen.data_docs import from_node, parsed

__all__ = ["Entry", "documents", "key_plan", "value_kinds"]

MAX_KEYED = 3  # copies of one test that query another entry
MAX_ENTRIES = 200  # entries read of one document
MAX_ITEMS = 3  # items read of one array
MAX_DEPTH = 6
MAX_QUERY = 200  # characters of a literal tried as a query

# kinds of value, in the order an entry of a kind no query reaches is tried
KINDS = ("bool", "none", "empty", "table", "tables", "array", "float", "int", "datetime", "str")
OTHER = "other"

Part = str | int
Path = tuple[Part, ...]


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str
    order: int  # its place in the document


@dataclass(frozen=True)
class _Style:
    prefix: str  # "$.", "/", "." or ""
    sep: str  # ".", "/" or "" (one key)
    brackets: bool  # an index written ``[n]``, else as a part of its own


@dataclass(frozen=True)
class _Query:
    index: int  # of the test's input
    doc: int  # of the documents
    path: Path  # where it resolves
    base: Path  # the table it resolves from
    style: _Style
    order: int


def kind_of(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "none"
    if isinstance(value, dict | list | str) and not value:
        return "empty"
    if isinstance(value, dict):
        return "table"
    if isinstance(value, list):
        return "tables" if all(isinstance(v, dict) for v in value) else "array"
    if isinstance(value, float):
        return "float"
    if isinstance(value, int):
        return "int"
    if isinstance(value, datetime.date | datetime.time):
        return "datetime"
    if isinstance(value, str):
        return "str"
    return OTHER


# ---- documents ----


def _fixtures(tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The module's fixtures the test takes (by parameter name)."""
    args = func.args
    wanted = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    out: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in wanted:
            if any("fixture" in ast.unparse(d) for d in node.decorator_list):
                out.append(node)
    return out


def documents(
    tree: ast.Module,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef | None,
) -> list[object]:
    """The data documents the test can read: its texts and dict literals, those of its
    class (and ``setUp``), its module's constants and the fixtures it takes."""
    places: list[ast.AST] = [func, *_fixtures(tree, func)]
    if owner is not None:
        places += [
            s
            for s in owner.body
            if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            or s.name in ("setUp", "setup_method")
        ]
    places += [s for s in tree.body if isinstance(s, ast.Assign | ast.AnnAssign)]
    out: list[object] = []
    seen: set[str] = set()
    for place in places:
        inner = {
            id(c)
            for n in ast.walk(place)
            if isinstance(n, ast.Dict | ast.List | ast.Tuple)
            for c in ast.iter_child_nodes(n)
        }
        for node in ast.walk(place):
            doc: object = None
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                doc = parsed(node.value)
            elif isinstance(node, ast.Dict) and id(node) not in inner:
                doc = from_node(node)
                doc = doc if isinstance(doc, dict) and len(_entries(doc, 2)) >= 2 else None
            key = repr(doc)
            if doc is not None and key not in seen:
                seen.add(key)
                out.append(doc)
    return out


def _entries(doc: object, most: int = MAX_ENTRIES) -> list[Entry]:
    """The document's keys and its arrays' first items, depth first, with their kind."""
    out: list[Entry] = []

    def walk(node: object, path: Path) -> None:
        if len(path) >= MAX_DEPTH:
            return
        items: Iterable[tuple[Part, object]]
        if isinstance(node, dict):
            items = [(k, v) for k, v in node.items() if isinstance(k, str)]
        elif isinstance(node, list):
            items = list(enumerate(node))[:MAX_ITEMS]
        else:
            return
        for key, value in items:
            if len(out) >= most:
                return
            out.append(Entry((*path, key), kind_of(value), len(out)))
            walk(value, (*path, key))

    walk(doc, ())
    return out


# ---- queries ----


_PIECE = re.compile(r"([^\[\]]*)((?:\[\d+\])*)")
_PREFIX = re.compile(r"\$\.?|/(?=[^/])|\.(?=\w)")


def _splits(text: str) -> list[tuple[_Style, list[Part]]]:
    """The ways ``text`` reads as a path: its parts and how it writes them."""
    if not text or len(text) > MAX_QUERY or "\n" in text:
        return []
    found = _PREFIX.match(text)
    prefix = found.group() if found else ""
    rest = text[len(prefix) :]
    out: list[tuple[_Style, list[Part]]] = []
    for sep in (".", "/", ""):
        if sep and sep not in rest:
            continue
        parts: list[Part] = []
        brackets = False
        for piece in rest.split(sep) if sep else [rest]:
            m = _PIECE.fullmatch(piece)
            if m is None or not (m[1] or m[2]):
                break
            parts += [m[1]] if m[1] else []
            indexes = [int(i) for i in re.findall(r"\d+", m[2])]
            brackets = brackets or bool(indexes)
            parts += indexes
        else:
            if parts and isinstance(parts[0], str):
                out.append((_Style(prefix, sep, brackets or sep == "."), parts))
    return out


def _at(doc: object, path: Path) -> object:
    node = doc
    for part in path:
        node = node[part]  # type: ignore[index]
    return node


def _resolve(node: object, parts: Sequence[Part]) -> Path | None:
    path: list[Part] = []
    for part in parts:
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list) and str(part).isdigit() and int(part) < len(node):
            node = node[int(part)]
            path.append(int(part))
        else:
            return None
    return tuple(path)


def _tables(doc: object) -> list[Path]:
    """The paths of the document's tables, its top first, shallow before deep."""
    out: list[Path] = [()] if isinstance(doc, dict) else []
    out += [e.path for e in _entries(doc) if e.kind == "table"]
    return sorted(out, key=len)


def queries(docs: list[object], inputs: list[Input]) -> list[_Query]:
    """The test's string inputs that are keys or paths of one of ``docs``."""
    out: list[_Query] = []
    tables = [_tables(doc) for doc in docs]
    for i, found in enumerate(inputs):
        if not isinstance(found.value, str):
            continue
        for style, parts in _splits(found.value):
            hit = next(
                (
                    (d, base, (*base, *path))
                    for d, doc in enumerate(docs)
                    for base in tables[d]
                    if (path := _resolve(_at(doc, base), parts)) is not None
                ),
                None,
            )
            if hit is not None:
                out.append(_Query(i, hit[0], hit[2], hit[1], style, len(out)))
                break
    return out


# ---- the entries to query instead ----


def _render(rel: Path, style: _Style) -> str | None:
    pieces: list[str] = []
    for part in rel:
        if isinstance(part, int):
            if style.brackets or not style.sep:
                if not pieces:
                    return None
                pieces[-1] += f"[{part}]"
            else:
                pieces.append(str(part))
        elif not part or (style.sep and style.sep in part) or "[" in part or "]" in part:
            return None
        else:
            pieces.append(part)
    if len(pieces) > 1 and not style.sep:
        return None
    return style.prefix + style.sep.join(pieces)


def _common(a: Path, b: Path) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _styled(q: _Query, mine: list[_Query]) -> _Style:
    """How a path is written in place of the query ``q``: its own style, or for a
    single key the style of the document's first query written as a path."""
    if q.style.sep:
        return q.style
    return next((o.style for o in mine if o.style.sep), q.style)


def key_plan(
    tree: ast.Module,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    owner: ast.ClassDef | None,
    inputs: list[Input],
    named: Sequence[str] = (),
    kinds: Sequence[str] = (),
    most: int = MAX_KEYED,
) -> list[tuple[int, str]]:
    """(input index, value source) pairs: a query of the test replaced by the path of
    another entry of the same document; ``named``: strings the changed lines hold (a
    key among them goes first), ``kinds``: kinds of value they test for."""
    docs = documents(tree, func, owner)
    found = queries(docs, inputs) if docs else []
    if not found:
        return []
    ranked: list[tuple[tuple[int, ...], str, int, str]] = []  # rank, kind, input, value
    for d, doc in enumerate(docs):
        mine = [q for q in found if q.doc == d]
        if not mine:
            continue
        asked = {q.path for q in mine}
        asked_kinds = {kind_of(_at(doc, q.path)) for q in mine}
        for entry in _entries(doc):
            if entry.path in asked or entry.kind == OTHER:
                continue
            best = _nearest(entry, mine, inputs)
            if best is None:
                continue
            q, value = best
            rank = (
                not any(p in named for p in entry.path if isinstance(p, str)),
                entry.kind in asked_kinds,
                entry.kind not in kinds,
                KINDS.index(entry.kind),
                len(entry.path) - _common(q.path, entry.path),
                entry.order,
            )
            ranked.append((tuple(int(r) for r in rank), entry.kind, q.index, repr(value)))
    ranked.sort()
    first: list[tuple[int, str]] = []
    later: list[tuple[int, str]] = []
    kinds_taken: set[str] = set()
    for _rank, kind, index, value in ranked:
        (later if kind in kinds_taken else first).append((index, value))
        kinds_taken.add(kind)
    return list(dict.fromkeys(first + later))[:most]


def _nearest(entry: Entry, mine: list[_Query], inputs: list[Input]) -> tuple[_Query, str] | None:
    """The query ``entry`` replaces (the longest common path, the same depth, a path
    before a single key, the first) and the entry's path written in its style."""
    options: list[tuple[tuple[int, int, int, int], _Query, str]] = []
    for q in mine:
        if entry.path[: len(q.base)] != q.base or len(entry.path) <= len(q.base):
            continue
        value = _render(entry.path[len(q.base) :], _styled(q, mine))
        if value is None or value == inputs[q.index].value:
            continue
        score = (
            -_common(q.path, entry.path),
            abs(len(q.path) - len(entry.path)),
            not q.style.sep,
            q.order,
        )
        options.append((score, q, value))
    if not options:
        return None
    _score, q, value = min(options, key=lambda o: o[0])
    return q, value


# ---- the kinds of value the changed lines test for ----

# typehints' kinds of value in a document's words (the others no document holds)
_DOC_KINDS = {"list": "array", "tuple": "array", "dict": "table"}


def value_kinds(source: str, lines: Iterable[int]) -> list[str]:
    """The kinds of value ``lines`` of ``source`` test for (``typehints.type_hints``: an
    ``isinstance``, ``type(x) is``, a comparison with ``None``, ``True``, ``""`` or
    ``[]``, a truth test), in a document's words."""
    from bot.testgen.typehints import type_hints

    hints = type_hints(source, sorted(lines))
    found = (_DOC_KINDS.get(k, k) for kinds in hints.kinds.values() for k in kinds)
    return list(dict.fromkeys(k for k in found if k in KINDS))
