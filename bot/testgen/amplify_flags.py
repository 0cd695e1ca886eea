"""An option the change adds, switched on in copies of the project's tests; and whether a
repeated call gives the same object (for the test amplifier, beside ``amplify_calls``).

A release often adds an option with a default that keeps the old behaviour (a dataclass
field ``keep_connection: bool = False``, a class attribute, ``self.strict = False`` in
``__init__``, a keyword parameter stored on ``self``), and its changed lines branch on it
(``if self.config.keep_connection:``). The project's old tests never set it, so they run
the old branch on both sides; a test passing it as a keyword fails on the parent with a
``TypeError`` (a new name, not a behaviour). Set by ATTRIBUTE ASSIGNMENT after the holder
is built it is a plain attribute on the parent, and the new behaviour on the head.

- **Options** (``options``): the attributes the changed lines read (``self.config.X``,
  ``obj.X``) that a class of a changed module has on the head and not on the parent, with
  a constant default: a bool is flipped; another constant gets the literals the changed
  lines compare it with. The holder must take a new attribute on the parent too: a plain
  class or a ``@dataclass`` (not frozen, no slots, no ``__setattr__``, no base but
  ``object`` or another such class of its module).
- **Repeats** (``repeats``): the changed public methods; a copy calls one twice on an
  object the test builds and observes ``first is second`` as a bool (a kept connection,
  a cache, memoization) through a helper the copy defines in the test.
- **Copies** (``flag_copies``): for a test that binds a name to a built holder
  (``config = Config(...)``, at any depth of its body), ``config.X = value`` right after
  that statement, then the test's body; and with a repeat after the last statement of the
  receiver's block that names it. Each copy's source carries a comment naming what Nova
  added; ``marked`` puts it back on the written test (its writer drops comments).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass, field

__all__ = [
    "FlagPlan",
    "Option",
    "built_class",
    "changed_modules",
    "flag_copies",
    "flag_plan",
    "marked",
    "options",
    "repeats",
]

MARK = "o"  # a copy's name: test_x__o1
SET = "option set"  # how a copy's description starts
TWICE = "called twice"
EACH = 2  # copies of one test (the rest of its turn is amplify_calls')
MAX_VALUES = 2  # values tried for one non-bool option
_TWICE_NAME = "{m}_twice_same"
# values whose identity says nothing of the code (a constant string, a small int)
_VALUES = "(str, bytes, int, float, complex, tuple, frozenset, type(None))"
# methods never called twice: they may write files, remove things or start processes
_OUTSIDE = re.compile(
    r"^(save|write|dump|export|unlink|remove|delete|rmtree|mkdir|makedirs|rename|move|copy|"
    r"upload|download|send|listen|serve|run|spawn|kill|terminate|exec|close|stop|shutdown|"
    r"clear|reset|pop|append|add|insert|push|update|set|put)(_|$)"
)
_SETTABLE_BASES = {"object"}
_DATACLASS = re.compile(r"^(dataclasses\.)?dataclass\b")


@dataclass(frozen=True)
class Option:
    holder: str  # the class that has it
    name: str
    value: str  # the source of the value a copy sets
    default: str  # the source of its default


@dataclass
class FlagPlan:
    """What copies can do: options to set on a built holder; class -> the changed
    methods to call twice, each with the argument lists the tests give it."""

    options: list[Option] = field(default_factory=list)
    repeats: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.options) or any(self.repeats.values())

    def classes(self) -> set[str]:
        return {o.holder for o in self.options} | {c for c, ms in self.repeats.items() if ms}


def _parse(source: str | None) -> ast.Module | None:
    if not source:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _settable(node: ast.ClassDef, settable: set[str]) -> bool:
    """Whether an instance takes a new attribute on the parent too."""
    for d in node.decorator_list:
        shown = ast.unparse(d)
        if "dataclass" in shown:
            if not _DATACLASS.match(shown) or re.search(r"(frozen|slots)\s*=\s*True", shown):
                return False
        elif not shown.endswith(("total_ordering",)):
            return False  # attrs, pydantic and the like: their own attribute rules
    if node.keywords:
        return False
    for b in node.bases:
        if ast.unparse(b) not in _SETTABLE_BASES | settable:
            return False
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name in ("__setattr__", "__getattr__"):
            return False
        if isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
                return False
    return True


def _constant(value: ast.expr | None) -> ast.Constant | None:
    """A constant default: ``False``, ``field(default=3)``."""
    if isinstance(value, ast.Constant) and not isinstance(value.value, bytes):
        return value
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
        for k in value.keywords:
            if k.arg == "default" and isinstance(k.value, ast.Constant):
                return k.value
    return None


def _attributes(node: ast.ClassDef) -> dict[str, ast.Constant | None]:
    """A class's attributes -> their constant default (None: not a constant)."""
    out: dict[str, ast.Constant | None] = {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            out[item.target.id] = _constant(item.value)
        elif isinstance(item, ast.Assign):
            for t in item.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = _constant(item.value)
        elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            params = _param_defaults(item) if item.name == "__init__" else {}
            for sub in ast.walk(item):
                if not isinstance(sub, ast.Assign | ast.AnnAssign):
                    continue
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                for t in targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                    ):
                        value = sub.value
                        if isinstance(value, ast.Name) and value.id in params:
                            found = params[value.id]
                        else:
                            found = _constant(value) if item.name == "__init__" else None
                        if t.attr not in out or out[t.attr] is None:
                            out[t.attr] = found
    return out


