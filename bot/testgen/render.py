"""Write the differential generator's examples as plain pytest tests: ``assert f(x) ==
value`` and ``pytest.raises``, parametrized when several inputs of one function share a
shape, with what the parent commit did as a comment on each changed case."""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass, field
from typing import Any

from bot.testgen import ambient, asyncs, logged, probe_steady, scratch, seeded, streams, wired
from bot.testgen.probe_objects import VALUE
from bot.testgen.scenarios import MAKER, OBJ

__all__ = ["MARKER", "Example", "render_module", "tidy"]

MARKER = '"""Regression tests for '


@dataclass
class Example:
    args: list[str]  # Python source of each value
    kwargs: dict[str, str]
    imports: list[str]  # import lines the values need
    outcome: dict[str, object]  # {"kind": "value", "value": src} | {"kind": "raises", "type"}
    changed: bool = True  # the parent commit did something else
    before: str = ""  # what the parent did, for the comment
    kind: str = "function"  # function | static | method | property | init
    owner: str | None = None  # the class of a member
    ctor: dict[str, Any] | None = None  # {"args": [...], "kwargs": {...}} of the instance
    steps: list[str] = field(default_factory=list)  # mined steps on the instance (OBJ)
    origin: str = ""  # tests | doctest | drawn
    new: bool = False  # the name did not exist on the parent
    parent: dict[str, object] | None = None  # the parent's outcome, when it had the name
    pinned: bool = False  # observed with the clock pinned: the test pins it the same way
    ambient: str = ""  # observed under a process-wide setting (ambient.py): the test too
    # the warnings head and the parent differ in (warned.py): {"errors": [[category,
    # message prefix, imports]], "warns": [category, message prefix, imports] | None}
    warned: dict[str, Any] | None = None
    logged: dict[str, Any] | None = None  # the log records it asserts (logged.py)
    streams: dict[str, Any] | None = None  # the written words it asserts (streams.py)
    wire: dict[str, Any] | None = None  # the parts of its HTTP requests it asserts (wired.py)
    scratch: bool = False  # probed in a scratch directory (scratch.py): run in tmp_path
    seeded: list[str] = field(default_factory=list)  # generators seeded first (seeded.py)

    def in_tmp(self) -> bool:
        return scratch.chdir_needed(self.outcome, self.parent, self.scratch)

    @classmethod
    def of(
        cls,
        result: dict[str, Any],
        entry: dict[str, Any],
        outcome: dict[str, object],
        said: str,
        **extra: Any,
    ) -> Example:
        """The changed example of the probe's ``result`` (an input of the function whose
        probe entry is ``entry``) that asserts ``outcome``; ``said``: what the parent did."""
        return cls(
            list(result["args"]),
            dict(result["kwargs"]),
            list(result["imports"]),
            outcome,
            True,
            said,
            kind=str(entry.get("kind") or "function"),
            owner=entry.get("owner"),
            ctor=result.get("ctor"),
            steps=list(result.get("steps") or []),
            origin=str(result.get("origin", "")),
            seeded=list(result.get("seeded") or []),
            **extra,
        )

    def shape(self) -> tuple[object, ...]:
        return (
            self.changed,
            self.outcome["kind"],
            self.outcome.get("type"),
            len(self.args),
            tuple(sorted(self.kwargs)),
            self.outcome.get("view"),
            bool(self.outcome.get("strict")),
            self.outcome.get("message"),  # one pattern for the rows of one test
            bool(self.outcome.get("state")),
            self.new,
            self.outcome.get("at"),  # building the instance raised: one layout per test
            self.pinned,
            self.ambient,
            "printed" in self.outcome,
            bool(self.warned),
            bool(self.logged),
            bool(self.streams),
            bool(self.wire),
            self.in_tmp(),
            tuple(self.seeded),
        )

    def all_imports(self) -> list[str]:
        out = list(self.imports)
        for source in (self.outcome, self.outcome.get("state")):
            extra = source.get("imports") if isinstance(source, dict) else None
            out += [str(i) for i in extra] if isinstance(extra, list) else []
        if self.outcome.get("view") == "islice":
            out.append("from itertools import islice")
        out += _warned_imports(self.warned) + (["import logging"] if self.logged else [])
        out += wired.imports(self.wire) if self.wire else []
        out += ["import re"] if self.streams else []  # (streams.py)
        message = self.outcome.get("message")
        if message and _special(str(message)):
            out.append("import re")
        if self.outcome.get("awaited"):
            out.append("import asyncio")
        return out + scratch.written_imports(self.outcome) + seeded.lines(self.seeded)[1]

    def alone(self) -> bool:
        """Whether it needs a test of its own (an instance with steps to set up)."""
        return (
            self.kind in ("method", "property")
            or bool(self.outcome.get("state"))
            or self.outcome["kind"] == "object"  # its facts are its own
            or self.pinned  # its own clock, from the first line on
            or bool(self.ambient)  # its own setting, from the first line on
            or "printed" in self.outcome  # its own output
            or bool(self.warned)  # its own warnings
            or bool(self.logged)  # its own log records
            or bool(self.streams)  # its own written words
            or bool(self.wire)  # its own requests
            or bool(self.outcome.get("awaited"))  # its own coroutine to run
            or self.in_tmp()  # its own directory's files
        )


