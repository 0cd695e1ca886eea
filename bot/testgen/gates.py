"""Keep only tests worth keeping, with evidence for each.

A generated test is kept when it passes ``runs`` times in a row (not flaky), executes at
least one changed line, and bites: it fails on a simple mutant of a changed line (a flipped
comparison, a changed constant, a negated condition), or it fails on the parent commit's
code. Everything else is dropped with its reason.
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

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
def _replaced(ws: Workspace, texts: dict[str, str | None]) -> Iterator[None]:
    """Temporarily give files other contents (None: the file is absent)."""
    originals: dict[str, str | None] = {}
    try:
        for rel, text in texts.items():
            path = ws.root / rel
            originals[rel] = path.read_text(encoding="utf-8") if path.exists() else None
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text, encoding="utf-8")
        yield
    finally:
        for rel, text in originals.items():
            if text is None:
                (ws.root / rel).unlink(missing_ok=True)
            else:
                (ws.root / rel).write_text(text, encoding="utf-8")


def _outcomes(ws: Workspace, fw: Framework, rel: str, names: list[str]) -> dict[str, bool]:
    """Run the named tests of ``rel`` once; pass/fail per name (JUnit XML)."""
    module = rel[:-3].replace("/", ".")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        run_sandboxed([*fw.run_files, f"--junitxml={report}", "-p", "no:randomly",
                       *(f"{rel}::{n}" for n in names)], ws.root, timeout=300)
        if not report.is_file():
            return {}
        root = ElementTree.parse(report).getroot()
    out: dict[str, bool] = {}
    for case in root.iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        inner = cls[len(module):].lstrip(".").replace(".", "::")
        key = f"{inner}::{name}" if inner else name
        out[key] = not any(child.tag in ("failure", "error") for child in case)
    return out


def _per_test_coverage(ws: Workspace, fw: Framework, rel: str, names: list[str]
                       ) -> dict[str, dict[str, set[int]]]:
    """Changed-file lines each test executes: one coverage run with per-test contexts."""
    with tempfile.TemporaryDirectory() as tmp:
        rc, data, report = (Path(tmp) / n for n in ("rc", "data", "cov.json"))
        rc.write_text("[run]\ndynamic_context = test_function\n")
        python = fw.run_files[0]
        run_sandboxed([python, "-m", "coverage", "run", f"--rcfile={rc}", f"--data-file={data}",
                       *fw.run_files[1:], *(f"{rel}::{n}" for n in names)], ws.root,
                      timeout=300)
        out = run_sandboxed([python, "-m", "coverage", "json", f"--rcfile={rc}",
                             f"--data-file={data}", "--show-contexts", "-o", str(report)],
                            ws.root)
        if not out.passed:
            return {}
        files = json.loads(report.read_text()).get("files", {})
    dotted = {n: "." + n.split("[")[0].replace("::", ".") for n in names}
    lines: dict[str, dict[str, set[int]]] = {n: {} for n in names}
    for path, info in files.items():
        for line, contexts in (info.get("contexts") or {}).items():
            for ctx in contexts:
                for name, suffix in dotted.items():
                    if ctx.endswith(suffix):
                        lines[name].setdefault(path, set()).add(int(line))
    for name in names:  # Hypothesis runs tests inside its engine: the context is not theirs
        if not lines[name]:
            alone = line_coverage(ws, fw, [f"{rel}::{name}"])
            if alone:
                lines[name] = alone[0]
    return lines


def evaluate(ws: Workspace, fw: Framework, rel: str, cases: list[TestCase],
             targets: list[Target], runs: int, parent: str | None) -> None:
    """Fill each case's ``evidence``, or its ``reason`` when it must be dropped. Every step
    runs the file's remaining tests together: runs, coverage, each mutant, the parent."""
    alive = list(cases)
    passed = {c.name: 0 for c in cases}  # runs passed in a row
    for _ in range(runs):
        outcome = _outcomes(ws, fw, rel, [c.name for c in alive])
        for c in list(alive):
            if outcome.get(c.name):
                passed[c.name] += 1
            else:
                alive.remove(c)
    for c in cases:
        done = c.evidence["runs"] = passed[c.name]
        if done == 0:
            c.reason = "fails"
        elif done < runs:
            c.reason = f"flaky: passed {done} of {runs} runs in a row"
    alive = [c for c in cases if not c.reason]
    if not alive:
        return
    executed = _per_test_coverage(ws, fw, rel, [c.name for c in alive])
    covered: dict[str, dict[str, list[int]]] = {}
    for c in alive:
        mine = executed.get(c.name, {})
        hits: dict[str, list[int]] = {}
        for t in targets:
            hit = [n for n in t.lines if n in mine.get(t.path, set())]
            if hit:
                hits.setdefault(t.path, []).extend(hit)
                c.targets.append(f"{t.path}::{t.qualname}")
        covered[c.name] = hits
        c.evidence["changed_lines_covered"] = sum(len(v) for v in hits.values())
        if not hits:
            c.reason = "does not execute any changed line"
    alive = [c for c in alive if not c.reason]
    for c in alive:
        c.evidence["mutant_killed"] = None
    _mutation_round(ws, fw, rel, alive, covered)
    _parent_round(ws, fw, rel, alive, parent, sorted({t.path for t in targets}))
    for c in alive:
        if not c.evidence["mutant_killed"] and not c.evidence["fails_on_parent"]:
            c.reason = ("no bite: survives every simple mutant of the changed lines and "
                        "passes on the parent commit")


def _mutation_round(ws: Workspace, fw: Framework, rel: str, alive: list[TestCase],
                    covered: dict[str, dict[str, list[int]]]) -> None:
    lines = sorted({(path, n) for c in alive for path, ns in covered[c.name].items()
                    for n in ns})
    for path, n in lines:
        waiting = [c for c in alive if not c.evidence["mutant_killed"]
                   and n in covered[c.name].get(path, [])]
        source = ws.read(path)
        if not waiting or source is None:
            continue
        rows = source.split("\n")
        for description, mutated in mutants(rows[n - 1]):
            text = "\n".join(rows[: n - 1] + [mutated] + rows[n:])
            try:
                ast.parse(text)
            except SyntaxError:
                continue
            with _replaced(ws, {path: text}):
                outcome = _outcomes(ws, fw, rel, [c.name for c in waiting])
            for c in list(waiting):
                if outcome.get(c.name) is False:
                    c.evidence["mutant_killed"] = f"{path}:{n} {description}"
                    waiting.remove(c)
            if not waiting:
                break


def _parent_round(ws: Workspace, fw: Framework, rel: str, alive: list[TestCase],
                  parent: str | None, changed: list[str]) -> None:
    for c in alive:
        c.evidence["fails_on_parent"] = False
    if parent is None or not alive:
        return
    with _replaced(ws, {p: ws.parent_text(p, parent) for p in changed}):
        outcome = _outcomes(ws, fw, rel, [c.name for c in alive])
    for c in alive:
        c.evidence["fails_on_parent"] = outcome.get(c.name) is False


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
