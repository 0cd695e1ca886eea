"""The body of a testgen pull request, merge request or revision: what each kept test pins
(the call, its value before the change and after), which tests were dropped and why, in
tables — then the test matrix, the environment and the notes.

It reads whatever the testgen report carries (``TestgenResult``): a kept test's
``evidence`` (``runs``, ``changed_lines_covered``, ``mutant_killed``, ``catches_change`` or
``fails_on_parent``, ``new_name``, and ``calls``: ``[{call, head, parent, changed}]``) and a
dropped test's ``reason``; a key it lacks is left out, never guessed. The tables are pipe
tables, which GitHub, GitLab and Phorge's Remarkup all render. Names and values come from
the repository and the model: each is inline code that cannot leave its cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bot.report.digest import plural
from bot.report.untrusted import cap

if TYPE_CHECKING:
    from bot.testgen.gates import TestCase
    from bot.testgen.report import TestgenResult

__all__ = ["render_testgen_body"]

_CELL = 200  # characters of one value in a cell


def _code(value: object) -> str:
    text = " ".join(str(value).split()).replace("`", "'").replace("|", "/")
    if len(text) > _CELL:
        text = text[: _CELL - 1] + "…"
    return f"`{text}`" if text else "—"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _evidence(e: Mapping[str, Any]) -> str:
    parts = []
    if e.get("runs") is not None:
        parts.append(f"passed {e['runs']}x")
    if e.get("changed_lines_covered") is not None:
        parts.append(f"covers {plural(int(e['changed_lines_covered']), 'changed line')}")
    if e.get("catches_change") or e.get("fails_on_parent"):
        parts.append("fails on the parent commit")
    elif e.get("new_name"):
        parts.append("tests a name new in this change")
    if e.get("mutant_killed"):
        parts.append(f"kills mutant {_code(e['mutant_killed'])}")
    return " · ".join(parts) or "—"


def _calls(e: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = e.get("calls")
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        return []
    return [c for c in calls if isinstance(c, Mapping) and "call" in c]


def _pins(kept: Sequence[TestCase]) -> list[str]:
    """One row per call a kept test pins (one for the test when it names none)."""
    rows = [
        "| test | call | before (parent) | after (this change) | evidence |",
        "|---|---|---|---|---|",
    ]
    for c in kept:
        e = c.evidence
        calls = _calls(e)
        if not calls:
            before = "fails there" if e.get("catches_change") or e.get("fails_on_parent") else "—"
            rows.append(f"| {_code(c.node_id)} | — | {before} | passes | {_evidence(e)} |")
        for n, call in enumerate(calls):
            after = call.get("head", "—")
            if "parent" not in call:
                before = "—"
            elif call.get("changed") is False:
                before = "same"
            else:
                before = _code(call["parent"])
            test = _code(c.node_id) if n == 0 else "〃"
            evidence = _evidence(e) if n == 0 else ""
            rows.append(
                f"| {test} | {_code(call['call'])} | {before} | {_code(after)} | {evidence} |"
            )
    return rows


def _matrix(result: TestgenResult) -> list[str]:
    rows = [
        "| target | change | existing tests | uncovered changed lines | planned |",
        "|---|---|---|---|---|",
    ]
    for t in result.matrix:
        uncovered = (
            "not measured" if t.uncovered is None else (", ".join(map(str, t.uncovered)) or "none")
        )
        existing = _cell(", ".join(t.existing_tests)) or "none"
        rows.append(
            f"| {_code(t.path + '::' + t.qualname)} | {t.kind} | {existing} | "
            f"{uncovered} | {_cell(str(t.planned()))} |"
        )
    return rows


def render_testgen_body(result: TestgenResult, *, limit: int = 60_000) -> str:
    """The proposal's body, at most ``limit`` characters."""
    c = result.change
    head = [f"Tests for {c.id}: {c.title}".rstrip(": "), ""]
    gist = [f"**{plural(len(result.kept), 'test')} kept, {len(result.dropped)} dropped**"]
    if result.coverage_before is not None and result.coverage_after is not None:
        gist.append(
            f"changed lines run by the suite: {result.coverage_before} → "
            f"{result.coverage_after} of {result.changed_lines()}"
        )
    if result.suite_passed is not None:
        whole = "the suite's files that name the change" if result.suite_scope else "the full suite"
        gist.append(f"{whole} passed" if result.suite_passed else f"{whole} FAILED")
    elif result.suite_scope:
        gist.append("the full suite was not judged (too slow)")
    out = [*head, " · ".join(gist), ""]
    out += ["**What each kept test pins**", ""]
    out += _pins(result.kept) if result.kept else ["None was kept."]
    if result.dropped:
        out += ["", "**Dropped tests**", "", "| test | why |", "|---|---|"]
        out += [f"| {_code(d.node_id)} | {_cell(d.reason or '—')} |" for d in result.dropped]
    if result.matrix:
        out += ["", "**What changed and was planned**", "", *_matrix(result)]
    if result.environment:
        tool, path = next(((k, v) for k, v in result.environment.items() if k != "why"), ("", ""))
        if tool:
            out += [
                "",
                f"Tests ran with {tool} {_code(path)}: {result.environment.get('why', '')}.",
            ]
    if result.notes:
        out += ["", *[f"- {_cell(n)}" for n in result.notes]]
    return cap("\n".join(out) + "\n", limit, where="the proposal")
