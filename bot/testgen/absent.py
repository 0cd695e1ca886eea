"""Inputs steered to values a changed lookup does not find (and to ones it does).

A common fix is "works when X is not in the table": the changed lines look a value up in
a mapping or a set the module holds (often loaded from a data file at import) and now
handle a miss (``found = TABLE.get(char, False); if found is False: continue``,
``if key not in TABLE: return None``, ``try: TABLE[k] except KeyError:``). The project's
own tests use only values that are in the table, so no input reaches the changed branch.

- **Which lookups** (``lookups``): in the changed lines (and the ``if`` / ``while``
  condition or the ``try`` whose body or handler they are, and a lookup whose result a
  changed line reads), ``T.get(k)`` / ``T.setdefault(k, ...)`` / ``T.pop(k, ...)``,
  ``k in T`` / ``k not in T`` and ``T[k]``, where ``T`` is a module-level or class-level
  container: a name the function does not bind (``TABLE``, ``data.TABLE``) or
  ``self.X`` / ``cls.X``.
- **Which parameter** the key comes from: the parameter itself (also transformed,
  ``name.lower()``), each character or item of it (``for char in string``), each key of
  a dict (``for k in d`` / ``d.items()``), each word (``text.split()``); through a
  private helper the function calls, the argument it passes.
- **At probe time** the container is only known at run time (``json.load`` of a data
  file): a small stdlib script imports the module in the sandbox (head) and answers
  which candidate values are absent from it, and gives a few keys it holds.
- **Inputs**: the tests' own values for that parameter with an absent character added
  (at the end and at the start), an absent key of the same type and shape in its place,
  an absent item or key added to a list or dict; and one value present in the container
  where the tests have none.
"""

from __future__ import annotations

import ast
import builtins
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from bot.testgen.frameworks import Framework
from bot.testgen.inputs import Candidate
from bot.testgen.moddata import _functions, module_of
from bot.testgen.workspace import Workspace

__all__ = ["AbsentInputs", "Answer", "Lookup", "absent_candidates", "lookups", "query_values"]

MAX_INPUTS = 24  # inputs made per function
MAX_BASES = 8  # the tests' inputs they are made from
MAX_CHARS = 3  # absent characters used
MAX_QUERIES = 4  # sandbox runs per job
MAX_DEPTH = 4
QUERY_SECONDS = 30.0  # importing the module; the probe itself runs it again
# characters tried, by class: the first absent of each class is used (ASCII first: a test
# a reviewer reads); then a control character
POOL: tuple[str, ...] = (
    "qzjxQZJX",
    "79",
    "~^`_-#@!.",
    "\u00e9\u00df\u0436\u03bb\u4e2d\u0627\u05d0\u3042\ud55c\u00f1",
    "\x00",
)
_GET = {"get", "setdefault", "pop"}
_MISSES = {"KeyError", "LookupError", "IndexError", "Exception"}
_EACH_CALLS = {"sorted", "reversed", "list", "tuple", "set", "frozenset", "iter"}
_BUILTINS = set(dir(builtins))
Node = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Lookup:
    """A lookup of a parameter's value (``each``: "" the value, "item" each character or
    item, "key" each key, "word" each word; ``param`` "*": any argument) in the container
    ``chain`` (attribute names from the module, or from the class ``owner``)."""

    chain: tuple[str, ...]
    owner: str
    param: str  # "ctor:<name>": the constructor's parameter an attribute was set from
    each: str
    line: int
    ctor: tuple[str, ...] = ()  # the constructor's positional parameters, for "ctor:"

    @property
    def shown(self) -> str:
        return ".".join(self.chain)


@dataclass
class Answer:
    """What the run-time container holds of the asked values: those it does not hold,
    and a few keys it does (single characters apart)."""

    kind: str = ""  # "" when it could not be read
    absent: set[Any] = field(default_factory=set)
    keys: list[Any] = field(default_factory=list)
    chars: list[str] = field(default_factory=list)


# --- which lookups the changed lines make ---------------------------------------------


