"""Calls added to the project's own tests (DSpot's "add method call" amplification).

A change is often reached only after a sequence of calls no test makes: an object filled
one way (a file loaded), then changed another way (a part overwritten). A test that
builds an object of a class whose methods reach the changed code gets copies, each with
ONE call added after the test's own statements on that object: a method of the class
that reaches the change (the changed method itself, or a public method whose body calls
it, a few calls away), with arguments the project's tests give that method elsewhere
(or none, when all its parameters have defaults). The amplifier (``amplify``) observes
the copies like the original tests: the added call's value (or exception) and the
receiver after it are compared between head and parent, and a copy whose added call
differs is written cut after that call, head's outcome asserted.

- **Reaching methods** (``reaching``): the changed module's classes, their public methods
  whose body reaches the changed function (``self.m()``, the class's name for a changed
  ``__init__``, a private helper's name, a module function), at most ``DEPTH`` calls away,
  the nearest first. Special methods, properties, constructors and methods named for
  writing files, the network or processes (``save``, ``write_*``, ``send``, ``run``) are
  not added as calls.
- **Arguments** (``call_arguments``): every call ``x.m(...)`` in the test files, its
  arguments as written, when they name nothing but builtins and what the test module
  binds at its top (its imports, its constants); calls that pass the most arguments come
  first (they set the options the defaults leave off), the methods taking turns among
  equals.
- **Receivers**: a name the test binds to ``Cls(...)`` / ``mod.Cls(...)`` (also
  ``with Cls(...) as x``), or ``self.x = Cls(...)`` in its class's ``setUp``; the call is
  added after the last statement of the test's body that names it. Tests that fill their
  object through a method few other tests call come first (a rarer sequence).
- **Values given to a function** (``reaching_functions``, ``_values``): a public function
  of the changed module that reaches the change and takes one value (its other
  parameters have defaults) is called on a name the test binds to what a function or
  class of the changed modules made (``convert(validator)`` after ``validator =
  convert_to_voluptuous(schema)``: a round trip no test makes), when the test module
  imports it by name. Tests that ran no changed line get such copies too (a few, those
  sharing the most words with the changed lines first).
"""

from __future__ import annotations

import ast
import builtins
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.testgen.amplify_flags import EACH as FLAGS_EACH
from bot.testgen.amplify_flags import FlagPlan, built_class, flag_copies, flag_plan, repeats
from bot.testgen.amplify_inputs import Variant, _compiles, _find, _names, _unique

__all__ = ["CallPlan", "add_calls", "call_arguments", "call_plan", "order_tests", "reaching"]

DEPTH = 3  # calls between an added method and the changed function
MAX_FUNCTIONS = 3  # module functions a bound value is given to
MAX_ARGS_TEXT = 200  # characters of an added call's arguments
PER_METHOD = 8  # argument lists kept per method
MARK = "c"  # a copy's name: test_x__c1
ADDED = "added call"  # how a copy's description starts
_SETUP = {"setUp", "setup_method", "setup"}
# methods never added: they may write files, talk to the network or start processes
# with arguments another test gave them inside its own temporary folder or server
_OUTSIDE = re.compile(
    r"^(save|write|dump|export|unlink|remove_file|rmtree|mkdir|makedirs|rename|move|copy|"
    r"upload|download|send|connect|listen|serve|run|spawn|kill|terminate|exec)(_|$)"
)
_BUILTINS = frozenset(dir(builtins))


@dataclass
class CallPlan:
    """What can be added: class name -> its methods reaching the change (nearest first),
    method -> argument lists as written (most arguments first), and the free names
    each argument list reads."""

    methods: dict[str, list[str]] = field(default_factory=dict)
    arguments: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, frozenset[str]] = field(default_factory=dict)
    flags: FlagPlan = field(default_factory=FlagPlan)  # options to set, calls to repeat
    # module functions reaching the change that take one value (``convert(schema)``),
    # and the changed modules' functions and classes whose results a test binds
    functions: list[str] = field(default_factory=list)
    producers: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return any(self.methods.values()) or bool(self.flags) or bool(self.functions)


def reaching(source: str, qualname: str, lines: list[int] | None = None) -> dict[str, list[str]]:
    """The changed module's classes -> their public methods that reach the changed
    ``qualname`` (a method ``Cls.m``, a function ``f``, ``<module>`` for top-level
    lines), nearest first."""
    funcs, found = _reached(source, qualname, lines)
    out: dict[str, list[str]] = {}
    for q in sorted(found, key=lambda q: found[q]):
        node, owner = funcs[q]
        if owner is None or "." in owner or not _callable_member(node):
            continue
        out.setdefault(owner, []).append(node.name)
    return out