@dataclass
class _Group:
    name: str
    examples: list[Example] = field(default_factory=list)


def _snake(text: str) -> str:
    last = text.rsplit(".", 1)[-1].strip("_")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", last).lower()


def _columns(example: Example, params: list[str]) -> list[str]:
    taken = set(example.kwargs)
    names = []
    for i in range(len(example.args)):
        name = params[i] if i < len(params) and params[i].isidentifier() else f"arg{i}"
        if name in taken or name in ("expected", "pytest"):
            name = f"arg{i}"
        taken.add(name)
        names.append(name)
    return names


def _call(func: str, positional: list[str], keywords: dict[str, str]) -> str:
    return f"{func}({', '.join([*positional, *(f'{k}={v}' for k, v in keywords.items())])})"


_OPERATORS = {
    "__eq__": "==",
    "__ne__": "!=",
    "__lt__": "<",
    "__le__": "<=",
    "__gt__": ">",
    "__ge__": ">=",
    "__add__": "+",
    "__sub__": "-",
    "__or__": "|",
    "__and__": "&",
}
_BUILTIN_FORMS = {"__len__": "len", "__str__": "str", "__repr__": "repr", "__bool__": "bool"}


def _member_call(var: str, member: str, args: list[str], kwargs: dict[str, str], kind: str) -> str:
    """How a person writes the use of a member: ``len(x)``, ``x[k]``, ``x == y``."""
    if kind == "property":
        return f"{var}.{member}"
    if member in _BUILTIN_FORMS and not args and not kwargs:
        return f"{_BUILTIN_FORMS[member]}({var})"
    if member == "__iter__" and not args:
        return f"list({var})"
    if member in _OPERATORS and len(args) == 1 and not kwargs:
        return f"{var} {_OPERATORS[member]} {args[0]}"
    if member == "__getitem__" and len(args) == 1 and not kwargs:
        return f"{var}[{args[0]}]"
    if member == "__contains__" and len(args) == 1 and not kwargs:
        return f"{args[0]} in {var}"
    if member == "__call__":
        return _call(var, args, kwargs)
    return _call(f"{var}.{member}", args, kwargs)


def setup_and_call(
    func: str, e: Example, args: list[str], kwargs: dict[str, str]
) -> tuple[list[str], str]:
    """(the lines before the call, the call): an instance built as the tests build it,
    their steps on it, then the use of the changed name."""
    owner = e.owner or func.split(".")[0]
    member = func.rsplit(".", 1)[-1]
    if e.kind == "static":
        return [], _call(f"{owner}.{member}", args, kwargs)
    if e.kind == "init":
        return [], _call(owner, args, kwargs)
    if e.kind not in ("method", "property") or e.ctor is None:
        return [], _call(func, args, kwargs)
    var = _snake(owner) or "obj"
    taken = ("pytest", "expected", "actual", "re", "islice", "math", "datetime")
    if var in taken or var == owner.split(".")[0]:  # a class named in lower case: `croniter`
        var += "_"
    factory = str(e.ctor.get("factory") or "")
    make = (
        factory[len(MAKER) :]
        if factory.startswith(MAKER)  # a callable the tests import builds it
        else f"{owner}.{factory}"
        if factory
        else owner
    )
    made_with = [owner] if factory == "__new__" else list(e.ctor["args"])  # bare.py: no __init__
    lines = [f"{var} = {_call(make, made_with, dict(e.ctor['kwargs']))}"]
    lines += [re.sub(rf"\b{OBJ}\b", var, step) for step in e.steps]
    return lines, _member_call(var, member, args, kwargs, e.kind)