def _param_defaults(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Constant | None]:
    a = func.args
    plain = [*a.posonlyargs, *a.args]
    out: dict[str, ast.Constant | None] = {}
    for p, d in zip(plain[len(plain) - len(a.defaults) :], a.defaults, strict=True):
        out[p.arg] = _constant(d)
    for p, kd in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        if kd is not None:
            out[p.arg] = _constant(kd)
    return out


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _read(tree: ast.Module, lines: set[int]) -> tuple[set[str], dict[str, list[object]]]:
    """The attributes the changed lines read, and the constants they compare each with."""
    names: set[str] = set()
    compared: dict[str, list[object]] = {}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if line not in lines:
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            names.add(node.attr)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            attrs = [s.attr for s in sides if isinstance(s, ast.Attribute)]
            consts: list[object] = []
            for s in sides:
                if isinstance(s, ast.Constant):
                    consts.append(s.value)
                elif isinstance(s, ast.Tuple | ast.List | ast.Set):
                    consts += [e.value for e in s.elts if isinstance(e, ast.Constant)]
            for a in attrs:
                compared.setdefault(a, []).extend(consts)
    return names, compared


def changed_modules(
    files: dict[str, tuple[str, str | None]],
) -> list[tuple[str, str | None, list[int]]]:
    """Each changed module's ``(head source, parent source, the head's changed lines)``,
    from ``path -> (head, parent)``: every module of the change, the holder's too when
    the generator amplifies only the targets of another."""
    out = []
    for path, (head, parent) in sorted(files.items()):
        if not path.endswith(".py") or not head:
            continue
        new = head.splitlines()
        matcher = difflib.SequenceMatcher(None, (parent or "").splitlines(), new, autojunk=False)
        lines = [
            j + 1
            for tag, _, _, j1, j2 in matcher.get_opcodes()
            if tag in ("replace", "insert")
            for j in range(j1, j2)
        ]
        if lines:
            out.append((head, parent, lines))
    return out


def options(changed: list[tuple[str, str | None, list[int]]]) -> list[Option]:
    """The options a change adds and its changed lines read, from each changed module's
    ``(head source, parent source, changed lines)``; each with the value a copy sets."""
    read: set[str] = set()
    compared: dict[str, list[object]] = {}
    holders: list[tuple[ast.ClassDef, dict[str, ast.Constant | None]]] = []
    for head, parent, lines in changed:
        tree = _parse(head)
        if tree is None:
            continue
        names, comps = _read(tree, set(lines))
        read |= names
        for k, v in comps.items():
            compared.setdefault(k, []).extend(v)
        old_tree = _parse(parent)
        old = _classes(old_tree) if old_tree is not None else {}
        settable: set[str] = set()
        for name, node in _classes(tree).items():
            if not _settable(node, settable):
                continue
            settable.add(name)
            before = _attributes(old[name]) if name in old else {}
            new = {k: v for k, v in _attributes(node).items() if k not in before}
            # the parent's class must take the new attribute too (no slots there)
            if name in old and new and _settable(old[name], set(old)):
                holders.append((node, new))
    out: list[Option] = []
    for node, new in holders:
        for attr, const in new.items():
            if attr not in read or const is None or attr.startswith("__"):
                continue
            default = const.value
            for value in _values(default, compared.get(attr, [])):
                out.append(Option(node.name, attr, repr(value), repr(default)))
    return out


