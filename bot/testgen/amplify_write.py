"""Writing an amplified test: the project's test cut after the call whose value differs
between the change's head and its parent, head's outcome asserted there, and the module
that holds such tests (the original module's imports, helpers and fixtures, the test's
class with its non-test members) — a module that loads where the project's test was.
``Difference`` is what the observation found; ``amplify`` chooses and writes them."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from bot.testgen import seeded
from bot.testgen.amplify_checks import raised_checks, value_check
from bot.testgen.amplify_loops import comprehension_of, looped_checks
from bot.testgen.amplify_streams import KIND as STREAMS
from bot.testgen.amplify_streams import inline_tables, streams_test
from bot.testgen.amplify_window import LONGEST, WHOLE
from bot.testgen.amplify_window import part as long_part

__all__ = [
    "CALLS_PREFIX",
    "VARY_PREFIX",
    "Difference",
    "Written",
    "amplified_module",
    "amplified_test",
    "changed_name",
    "only_differs",
    "origin",
    "outcome_text",
    "task_differs",
]

VARY_PREFIX = "test_nova_vary_"  # the temporary copies holding a test's input variants
CALLS_PREFIX = VARY_PREFIX + "calls__"  # and those holding its copies with a call added


@dataclass
class Difference:
    """The first steady difference of one test: the call, head's and the parent's outcome."""

    node: str
    line: int
    name: str
    index: int
    head: dict[str, Any]
    parent: dict[str, Any]
    # a parametrized case's arguments: name -> [source, imports] (None: not rendered)
    params: dict[str, Any] | None = None
    # name -> the case's place in its ``parametrize`` list (its source when not rendered)
    indices: dict[str, int] | None = None
    # an input variant's test: the project's test it copies and the literal it changed
    variant: str = ""
    # every occurrence of the call at its line (a loop, a comprehension): head's and the
    # parent's steady outcomes in order (None where one was not steady)
    series: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
    # the global generators the test's body drew from, seeded before it in the
    # observation (amplify_plugin): the amplified test seeds them the same way
    seeded: tuple[str, ...] = ()

    @property
    def amplifies(self) -> str:
        """The project's test this amplifies (a variant: its original, and what changed)."""
        if not self.variant:
            return self.node
        rel, _, rest = self.node.partition("::")
        return f"{origin(rel)}::{rest.split('[', 1)[0]} ({self.variant})"


def origin(rel: str) -> str:
    """The project's test file a variants' copy was made from (itself otherwise)."""
    path = PurePosixPath(rel)
    for prefix in (CALLS_PREFIX, VARY_PREFIX):  # test_nova_vary_, check_nova_vary_...
        found = re.match(r"(?:[a-z0-9]+_)?" + re.escape(prefix.removeprefix("test_")), path.name)
        if found:
            return str(path.with_name(path.name[found.end() :]))
    return rel


def seeding(func: ast.FunctionDef | ast.AsyncFunctionDef, d: Difference) -> list[str]:
    """Seeds the generators ``d``'s test drew from at the start of ``func``'s body, as
    the observation did (``seeded.lines``, as the side-runner's tests do); the imports
    that needs."""
    body, imports = seeded.lines(list(d.seeded))
    func.body[:0] = [ast.parse(line).body[0] for line in body]
    return imports


def changed_name(name: str) -> str:
    """The amplified test's name: the project's test's, marked."""
    return f"{name}_changed"


def outcome_text(outcome: dict[str, Any]) -> str:
    """An outcome as the notes and facts show it (``raises ValueError('...')``)."""
    if outcome["kind"] == "raises":
        message = outcome.get("message") or str(outcome.get("text") or "")[:120]
        return f"raises {outcome['type']}" + (f"({message!r})" if message else "")
    if outcome["kind"] in ("after", "object"):
        fact = outcome["facts"][0]
        left = "None, leaving " if outcome["kind"] == "after" else ""
        return f"{left}{fact[0].replace('{r}', 'it')} == {fact[1]}"
    return str(outcome.get("value"))[:200]


@dataclass
class Written:
    """An amplified test: the imports its asserted values need, and its source lines."""

    imports: list[str]
    lines: list[str]


