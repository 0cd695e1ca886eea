"""Input variants with ONE part ADDED that the changed code reads and the tests never give
(the dual of ``amplify_drops``, a part left out).

A feature often starts reading a new key or option (``opts.pop("K", None)``,
``opts.get("K")``, ``"K" in opts``, ``getenv("K")``, ``kwargs.get("k")``, a keyword
parameter with a default); the project's tests never pass it, so no input reaches the new
lines, and no literal changed in place (``amplify_inputs``) or left out (``amplify_drops``)
does either.

- **Parts** (``read_parts``): the keys the changed lines (and the parent's lines they
  replace) read from a mapping (``amplify_drops.key_reads``; a key may be a module
  constant), with the mapping traced to where it comes from: a parameter, a name bound from
  a parameter's entry (``opts = config.pop("formatOptions", {})``: the dict under
  ``formatOptions`` of the argument; two levels), an attribute of ``self``, the
  environment, ``**kwargs``; and the keyword parameters a changed condition tests. Each
  mapping is known by the keys its function reads from it (whole function), the
  ``siblings`` by which a test's dict is recognised as that mapping.
- **Values** (``_values``): what the changed lines test about the value read: the literals
  it is compared with, the kinds an ``isinstance`` names (``str`` -> the key's name, ``list``
  -> ``[name]``), a number for arithmetic, ``True`` for truthiness; at most 3, one per kind.
- **Copies** (``add_variants``): a dict literal, a ``dict(...)`` call or a call's keywords
  of the test that hold a sibling key of the mapping (or any level above it on the way:
  ``formatOptions`` nested in the config) get ONE entry added where the mapping is
  (``'formatOptions': {'noData': 1, 'metadataKeys': 'metadataKeys'}``, or the nested dict
  made when the level is absent); a call of the changed function gets a tested keyword
  parameter it lacks; a test with ``monkeypatch`` sets a read variable first. Each as the
  replacement source of one node, which ``amplify_inputs`` splices into a copy.
- **The differential's inputs** (``added_to``): a dict argument of a call (or of its
  receiver's constructor), or the call's keywords, with the entry added the same way.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Iterator
from dataclasses import dataclass, replace

from bot.testgen.amplify_drops import (
    _functions,
    _key,
    _names,
    _offset,
    _parse,
    _tests,
    first_holding,
    key_reads,
)
from bot.testgen.amplify_refs import Input
from bot.testgen.inputs import Candidate

__all__ = ["Part", "add_variants", "added_to", "adding_first", "read_parts"]

MAX_PARTS = 8  # keys and parameters added
MAX_VALUES = 3  # values tried for one key
MAX_ADDS = 6  # copies of one test with a part added
MAX_VALUE = 120  # characters of a value's source
ENV = "os.environ"
_READS = {"get", "pop", "setdefault", "__getitem__", "getenv"}
_KINDS = {"str", "list", "tuple", "dict", "int", "float", "bool", "set"}


@dataclass(frozen=True)
class Part:
    """A part the changed lines read: ``key`` (with ``values``, Python sources) in the
    mapping reached from the argument by ``path``; ``levels`` the keys the function reads
    at each level of that path (the last: from the mapping itself). ``env``: a variable;
    ``call``: a keyword parameter of the function named so."""

    key: str
    values: tuple[str, ...]
    path: tuple[str, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ((),)
    env: bool = False
    call: str = ""


# ---- what the changed lines read ----


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's names bound to a string (``FIELD = 'formatOptions'``)."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], _key(stmt.value)
            if isinstance(target, ast.Name) and value is not None:
                out[target.id] = value
    return out


class _Function:
    """The mappings one function reads, traced to its parameters."""

    def __init__(self, func: ast.FunctionDef | ast.AsyncFunctionDef, consts: dict[str, str]):
        self.func = func
        self.consts = consts
        a = func.args
        self.params = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} - {"self", "cls"}
        self.kwargs = a.kwarg.arg if a.kwarg is not None else ""
        self.parents = {id(c): p for p in ast.walk(func) for c in ast.iter_child_nodes(p)}
        self.bound: dict[str, tuple[str, tuple[str, ...]]] = {}
        for _ in range(2):  # a name bound from a bound name's entry: two levels
            for name, value in self._bindings():
                read = self._read(value)
                if read is not None and name not in self.params:
                    self.bound[name] = (read[0], (*read[1], read[2]))
        self.reads = self._reads(func)

    def _bindings(self) -> Iterator[tuple[str, ast.expr]]:
        for node in ast.walk(self.func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                if isinstance(node.targets[0], ast.Name):
                    yield node.targets[0].id, node.value
            elif isinstance(node, ast.NamedExpr | ast.AnnAssign) and node.value is not None:
                if isinstance(node.target, ast.Name):
                    yield node.target.id, node.value

    def key(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        found = _key(node)
        return found if found is not None and 0 < len(found) <= 80 else None

    def mapping(self, node: ast.expr | None) -> tuple[str, tuple[str, ...]] | None:
        """Where a mapping comes from: (root, path)."""
        if isinstance(node, ast.Name):
            if node.id in self.params or node.id == self.kwargs:
                return node.id, ()
            if node.id in self.bound:
                return self.bound[node.id]
            return (ENV, ()) if node.id == "environ" else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr == "environ":
                return ENV, ()
            if node.value.id in ("self", "cls"):
                return f"self.{node.attr}", ()
        return None

    def _read(self, node: ast.AST) -> tuple[str, tuple[str, ...], str, ast.AST] | None:
        """(root, path, key, read) when ``node`` reads a key of a traced mapping."""
        found = self._reads(node, only=node)
        return found[0] if found else None

    def _reads(
        self, node: ast.AST, only: ast.AST | None = None
    ) -> list[tuple[str, tuple[str, ...], str, ast.AST]]:
        """(root, path, key, read) of each read of a traced mapping's key in ``node``
        (the read ``only``, when given)."""
        out: list[tuple[str, tuple[str, ...], str, ast.AST]] = []
        for key_node, read, mapping in key_reads(node):
            if only is not None and read is not only:
                continue
            if isinstance(read, ast.Call):
                callee = read.func
                name = callee.attr if isinstance(callee, ast.Attribute) else ""
                name = name or (callee.id if isinstance(callee, ast.Name) else "")
                if name not in _READS or key_node is not read.args[0]:
                    continue
                where = (ENV, ()) if name == "getenv" else self.mapping(mapping)
            else:
                where = self.mapping(mapping)
            key = self.key(key_node)
            if where is not None and key is not None:
                out.append((where[0], where[1], key, read))
        return out

    def keys_at(self, root: str, path: tuple[str, ...]) -> tuple[str, ...]:
        out = [k for r, p, k, _n in self.reads if (r, p) == (root, path)]
        out += [p[len(path)] for r, p in self.bound.values() if r == root and p[:-1] == path]
        return tuple(dict.fromkeys(out))

    def uses(self, read: ast.AST) -> list[ast.AST]:
        """The read and the loads of the name it is bound to."""
        parent = self.parents.get(id(read))
        target = None
        if isinstance(parent, ast.NamedExpr) and isinstance(parent.target, ast.Name):
            target = parent.target.id
        elif isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name):
            target = parent.targets[0].id
        if target is None:
            return [read]
        return [read] + [
            n
            for n in ast.walk(self.func)
            if isinstance(n, ast.Name) and n.id == target and isinstance(n.ctx, ast.Load)
        ]


def _kind_names(node: ast.expr) -> list[str]:
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return [n.id for n in names if isinstance(n, ast.Name) and n.id in _KINDS]


def _use(use: ast.AST, parent: ast.AST | None) -> tuple[list[str], list[str]]:
    """(literal sources, kinds) that ``parent`` tests or needs of the value ``use``."""
    if isinstance(parent, ast.Call):
        callee = parent.func.id if isinstance(parent.func, ast.Name) else ""
        if callee == "isinstance" and len(parent.args) == 2 and parent.args[0] is use:
            return [], _kind_names(parent.args[1])
        if callee in ("list", "tuple", "len", "sorted", "set", "iter") and use in parent.args:
            return [], ["list"]
        if callee in ("int", "range") and use in parent.args:
            return [], ["int"]
        if callee in ("float", "round") and use in parent.args:
            return [], ["float"]
    if isinstance(parent, ast.Compare):
        found = [o for o in [parent.left, *parent.comparators] if o is not use]
        items = [
            *found,
            *(e for o in found if isinstance(o, ast.Tuple | ast.List | ast.Set) for e in o.elts),
        ]
        values = [c.value for c in items if isinstance(c, ast.Constant)]
        return [repr(v) for v in values if v is not None and len(repr(v)) <= MAX_VALUE], []
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add | ast.Sub | ast.Mult):
        other = parent.right if parent.left is use else parent.left
        if isinstance(other, ast.Constant) and type(other.value) in (int, float):
            return [], ["int" if type(other.value) is int else "float"]
    if isinstance(parent, ast.Attribute) and parent.value is use:
        if parent.attr in ("items", "keys", "values"):
            return [], ["dict"]
        if parent.attr in ("lower", "upper", "strip", "split", "startswith", "endswith"):
            return [], ["str"]
    if isinstance(parent, ast.For | ast.comprehension) and parent.iter is use:
        return [], ["list"]
    if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.BoolOp | ast.UnaryOp):
        return [], ["truthy"]
    return [], []


def _made(kind: str, key: str) -> str:
    return {
        "str": repr(key),
        "list": repr([key]),
        "tuple": repr((key,)),
        "set": repr([key]),
        "dict": repr({key: key}),
        "int": "2",
        "float": "1.5",
        "bool": "True",
        "truthy": "True",
    }[kind]


def _values(fn: _Function, read: ast.AST, key: str, env: bool) -> tuple[str, ...]:
    """What the function tests about the value read for ``key``: the literals it is
    compared with, then a value of each kind it tests for, truthiness last."""
    literals: list[str] = []
    kinds: list[str] = []
    for use in fn.uses(read):
        parent = fn.parents.get(id(use))
        if isinstance(parent, ast.NamedExpr):  # ``if x := d.pop("K")``: the ``if`` tests it
            use, parent = parent, fn.parents.get(id(parent))
        more, found = _use(use, parent)
        literals += more
        kinds += found
    if env:
        texts = [v for v in literals if v.startswith(("'", '"'))]
        return tuple(dict.fromkeys([*texts, "'1'", repr(key)]))[:2]
    kinds = sorted(dict.fromkeys(kinds), key=lambda k: k == "truthy")
    out = [*literals, *(_made(k, key) for k in kinds)] or ["True", repr(key)]
    return tuple(dict.fromkeys(out))[:MAX_VALUES]


def _default_flip(default: ast.expr | None) -> list[str]:
    if isinstance(default, ast.Constant) and isinstance(default.value, bool):
        return [repr(not default.value)]
    return []


def _function_parts(tree: ast.Module, lines: set[int], consts: dict[str, str]) -> Iterator[Part]:
    for func in _functions(tree, lines):
        fn = _Function(func, consts)
        for root, path, key, read in fn.reads:
            if getattr(read, "lineno", 0) not in lines:
                continue
            env = root == ENV
            levels = tuple(
                tuple(k for k in fn.keys_at(root, path[:n]) if k != key)
                for n in range(len(path) + 1)
            )
            values = _values(fn, read, key, env)
            called = func.name if root in (fn.kwargs, *fn.params) and not path else ""
            yield Part(key, values, path, levels, env, called if root == fn.kwargs else "")
            if called and root != fn.kwargs:  # a dict argument of a direct call
                yield Part(key, values, path, levels, env, f"{func.name}:{root}")
        # a keyword parameter with a default that a changed condition tests
        names, _attrs = _names(_tests(func, lines))
        a = func.args
        defaults = dict(zip([p.arg for p in a.args][::-1], a.defaults[::-1], strict=False))
        defaults |= {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d}
        for name in sorted(names & set(defaults)):
            given = _default_flip(defaults[name])
            for use in ast.walk(func):
                if isinstance(use, ast.Name) and use.id == name and use.lineno in lines:
                    more, kinds = _use(use, fn.parents.get(id(use)))
                    given += more + [_made(k, name) for k in kinds if k != "truthy"]
            given = given or ["True"]
            yield Part(name, tuple(dict.fromkeys(given))[:MAX_VALUES], call=func.name)


def read_parts(
    head: str, parent: str | None, changed: list[int], removed: list[int]
) -> tuple[Part, ...]:
    """The parts the head's changed lines (then the parent's lines they replace) read
    from a mapping, the environment or a keyword parameter, at most ``MAX_PARTS``."""
    out: list[Part] = []
    for source, lines in ((head, changed), (parent, removed)):
        tree = _parse(source) if source and lines else None
        if tree is not None:
            out += _function_parts(tree, set(lines), _constants(tree))
    # a keyword the parent's function does not take is a new name there, not a catch
    taken = _taken(_parse(parent)) if parent else None
    out = [
        p
        for p in out
        if not _keyword(p) or taken is None or {(p.call, p.key), (p.call, "**")} & taken
    ]
    # the keys of a mapping first, the keyword parameters after them
    return tuple(sorted(dict.fromkeys(out), key=_keyword))[:MAX_PARTS]


def _taken(tree: ast.Module | None) -> set[tuple[str, str]] | None:
    """(function, parameter) of each function of ``tree`` (``**`` for ``**kwargs``)."""
    if tree is None:
        return None
    out: set[tuple[str, str]] = set()
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
            out |= {(f.name, p.arg) for p in [*f.args.args, *f.args.kwonlyargs]}
            out |= {(f.name, "**")} if f.args.kwarg is not None else set()
    return out


def _keyword(part: Part) -> bool:
    return bool(part.call) and ":" not in part.call


# ---- where a test's input gets the part ----


class _Source:
    def __init__(self, text: str) -> None:
        self.rows = text.splitlines(keepends=True)
        self.text = "".join(self.rows)

    def at(self, line: int, col: int) -> int:
        return _offset(self.rows, line, col)

    def of(self, node: ast.AST) -> str:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return self.text[start : self.at(node.end_lineno, node.end_col_offset)]  # type: ignore[attr-defined]


def _entries(node: ast.AST) -> dict[str, ast.expr] | None:
    """The entries of a dict literal or of a call's keywords, by key; None for others."""
    if isinstance(node, ast.Dict):
        return {k: v for k, v in zip(map(_key, node.keys), node.values, strict=True) if k}
    if isinstance(node, ast.Call):
        return {k.arg: k.value for k in node.keywords if k.arg}
    return None


