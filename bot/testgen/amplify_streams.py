"""Test amplification of what a call writes: the project's test copied, with the words its
call wrote to stderr or stdout asserted, when they differ between head and parent.

A release often changes only what a call writes (a progress bar's label, a CLI's message,
a diagnostic on stderr) while the value it returns and the test's asserts stay alike: the
test passes on both sides and its values do not differ. The observation plugin tees both
streams while each call from the test's body runs (``probe_tee``) and notes the words as
the side-runner does; here the sides are compared with the differential generator's rule
(``streams.differ``: a word head wrote in every run and the parent in none is asserted
present, one the parent wrote in every run and head never, in any form, is asserted
absent; never the whole text, no word rule of its own), and the test is written: its body
cut after the statement holding the call, ``capsys.readouterr()`` just before that
statement (what the test wrote earlier is not the call's; the test's own ``capfd`` where
it takes one), then the statement, its streams read and split into words and those
asserted. The gates then decide as for any
amplified test (it must pass on head, runs in a row, and fail on the parent).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from bot.testgen import streams

if TYPE_CHECKING:
    from bot.testgen.amplify_write import Difference, Written

__all__ = ["KIND", "inline_tables", "streams_test", "written_differs"]

KIND = "streams"  # a Difference's outcome kind: only what the call wrote differs
# fixtures that give the streams as bytes: capsys cannot be asked beside them
_BINARY_CAPTURE = ("capfdbinary", "capsysbinary")


def written_differs(
    head: list[dict[Any, dict[str, Any]]], parent: list[dict[Any, dict[str, Any]]], key: Any
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The call ``key`` ended alike on both sides: head's and the parent's outcome when
    the words it wrote differ (in every run of each side), else None."""
    ours = [r[key] for r in head if key in r]
    theirs = [r[key] for r in parent if key in r]
    if len(ours) != len(head) or len(theirs) != len(parent) or len(ours) < 2 or not theirs:
        return None
    if any(r.get("kind") == "raises" for r in [*ours, *theirs]):
        return None  # the written test cuts after the call: one that raises is not written
    written = streams.differ(ours, theirs)
    if not written:
        return None
    return (
        {"kind": KIND, "written": written, "value": streams.said(written, True)},
        {"kind": KIND, "written": written, "value": streams.said(written, False)},
    )


def inline_tables(tree: ast.Module, func: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """A ``parametrize`` mark of ``func`` whose cases are a name bound once at the
    module's top to a literal list or tuple (``TEST_DATA = [(f, [1, 2], {...}), ...]``):
    the literal put in its place, so a case's values are found by its place there."""
    bound: dict[str, list[ast.expr]] = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets = [stmt.target]
        value = getattr(stmt, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and isinstance(value, ast.List | ast.Tuple):
                bound.setdefault(target.id, []).append(value)
            elif isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(ast.Constant(None))  # bound otherwise
    for deco in func.decorator_list:
        if not (
            isinstance(deco, ast.Call)
            and ast.unparse(deco.func).endswith("parametrize")
            and len(deco.args) > 1
            and isinstance(deco.args[1], ast.Name)
        ):
            continue
        values = bound.get(deco.args[1].id) or []
        if len(values) == 1 and isinstance(values[0], ast.List | ast.Tuple):
            deco.args[1] = values[0]


def streams_test(
    tree: ast.Module,
    parts: list[str],
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    d: Difference,
) -> Written | str:
    """The amplified test of a difference in what the call wrote (``written_differs``):
    a ``Written``, or a string saying why it cannot be written."""
    from bot.testgen import amplify_write as aw  # (it imports this module's caller)

    if _unittest_class(tree, parts):
        return "the test is a unittest method: capsys cannot be given to it"
    names = [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]
    if any(n in names for n in _BINARY_CAPTURE):
        return "the test takes a binary capture fixture: capsys cannot be given beside it"
    # the test's own capture fixture (capfd reads what capsys would, and more), or capsys
    fixture = "capfd" if "capfd" in names else "capsys"
    if func.args.defaults or func.args.vararg or func.args.kwarg:
        return "the test's parameters have defaults or are variadic"
    where = aw._statement(func.body, d.line, opened=False)
    if isinstance(where, str):
        return where
    if where.loop is not None:
        return "the call that wrote otherwise is inside a loop"
    body, index = where.body, where.index
    stmt = body[index]
    if aw._target(stmt, d) is None and not _aliased_call(tree, stmt, d.name):
        return f"the call of {d.name} was not found on line {d.line}"
    bound = aw._bind_params(func, d.params, d.indices) if "[" in d.node else []
    if isinstance(bound, str):
        return bound
    if fixture not in names:
        func.args.args.append(ast.arg(arg=fixture))
    lines = [line.strip() for line in streams.checks(d.head["written"])]
    lines[0] = lines[0].replace("capsys.", f"{fixture}.")
    del body[index:]
    body.extend([ast.parse(f"{fixture}.readouterr()").body[0], stmt])
    body.extend(ast.parse(line).body[0] for line in lines)
    imports = ["import re"]
    for name, (shown, more) in reversed(bound):
        func.body.insert(0, ast.parse(f"{name} = {shown}").body[0])
        imports += more
    imports += aw.seeding(func, d)
    d.head.setdefault("asserted", ast.unparse(stmt)[:200])
    func.name = aw.changed_name(func.name)
    comment = (
        f"Nova: amplified from {d.amplifies}; {d.name} returned alike on the parent, "
        f"which {d.parent['value']}"
    )
    return aw._written(imports, comment, func)


def _unittest_class(tree: ast.Module, parts: list[str]) -> bool:
    """The test is a method of a class with a base (``unittest.TestCase`` and its kin
    take no fixtures as arguments)."""
    if len(parts) < 2:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == parts[-2]:
            return bool(node.bases)
    return False


def _aliased_call(tree: ast.Module, stmt: ast.stmt, qualname: str) -> bool:
    """The statement calls the function under the name the module imported it as
    (``from pkg.threads import run as run_threads``, then ``run_threads(...)``)."""
    short = qualname.split(".")[-1]
    aliases = {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == short and alias.asname
    }
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in aliases
        for node in ast.walk(stmt)
    )