def lookups(source: str, name: str, lines: Iterable[int]) -> list[Lookup]:
    """The lookups in module- or class-level containers that the changed ``lines`` make
    (in ``name`` or in a function of the module it calls), with the parameter of
    ``name`` their key comes from."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    functions = dict(_functions(tree))
    target = functions.get(name)
    changed = set(lines)
    if target is None or not changed:
        return []
    out: dict[tuple[tuple[str, ...], str, str, str], Lookup] = {}
    for qualname, node in functions.items():
        if not changed & set(range(node.lineno, (node.end_lineno or node.lineno) + 1)):
            continue
        for container, key, line in _changed_lookups(node, changed):
            where = _container(container, node, qualname)
            if where is None:
                continue
            for param, each in _origins(node, key, 0):
                if qualname != name and not param.startswith("self."):
                    found = _through(target, qualname, node, param, each)
                    if found is None:
                        continue
                    param, each = found
                ctor: tuple[str, ...] = ()
                if param.startswith("self."):
                    built = _from_ctor(functions, name, param, each)
                    if built is None:
                        continue
                    param, each, ctor = built
                hit = Lookup(where[0], where[1], param, each, line, ctor)
                out.setdefault((hit.chain, hit.owner, param, each), hit)
    return list(out.values())


def _from_ctor(
    functions: dict[str, Node], name: str, param: str, each: str
) -> tuple[str, str, tuple[str, ...]] | None:
    """The constructor parameter ``self.x`` was set from (``self.x = x.lower()`` in
    ``__init__``), its "how", and the constructor's positional parameters."""
    init = functions.get(f"{name.rsplit('.', 1)[0]}.__init__")
    if init is None or "." not in name:
        return None
    attr = param.split(".", 1)[1]
    for sub in ast.walk(init):
        if not isinstance(sub, ast.Assign) or len(sub.targets) != 1:
            continue
        target = sub.targets[0]
        if _self_attribute(init, target) != attr:
            continue
        for outer, how in _origins(init, sub.value, 0):
            if (not how or not each) and not outer.startswith("self."):
                return f"ctor:{outer}", how or each, tuple(_params(init)[1:])
    return None


def _self_attribute(func: Node, node: ast.AST) -> str | None:
    """``x`` of ``self.x`` in a method whose first parameter is ``self``."""
    params = _params(func)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and params[:1] == ["self"]
        and node.value.id == "self"
    ):
        return node.attr
    return None


def _parents(node: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}


def _span(node: ast.AST) -> set[int]:
    first = getattr(node, "lineno", 0)
    return set(range(first, (getattr(node, "end_lineno", None) or first) + 1))


def _block_lines(stmts: list[ast.stmt]) -> set[int]:
    return {n for s in stmts for n in _span(s)}


def _candidates(func: Node) -> Iterator[tuple[ast.AST, ast.expr, ast.expr]]:
    """(node, container, key) of every lookup in the function's body."""
    for stmt in func.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                if sub.func.attr in _GET and sub.args and not isinstance(sub.args[0], ast.Starred):
                    yield sub, sub.func.value, sub.args[0]
            elif isinstance(sub, ast.Compare) and len(sub.ops) == 1:
                if isinstance(sub.ops[0], ast.In | ast.NotIn):
                    yield sub, sub.comparators[0], sub.left
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load):
                if not isinstance(sub.slice, ast.Slice):
                    yield sub, sub.value, sub.slice


def _changed_lookups(func: Node, changed: set[int]) -> Iterator[tuple[ast.expr, ast.expr, int]]:
    parents = _parents(func)
    for node, container, key in _candidates(func):
        if _is_changed(node, parents, changed, func):
            yield container, key, getattr(node, "lineno", 0)


def _is_changed(
    node: ast.AST, parents: dict[ast.AST, ast.AST], changed: set[int], func: Node
) -> bool:
    """On a changed line; the condition of an ``if`` / ``while`` whose body or ``else``
    changed; in a ``try`` catching a miss whose body or handler changed; or assigned to
    a name a changed line reads."""
    if _span(node) & changed:
        return True
    up = parents.get(node)
    while up is not None and not isinstance(up, ast.stmt):
        up = parents.get(up)
    if isinstance(up, ast.If | ast.While) and _within(node, up.test, parents):
        if (_block_lines(up.body) | _block_lines(up.orelse)) & changed:
            return True
    if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
        bound = up.targets[0].id
        for sub in ast.walk(func):
            if (
                isinstance(sub, ast.Name)
                and sub.id == bound
                and isinstance(sub.ctx, ast.Load)
                and sub.lineno in changed
                and sub.lineno > up.lineno
            ):
                return True
    while up is not None and up is not func:
        outer = parents.get(up)
        if isinstance(outer, ast.Try) and up in outer.body and _catches_miss(outer):
            handled = _block_lines(outer.body) | {n for h in outer.handlers for n in _span(h)}
            if handled & changed and isinstance(node, ast.Subscript | ast.Call):
                return True
        up = outer
    return False


