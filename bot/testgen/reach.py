"""Which names a test can call to reach a changed piece of code, read from the module's
source (never run): a method of a class stays a method; a nested function is reached
through the function holding it; a private helper through the public functions and
methods of its module that call it (the module's call graph); a change in a class body
outside its methods through the constructor.

The graph's edges: a call or any other mention of a name (``_helper``, ``self._helper``);
a bound method handed over (``parser.handler = self._on_data``, ``register(obj.meth)``:
whoever registers a callback reaches it); a method of a class from whatever builds the
class (``_Handler(...)``: its methods run as callbacks of what it is given to); and a
private method's name on any object (``self._state._flush()``). Public callers are sought
``DEPTH`` calls away, and further (up to ``MAX_DEPTH``) while none is found: a private
helper deep below its public entry point is still reached."""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Entry", "entries", "readers_entries"]

DEPTH = 3  # calls between a public name and the changed private one, when callers are near
MAX_DEPTH = 8  # how far to look while no public caller is found
MAX_CALLERS = 6


@dataclass(frozen=True)
class Entry:
    qualname: str  # what the test calls: "f", "Cls.method", "Cls.__init__"
    via: str = ""  # the changed private name it reaches, when it is not that name


def _private(qualname: str) -> bool:
    return any(
        p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
        for p in qualname.split(".")
    )


def _defs(tree: ast.Module) -> dict[str, tuple[ast.AST, bool]]:
    """qualname -> (node, is a class) for functions and classes, nested ones too."""
    out: dict[str, tuple[ast.AST, bool]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = prefix + child.name
                out[qual] = (child, isinstance(child, ast.ClassDef))
                walk(child, qual + ".")

    walk(tree, "")
    return out


def _callees(node: ast.AST, owner: str | None) -> set[str]:
    """Qualnames a function's body refers to: ``name``, ``self.name`` / ``cls.name`` /
    ``Owner.name`` (a member of its own class)."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(f"*.{sub.attr}")  # a member of some object: matched by private names
            if isinstance(sub.value, ast.Name):
                if owner and sub.value.id in ("self", "cls", owner.rsplit(".", 1)[-1]):
                    found.add(f"{owner}.{sub.attr}")
                found.add(f"{sub.value.id}.{sub.attr}")
    return found


def _names_for(qualname: str, defs: dict[str, tuple[ast.AST, bool]]) -> set[str]:
    """What a caller's body mentions when it reaches ``qualname``: the qualname, a
    top-level function's name, a private method's name on any object, and for a method
    the class itself (building it registers and reaches its methods)."""
    out = {qualname}
    parts = qualname.split(".")
    if len(parts) == 1:
        return out
    member, owner = parts[-1], ".".join(parts[:-1])
    if member.startswith("_") and not member.startswith("__"):
        out.add(f"*.{member}")
    if defs.get(owner, (None, False))[1]:
        out.add(owner)
        if "." not in owner:
            out.add(owner)  # ``_Handler(...)`` by its name
        out.add(owner.rsplit(".", 1)[-1])
    return out


def _holder(qualname: str, defs: dict[str, tuple[ast.AST, bool]]) -> str:
    """The outermost function holding a nested one (a method counts as outermost)."""
    parts = qualname.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        node = defs.get(prefix)
        if node is not None and not node[1]:
            return prefix
    return qualname


def _module_names(tree: ast.Module, lines: list[int]) -> set[str]:
    """The names the module's top-level assignments on ``lines`` bind (a table, a
    constant): a change there is reached through whatever reads them."""
    out: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            continue
        if not any(node.lineno <= n <= (node.end_lineno or node.lineno) for n in lines):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def entries(
    source: str, qualname: str, lines: list[int] | None = None, callers: bool = False
) -> list[Entry]:
    """The names to call for a changed ``qualname`` of this module (empty: none found);
    for ``<module>``, the changed top-level assignments on ``lines``. A public method is
    also reached through the special methods of its class that call it (``cache[k] = v``
    runs ``__setitem__``); with ``callers``, a public function also through the public
    functions of its module that call it (a helper the tests never call by name)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    defs = _defs(tree)
    if qualname == "<module>":
        names = _module_names(tree, lines or [])
        if not names:
            return []
        return _callers(defs, "<module>", names)
    if qualname in defs and defs[qualname][1]:  # the class body itself changed
        if not _private(qualname):
            return [Entry(f"{qualname}.__init__")]
        # a private class: through whoever builds it
        return _callers(defs, qualname, {qualname, qualname.rsplit(".", 1)[-1]})[:MAX_CALLERS]
    target = _holder(qualname, defs)
    if not _private(target):
        first = Entry(target, "" if target == qualname else qualname)
        # a special method calling the target is also its caller: listed once
        return list(
            dict.fromkeys(
                [
                    first,
                    *_syntax_entries(defs, target),
                    *(_public_callers(defs, target) if callers else []),
                ]
            )
        )
    found = _callers(defs, target, _names_for(target, defs) | {target.rsplit(".", 1)[-1]})
    owner = target.rsplit(".", 1)[0] if "." in target else ""
    if not found and owner in defs and defs[owner][1] and not _private(owner):
        # a private method no code names (reached by getattr, a descriptor): through the
        # public methods of its class
        members = [
            q
            for q, (_node, is_class) in defs.items()
            if q.rsplit(".", 1)[0] == owner and not is_class and not _private(q)
        ]
        members.sort(key=lambda q: q.rsplit(".", 1)[-1].startswith("__"))  # named ones first
        found = [Entry(q, target) for q in members]
    return found[:MAX_CALLERS]