def _observed(call: str, outcome: dict[str, object]) -> str:
    view = outcome.get("view")
    if view == "islice":
        return f"list(islice({call}, 20))"
    if view in ("list", "str", "dict"):
        return f"{view}({call})"
    return _grouped(call)


def _grouped(call: str) -> str:
    """An operator use in parentheses: ``assert a == 0 is False`` would chain the
    comparisons (``a == 0 and 0 is False``) and never fail."""
    try:
        top = ast.parse(call, mode="eval").body
    except SyntaxError:
        return call
    return f"({call})" if isinstance(top, ast.Compare | ast.BinOp | ast.BoolOp) else call


def _assertion(
    lines: list[str], call: str, outcome: dict[str, object], expected: str, var: str = ""
) -> list[str]:
    body = [f"    {line}" for line in lines]
    if outcome["kind"] == "raises":
        message = outcome.get("message")
        match = f", match={_pattern(str(message))}" if message else ""
        raising = [f"        {_observed(call, outcome)}"]
        if outcome.get("at") == "setup":  # building the instance raised: inside the block
            raising, body = [f"    {line}" for line in body] + raising, []
        return [*body, f"    with pytest.raises({outcome['type']}{match}):", *raising]
    if outcome["kind"] == "call":  # the value is not steady: the call alone
        return [*body, f"    {_observed(call, outcome)}"]
    state = outcome.get("state")
    if isinstance(state, dict) and expected == "None" and var:
        made = f"assert {call} is None" if call.isidentifier() else call  # a value returned
        return [*body, f"    {made}", f"    assert {state['view']}({var}) == {state['value']}"]
    observed = _observed(call, outcome)
    if outcome["kind"] == "object" and outcome.get("view") == "after" and var:
        # the call returned None: the facts are of the instance it changed
        checks = [f"    {c}" for c in _object_checks(outcome)]
        return [*body, f"    assert {_grouped(call)} is None", f"    actual = {var}", *checks]
    if outcome["kind"] == "object":
        return [*body, f"    actual = {observed}", *(f"    {c}" for c in _object_checks(outcome))]
    if expected in ("None", "True", "False"):
        return [*body, f"    assert {observed} is {expected}"]
    if outcome.get("strict"):
        # equal is not enough when the parent's value compares equal: its type and order
        # (the repr) are pinned as well
        return [
            *body,
            f"    actual = {observed}",
            f"    assert actual == {expected}",
            f"    assert type(actual) is type({expected})",
            f"    assert repr(actual) == repr({expected})",
        ]
    return [*body, f"    assert {observed} == {expected}"]


def _object_checks(outcome: dict[str, object]) -> list[str]:
    """The asserts of a value whose repr is not a value, on ``actual``: the facts of its
    structure the generator chose (type names, items, attributes that render)."""
    facts = outcome.get("facts")
    out = []
    for expr, source in facts if isinstance(facts, list) else []:
        left = str(expr).replace(VALUE, "actual")
        same = "is" if source in ("None", "True", "False") else "=="
        out.append(f"assert {left} {same} {source}")
    return out


def _pattern(message: str) -> str:
    """The message as a ``match=`` pattern: the whole message, special characters escaped."""
    return f"re.escape({message!r})" if _special(message) else repr(message)


def _special(message: str) -> bool:
    """Whether a message holds a character a regular expression reads specially."""
    return any(c in message for c in ".^$*+?{}[]\\|()")