def _values(default: object, compared: list[object]) -> list[object]:
    """The values a copy sets: a bool flipped; else the constants the changed lines
    compare the option with (not its default), of its type when it has one."""
    if isinstance(default, bool):
        return [not default]
    out: list[object] = []
    for c in compared:
        if c == default or isinstance(c, bool) or c in out:
            continue
        if default is not None and type(c) is not type(default):
            continue
        out.append(c)
    return out[:MAX_VALUES]


def repeats(changed: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Class -> its changed public methods (``(module source, qualname)`` of the changed
    targets) a copy may call twice."""
    out: dict[str, list[str]] = {}
    for source, qualname in changed:
        owner, _, name = qualname.rpartition(".")
        if not owner or "." in owner or name.startswith("_") or _OUTSIDE.match(name):
            continue
        tree = _parse(source)
        cls = _classes(tree).get(owner) if tree is not None else None
        if cls is None:
            continue
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                # a property is read, not called (a cache decorator is the point: kept)
                decorated = any(
                    "property" in (s := ast.unparse(d)) or s.endswith((".setter", ".deleter"))
                    for d in item.decorator_list
                )
                if not decorated and name not in out.setdefault(owner, []):
                    out[owner].append(name)
    return out


def flag_plan(
    changed: list[tuple[str, str | None, list[int]]],
    twice: dict[str, list[str]],
    arguments: dict[str, list[str]],
) -> FlagPlan:
    """The plan from the changed modules (head, parent, lines), the methods to call twice
    (``repeats``) and the argument lists the tests give each method (the first is used)."""
    calls: dict[str, list[tuple[str, str]]] = {}
    for c, ms in twice.items():
        for m in ms:
            args = _first(arguments.get(m, []))
            if args is not None:
                calls.setdefault(c, []).append((m, args))
    return FlagPlan(options(changed), calls)


def _first(given: list[str]) -> str | None:
    """The arguments of a repeated call: none, when the method takes none (a getter, a
    connection); a call with arguments may change what it is called on (an insert made
    twice), it is not repeated."""
    return "" if "" in given else None


# -- the copies ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bound:
    name: str  # as the test writes it
    cls: str
    stmt: ast.stmt  # the statement that binds it
    block: list[ast.stmt]  # the statements around it


def built_class(value: ast.expr | None, classes: set[str]) -> str:
    """The class of ``classes`` that ``value`` builds (``Cls(...)``, ``mod.Cls(...)``),
    else ""."""
    if not isinstance(value, ast.Call):
        return ""
    func = value.func
    name = func.id if isinstance(func, ast.Name) else ""
    name = func.attr if isinstance(func, ast.Attribute) else name
    return name if name in classes else ""


def _blocks(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """The statement lists of a function's body (not inside a nested def or class)."""
    out = [body]
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                out += _blocks(inner)
        for handler in getattr(stmt, "handlers", []) or []:
            out += _blocks(handler.body)
    return out


def _bound(func: ast.FunctionDef | ast.AsyncFunctionDef, classes: set[str]) -> list[_Bound]:
    out = []
    for block in _blocks(func.body):
        for stmt in block:
            value: ast.expr | None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign):
                target, value = stmt.target, stmt.value
            else:
                continue
            cls = built_class(value, classes)
            if cls and isinstance(target, ast.Name):
                out.append(_Bound(target.id, cls, stmt, block))
    return out


def _set_up(owner: ast.ClassDef | None, classes: set[str]) -> list[tuple[str, str]]:
    """``self.x`` -> its class, for the holders a test class's ``setUp`` builds."""
    out: list[tuple[str, str]] = []
    for item in owner.body if owner is not None else []:
        if not (isinstance(item, ast.FunctionDef) and item.name in ("setUp", "setup_method")):
            continue
        for stmt in item.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                cls = built_class(stmt.value, classes)
                if (
                    cls
                    and isinstance(target, ast.Attribute)
                    and ast.unparse(target.value) == "self"
                ):
                    out.append((ast.unparse(target), cls))
    return out