def reaching_functions(source: str, qualname: str, lines: list[int] | None = None) -> list[str]:
    """The changed module's public top-level functions that reach the changed
    ``qualname`` and take one value (their other parameters have defaults), nearest
    first."""
    funcs, found = _reached(source, qualname, lines)
    return [
        q
        for q in sorted(found, key=lambda q: found[q])
        if funcs[q][1] is None and _callable_member(funcs[q][0]) and _one_value(funcs[q][0])
    ]


def _one_value(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = node.args
    plain = [*a.posonlyargs, *a.args]
    required = len(plain) - len(a.defaults)
    return len(plain) >= 1 and required == 1 and all(d is not None for d in a.kw_defaults)


_Funcs = dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]


def _reached(source: str, qualname: str, lines: list[int] | None) -> tuple[_Funcs, dict[str, int]]:
    """The module's functions, and those reaching ``qualname`` -> how many calls away."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, {}
    funcs = _functions(tree)
    wanted = _wanted(qualname, funcs, tree, lines or [])
    found: dict[str, int] = {}
    reached = set(wanted)
    if qualname in funcs:
        found[qualname] = 0
    for depth in range(1, DEPTH + 1):
        new = {
            q
            for q, (node, owner) in funcs.items()
            if q not in found and _mentions(node, owner) & reached
        }
        if not new:
            break
        for q in sorted(new):
            found[q] = depth
        reached |= {m for q in new for m in _names_of(q, funcs)}
    return funcs, found


def _functions(
    tree: ast.Module,
) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """qualname -> (function, its class's qualname) for top-level functions and the
    methods of top-level classes (and of classes nested in them)."""
    out: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = {}

    def walk(body: list[ast.stmt], owner: str | None) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out[f"{owner}.{node.name}" if owner else node.name] = (node, owner)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{owner}.{node.name}" if owner else node.name)

    walk(tree.body, None)
    return out


def _wanted(
    qualname: str,
    funcs: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]],
    tree: ast.Module,
    lines: list[int],
) -> set[str]:
    """What a body mentions when it reaches the changed ``qualname``."""
    if qualname == "<module>":
        out: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and any(
                node.lineno <= n <= (node.end_lineno or node.lineno) for n in lines
            ):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        return out
    if qualname not in funcs:  # a class body: through its constructor
        return {qualname.rsplit(".", 1)[-1]} if "." not in qualname else set()
    return _names_of(qualname, funcs)


def _names_of(
    qualname: str, funcs: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]
) -> set[str]:
    """What a caller's body mentions when it calls ``qualname``: the method on its own
    class (``Cls.m``), a private method's name on any object, a function's name, and the
    class's name for a constructor."""
    node, owner = funcs[qualname]
    if owner is None:
        return {node.name}
    out = {qualname}
    if node.name == "__init__":
        out.add(owner.rsplit(".", 1)[-1])
    elif node.name.startswith("_") and not node.name.endswith("__"):
        out.add(f"*.{node.name}")
    elif node.name.startswith("__"):
        out.add(owner.rsplit(".", 1)[-1])  # a special method: whoever uses the class
    return out


def _mentions(node: ast.AST, owner: str | None) -> set[str]:
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(f"*.{sub.attr}")
            if owner and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls"):
                found.add(f"{owner}.{sub.attr}")
    return found


def _callable_member(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A public method a test calls by name: not special, not a property."""
    if node.name.startswith("_") or isinstance(node, ast.AsyncFunctionDef):
        return False
    for d in node.decorator_list:
        name = ast.unparse(d)
        if "property" in name or name.endswith((".setter", ".deleter", "staticmethod")):
            return False
    return True


def call_arguments(
    texts: list[str], methods: set[str], defaults: set[str]
) -> tuple[dict[str, list[str]], dict[str, frozenset[str]]]:
    """Each method's argument lists as the test files write them (``b'1', address=4``),
    most arguments first; ``""`` for one whose parameters all have defaults; and the
    free names each list reads."""
    seen: dict[str, dict[str, int]] = {m: {} for m in methods}
    names: dict[str, frozenset[str]] = {"": frozenset()}
    order = itertools.count()
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in methods
            ):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                continue
            parts = [ast.unparse(a) for a in node.args]
            parts += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords]
            shown = ", ".join(parts)
            if not shown or len(shown) > MAX_ARGS_TEXT or "\n" in shown:
                continue
            free = _free_names([*node.args, *(k.value for k in node.keywords)])
            if free is None:
                continue
            names[shown] = free
            seen[node.func.attr].setdefault(shown, next(order))
    out: dict[str, list[str]] = {}
    for m in methods:
        given = sorted(seen[m], key=lambda s: (-_count(s), seen[m][s]))
        out[m] = given[:PER_METHOD] + ([""] if m in defaults else [])
    return out, names


def _count(shown: str) -> int:
    """How many arguments an argument list gives (its top-level commas, roughly)."""
    try:
        call = ast.parse(f"f({shown})", mode="eval").body
    except SyntaxError:
        return 0
    assert isinstance(call, ast.Call)
    return len(call.args) + len(call.keywords)


def _free_names(exprs: list[ast.expr]) -> frozenset[str] | None:
    """The names the expressions read (None when one binds or awaits something: a
    lambda, a comprehension, a walrus, an ``await``)."""
    out: set[str] = set()
    for e in exprs:
        for sub in ast.walk(e):
            if isinstance(
                sub,
                ast.Lambda
                | ast.ListComp
                | ast.SetComp
                | ast.DictComp
                | ast.GeneratorExp
                | ast.NamedExpr
                | ast.Await
                | ast.Yield,
            ):
                return None
            if isinstance(sub, ast.Name):
                out.add(sub.id)
    return frozenset(out - _BUILTINS)


def _all_default(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = node.args
    plain = [*a.posonlyargs, *a.args][1:]  # without self
    kw_free = all(d is not None for d in a.kw_defaults)
    return len(a.defaults) >= len(plain) and kw_free


def call_plan(
    changed: list[tuple[str, str, list[int]]],
    test_texts: list[str],
    modules: list[tuple[str, str | None, list[int]]] | None = None,
) -> CallPlan:
    """What can be added to tests for the changed ``(module source, qualname, lines)``;
    ``modules``, each changed module's ``(head source, parent source, changed lines)``,
    for the options the change adds (``amplify_flags``)."""
    methods: dict[str, list[str]] = {}
    defaults: set[str] = set()
    functions: list[str] = []
    producers: set[str] = set()
    twice = repeats([(source, qualname) for source, qualname, _ in changed])
    for source, qualname, lines in changed:
        for cls, ms in reaching(source, qualname, lines).items():
            have = methods.setdefault(cls, [])
            have += [m for m in ms if m not in have]
        functions += [f for f in reaching_functions(source, qualname, lines) if f not in functions]
        try:
            tree = ast.parse(source)
            funcs = _functions(tree)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        producers |= {
            n.name
            for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.ClassDef) and not n.name.startswith("_")
        }
        defaults |= {
            node.name
            for cls, ms in [*methods.items(), *twice.items()]
            for m in ms
            if (found := funcs.get(f"{cls}.{m}")) and _all_default(node := found[0])
        }
    methods = {c: [m for m in ms if not _OUTSIDE.match(m)] for c, ms in methods.items()}
    wanted = {m for ms in [*methods.values(), *twice.values()] for m in ms}
    arguments, names = call_arguments(test_texts, wanted, defaults)
    methods = {c: [m for m in ms if arguments.get(m)] for c, ms in methods.items()}
    flags = flag_plan(modules or [], twice, arguments)
    functions = [f for f in functions if not _OUTSIDE.match(f)][:MAX_FUNCTIONS]
    kept = {c: ms for c, ms in methods.items() if ms}
    return CallPlan(kept, arguments, names, flags, functions, frozenset(producers))


# -- the tests' receivers -----------------------------------------------------------------


@dataclass(frozen=True)
class Receiver:
    name: str  # as the test writes it: "bf", "self.reader"
    cls: str
    after: int  # the index in the test's body after which the call goes
    called: tuple[str, ...]  # the methods the test calls on it, in order


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of ``body``, not inside a nested function, class or lambda."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            ):
                stack.append(child)


def _bound(body: list[ast.stmt], classes: set[str], self_only: bool) -> dict[str, str]:
    """Names (``x``, ``self.x``) the statements bind to a built instance -> its class."""
    out: dict[str, str] = {}
    for node in _own_nodes(body):
        pairs: list[tuple[ast.expr, ast.expr | None]] = []
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            pairs.append((node.targets[0], node.value))
        elif isinstance(node, ast.AnnAssign):
            pairs.append((node.target, node.value))
        elif isinstance(node, ast.With | ast.AsyncWith):
            pairs += [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars]
        for target, value in pairs:
            cls = built_class(value, classes)
            if not cls:
                continue
            shown = ast.unparse(target)
            plain = isinstance(target, ast.Name) and not self_only
            own = (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            )
            if plain or own:
                out[shown] = cls
    return out


def _values(
    func: ast.FunctionDef | ast.AsyncFunctionDef, producers: frozenset[str]
) -> list[Receiver]:
    """Names the test binds to what a function (or class) of the changed modules made
    (``validator = convert_to_voluptuous(schema)``), each after the last statement that
    names it; ``cls`` is the producer."""
    found: dict[str, str] = {}
    for node in _own_nodes(func.body):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            made = node.value.func
            name = made.id if isinstance(made, ast.Name) else getattr(made, "attr", "")
            if name in producers:
                found.setdefault(node.targets[0].id, name)
    return [r for name, cls in found.items() if (r := _after(func, name, cls)) is not None]


def _after(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str, cls: str) -> Receiver | None:
    """``name`` as a receiver: after the last statement of the body that names it (None
    when that one returns, or none does)."""
    last = -1
    for i, stmt in enumerate(func.body):
        if any(isinstance(sub, ast.Name) and sub.id == name for sub in _own_nodes([stmt])):
            last = i
    if last < 0 or isinstance(func.body[last], ast.Return):
        return None
    return Receiver(name, cls, last, ())


def _receivers(
    func: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None, classes: set[str]
) -> list[Receiver]:
    found = _bound(func.body, classes, False)
    if owner is not None:
        for node in owner.body:
            if isinstance(node, ast.FunctionDef) and node.name in _SETUP:
                for k, v in _bound(node.body, classes, True).items():
                    found.setdefault(k, v)
    out = []
    for name, cls in found.items():
        last = -1
        called: list[tuple[int, int, str]] = []
        for i, stmt in enumerate(func.body):
            for sub in _own_nodes([stmt]):
                if isinstance(sub, ast.expr) and ast.unparse(sub) == name:
                    last = i
                    break
            for sub in _own_nodes([stmt]):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and ast.unparse(sub.func.value) == name
                ):
                    called.append((sub.lineno, sub.col_offset, sub.func.attr))
        if last < 0 or isinstance(func.body[last], ast.Return):
            continue
        ordered = tuple(dict.fromkeys(m for *_, m in sorted(called)))
        out.append(Receiver(name, cls, last, ordered))
    return out


def order_tests(
    sources: dict[str, str], nodes: list[tuple[str, str]], plan: CallPlan
) -> list[tuple[str, str]]:
    """The ``(file, qualname)`` tests that build a receiver, in the order they get
    copies: first one per way of filling it (the first reaching method the test calls
    on it), those ways that fewer tests take first; then the others."""
    ways: dict[tuple[str, str], str] = {}
    counts: dict[str, int] = {}
    trees: dict[str, ast.Module | None] = {}
    for rel, qualname in nodes:
        if rel not in trees:
            try:
                trees[rel] = ast.parse(sources.get(rel, ""))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                trees[rel] = None
        tree = trees[rel]
        found = _find(tree, qualname) if tree is not None else None
        if found is None:
            continue
        receivers = _receivers(*found, set(plan.methods) | plan.flags.classes())
        if not receivers and not (plan.functions and _values(found[0], plan.producers)):
            continue
        way = next((m for r in receivers for m in r.called if m in plan.methods.get(r.cls, [])), "")
        ways[(rel, qualname)] = way
        for m in {m for r in receivers for m in r.called}:
            counts[m] = counts.get(m, 0) + 1
    firsts: dict[str, tuple[str, str]] = {}
    for key, way in ways.items():
        firsts.setdefault(way, key)
    head = sorted(firsts.values(), key=lambda k: (ways[k] == "", counts.get(ways[k], 0)))
    return head + [k for k in ways if k not in head]


def add_calls(
    module_source: str, qualname: str, plan: CallPlan, limit: int = 4
) -> tuple[str, list[Variant]]:
    """The test module's source with up to ``limit`` copies of the test ``qualname``
    appended (in its class for a method): first those with an option the change adds
    set on a holder the test builds, or a changed method called twice
    (``amplify_flags``), then those with one call of a reaching method added on an
    object the test builds, after the test's own statements on it; the module unchanged
    and no copy when the test builds no such object."""
    if limit <= 0 or not plan:
        return module_source, []
    try:
        tree = ast.parse(module_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return module_source, []
    found = _find(tree, qualname)
    if found is None:
        return module_source, []
    func, owner = found
    known = _module_names(tree) | _BUILTINS
    inserts = flag_copies(func, plan.flags, known, plan.names, min(limit, FLAGS_EACH), owner)
    indent = " " * func.body[0].col_offset
    for receiver, method, args in _candidates(
        _receivers(func, owner, set(plan.methods)), plan, known
    ):
        stmt = func.body[receiver.after]
        line = stmt.end_lineno or stmt.lineno
        call = f"{receiver.name}.{method}({args})"
        rows = [f"{indent}# {ADDED} by Nova", f"{indent}{call}"]
        inserts.append(({line: rows}, f"{ADDED} after line {line}: {call}"))
    # a module function that takes one value, given what the test made with the module
    for value in _values(func, plan.producers) if plan.functions else []:
        for function in plan.functions:
            if function not in known or len(inserts) >= limit:
                continue
            stmt = func.body[value.after]
            line = stmt.end_lineno or stmt.lineno
            call = f"{function}({value.name})"
            rows = [f"{indent}# {ADDED} by Nova", f"{indent}{call}"]
            inserts.append(({line: rows}, f"{ADDED} after line {line}: {call}"))
    if not inserts:
        return module_source, []
    rows = module_source.splitlines(keepends=True)
    first = min([d.lineno for d in func.decorator_list] + [func.lineno])
    last = func.end_lineno or func.lineno
    segment = rows[first - 1 : last]
    if segment and not segment[-1].endswith("\n"):
        segment[-1] += "\n"
    taken = {n.name for n in (owner.body if owner is not None else tree.body) if hasattr(n, "name")}
    copies: list[str] = []
    variants: list[Variant] = []
    prefix = owner.name + "." if owner is not None else ""
    for added, what in inserts:
        if len(variants) >= limit:
            break
        copy: list[str] = []
        for i, row in enumerate(segment):
            copy.append(row)
            copy += [r + "\n" for r in added.get(first + i, [])]
        name = _unique(func.name, taken, MARK)
        text = re.sub(
            r"(def\s+)" + re.escape(func.name) + r"\b", r"\g<1>" + name, "".join(copy), count=1
        )
        if not _compiles("class _Copy:\n" + text if owner is not None else text):
            continue
        copies.append(text)
        variants.append(Variant(name, prefix + name, what))
    if not copies:
        return module_source, []
    at = (owner.end_lineno or owner.lineno) if owner is not None else len(rows)
    head = "".join(rows[:at])
    head += "" if head.endswith("\n") or not head else "\n"
    gap = "\n" if owner is not None else "\n\n"
    result = head + "".join(gap + c for c in copies) + "".join(rows[at:])
    return (result, variants) if _compiles(result) else (module_source, [])


def _candidates(
    receivers: list[Receiver], plan: CallPlan, known: set[str]
) -> list[tuple[Receiver, str, str]]:
    """(receiver, method, arguments) to add, the argument lists that give most first,
    the methods (and receivers) taking turns among equals; a method the test does not
    call on the receiver before one it does."""
    pools: list[list[tuple[int, tuple[Receiver, str, str]]]] = []
    for r in receivers:
        methods = sorted(plan.methods.get(r.cls, []), key=lambda m: m in r.called)
        for m in methods:
            pool = [
                (_count(a), (r, m, a))
                for a in plan.arguments.get(m, [])
                if plan.names.get(a, frozenset()) <= known
            ]
            if pool:
                pools.append(pool)
    turns = itertools.zip_longest(*pools)
    flat = [(i, c) for i, turn in enumerate(turns) for c in turn if c is not None]
    # most arguments first; among equals, the earlier turn, then the pool's order
    flat.sort(key=lambda t: (-t[1][0], t[0]))
    return [c for _, (_, c) in flat]


def _module_names(tree: ast.Module) -> set[str]:
    """What the module binds at its top: imports, assignments, functions, classes."""
    imported = {
        (a.asname or a.name).split(".", 1)[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
    }
    return imported | _names(tree.body)