def _single(func: str, name: str, e: Example, module: str) -> list[str]:
    printed = e.outcome.get("printed")
    fixtures = ["capsys"] if printed is not None or e.streams else []
    fixtures += ["tmp_path", "monkeypatch"] if e.in_tmp() else []  # scratch.py
    lines = [f"def {name}({', '.join(fixtures)}):"]
    if e.new:
        lines.append(
            f"    from {module} import {(e.owner or func).split('.')[0]}  # new in this change"
        )
    elif e.changed and e.before:
        lines.append(f"    # before this change: {e.before}")
    setup, call = setup_and_call(func, e, e.args, e.kwargs)
    var = setup[0].split(" = ", 1)[0] if setup else ""
    setup = [*seeded.lines(e.seeded)[0], *setup]  # as the probe seeded them (seeded.py)
    outcome = e.outcome
    if outcome.get("awaited"):  # built, called and awaited in a coroutine (asyncs.py)
        setup, call, outcome = asyncs.written(setup, call, outcome, var)
    body = _assertion(setup, call, outcome, str(e.outcome.get("value", "")), var)
    if printed is not None:  # what the call wrote to stdout (and nothing else did)
        body.append(f"    assert capsys.readouterr().out == {printed!r}")
    body += streams.checks(e.streams) if e.streams else []  # its written words
    if e.in_tmp():  # the files it left (scratch.py)
        body = scratch.written(body, e.outcome)
    if e.pinned:  # every read of the clock from the first line on, as the probe's were
        body = [f"    with {PINNED}():", *(f"    {line}" for line in body)]
    if e.ambient:  # the setting applied around it, restored even when it fails
        body = [f"    with {ambient.entered(e.ambient)}:", *(f"    {line}" for line in body)]
    if e.warned:
        body = _within_warnings(e.warned, body)
    if e.logged:  # its log records (logged.py)
        return logged.within_logs(lines, body, e.logged)
    if e.wire:  # its HTTP requests (wired.py)
        return wired.within_wire(lines, body, e.wire)
    return lines + body


def _within_warnings(warned: dict[str, Any], body: list[str]) -> list[str]:
    """The test's body where a warning the parent gave is an error, inside
    ``pytest.warns`` when head gives one the parent did not (warned.py)."""
    errors = warned.get("errors") or []
    if errors:
        filters = [
            f"warnings.filterwarnings('error', message={_pattern(m)}, category={c})"
            if m
            else f"warnings.simplefilter('error', {c})"
            for c, m, _ in errors
        ]
        body = [
            "    with warnings.catch_warnings():",
            *(f"        {f}" for f in filters),
            *(f"    {line}" for line in body),
        ]
    warns = warned.get("warns")
    if warns:
        match = f", match={_pattern(warns[1])}" if warns[1] else ""
        body = [f"    with pytest.warns({warns[0]}{match}):", *(f"    {line}" for line in body)]
    return body


def _warned_imports(warned: dict[str, Any] | None) -> list[str]:
    if not warned:
        return []
    shown = [*(warned.get("errors") or []), *([warned["warns"]] if warned.get("warns") else [])]
    out = ["import warnings"] if warned.get("errors") else []
    out += [str(i) for w in shown for i in w[2]]
    if any(w[1] and _special(str(w[1])) for w in shown):
        out.append("import re")
    return out


PINNED = "_pinned_clock"  # the written test's copy of probe_steady.pinned_clock


def clock_helper() -> str:
    """``probe_steady.pinned_clock``'s source as a written test's own helper: the same
    pinned clock the side-runner observed the outcome with."""
    return helper_source(probe_steady.pinned_clock, PINNED)


def _setting(key: str) -> str:
    """The name of the written test's copy of a setting's context manager."""
    return ambient.SETTINGS[key].apply.__name__


def helper_source(func: Any, name: str) -> str:
    """A function's source as a written test's own helper named ``name`` (no
    annotations: the project's Python may not know their names)."""
    tree = ast.parse(inspect.getsource(func))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.returns = None
        elif isinstance(node, ast.arg):
            node.annotation = None
    tree = _Unannotated().visit(tree)
    top = tree.body[0]
    assert isinstance(top, ast.FunctionDef)
    top.name = name
    return ast.unparse(ast.fix_missing_locations(tree))


