"""Write the differential generator's examples as plain pytest tests: ``assert f(x) ==
value`` and ``pytest.raises``, parametrized when several inputs of one function share a
shape, with what the parent commit did as a comment on each changed case."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

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

    def shape(self) -> tuple[object, ...]:
        return (
            self.changed,
            self.outcome["kind"],
            self.outcome.get("type"),
            len(self.args),
            tuple(sorted(self.kwargs)),
        )

    def all_imports(self) -> list[str]:
        extra = self.outcome.get("imports")
        return (
            [*self.imports, *(str(i) for i in extra)]
            if isinstance(extra, list)
            else list(self.imports)
        )


@dataclass
class _Group:
    name: str
    examples: list[Example] = field(default_factory=list)


def _snake(text: str) -> str:
    last = text.rsplit(".", 1)[-1]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", last).lower()


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


def _assertion(call: str, outcome: dict[str, object], expected: str) -> list[str]:
    if outcome["kind"] == "raises":
        return [f"    with pytest.raises({outcome['type']}):", f"        {call}"]
    if expected in ("None", "True", "False"):
        return [f"    assert {call} is {expected}"]
    return [f"    assert {call} == {expected}"]


def _single(func: str, name: str, e: Example) -> list[str]:
    lines = [f"def {name}():"]
    if e.changed and e.before:
        lines.append(f"    # before this change: {e.before}")
    return lines + _assertion(
        _call(func, e.args, e.kwargs), e.outcome, str(e.outcome.get("value", ""))
    )


def _parametrized(func: str, name: str, group: list[Example], params: list[str]) -> list[str]:
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
        comment = f"  # before: {e.before}" if e.changed and e.before else ""
        rows.append(f"        {row},{comment}")
    header = (
        repr(columns[0]) if len(columns) == 1 else "(" + ", ".join(repr(c) for c in columns) + ")"
    )
    call = _call(func, positional, {k: k for k in first.kwargs})
    return [
        "@pytest.mark.parametrize(",
        f"    {header},",
        "    [",
        *rows,
        "    ],",
        ")",
        f"def {name}({', '.join(columns)}):",
        *_assertion(call, first.outcome, "expected"),
    ]


def _groups(func: str, examples: list[Example]) -> list[_Group]:
    by_shape: dict[tuple[object, ...], list[Example]] = {}
    for e in examples:
        e.kwargs = dict(sorted(e.kwargs.items()))  # one column order for one shape
        by_shape.setdefault(e.shape(), []).append(e)
    groups: list[_Group] = []
    used: set[str] = set()
    for shape, members in by_shape.items():
        base = f"test_{func}_{'changed' if shape[0] else 'unchanged'}"
        if shape[1] == "raises":
            base += f"_raises_{_snake(str(shape[2]))}"
        # unchanged cases stand alone: each must bite on its own (a mutant)
        chunks = [members] if shape[0] and len(members) > 1 else [[m] for m in members]
        for chunk in chunks:
            name, n = base, 2
            while name in used:
                name, n = f"{base}_{n}", n + 1
            used.add(name)
            groups.append(_Group(name, chunk))
    return groups


def render_module(
    module: str, path: str, examples: dict[str, list[Example]], params: dict[str, list[str]]
) -> str:
    """The test file's text: the functions' examples, grouped."""
    body: list[str] = []
    needs_pytest = False
    imports: set[str] = set()
    for func, found in sorted(examples.items()):
        for group in _groups(func, found):
            first = group.examples[0]
            many = len(group.examples) > 1
            needs_pytest |= many or first.outcome["kind"] == "raises"
            for e in group.examples:
                imports.update(e.all_imports())
            body += [
                "",
                "",
                *(
                    _parametrized(func, group.name, group.examples, params.get(func, []))
                    if many
                    else _single(func, group.name, first)
                ),
            ]
    plain = sorted(i for i in imports if i.startswith("import "))
    froms = sorted(i for i in imports if i.startswith("from "))
    head = [
        f"{MARKER}{path}, written by Nova from running the code (no model).",
        "",
        "Each expected value is what the changed code returns. In the *_changed tests the",
        "parent commit did something else (the comments say what): they pin the new",
        'behaviour. The *_unchanged tests guard behaviour both versions share."""',
        "",
    ]
    lines = [
        *head,
        *plain,
        *(["", "import pytest"] if needs_pytest else []),
        "",
        *froms,
        f"from {module} import {', '.join(sorted(examples))}",
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