def _last_use(b: _Bound) -> ast.stmt | None:
    """The last statement of the binding's block (from it on) that names the object; None
    when that is a ``return``."""
    at = next(i for i, s in enumerate(b.block) if s is b.stmt)
    last: ast.stmt = b.stmt
    for stmt in b.block[at + 1 :]:
        if any(isinstance(n, ast.Name) and n.id == b.name for n in ast.walk(stmt)):
            last = stmt
    return None if isinstance(last, ast.Return) else last


def flag_copies(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    plan: FlagPlan,
    known: set[str],
    names: dict[str, frozenset[str]],
    limit: int = EACH,
    owner: ast.ClassDef | None = None,
) -> list[tuple[dict[int, list[str]], str]]:
    """Copies of ``func``: for each, the rows to insert after a line of the module
    (line -> rows, indented) and what the copy does. Options set on the holders the
    test builds (or its class's ``setUp``: at the start of the copy), each with a repeat
    where one applies, then alone; then repeats alone."""
    if limit <= 0 or not plan:
        return []
    bound = _bound(func, plan.classes())
    start = func.body[0]
    documented = isinstance(start, ast.Expr) and isinstance(start.value, ast.Constant)
    # after the test's docstring, else the line before its first statement
    at = (start.end_lineno or start.lineno) if documented else start.lineno - 1
    for name, cls in _set_up(owner, plan.classes()):
        shown = ast.Pass(lineno=at, col_offset=start.col_offset)
        bound.append(_Bound(name, cls, shown, [shown]))
    taken = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)}
    sets: list[tuple[dict[int, list[str]], str]] = []
    for option in plan.options:
        holders = [b for b in bound if b.cls == option.holder]
        if not holders:
            continue
        rows: dict[int, list[str]] = {}
        for b in holders:
            indent = " " * b.stmt.col_offset
            rows.setdefault(b.stmt.end_lineno or b.stmt.lineno, []).extend(
                [
                    f"{indent}# Nova: the option {option.name} this change adds to "
                    f"{option.holder}, set to {option.value} (its default is {option.default})",
                    f"{indent}{b.name}.{option.name} = {option.value}",
                ]
            )
        sets.append((rows, f"{SET}: {option.holder}.{option.name} = {option.value}"))
    twice: list[tuple[dict[int, list[str]], str]] = []
    for b in bound:
        if "." in b.name:
            continue  # built by setUp: its block is not the test's
        for method, args in plan.repeats.get(b.cls, []):
            last = _last_use(b)
            helper = _TWICE_NAME.format(m=method)
            if last is None or helper in taken or not names.get(args, frozenset()) <= known:
                continue
            indent = " " * last.col_offset
            call = f"{b.name}.{method}({args})"
            rows = {
                last.end_lineno or last.lineno: [
                    f"{indent}# Nova: {call} called twice: the same object both times?"
                    " (a kept connection, a cache)",
                    f"{indent}def {helper}():",
                    f"{indent}    first = {call}",
                    f"{indent}    second = {call}",
                    f"{indent}    if isinstance(first, {_VALUES}):",
                    f"{indent}        return None  # a value: its identity is the interpreter's",
                    f"{indent}    return first is second",
                    f"{indent}{helper}()",
                ]
            }
            twice.append((rows, f"{TWICE}: {call}"))
    both: list[tuple[dict[int, list[str]], str]] = []
    for rows, what in sets:
        for more, again in twice:
            merged = {k: list(v) for k, v in rows.items()}
            for k, v in more.items():
                merged.setdefault(k, []).extend(v)
            both.append((merged, f"{what}; {again}"))
    return (both + sets + twice)[:limit]


_COMMENT = re.compile(r"^\s*# Nova: ")


def marked(lines: list[str], variant: str, copied: str) -> list[str]:
    """The written test's lines with the comments the copy's source had above the rows
    Nova added (the writer keeps no comment): ``copied`` is the copy's source."""
    if f", {SET}: " not in variant and f", {TWICE}: " not in variant:
        return lines
    rows = copied.splitlines()
    notes: dict[str, str] = {}
    for i, row in enumerate(rows[:-1]):
        if _COMMENT.match(row):
            notes.setdefault(rows[i + 1].strip(), row.strip())
    out: list[str] = []
    for line in lines:
        note = notes.get(line.strip())
        if note and not (out and out[-1].strip() == note):
            out.append(line[: len(line) - len(line.lstrip())] + note)
        out.append(line)
    return out