def _entry(node: ast.AST, key: str, value: str) -> str | None:
    if isinstance(node, ast.Dict):
        return f"{key!r}: {value}"
    if key.isidentifier() and not keyword.iskeyword(key):
        return f"{key}={value}"
    return None


def _inserted(src: _Source, node: ast.Dict | ast.Call, entry: str) -> str:
    """The source of ``node`` with ``entry`` after its last part."""
    text = src.of(node)
    parts: list[ast.AST] = [*node.values] if isinstance(node, ast.Dict) else []
    if isinstance(node, ast.Call):
        parts = [*node.args, *node.keywords]
    if not parts:
        return text[:-1] + entry + text[-1:]
    last = max(parts, key=lambda p: (p.end_lineno, p.end_col_offset))  # type: ignore[attr-defined]
    start = src.at(node.lineno, node.col_offset)
    at = src.at(last.end_lineno, last.end_col_offset) - start  # type: ignore[attr-defined]
    return text[:at] + ", " + entry + text[at:]


def _nested(path: tuple[str, ...], key: str, value: str) -> str:
    out = f"{{{key!r}: {value}}}"
    for step in reversed(path):
        out = f"{{{step!r}: {out}}}"
    return out


def _put(
    src: _Source, node: ast.AST, part: Part, level: int, value: str
) -> tuple[ast.AST, str] | None:
    """(the node that changes, its new source) for ``part`` added to ``node``, a dict or
    call standing for the mapping at ``level`` of the part's path."""
    entries = _entries(node)
    if entries is None or not isinstance(node, ast.Dict | ast.Call):
        return None
    if level == len(part.path):
        if part.key in entries:
            return None  # given already: ``amplify_inputs`` varies it
        entry = _entry(node, part.key, value)
        return (node, _inserted(src, node, entry)) if entry else None
    step = part.path[level]
    inner = entries.get(step)
    if inner is None:
        entry = _entry(node, step, _nested(part.path[level + 1 :], part.key, value))
        return (node, _inserted(src, node, entry)) if entry else None
    if isinstance(inner, ast.Call) and not _callee_is_dict(inner):
        return None
    return _put(src, inner, part, level + 1, value)