def amplified_test(source: str, d: Difference) -> Written | str:
    """The test function of ``d.node`` (in ``source``), renamed, cut after the statement
    holding the differing call, with head's outcome asserted there: its lines. A string
    says why it cannot be written."""
    parts = d.node.split("::")[1:]
    parts[-1] = parts[-1].split("[", 1)[0]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "its module does not parse"
    func = _function(tree, parts)
    if func is None:
        return "its function was not found in the module"
    if _task_only(d):
        return _task_checked(func, d)
    inline_tables(tree, func)  # a mark's cases bound to a name at the module's top
    if d.head.get("kind") == "warns":  # the test's body warned otherwise (amplify_warns)
        from bot.testgen.amplify_warns import warned_test

        return warned_test(func, d)
    if d.head.get("kind") == STREAMS:  # only what the call wrote differs
        return streams_test(tree, parts, func, d)
    where = _statement(func.body, d.line, opened="kind" in d.parent)
    if isinstance(where, str):
        return where
    body, index = where.body, where.index
    stmt = body[index]
    target = _target(stmt, d)
    if target is None:
        return f"the call of {d.name} was not found on line {d.line}"
    if only_differs("filled", d.head, d.parent):
        if where.loop is not None:
            return "the call filled its argument otherwise inside a loop"
        checks = _filled_checks(stmt, target, d)
        if isinstance(checks, str):
            return checks
    elif where.loop is not None:
        checks = looped_checks(func, where.loop, body, index, target, d)
        if isinstance(checks, str):
            return checks
    else:
        comp = comprehension_of(stmt, target, d)
        if isinstance(comp, str):
            return comp
        if comp is None and d.index > 0:
            return f"the call of {d.name} differs at its occurrence {d.index + 1} on its line"
        checks = _checks(stmt, comp or target, d)
        if isinstance(checks, str):
            return checks
    if "kind" not in d.parent:
        return "the parent's outcome of the call is not known"
    bound = _bind_params(func, d.params, d.indices) if "[" in d.node else []
    if isinstance(bound, str):
        return bound
    head_imports = list(d.head.get("imports") or [])
    if d.head["kind"] in ("after", "object"):
        head_imports += list(d.head["facts"][0][2])
    d.head.setdefault("asserted", ast.unparse(target))
    if where.loop is None:
        del body[index:]
        body.extend(checks)
    for name, (shown, imports) in reversed(bound):
        func.body.insert(0, ast.parse(f"{name} = {shown}").body[0])
        head_imports += imports
    head_imports += seeding(func, d)
    func.name = changed_name(func.name)
    comment = (
        f"Nova: amplified from {d.amplifies}; on the parent {d.name} gave {outcome_text(d.parent)}"
    )
    return _commented(_written(head_imports, comment, func), d)


def _task_only(d: Difference) -> bool:
    return task_differs(d.head, d.parent)