def _callers(defs: dict[str, tuple[ast.AST, bool]], target: str, wanted: set[str]) -> list[Entry]:
    """The public functions and methods whose bodies reach ``wanted`` (what mentions
    ``target``), nearest first."""
    graph = {
        q: _callees(
            node,
            q.rsplit(".", 1)[0]
            if "." in q and defs.get(q.rsplit(".", 1)[0], (None, False))[1]
            else None,
        )
        for q, (node, is_class) in defs.items()
        if not is_class
    }
    seen, found = {target}, []
    for depth in range(MAX_DEPTH):
        callers = {q for q, calls in graph.items() if calls & wanted and q not in seen}
        if not callers:
            break
        for q in sorted(callers):
            entry = _holder(q, defs)
            if not _private(entry) and Entry(entry, target) not in found:
                found.append(Entry(entry, target))
        seen |= callers
        wanted = set().union(*(_names_for(q, defs) for q in callers))
        wanted |= {q.rsplit(".", 1)[-1] for q in callers if "." not in q}
        if len(found) >= MAX_CALLERS or (found and depth + 1 >= DEPTH):
            break
    return found


def readers_entries(tree: ast.Module, wanted: set[str]) -> list[Entry]:
    """The public names of this module that reach a function mentioning ``wanted`` (names
    of changed module-level data, ``table.TABLE`` for one read through its module); the
    entries' ``via`` is ``<module>``."""
    return _callers(_defs(tree), "<module>", wanted)[:MAX_CALLERS]


# special methods whose use a test writes as syntax, not as a call by name (the scenarios
# reader replays these forms)
SYNTAX = (
    "__setitem__",
    "__getitem__",
    "__delitem__",
    "__contains__",
    "__call__",
    "__len__",
    "__iter__",
)


def _syntax_entries(defs: dict[str, tuple[ast.AST, bool]], target: str) -> list[Entry]:
    """``Owner.__setitem__`` and the like when their body calls ``self.member``."""
    owner, _, member = target.rpartition(".")
    if not owner or not defs.get(owner, (None, False))[1] or member in SYNTAX:
        return []
    out = []
    for special in SYNTAX:
        node = defs.get(f"{owner}.{special}")
        if node is not None and f"{owner}.{member}" in _callees(node[0], owner):
            out.append(Entry(f"{owner}.{special}", target))
    return out


def _public_callers(defs: dict[str, tuple[ast.AST, bool]], target: str) -> list[Entry]:
    """The nearest public functions and methods of the module that call ``target``."""
    found = _callers(defs, target, _names_for(target, defs) | {target.rsplit(".", 1)[-1]})
    return [e for e in found if e.qualname != target][:MAX_CALLERS]
