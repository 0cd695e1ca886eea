"""Keep only tests worth keeping, with evidence for each.

A generated test is kept when it passes ``runs`` times in a row (not flaky), executes at
least one changed line, and bites: it fails on a simple mutant of a changed line (a flipped
comparison, a changed constant, a negated condition), or it fails on the parent commit's
code. Everything else is dropped with its reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from bot.testgen.frameworks import Framework
from bot.testgen.matrix import Target, line_coverage
from bot.testgen.sandbox import run_sandboxed
from bot.testgen.workspace import Workspace

__all__ = ["TestCase", "collect_tests", "evaluate", "mutants", "prune_file"]

_FLIPS = [(" == ", " != "), (" != ", " == "), (" <= ", " > "), (" >= ", " < "),
          (" < ", " >= "), (" > ", " <= "), (" and ", " or "), (" or ", " and "),
          ("True", "False"), ("False", "True"), (" + ", " - "), (" - ", " + ")]
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


@dataclass
class TestCase:
    path: str
    name: str  # the test's node id inside the file ("test_x" or "TestY::test_x")
    targets: list[str] = field(default_factory=list)
    evidence: dict[str, object] = field(default_factory=dict)
    reason: str | None = None  # why it was dropped

    @property
    def node_id(self) -> str:
        return f"{self.path}::{self.name}"

    def kept_dict(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "targets": self.targets,
                "evidence": self.evidence}

    def dropped_dict(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "reason": self.reason}


def mutants(line: str) -> Iterator[tuple[str, str]]:
    """(description, mutated line) for simple mutants of one source line."""
    code, _, _comment = line.partition("#")
    for old, new in _FLIPS:
        if old in code:
            yield f"'{old.strip()}' -> '{new.strip()}'", line.replace(old, new, 1)
    for m in _NUMBER.finditer(code):
        value = int(m.group(1))
        yield (f"{value} -> {value + 1}",
               line[:m.start()] + str(value + 1) + line[m.end():])
    stripped = code.strip()
    for keyword in ("if ", "elif ", "while ", "return "):
        if stripped.startswith(keyword) and len(stripped) > len(keyword):
            indent = line[: len(line) - len(line.lstrip())]
            body = stripped[len(keyword):].rstrip(":")
            tail = ":" if stripped.endswith(":") else ""
            yield f"negated {keyword.strip()}", f"{indent}{keyword}not ({body}){tail}"


def collect_tests(ws: Workspace, fw: Framework, rel: str) -> list[str]:
    run = run_sandboxed([*fw.run_files, "--collect-only", rel], ws.root, timeout=120)
    return [row.split("::", 1)[1] for row in run.output.splitlines()
            if row.startswith(rel + "::")]


@contextmanager
def _replaced(ws: Workspace, rel: str, text: str) -> Iterator[None]:
    path = ws.root / rel
    original = path.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    try:
        yield
    finally:
        path.write_text(original, encoding="utf-8")


def _passes(ws: Workspace, fw: Framework, node_id: str) -> bool:
    return run_sandboxed([*fw.run_files, "-x", node_id], ws.root, timeout=120).passed


def _kills_a_mutant(ws: Workspace, fw: Framework, case: TestCase,
                    covered: dict[str, list[int]]) -> str | None:
    for rel, lines in covered.items():
        source = ws.read(rel)
        if source is None:
            continue
        rows = source.split("\n")
        for n in lines:
            for description, mutated in mutants(rows[n - 1]):
                text = "\n".join(rows[: n - 1] + [mutated] + rows[n:])
                try:
                    ast.parse(text)
                except SyntaxError:
                    continue
                with _replaced(ws, rel, text):
                    if not _passes(ws, fw, case.node_id):
                        return f"{rel}:{n} {description}"
    return None


def _fails_on_parent(ws: Workspace, fw: Framework, case: TestCase, parent: str | None,
                     changed_files: list[str]) -> bool:
    if parent is None:
        return False
    originals = {}
    try:
        for rel in changed_files:
            before = ws.parent_text(rel, parent)
            path = ws.root / rel
            originals[rel] = path.read_text(encoding="utf-8") if path.exists() else None
            if before is None:
                path.unlink(missing_ok=True)  # the file is new in this change
            else:
                path.write_text(before, encoding="utf-8")
        return not _passes(ws, fw, case.node_id)
    finally:
        for rel, text in originals.items():
            if text is None:
                (ws.root / rel).unlink(missing_ok=True)
            else:
                (ws.root / rel).write_text(text, encoding="utf-8")


def evaluate(ws: Workspace, fw: Framework, case: TestCase, targets: list[Target], runs: int,
             parent: str | None) -> None:
    """Fill ``case.evidence``, or ``case.reason`` when it must be dropped."""
    passed = 0
    for _ in range(runs):
        if not _passes(ws, fw, case.node_id):
            break
        passed += 1
    case.evidence["runs"] = passed
    if passed == 0:
        case.reason = "fails"
        return
    if passed < runs:
        case.reason = f"flaky: passed {passed} of {runs} runs in a row"
        return
    measured = line_coverage(ws, fw, [case.node_id])
    executed = measured[0] if measured else {}
    covered: dict[str, list[int]] = {}
    for t in targets:
        hit = [n for n in t.lines if n in executed.get(t.path, set())]
        if hit:
            covered.setdefault(t.path, []).extend(hit)
            case.targets.append(f"{t.path}::{t.qualname}")
    case.evidence["changed_lines_covered"] = sum(len(v) for v in covered.values())
    if not covered:
        case.reason = "does not execute any changed line"
        return
    case.evidence["mutant_killed"] = _kills_a_mutant(ws, fw, case, covered)
    case.evidence["fails_on_parent"] = _fails_on_parent(
        ws, fw, case, parent, sorted({t.path for t in targets}))
    if not case.evidence["mutant_killed"] and not case.evidence["fails_on_parent"]:
        case.reason = ("no bite: survives every simple mutant of the changed lines and "
                       "passes on the parent commit")


def prune_file(text: str, keep: set[str]) -> str | None:
    """``text`` without the top-level test functions (or test classes) not in ``keep``;
    None when no test is left."""
    tree = ast.parse(text)
    rows = text.split("\n")
    drop: list[tuple[int, int]] = []
    left = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and \
                node.name.startswith(("test", "Test")):
            names = [node.name] if not isinstance(node, ast.ClassDef) else [
                f"{node.name}::{m.name}" for m in node.body
                if isinstance(m, ast.FunctionDef) and m.name.startswith("test")]
            if any(n in keep for n in names):
                left += 1
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            drop.append((first, node.end_lineno or node.lineno))
    if not left:
        return None
    for first, last in sorted(drop, reverse=True):
        del rows[first - 1:last]
    return "\n".join(rows)