def _callee_is_dict(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "dict"


def _level(node: ast.AST, part: Part, direct: set[int]) -> int | None:
    """The level of the part's path ``node`` stands for: the deepest whose keys it holds
    (a dict argument of a call of the changed function: the top)."""
    entries = _entries(node)
    if entries is None or part.env or (part.call and ":" not in part.call):
        return None
    held = set(entries)
    found = [(len(held & set(keys)), n) for n, keys in enumerate(part.levels) if held & set(keys)]
    if found:
        return max(found)[1]  # the level whose keys it holds most, the deeper on a tie
    return 0 if id(node) in direct else None


def _expected(func: ast.AST) -> set[int]:
    """The nodes of the expected side of the test's asserts: a dict written as an
    operand of an ``assert`` comparison or as an argument of an ``assert*`` call."""
    sides: list[ast.expr] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            sides += [node.test.left, *node.test.comparators]
        elif isinstance(node, ast.Call) and _callee(node).startswith("assert"):
            sides += [*node.args, *(k.value for k in node.keywords)]
    plain = [s for s in sides if isinstance(s, ast.Dict) or _is_dict_call(s)]
    return {id(n) for side in plain for n in ast.walk(side)}


def _is_dict_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _callee_is_dict(node)


def _direct(func: ast.AST, part: Part) -> set[int]:
    """The dict arguments of the test's calls of the changed function (``part.call``:
    ``name:param``)."""
    name = part.call.split(":", 1)[0]
    out: set[int] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and name and _callee(node) == name:
            out |= {id(a) for a in [*node.args, *(k.value for k in node.keywords)]}
    return out


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _span(node: ast.stmt) -> ast.expr:
    """A stand-in expression spanning the statement ``node`` (what a copy replaces)."""
    out = ast.Name(id="_", ctx=ast.Load())
    return ast.copy_location(out, node)


def _placed(
    func: ast.FunctionDef | ast.AsyncFunctionDef, src: _Source, part: Part
) -> Iterator[tuple[ast.AST, ast.expr, str, str]]:
    """(node found, node replaced, new source, value) for each place of the test
    ``func`` that can take ``part``."""
    if part.env:
        names = {a.arg for a in [*func.args.args, *func.args.kwonlyargs]}
        body = func.body[1:] if ast.get_docstring(func) is not None else func.body
        setting = [
            n
            for n in ast.walk(func)
            if isinstance(n, ast.Call)
            and _callee(n) == "setenv"
            and n.args
            and _key(n.args[0]) == part.key
        ]
        if "monkeypatch" in names and body and not setting:
            stmt = body[0]
            for value in part.values:
                put = f"monkeypatch.setenv({part.key!r}, {value})\n{' ' * stmt.col_offset}"
                yield stmt, _span(stmt), put + src.of(stmt), value
        return
    if part.call and ":" not in part.call:  # a keyword of the function's calls
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and _callee(node) == part.call:
                if all(k.arg != part.key for k in node.keywords):
                    for value in part.values:
                        yield node, node, _inserted(src, node, f"{part.key}={value}"), value
        return
    direct = _direct(func, part) if part.call else set()
    expected = _expected(func)
    for node in ast.walk(func):
        level = _level(node, part, direct) if id(node) not in expected else None
        if level is None or (isinstance(node, ast.Call) and not node.keywords and not direct):
            continue
        for value in part.values:
            added = _put(src, node, part, level, value)
            if added is not None and isinstance(added[0], ast.expr):
                yield node, added[0], added[1], value


def _told(part: Part, value: str) -> str:
    where = "".join(f"[{p!r}]" for p in part.path)
    if part.env:
        return f"${part.key}={value}"
    return (
        f"{where}[{part.key!r}] = {value}"
        if not part.call or ":" in part.call
        else (f"{part.call}({part.key}={value})")
    )


def add_variants(
    source: str, func: ast.FunctionDef | ast.AsyncFunctionDef, parts: tuple[Part, ...]
) -> list[tuple[Input, str]]:
    """Each place of the test ``func`` (in the module ``source``) that can take one of
    ``parts``, as the node a copy replaces (its ``value`` says what is added) and the
    source put there: each part's first value first, at most ``MAX_ADDS``."""
    if not parts:
        return []
    src = _Source(source)
    found: list[tuple[int, int, Input, str]] = []
    for rank, part in enumerate(parts):
        for _node, spot, new, value in _placed(func, src, part):
            turn = part.values.index(value)
            found.append((turn, rank, Input(spot, _told(part, value)), new))
    found.sort(key=lambda f: (f[0], f[1]))
    seen: set[str] = set()
    out: list[tuple[Input, str]] = []
    for _turn, _rank, where, new in found:
        said = f"{where.node.lineno}:{new}"
        if said not in seen:
            seen.add(said)
            out.append((where, new))
    return out[:MAX_ADDS]


def adding_first(nodes: list[str], sources: dict[str, str], parts: tuple[Part, ...]) -> list[str]:
    """The test node ids ``nodes`` with those first whose test can take a part."""
    if not parts:
        return nodes

    def holds(func: ast.AST, source: str) -> bool:
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        src = _Source(source)
        return any(next(_placed(func, src, p), None) is not None for p in parts)

    return first_holding(nodes, sources, holds)


# ---- the differential generator's inputs ----


def _one(source: str | None) -> tuple[_Source, ast.expr] | None:
    tree = _parse(source) if source and len(source) < 4000 else None
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    return _Source(str(source)), tree.body[0].value


def _added_source(source: str | None, part: Part) -> list[str]:
    """``source`` (a dict literal or a ``dict(...)`` call) with ``part`` added."""
    found = _one(source)
    if found is None or part.env or (part.call and ":" not in part.call):
        return []
    src, node = found
    if isinstance(node, ast.Call) and not _callee_is_dict(node):
        return []
    level = _level(node, part, {id(node)} if part.call else set())
    if level is None:
        return []
    out: list[str] = []
    for value in part.values:
        put = _put(src, node, part, level, value)
        if put is not None:
            a = src.at(put[0].lineno, put[0].col_offset)  # type: ignore[attr-defined]
            b = src.at(put[0].end_lineno, put[0].end_col_offset)  # type: ignore[attr-defined]
            out.append(src.text[:a] + put[1] + src.text[b:])
    return out


def _keywords(c: Candidate, part: Part) -> list[tuple[tuple[str, str | None], ...]]:
    """The call's keywords with ``part`` added: a keyword parameter of the changed
    function, or an entry of the mapping its keywords stand for."""
    given = dict(c.kwargs)
    if part.key in given or part.env:
        return []
    if part.call and ":" not in part.call:
        return [(*c.kwargs, (part.key, v)) for v in part.values]
    held = [n for n, keys in enumerate(part.levels) if set(given) & set(keys)]
    if not held or not part.key.isidentifier():
        return []
    level = held[-1]
    if level == len(part.path):
        return [(*c.kwargs, (part.key, v)) for v in part.values]
    step = part.path[level]
    if step in given:
        return []
    rest = part.path[level + 1 :]
    return [(*c.kwargs, (step, _nested(rest, part.key, v))) for v in part.values]


def added_to(candidates: list[Candidate], source: str, lines: list[int]) -> list[Candidate]:
    """The differential's inputs with one part the changed lines read added: to a dict
    argument (of the call or of its receiver's constructor) that holds a key read from
    the same mapping (or to one of the changed function's own call), or to the call's
    keywords; at most ``MAX_ADDS``, each part's first value first."""
    parts = read_parts(source, None, lines, [])
    found: list[tuple[int, Candidate]] = []
    for c in candidates[:MAX_ADDS]:
        for part in parts:
            made: list[Candidate] = []
            for i, arg in enumerate(c.args):
                made += [
                    replace(c, args=(*c.args[:i], new, *c.args[i + 1 :]))
                    for new in _added_source(arg, part)
                ]
            if c.ctor is not None:
                args, kwargs = c.ctor
                for i, arg in enumerate(args):
                    for new in _added_source(arg, part):
                        made.append(replace(c, ctor=((*args[:i], new, *args[i + 1 :]), kwargs)))
            made += [replace(c, kwargs=k) for k in _keywords(c, part)]
            found += list(enumerate(made))
    found.sort(key=lambda f: f[0])
    chosen = list(dict.fromkeys(c for _turn, c in found))[:MAX_ADDS]
    return [replace(c, origin=f"{c.origin} (added)") for c in chosen]