def _within(node: ast.AST, root: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    at: ast.AST | None = node
    while at is not None:
        if at is root:
            return True
        at = parents.get(at)
    return False


def _catches_miss(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for n in names:
            last = n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")
            if last in _MISSES:
                return True
    return False


def _params(func: Node) -> list[str]:
    args = func.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def _is_method(func: Node, qualname: str) -> bool:
    decorated = {getattr(d, "id", "") for d in func.decorator_list}
    return "." in qualname and "staticmethod" not in decorated and bool(_params(func))


def _locals(func: Node) -> set[str]:
    names = set(_params(func))
    declared: set[str] = set()
    for sub in ast.walk(func):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            names.add(sub.id)
        elif isinstance(sub, ast.Global | ast.Nonlocal):
            declared.update(sub.names)
        elif isinstance(sub, ast.alias) and sub is not None:
            names.add((sub.asname or sub.name).split(".")[0])
    if func.args.vararg:
        names.add(func.args.vararg.arg)
    if func.args.kwarg:
        names.add(func.args.kwarg.arg)
    return names - declared


def _container(expr: ast.expr, func: Node, qualname: str) -> tuple[tuple[str, ...], str] | None:
    """The attribute chain of a module- or class-level container, and the class it is
    read from ("" for the module); None for a local value or a call's result."""
    chain: list[str] = []
    root: ast.expr = expr
    while isinstance(root, ast.Attribute):
        chain.insert(0, root.attr)
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    if _is_method(func, qualname) and root.id == _params(func)[0] and chain:
        return tuple(chain), qualname.rsplit(".", 1)[0]
    if root.id in _locals(func) or root.id in _BUILTINS:
        return None
    return (root.id, *chain), ""


def _origins(func: Node, key: ast.expr, depth: int) -> list[tuple[str, str]]:
    """(parameter, how) pairs the key's value comes from."""
    if depth > MAX_DEPTH:
        return []
    attr = _self_attribute(func, key)
    if attr is not None:
        return [(f"self.{attr}", "")]  # set by the constructor, perhaps
    if isinstance(key, ast.Name):
        if key.id in _params(func):
            return [(key.id, "")]
        return _bound(func, key.id, depth)
    found = {o for n in _sources(func, key) for o in _origins(func, n, depth + 1)}
    return sorted(found) if len(found) == 1 else []  # a transformed value of one source


def _sources(func: Node, expr: ast.expr) -> list[ast.expr]:
    """The names an expression reads, and its ``self.x`` as one."""
    out: list[ast.expr] = []
    todo: list[ast.AST] = [expr]
    while todo:
        node = todo.pop()
        if _self_attribute(func, node) is not None:
            out.append(node)  # type: ignore[arg-type]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.append(node)
        else:
            todo += ast.iter_child_nodes(node)
    return out


def _bound(func: Node, name: str, depth: int) -> list[tuple[str, str]]:
    """Where a local name's value comes from: a loop (or comprehension) over a
    parameter, or an assignment from it."""
    out: list[tuple[str, str]] = []
    for sub in ast.walk(func):
        if isinstance(sub, ast.For | ast.AsyncFor | ast.comprehension):
            out += _looped(func, sub.target, sub.iter, name, depth)
        elif isinstance(sub, ast.Assign) and len(sub.targets) == 1:
            target = sub.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                out += _origins(func, sub.value, depth + 1)
    return list(dict.fromkeys(out))


def _looped(
    func: Node, target: ast.expr, over: ast.expr, name: str, depth: int
) -> list[tuple[str, str]]:
    first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else None
    last = target.elts[-1] if isinstance(target, ast.Tuple) and target.elts else None
    whole = isinstance(target, ast.Name) and target.id == name
    each = ""
    source: ast.expr | None = None
    if isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute):
        attr = over.func.attr
        if attr in ("keys", "items") and (
            whole or (isinstance(first, ast.Name) and first.id == name and attr == "items")
        ):
            each, source = "key", over.func.value
        elif attr in ("split", "splitlines") and whole:
            each, source = "word", over.func.value
    elif isinstance(over, ast.Call) and isinstance(over.func, ast.Name) and over.args:
        if over.func.id in _EACH_CALLS and whole:
            each, source = "item", over.args[0]
        elif over.func.id == "enumerate" and isinstance(last, ast.Name) and last.id == name:
            each, source = "item", over.args[0]
    elif whole:
        each, source = "item", over
    if source is None:
        return []
    out = []
    for param, how in _origins(func, source, depth + 1):
        if how == "":
            out.append((param, each))
    return out


def _through(
    target: Node, helper: str, node: Node, param: str, each: str
) -> tuple[str, str] | None:
    """The parameter of ``target`` a helper's parameter is fed from, where ``target``
    calls it (``_helper(x)``, ``self._helper(x)``); "*" (any argument) when it calls it
    further down."""
    short = helper.rsplit(".", 1)[-1]
    params = _params(node)
    if _is_method(node, helper):
        params = params[1:]
    calls = [
        s
        for s in ast.walk(target)
        if isinstance(s, ast.Call)
        and (
            (isinstance(s.func, ast.Name) and s.func.id == short)
            or (isinstance(s.func, ast.Attribute) and s.func.attr == short)
        )
    ]
    if not calls:
        return ("*", each)
    for call in calls:
        arg: ast.expr | None = None
        if param in params and params.index(param) < len(call.args):
            arg = call.args[params.index(param)]
        arg = next((k.value for k in call.keywords if k.arg == param), arg)
        if arg is None or isinstance(arg, ast.Starred):
            continue
        for outer, how in _origins(target, arg, 0):
            if not how or not each:
                return outer, how or each
    return None


# --- what the run-time container holds --------------------------------------------------

_SCRIPT = """
import collections.abc as abc, importlib, json, sys
plan = json.load(open(sys.argv[1], encoding="utf-8"))
out = []
try:
    module = importlib.import_module(plan["module"])
except BaseException:
    module = None

def simple(v):
    return (type(v) is str and len(v) <= 60) or type(v) is int

def pick(keys):
    keys = [k for k in keys if simple(k)]
    strs = [k for k in keys if type(k) is str]
    chosen = keys[:3] + sorted(strs, key=len, reverse=True)[:3]
    chosen += sorted(strs, key=lambda k: -sum(not c.isalnum() for c in k))[:2]
    ints = [k for k in keys if type(k) is int]
    chosen += [max(ints), min(ints)] if ints else []
    return list(dict.fromkeys(chosen))

for spec in plan["lookups"]:
    entry = {"kind": ""}
    out.append(entry)
    try:
        found = module
        for part in [p for p in spec["owner"].split(".") if p] + spec["chain"]:
            found = getattr(found, part)
    except BaseException:
        continue
    if isinstance(found, abc.Mapping):
        kind = "mapping"
    elif isinstance(found, (abc.Set, list, tuple)):
        kind = "collection"
    elif isinstance(found, str):
        kind = "text"
    else:
        continue
    try:
        keys = []
        for i, k in enumerate(found):
            if i >= 200000:
                break
            keys.append(k)
        absent = []
        for v in plan["values"]:
            try:
                if v not in found:
                    absent.append(v)
            except TypeError:
                pass
    except BaseException:
        continue
    chars = [k for k in keys if type(k) is str and len(k) == 1 and k.isprintable()]
    entry.update(kind=kind, absent=absent, keys=pick(keys), chars=chars[:40])
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"))
"""


def query_values(candidates: list[Candidate], params: list[str], found: list[Lookup]) -> list[Any]:
    """The values whose membership is asked: the characters of ``POOL`` and, of the
    tests' values for the looked-up parameters, each value, its items, and variants of
    the same type and shape."""
    out: list[Any] = [c for group in POOL for c in group]
    for lookup in found:
        for value in _values(candidates, params, lookup):
            for item in _parts(value, lookup.each):
                out += [item, *_shaped(item)]
    return list(dict.fromkeys(v for v in out if type(v) in (str, int)))


def _query(
    ws: Workspace, fw: Framework, module: str, found: list[Lookup], values: list[Any]
) -> list[Answer]:
    scratch = ws.scratch()
    plan_file, out_file = scratch / "absent-plan.json", scratch / "absent-out.json"
    specs = [{"chain": list(f.chain), "owner": f.owner} for f in found]
    plan_file.write_text(json.dumps({"module": module, "lookups": specs, "values": values}))
    out_file.unlink(missing_ok=True)
    ws.run(
        [fw.run_files[0], "-c", _SCRIPT, str(plan_file), str(out_file)],
        timeout=QUERY_SECONDS,
        env={"PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        data = json.loads(out_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [Answer() for _ in found]
    if not isinstance(data, list) or len(data) != len(found):
        return [Answer() for _ in found]
    return [
        Answer(
            str(d.get("kind") or ""),
            set(d.get("absent") or []),
            list(d.get("keys") or []),
            [c for c in d.get("chars") or [] if isinstance(c, str)],
        )
        for d in data
    ]


# --- the inputs made -------------------------------------------------------------------


def _literal(source: str | None) -> Any:
    try:
        return ast.literal_eval(source) if source else None
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None


def _slots(c: Candidate, params: list[str], lookup: Lookup) -> list[tuple[str, int | str]]:
    """Where the looked-up parameter's value sits in a call: ("arg", index) / ("kw",
    name), in the constructor's call for "ctor:" ("ctor-arg" / "ctor-kw"); any literal
    argument for "*"."""
    param = lookup.param
    out: list[tuple[str, int | str]] = []
    if param.startswith("ctor:"):
        name = param.split(":", 1)[1]
        args, kwargs = c.ctor if c.ctor is not None else ((), ())
        out += [("ctor-arg", i) for i in range(len(args)) if lookup.ctor[i : i + 1] == (name,)]
        return out + [("ctor-kw", k) for k, _v in kwargs if k == name]
    for i, source in enumerate(c.args):
        if (param == "*" and _literal(source) is not None) or (
            i < len(params) and params[i] == param
        ):
            out.append(("arg", i))
    for key, source in c.kwargs:
        if key == param or (param == "*" and _literal(source) is not None):
            out.append(("kw", key))
    return out


def _get(c: Candidate, slot: tuple[str, int | str]) -> str | None:
    kind, where = slot
    args, kwargs = c.ctor if kind.startswith("ctor") and c.ctor is not None else (c.args, c.kwargs)
    if kind.endswith("arg"):
        return args[int(where)]
    return dict(kwargs).get(str(where))


def _put(c: Candidate, slot: tuple[str, int | str], value: Any, origin: str) -> Candidate:
    kind, where = slot
    text = repr(value)
    args, kwargs = c.ctor if kind.startswith("ctor") and c.ctor is not None else (c.args, c.kwargs)
    if kind.endswith("arg"):
        i = int(where)
        args = (*args[:i], text, *args[i + 1 :])
    else:
        kwargs = tuple((k, text if k == where else v) for k, v in kwargs)
    if kind.startswith("ctor"):
        return replace(c, ctor=(args, kwargs), origin=origin)
    return replace(c, args=args, kwargs=kwargs, origin=origin)


def _values(candidates: list[Candidate], params: list[str], lookup: Lookup) -> list[Any]:
    out = []
    for c in candidates[:40]:
        for slot in _slots(c, params, lookup):
            value = _literal(_get(c, slot))
            if isinstance(value, str | int | list | tuple | dict) and not isinstance(value, bool):
                out.append(value)
    return out


def _parts(value: Any, each: str) -> list[Any]:
    """The keys a value gives the lookup."""
    if each == "":
        return [value] if isinstance(value, str | int) else []
    if isinstance(value, str):
        return list(value) if each == "item" else value.split() if each == "word" else []
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, list | tuple):
        return list(value)
    return []


def _shaped(value: Any) -> list[Any]:
    """Values of the same type and shape as ``value``: one more or one less, the last
    character changed, the case swapped."""
    if type(value) is int:
        return [value + 1, value - 1, -value - 1, 0]
    if not isinstance(value, str) or not value or len(value) > 60:
        return []
    last = value[-1]
    other = "0" if last.isdigit() and last != "0" else "x" if last != "x" else "q"
    return [v for v in (value[:-1] + other, value.swapcase(), value + value[-1]) if v != value]


def _absent_keys(value: Any, answer: Answer, taken: set[Any]) -> list[Any]:
    return [v for v in _shaped(value) if v in answer.absent and v not in taken][:2]


def _present(answer: Answer, taken: set[Any], like: Any) -> list[Any]:
    """A key the container holds and the tests do not use, of ``like``'s type."""
    return [k for k in answer.keys if type(k) is type(like) and k not in taken][:1]


def absent_candidates(
    candidates: list[Candidate], params: list[str], lookup: Lookup, answer: Answer
) -> list[Candidate]:
    """The tests' inputs with the looked-up parameter's value changed to one the
    container does not hold (and one it does, where the tests have none)."""
    if not answer.kind:
        return []
    used = [p for v in _values(candidates, params, lookup) for p in _parts(v, lookup.each)]
    taken = {v for v in used if isinstance(v, str | int)}
    chars = _absent_chars(answer)
    present_chars = [c for c in answer.chars if c not in taken][:1]
    label = f"absent from {lookup.shown}"
    out: list[Candidate] = []
    bases = [c for c in candidates if _slots(c, params, lookup)][:MAX_BASES]
    for c in bases:
        for slot in _slots(c, params, lookup)[:2]:
            value = _literal(_get(c, slot))
            for new, why in _changed(value, lookup.each, chars, present_chars, answer, taken):
                out.append(_put(c, slot, new, f"{c.origin} ({why} {label})"))
    return list(dict.fromkeys(out))[:MAX_INPUTS]


def _absent_chars(answer: Answer) -> list[str]:
    """The first absent character of each class of ``POOL``."""
    found = [next((c for c in group if c in answer.absent), None) for group in POOL]
    return [c for c in found if c is not None][:MAX_CHARS]


def _changed(
    value: Any,
    each: str,
    chars: list[str],
    present_chars: list[str],
    answer: Answer,
    taken: set[Any],
) -> list[tuple[Any, str]]:
    """New values of one argument, each with what it is."""
    if isinstance(value, bool) or value is None:
        return []
    if each == "item" and isinstance(value, str):
        out = [(value + ch, "a character") for ch in chars]
        out += [(ch + value, "a character") for ch in chars[:1]]
        return out + [(value + ch, "a character held, not") for ch in present_chars]
    if each == "word" and isinstance(value, str):
        words = [w for w in value.split() for w in _absent_keys(w, answer, taken)][:2]
        return [(f"{value} {w}".strip(), "a word") for w in words]
    if each in ("item", "key") and isinstance(value, list | tuple | dict) and value:
        return _changed_items(value, answer, taken)
    if each == "" and isinstance(value, str | int):
        out = [(v, "a value") for v in _absent_keys(value, answer, taken)]
        return out + [(v, "a value held, not") for v in _present(answer, taken, value)]
    return []


def _changed_items(
    value: list[Any] | tuple[Any, ...] | dict[Any, Any], answer: Answer, taken: set[Any]
) -> list[tuple[Any, str]]:
    first = next(iter(value))
    news = _absent_keys(first, answer, taken)[:1]
    out: list[tuple[Any, str]] = []
    for new in news:
        if isinstance(value, dict):
            out.append(({**value, new: value[first]}, "a key"))
        else:
            items = [new, *list(value)[1:]]
            out.append((items if isinstance(value, list) else tuple(items), "an item"))
    return out


class AbsentInputs:
    """The differential generator's hook: inputs for each probed function whose
    reached changed lines look a value up (one sandbox run per function, at most
    ``MAX_QUERIES`` a job)."""

    def __init__(self, ws: Workspace, fw: Framework, notes: list[str]) -> None:
        self.ws, self.fw, self.notes = ws, fw, notes
        self.runs = 0

    def __call__(
        self, path: str, name: str, source: str, lines: list[int], candidates: list[Candidate]
    ) -> list[Candidate]:
        found = lookups(source, name, lines)
        params = _call_params(source, name)
        # only lookups whose parameter the tests' inputs give a value for
        found = [f for f in found if any(_slots(c, params, f) for c in candidates)]
        if not found or self.runs >= MAX_QUERIES:
            return []
        values = query_values(candidates, params, found)
        self.runs += 1
        answers = _query(self.ws, self.fw, module_of(path), found, values)
        out: list[Candidate] = []
        for lookup, answer in zip(found, answers, strict=True):
            out += absent_candidates(candidates, params, lookup, answer)
        out = list(dict.fromkeys(out))[:MAX_INPUTS]
        shown = ", ".join(sorted({f.shown for f in found}))
        read = [a for a in answers if a.kind]
        if not read:
            self.notes.append(
                f"differential: {path}::{name}: {shown} could not be read at run time"
            )
        elif out:
            self.notes.append(
                f"differential: {len(out)} inputs for {name} with values absent from "
                f"(or held by) {shown}"
            )
        return out


def _call_params(source: str, name: str) -> list[str]:
    """The parameters a call of ``name`` passes positionally (``self`` left out)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    node = dict(_functions(tree)).get(name)
    if node is None:
        return []
    args = node.args
    params = [a.arg for a in [*args.posonlyargs, *args.args]]
    return params[1:] if _is_method(node, name) else params