class _Unannotated(ast.NodeTransformer):
    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:  # noqa: N802 (ast's name)
        target = node.target
        if node.value is None:
            return ast.Pass()
        return ast.copy_location(ast.Assign(targets=[target], value=node.value), node)


def _parametrized(
    func: str, name: str, group: list[Example], params: list[str], module: str
) -> list[str]:
    first = group[0]
    positional = _columns(first, params)
    columns = [*positional, *first.kwargs]
    raises = first.outcome["kind"] == "raises"
    if not raises:
        columns.append("expected")
    rows = []
    for e in group:
        values = [*e.args, *e.kwargs.values()]
        if not raises:
            values.append(str(e.outcome["value"]))
        row = values[0] if len(values) == 1 else "(" + ", ".join(values) + ")"
        comment = f"  # before: {e.before}" if e.changed and e.before and not e.new else ""
        rows.append(f"        {row},{comment}")
    header = (
        repr(columns[0]) if len(columns) == 1 else "(" + ", ".join(repr(c) for c in columns) + ")"
    )
    setup, call = setup_and_call(func, first, positional, {k: k for k in first.kwargs})
    head = (
        [f"    from {module} import {(first.owner or func).split('.')[0]}  # new in this change"]
        if first.new
        else []
    )
    return [
        "@pytest.mark.parametrize(",
        f"    {header},",
        "    [",
        *rows,
        "    ],",
        ")",
        f"def {name}({', '.join(columns)}):",
        *head,
        *_assertion([*seeded.lines(first.seeded)[0], *setup], call, first.outcome, "expected"),
    ]


def _type_word(source: object) -> str:
    try:
        value = ast.literal_eval(str(source))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ""
    return "none" if value is None else type(value).__name__


def _what(func: str, shape: tuple[object, ...], e: Example) -> str:
    """A test name that says what is pinned: ``test_expire_returns_list_not_none``."""
    base = (
        f"test_{_snake(func.split('.')[0])}"
        if e.kind == "init"
        else f"test_{'_'.join(_snake(p) for p in func.split('.'))}"
    )
    if e.new:
        return f"{base}_new"
    if e.logged:
        return f"{base}_logs"
    if e.streams:
        return f"{base}_writes"
    if e.wire:
        return base + wired.named(e.wire)
    if e.warned:
        warns = e.warned.get("warns")
        errors = e.warned.get("errors") or []
        said = f"_warns_{_snake(warns[0])}" if warns else ""
        return base + (f"_no_{_snake(errors[0][0])}" if errors else "") + said
    if shape[1] == "raises":
        if not shape[0]:
            return f"{base}_raises_{_snake(str(shape[2]))}"
        return f"{base}_now_raises_{_snake(str(shape[2]))}"
    if not shape[0]:
        return f"{base}_unchanged"
    if e.outcome.get("state") or e.outcome.get("view") == "after":
        return f"{base}_changes_state"
    if e.parent and e.parent.get("kind") == "raises":
        return f"{base}_returns_instead_of_raising"
    if e.parent is None or e.parent.get("kind") != "value":
        return f"{base}_changed"
    now, then = _type_word(e.outcome.get("value")), _type_word(e.parent.get("value"))
    if now and then and now != then:
        return f"{base}_returns_{now}_not_{then}"
    return f"{base}_changed"


def _groups(func: str, examples: list[Example]) -> list[_Group]:
    by_shape: dict[tuple[object, ...], list[Example]] = {}
    for e in examples:
        e.kwargs = dict(sorted(e.kwargs.items()))  # one column order for one shape
        by_shape.setdefault(e.shape(), []).append(e)
    groups: list[_Group] = []
    used: set[str] = set()
    for shape, members in by_shape.items():
        # unchanged cases stand alone: each must bite on its own (a mutant)
        together = shape[0] and len(members) > 1 and not members[0].alone()
        for chunk in [members] if together else [[m] for m in members]:
            base = _what(func, shape, chunk[0])
            name, n = base, 2
            while name in used:
                name, n = f"{base}_{n}", n + 1
            used.add(name)
            groups.append(_Group(name, chunk))
    return groups