def task_differs(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """The call ended alike on both sides but left the test's own task otherwise (a
    cancellation still pending after an ``async with``)."""
    return only_differs("task", mine, theirs)


def only_differs(key: str, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """The outcomes differ in ``key`` only."""
    if key not in mine or mine.get(key) == theirs.get(key):
        return False
    rest = [{k: v for k, v in o.items() if k != key} for o in (mine, theirs)]
    return rest[0] == rest[1]


def _filled_checks(stmt: ast.stmt, target: ast.expr, d: Difference) -> list[ast.stmt] | str:
    """The statement, then what head's call left in a list or dict the test passed to
    it (``parse(text, out)``, then ``assert out == [...]``)."""
    call = target.value if isinstance(target, ast.Await) else target
    if not isinstance(call, ast.Call):
        return "the call that filled its argument was not found"
    theirs = d.parent.get("filled") or {}
    for name, (position, shown) in d.head["filled"].items():
        if theirs.get(name, [None, None])[1] == shown:
            continue
        given = [k.value for k in call.keywords if k.arg == name]
        plain = [a for a in call.args[: position + 1] if not isinstance(a, ast.Starred)]
        if not given and len(plain) == position + 1 == len(call.args[: position + 1]):
            given = [call.args[position]]
        if given and _plain(given[0]):
            arg = ast.unparse(given[0])
            d.head = {"kind": "value", "value": shown, "asserted": arg}
            d.parent = {"kind": "value", "value": str(theirs.get(name, [None, "?"])[1])}
            return [stmt, *ast.parse(f"assert {arg} == {shown}").body]
    return "the argument the call filled is not a name the test reads again"


def _task_checked(func: ast.FunctionDef | ast.AsyncFunctionDef, d: Difference) -> Written | str:
    """The test cut after its statement holding the call (a whole ``with`` block, an
    ``async with`` in it), then head's count of the task's pending cancellations."""
    if not isinstance(func, ast.AsyncFunctionDef) or d.index > 0 or "[" in d.node:
        return "the task's state differs at a call that is not the first of an async test"
    body = func.body
    at = next(
        (i for i, s in enumerate(body) if s.lineno <= d.line <= (s.end_lineno or s.lineno)), None
    )
    if at is None or isinstance(body[at], ast.For | ast.AsyncFor | ast.While | ast.Try):
        return "the task's state differs at a call inside a loop or a try block"
    check = f"asyncio.current_task().cancelling() == {int(d.head['task'])}"
    del body[at + 1 :]
    body.append(ast.parse(f"assert {check}").body[0])
    d.head = {"kind": "value", "value": str(d.head["task"]), "asserted": check.split(" ==")[0]}
    d.parent = {"kind": "value", "value": str(d.parent.get("task"))}
    func.name = changed_name(func.name)
    comment = (
        f"Nova: amplified from {d.amplifies}; on the parent {d.parent['value']} after {d.name}"
    )
    return _written(["import asyncio", *seeding(func, d)], comment, func)


def _written(
    imports: list[str], comment: str, func: ast.FunctionDef | ast.AsyncFunctionDef
) -> Written | str:
    """The test's lines under its comment, every line of which stays a comment (a
    variant's literal or a shown value may span lines); a string if they do not load."""
    lines = [f"# {row}".rstrip() for row in comment[:300].splitlines() or [""]]
    lines += ast.unparse(func).splitlines()
    try:
        compile("\n".join([*imports, *lines]), "<amplified>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"the written test does not compile ({type(exc).__name__}: {exc.msg})"
    return Written(imports, lines)


def _bind_params(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    params: dict[str, Any] | None,
    indices: dict[str, int] | None = None,
) -> list[tuple[str, list[Any]]] | str:
    """A parametrized case made plain: the function's own ``parametrize`` marks taken
    off, their argument names taken out of its signature, and (name, [source, imports])
    to bind at its start. An argument whose value has no source form is bound to its
    expression in the mark's literal list of cases (``PersonSchema()``), found by the
    case's place there (``indices``). A string says why it cannot be."""
    if not params:
        return "a parametrized case whose arguments have no source form"
    params = dict(params)
    names: set[str] = set()
    kept = []
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("parametrize"):
            if any(k.arg == "indirect" for k in deco.keywords) or not deco.args:
                return "a parametrized case with indirect arguments"
            first = deco.args[0]
            mine: list[str] = []
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                mine = [n.strip() for n in first.value.split(",") if n.strip()]
            elif isinstance(first, ast.List | ast.Tuple):
                mine = [str(e.value) for e in first.elts if isinstance(e, ast.Constant)]
            names |= set(mine)
            for name, source in _case_sources(deco, mine, indices or {}).items():
                if params.get(name) is None:
                    params[name] = [source, []]
            continue
        kept.append(deco)
    if any(v is None for v in params.values()):
        return "a parametrized case whose arguments have no source form"
    if names != set(params):
        return "a case parametrized outside its function (a class mark, a fixture's params)"
    func.decorator_list = kept
    args = func.args
    args.args = [a for a in args.args if a.arg not in names]
    args.defaults = args.defaults[-len(args.args) :] if args.args else []
    return [(n, params[n]) for n in params]


def _case_sources(deco: ast.Call, names: list[str], indices: dict[str, int]) -> dict[str, str]:
    """name -> the source of its value in the case at ``indices[name]`` of the mark's
    literal list (a tuple per case, or ``pytest.param(...)``; one name: the item)."""
    cases = deco.args[1] if len(deco.args) > 1 else None
    if not isinstance(cases, ast.List | ast.Tuple) or not names:
        return {}
    out: dict[str, str] = {}
    for position, name in enumerate(names):
        at = indices.get(name)
        if at is None or not 0 <= at < len(cases.elts):
            continue
        case = cases.elts[at]
        if isinstance(case, ast.Call) and ast.unparse(case.func).endswith("param"):
            values: list[ast.expr] = list(case.args)
        elif len(names) == 1:
            values = [case]
        elif isinstance(case, ast.Tuple | ast.List):
            values = list(case.elts)
        else:
            continue
        if len(values) == len(names) and not any(isinstance(v, ast.Starred) for v in values):
            out[name] = ast.unparse(values[position])
    return out


def _function(tree: ast.Module, parts: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    body: list[ast.stmt] = tree.body
    for part in parts[:-1]:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        body = cls.body
    return next(
        (
            n
            for n in body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == parts[-1]
        ),
        None,
    )


_EXPECTING = re.compile(r"raises|Raises|warns|Warns|suppress|assertLogs|deprecated_call")


def _expects(expr: ast.expr) -> bool:
    """A context manager that catches what its block raises (``pytest.raises``,
    ``self.assertRaises``, ``contextlib.suppress``): cut short, its block would not."""
    func = expr.func if isinstance(expr, ast.Call) else expr
    return _EXPECTING.search(ast.unparse(func)) is not None


@dataclass
class Place:
    """Where the differing call's statement stands: its block and index there, and the
    outermost loop holding it (that loop's block and index), if any."""

    body: list[ast.stmt]
    index: int
    loop: tuple[list[ast.stmt], int] | None = None


_RAISES = re.compile(r"(^|\.)(raises|assertRaises|assertRaisesRegex)$")


def _statement(
    body: list[ast.stmt],
    line: int,
    loop: tuple[list[ast.stmt], int] | None = None,
    opened: bool = True,
) -> Place | str:
    """The simple statement holding ``line`` (in the function's body, or a ``with``,
    ``if`` or loop block of it) and the block it sits in. A ``pytest.raises`` block
    holding it is opened (its statements put in its place: cut after the call, the
    written test asserts the call's own outcome)."""
    for i, stmt in enumerate(body):
        if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            continue
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            if not stmt.body or line < stmt.body[0].lineno:
                return "the call is in a loop's header"
            if stmt.orelse and line >= stmt.orelse[0].lineno:
                return "the call is in a loop's else block"
            return _statement(stmt.body, line, loop or (body, i), opened)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            if not stmt.body or line < stmt.body[0].lineno:
                return "the call is in a with statement's header"
            if any(_expects(item.context_expr) for item in stmt.items):
                if len(stmt.items) != 1 or not _raises(stmt.items[0].context_expr):
                    return "the call is inside a block that expects a warning or a log"
                if not opened:
                    return "the call is inside a block that expects an exception (parent unknown)"
                body[i : i + 1] = stmt.body
                return _statement(body, line, loop, opened)
            return _statement(stmt.body, line, loop, opened)
        if isinstance(stmt, ast.If):
            for block in (stmt.body, stmt.orelse):
                if block and block[0].lineno <= line <= (block[-1].end_lineno or 0):
                    inner = _statement(block, line, loop, opened)
                    if isinstance(inner, Place) and block is stmt.orelse:
                        return "the call is in an else branch"
                    return inner
            return "the call is in an if statement's test"
        if isinstance(stmt, ast.Try | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return "the call is inside a try block or a nested definition"
        if hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar):
            return "the call is inside a try block"
        if isinstance(stmt, ast.Match):
            return "the call is inside a match statement"
        return Place(body, i, loop)
    return f"no statement of the test holds line {line}"


def _raises(expr: ast.expr) -> bool:
    """``pytest.raises(E)``, ``self.assertRaises(E)``: a block that expects an exception."""
    func = expr.func if isinstance(expr, ast.Call) else expr
    return _RAISES.search(ast.unparse(func)) is not None


def _target(stmt: ast.stmt, d: Difference) -> ast.expr | None:
    """The call (or property read) of ``d.name`` in the statement: one of them, or the
    one starting on ``d.line``."""
    parts = d.name.split(".")
    if any(p.startswith("<") for p in parts[:-1]):
        return None  # a function defined inside another: not named in the test
    short = parts[-2] if parts[-1] in ("__init__", "__new__") and len(parts) > 1 else parts[-1]
    if short.startswith("__"):
        return None  # an operator's method: no call names it
    calls: list[ast.expr] = []
    properties: list[ast.expr] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == short:
                calls.append(node)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == short
            and isinstance(node.ctx, ast.Load)
        ):
            properties.append(node)
    funcs = {id(c.func) for c in calls if isinstance(c, ast.Call)}
    found = calls or [p for p in properties if id(p) not in funcs]
    if not found:
        return None
    if len(found) > 1:
        found = [c for c in found if c.lineno == d.line]
    if len(found) != 1:
        return None
    # an awaited call's value is the await's (the call alone gives a coroutine)
    awaited = [n for n in ast.walk(stmt) if isinstance(n, ast.Await) and n.value is found[0]]
    return awaited[0] if awaited else found[0]


def _checks(stmt: ast.stmt, target: ast.expr, d: Difference) -> list[ast.stmt] | str:
    """What replaces the statement: it (when it binds the value) or the call alone, and
    the assert of head's outcome."""
    head = d.head
    bound = (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.value is target
    )
    value = ast.Name(stmt.targets[0].id) if bound else target  # type: ignore[attr-defined]
    keep: list[ast.stmt] = [stmt] if bound else []
    if head["kind"] == "raises":
        head.setdefault("imports", []).append("import pytest")
        return raised_checks(ast.unparse(target), head, d.parent, _names_in(stmt))
    if head["kind"] == "value":
        long = _long_checks(ast.unparse(value), d)
        if isinstance(long, str):
            return long
        if long:
            return [*keep, *long]
        return [*keep, *ast.parse(value_check(ast.unparse(value), head, d.parent)).body]
    if head["kind"] == "repr":
        return [*keep, *ast.parse(f"assert repr({ast.unparse(value)}) == {head['value']!r}").body]
    if head["kind"] == "after":
        receiver: ast.expr | None = None
        call = target.value if isinstance(target, ast.Await) else target
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            receiver = call.func.value
        elif bound and d.name.endswith(".__init__"):
            receiver = value
        if receiver is None or not _plain(receiver):
            return "the call's receiver is not a name the test can read again"
        check = fact_check(head["facts"][0], ast.unparse(receiver))
        return [stmt, *ast.parse(check).body]
    if head["kind"] == "object":
        check = fact_check(head["facts"][0], ast.unparse(value))
        return [*keep, *ast.parse(check).body]
    return f"head's outcome cannot be asserted ({head['kind']})"


def fact_check(fact: list[Any], expr: str) -> str:
    """``assert <the fact's expression of expr> == <its value>`` (``is None`` for None)."""
    left = str(fact[0]).replace("{r}", expr)
    op = "is" if fact[1] == "None" else "=="
    return f"assert {left} {op} {fact[1]}"


def _long_checks(expr: str, d: Difference) -> list[ast.stmt] | str:
    """Head's value too long to read whole: the assert of the part of it where the
    parent's differs (``amplify_window``); none for a short value, or a long one whose
    part is not known but that can still be read whole; a string says why neither."""
    shown = str(d.head["value"])
    if len(shown) <= WHOLE:
        return []
    found = long_part(expr, shown, d.parent)
    if found is None:
        if len(shown) > LONGEST:
            return "head's value is too long to assert and where the parent's differs is not known"
        return []
    d.head = {**d.head, "value": found.value, "asserted": found.expr}
    if found.parent:
        d.parent = {"kind": "value", "value": found.parent}
    d.head["why"] = "Nova: the value is long: only the part where the parent's differs is asserted"
    checks = ast.parse(found.check).body
    d.head["check"] = ast.unparse(checks[-1])
    return checks


def _commented(written: Written | str, d: Difference) -> Written | str:
    """The assert that checks only a part of head's value, under a comment saying so."""
    why, check = d.head.get("why"), d.head.get("check")
    if isinstance(written, str) or not why or not check:
        return written
    for i, line in enumerate(written.lines):
        if line.strip() == check:
            indent = line[: len(line) - len(line.lstrip())]
            written.lines[i:i] = [f"{indent}# {row}" for row in str(why).splitlines()]
            break
    return written


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _plain(node: ast.expr) -> bool:
    """A name or a chain of attributes of one: reading it again changes nothing."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def amplified_module(
    source: str, tests: list[tuple[list[str], Written]], collected: tuple[str, ...] = ()
) -> str:
    """The original module's imports and non-test statements, with the amplified tests
    (each: its class path and name, and the lines ``amplified_test`` made) in place of
    its tests. ``collected``: the names the module's tests ran under (``Class::test``),
    which tell the tests a class inherits. What the kept code reads stays defined: a
    ``Test*`` name imported or defined here (a helper class, a client, a base class
    with tests of its own: kept without its tests); what it does not read is left out,
    so no other test of the project is collected from this module again."""
    tree = ast.parse(source)
    classes = {parts[0] for parts, _ in tests if len(parts) > 1}
    written = "\n".join(line for _, w in tests for line in [*w.imports, *w.lines])
    needed = _needed(tree, classes, _read(ast.parse(written)))
    imports: list[str] = []
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            continue
        if isinstance(node, ast.ClassDef):
            if node.name in classes:
                mine = [lines for parts, lines in tests if parts[0] == node.name]
                out.append(_class_with(node, mine, _inherited(node, collected)))
                continue
            if _tests_of(node) or node.name.startswith("Test"):
                if node.name in needed:  # a base or a helper the kept code reads
                    out.append(_class_with(node, [], _inherited(node, collected)))
                continue
        if isinstance(node, ast.ImportFrom | ast.Import):
            node.names = [
                a
                for a in node.names
                if not (a.asname or a.name).startswith("Test") or (a.asname or a.name) in needed
            ]
            if not node.names:
                continue
        out.append(ast.unparse(node))
    for parts, w in tests:
        imports += w.imports
        if len(parts) == 1:
            out.append("\n".join(w.lines))
    head = [ast.unparse(n) for n in tree.body[:1] if ast.get_docstring(tree) is not None]
    head += [ast.unparse(n) for n in tree.body if _future(n)]
    extra = [i for i in dict.fromkeys(imports) if i not in head and i not in out]
    body = [o for o in out if o not in head]
    return "\n\n".join([*head, *extra, *body]) + "\n"


def _tests_of(node: ast.ClassDef) -> list[str]:
    return [
        n.name
        for n in node.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
    ]


def _inherited(node: ast.ClassDef, collected: tuple[str, ...]) -> set[str]:
    """The tests ``node`` ran that it does not define (a mixin's, a base's)."""
    own = {n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {
        c.split("::")[1].split("[", 1)[0]
        for c in collected
        if c.count("::") == 1 and c.split("::")[0] == node.name
    } - own


def _read(*nodes: ast.AST) -> set[str]:
    """The names ``nodes`` read (``a`` of ``a.b.c``, a base class, a decorator)."""
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _members_read(node: ast.ClassDef) -> set[str]:
    """What a class kept without its tests reads: its bases, decorators, other members."""
    members = [
        n
        for n in node.body
        if not (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    ]
    return _read(*node.bases, *node.keywords, *node.decorator_list, *members)


def _needed(tree: ast.Module, classes: set[str], read: set[str]) -> set[str]:
    """The names the kept code reads: the amplified tests' (``read``), those of the
    module's statements that stay, and, in turn, of each class they read that would
    otherwise be left out (to a fixpoint: a base class's own base)."""
    droppable: dict[str, ast.ClassDef] = {}
    needed = set(read)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            continue
        if isinstance(node, ast.ClassDef):
            if node.name not in classes and (_tests_of(node) or node.name.startswith("Test")):
                droppable[node.name] = node
            else:
                needed |= _members_read(node)
        elif not isinstance(node, ast.Import | ast.ImportFrom):
            needed |= _read(node)
    todo = [n for n in needed if n in droppable]
    while todo:
        name = todo.pop()
        if name in droppable:
            more = _members_read(droppable.pop(name))
            todo += [n for n in more - needed if n in droppable]
            needed |= more
    return needed


def _future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _class_with(node: ast.ClassDef, tests: list[Written], inherited: set[str]) -> str:
    """The class with its non-test members and the amplified tests only: the tests it
    inherits (from a mixin of another module) are set to None, which no runner collects."""
    node.body = [
        n
        for n in node.body
        if not (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    ] or [ast.Pass()]
    node.body += [ast.parse(f"{name} = None").body[0] for name in sorted(inherited)]
    text = ast.unparse(node)
    methods = []
    for written in tests:
        methods.append("\n".join("    " + line if line else line for line in written.lines))
    return text + "\n\n" + "\n\n".join(methods)