def _fact(func: str, e: Example, via: list[str]) -> dict[str, object]:
    setup, call = setup_and_call(func, e, e.args, e.kwargs)
    message = e.outcome.get("message")
    head = (
        f"raises {e.outcome['type']}" + (f"({message!r})" if message else "")
        if e.outcome["kind"] == "raises"
        else str(e.outcome.get("value"))
    )
    if e.outcome.get("printed") is not None:
        head += f", printing {e.outcome['printed']!r}"
    head += scratch.written_head(e.outcome) if e.in_tmp() else ""
    if e.warned:
        head = _warned_head(e.warned, head if e.outcome["kind"] != "call" else "")
    if e.logged:
        head = logged.logged_head(e.logged, head if e.outcome["kind"] != "call" else "")
    if e.wire:
        head = wired.wire_head(e.wire, head if e.outcome["kind"] != "call" else "")
    if e.streams:
        head = streams.streams_head(e.streams, head if e.outcome["kind"] != "call" else "")
    if e.outcome["kind"] == "object":
        head = "; ".join(c.removeprefix("assert ") for c in _object_checks(e.outcome))
        head = f"None, leaving {head}" if e.outcome.get("view") == "after" else head
    pinned = [f"with {PINNED}()"] if e.pinned else []
    pinned += [f"with {ambient.entered(e.ambient)}"] if e.ambient else []
    pinned += seeded.lines(e.seeded)[0]
    made = _observed(call, e.outcome)
    if e.outcome.get("awaited"):
        setup, made = [], asyncs.shown(setup, call, e.outcome)
    return {
        "call": "; ".join([*pinned, *setup, made]),
        "head": head,
        "parent": "did not exist" if e.new else (e.before or "the same"),
        "changed": e.changed,
        "new_name": e.new,
        "reaches": via,
    }


def _warned_head(warned: dict[str, Any], value: str) -> str:
    errors, warns = warned.get("errors") or [], warned.get("warns")
    said = [f"no {c}" + (f"({m!r})" if m else "") for c, m, _ in errors]
    said += [f"warns {warns[0]}({warns[1]!r})"] if warns else []
    return ", ".join(said) + (f"; {value}" if value else "")


def render_module(
    module: str,
    path: str,
    examples: dict[str, list[Example]],
    params: dict[str, list[str]],
    facts: dict[str, list[dict[str, object]]] | None = None,
    via: dict[str, list[str]] | None = None,
) -> str:
    """The test file's text: the functions' examples, grouped. ``facts`` gets, for each
    test function, what each of its cases calls and what head and parent did."""
    body: list[str] = []
    needs_pytest = False
    imports: set[str] = set()
    names: set[str] = set()
    clock = False  # a test pins the clock: the file holds the helper
    settings: set[str] = set()  # process-wide settings the tests apply: their helpers too
    for func, found in sorted(examples.items()):
        for group in _groups(func, found):
            first = group.examples[0]
            many = len(group.examples) > 1
            needs_pytest |= many or first.outcome["kind"] == "raises"
            needs_pytest |= bool(first.warned and first.warned.get("warns"))
            for e in group.examples:
                imports.update(e.all_imports())
                clock |= e.pinned
                settings |= {e.ambient} if e.ambient else set()
            if not first.new:
                names.add((first.owner or func).split(".")[0] if first.kind != "function" else func)
            if facts is not None:
                facts[group.name] = [
                    _fact(func, e, (via or {}).get(func, [])) for e in group.examples
                ]
            body += [
                "",
                "",
                *(
                    _parametrized(func, group.name, group.examples, params.get(func, []), module)
                    if many
                    else _single(func, group.name, first, module)
                ),
            ]
    if clock:
        imports.add("import contextlib")
        body = ["", "", *clock_helper().split("\n"), *body]
    for made, called in sorted({ambient.helper(k) for k in settings}, key=lambda h: h[1])[::-1]:
        imports.add("import contextlib")
        body = ["", "", *helper_source(made, called).split("\n"), *body]
    plain = sorted(i for i in imports if i.startswith("import "))
    froms = sorted(
        i for i in imports if i.startswith("from ") and not i.startswith(f"from {module} import ")
    )
    # a value's class from the module under test (``Binding(...)``) joins its import line
    same = [i for i in imports if i.startswith(f"from {module} import ") and " as " not in i]
    names |= {n for i in same for n in _bound_by(i)}
    plain, aliases, body = _unshadowed(
        plain, body, names | {n for i in froms for n in _bound_by(i)}
    )
    # a name new in this change that a value shows (an enum member it returns) is imported
    # where the parent's lack of it fails only the tests that use it, by their name
    fresh = {
        (e.owner or func).split(".")[0] for func, found in examples.items() for e in found if e.new
    }
    late, names = sorted(names & fresh), names - fresh
    guarded = (
        [
            "",
            "try:  # new in this change: on the parent, a test that uses it fails by its name",
            f"    from {module} import {', '.join(late)}",
            "except ImportError:",
            "    pass",
        ]
        if late
        else []
    )
    head = [
        f"{MARKER}{path}, written by Nova from running the code (no model).",
        "",
        "Each expected value is what the changed code returns. Where the parent commit did",
        "something else, a comment says what: those tests pin the new behaviour. The",
        '*_unchanged tests guard behaviour both versions share."""',
        "",
    ]
    lines = [
        *head,
        *plain,
        *(["", "import pytest"] if needs_pytest else []),
        "",
        *froms,
        *([f"from {module} import {', '.join(sorted(names))}"] if names else []),
        *guarded,
        *(["", *aliases] if aliases else []),
        *body,
    ]
    text = "\n".join(lines) + "\n"
    ast.parse(text)  # a value that does not render as Python is a bug here, not a test
    return text


def tidy(text: str) -> str:
    """A generated file after dropped tests were cut out: imports no test uses any more
    are removed, and runs of blank lines shortened."""
    tree = ast.parse(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    rows = text.split("\n")
    helper = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef)
        and (n.name in _HELPERS or n.name.startswith("_raises_"))  # raisers.py's helpers
        and n.name not in used
    ]
    if helper:  # every test that pinned the clock (or called the helper) was dropped
        first = min([helper[0].lineno, *(d.lineno for d in helper[0].decorator_list)])
        del rows[first - 1 : helper[0].end_lineno or first]
        return tidy("\n".join(rows))
    for node in reversed(tree.body):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        keep = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
        if len(keep) == len(node.names):
            continue
        end = node.end_lineno or node.lineno
        if not keep:
            new: list[str] = []
        elif isinstance(node, ast.ImportFrom):
            names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in keep)
            new = [f"from {'.' * node.level}{node.module or ''} import {names}"]
        else:
            new = [f"import {', '.join(a.name for a in keep)}"]
        rows[node.lineno - 1 : end] = new
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(rows)).rstrip("\n") + "\n"


_HELPERS = {PINNED, ambient.PROJECT_HELPER, *(_setting(k) for k in ambient.SETTINGS)}


def _bound_by(line: str) -> list[str]:
    """The names ``from m import a, b as c`` binds."""
    return [n.split(" as ")[-1].strip() for n in line.split(" import ", 1)[-1].split(",")]


def _unshadowed(
    plain: list[str], body: list[str], bound: set[str]
) -> tuple[list[str], list[str], list[str]]:
    """``import pkg.mod`` when the file also binds ``pkg`` to something else (a class
    named like its package: ``from pkg.pkg import pkg``): the body's ``pkg.mod.Name``
    would look the name up on the class. The module is named through ``sys.modules``
    instead (``import pkg.mod as m`` is no help: it reads ``pkg.mod``, which the package
    may have rebound to the class too); the name is still looked up when the test runs,
    so a name the parent lacks fails only its own test. Returns the imports, the lines
    that name the modules (after every import) and the body."""
    out, names = [], []
    for line in plain:
        dotted = line.removeprefix("import ").strip()
        out.append(line)
        if " " in dotted or "." not in dotted or dotted.split(".")[0] not in bound:
            continue
        alias = "_" + dotted.replace(".", "_")
        names.append(f"{alias} = sys.modules[{dotted!r}]")
        pattern = re.compile(rf"(?<![\w.]){re.escape(dotted)}\.")
        body = [pattern.sub(alias + ".", row) for row in body]
    if names and "import sys" not in out:
        out = sorted([*out, "import sys"])
    return out, names, body
