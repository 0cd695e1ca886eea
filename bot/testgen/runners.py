"""What the evidence gates need from a test framework, for the ones Nova can check:
pytest (which also runs unittest-style tests) and node:test.

A runner collects a file's tests, runs some of them and says which passed, measures which
lines each test executes, checks that a mutated source still parses, and removes dropped
tests from a generated file. Every run goes through the sandbox."""

from __future__ import annotations

import ast
import json
import re
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from bot.testgen.frameworks import Framework
from bot.testgen.jsscan import JsScanError, statement_end
from bot.testgen.sandbox import RunResult
from bot.testgen.workspace import Workspace

__all__ = ["Lines", "NodeTestRunner", "PruneFailed", "PytestRunner", "Runner",
           "RunnerUnavailable", "runner_for"]

Lines = dict[str, set[int]]  # repo-relative file -> line numbers


class PruneFailed(ValueError):
    """Dropped tests could not be removed from a file without touching the kept ones."""


class Runner(ABC):
    """The interface; ``PytestRunner`` and ``NodeTestRunner`` implement all of it."""

    language = ""

    def __init__(self, fw: Framework, test_timeout: float = 20.0, memory_mb: int = 1024
                 ) -> None:
        self.fw = fw
        self.test_timeout = test_timeout
        self.memory_mb = memory_mb
        # node id (``rel::name``) -> why the test hit a limit: it is dropped with this reason
        self.limit_hits: dict[str, str] = {}

    def run_timeout(self, tests: int) -> float:
        """A run of ``tests`` tests ends by then, whatever they do."""
        return min(300.0, self.test_timeout * max(tests, 1) + 60.0)

    @abstractmethod
    def collect(self, ws: Workspace, rel: str) -> tuple[list[str], dict[str, bool] | None]:
        """The tests in ``rel`` (their names inside the file; empty when it cannot load),
        and their outcomes when collecting had to run them (that counts as a run)."""

    @abstractmethod
    def outcomes(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, bool]:
        """Run the named tests of ``rel`` once: pass/fail per name (absent: did not run)."""

    @abstractmethod
    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """Lines each test executes (absent: it could not be measured on its own)."""

    @abstractmethod
    def line_coverage(self, ws: Workspace, test_args: list[str], timeout: float = 300.0
                      ) -> tuple[Lines, Lines] | None:
        """(executed, not executed) lines per file while running ``test_args`` (the whole
        suite when empty), or None when the run could not be measured."""

    @abstractmethod
    def syntax_ok(self, ws: Workspace, rel: str) -> bool:
        """Whether the file as it is now in the workspace parses (mutants that do not are
        skipped: every test would "kill" them)."""

    def unit(self, name: str) -> str:
        """The smallest part of a file that holds this test and can be cut out alone."""
        return name

    @abstractmethod
    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]
            ) -> str | None:
        """The file's text without the ``collected`` tests not in ``keep``; None when none
        is left."""

    def prune(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]
              ) -> str | None:
        """``cut``, then proved: the new file's tests are exactly ``keep``, or
        ``PruneFailed``."""
        if keep == set(collected):
            return ws.read(rel)  # nothing to cut
        text = self.cut(ws, rel, keep, collected)
        if text is None:
            return None
        with ws.replaced({rel: text}):
            left = set(self.collect(ws, rel)[0])
        if left != keep:
            raise PruneFailed(f"after removing the dropped tests the file has "
                              f"{sorted(left)}, not {sorted(keep)}")
        return text


def _relative(ws: Workspace, name: str) -> str:
    path = Path(name)
    root = ws.root.resolve()
    if path.is_absolute() and path.resolve().is_relative_to(root):
        return path.resolve().relative_to(root).as_posix()
    return name


# -- pytest --------------------------------------------------------------------------------

class PytestRunner(Runner):
    language = "python"

    def _limited(self, ws: Workspace, args: list[str], tests: int, timeout: float | None = None
                 ) -> tuple[RunResult, set[str]]:
        """Run pytest with Nova's limits plugin; record the tests that hit a limit. Returns
        the run and the node ids that started but never ended (the run was killed)."""
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "limits.jsonl"
            run = ws.run([*self.fw.run_files, "-p", "nova_limits", *args],
                         timeout=timeout or self.run_timeout(tests),
                         env={"PYTEST_NOVA_LOG": str(log),
                              "PYTEST_NOVA_SECONDS": f"{self.test_timeout:g}"})
            rows = log.read_text(encoding="utf-8").splitlines() if log.is_file() else []
        open_: set[str] = set()
        for row in rows:
            try:
                e = json.loads(row)
            except json.JSONDecodeError:
                continue
            node = str(e.get("nodeid", ""))
            if e.get("event") == "start":
                open_.add(node)
            elif e.get("event") == "end":
                open_.discard(node)
            elif e.get("event") == "limit" and e.get("kind") == "time":
                self.limit_hits[node] = (f"hit the time limit: still running after "
                                         f"{self.test_timeout:g} s (the limit per test)")
            elif e.get("event") == "limit":
                self.limit_hits[node] = (f"hit the memory limit: MemoryError under the "
                                         f"{self.memory_mb} MiB limit of a test run")
        if run.timed_out:
            for node in open_:
                self.limit_hits[node] = (
                    "hit the time limit: still running when its run was killed after "
                    f"{self.run_timeout(tests):g} s (the limit per test is "
                    f"{self.test_timeout:g} s; it did not answer the signal)")
        return run, open_ if run.timed_out else set()

    def collect(self, ws: Workspace, rel: str) -> tuple[list[str], dict[str, bool] | None]:
        run, _ = self._limited(ws, ["--collect-only", rel], 0, timeout=120)
        return [row.split("::", 1)[1] for row in run.output.splitlines()
                if row.startswith(rel + "::")], None

    def outcomes(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, bool]:
        """Run the named tests; a test that hangs past the signal is killed with its run,
        marked, and the tests after it are run again without it."""
        out: dict[str, bool] = {}
        left = list(names)
        while left:
            ran, stuck = self._outcomes_once(ws, rel, left)
            out.update(ran)
            hung = {n for n in left if f"{rel}::{n}" in stuck}
            for name in hung:
                out[name] = False
            if not hung:
                break
            left = [n for n in left if n not in out]
        return out

    def _outcomes_once(self, ws: Workspace, rel: str, names: list[str]
                       ) -> tuple[dict[str, bool], set[str]]:
        module = rel[:-3].replace("/", ".")
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "junit.xml"
            _run, stuck = self._limited(ws, [f"--junitxml={report}", "-p", "no:randomly",
                                             *(f"{rel}::{n}" for n in names)], len(names))
            if not report.is_file():
                return {}, stuck
            root = ElementTree.parse(report).getroot()
        out: dict[str, bool] = {}
        for case in root.iter("testcase"):
            cls, name = case.get("classname", ""), case.get("name", "")
            inner = cls[len(module):].lstrip(".").replace(".", "::")
            key = f"{inner}::{name}" if inner else name
            out[key] = not any(child.tag in ("failure", "error") for child in case)
        return out, stuck

    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """One coverage run with per-test contexts."""
        with tempfile.TemporaryDirectory() as tmp:
            rc, data, report = (Path(tmp) / n for n in ("rc", "data", "cov.json"))
            rc.write_text("[run]\ndynamic_context = test_function\n")
            python = self.fw.run_files[0]
            ws.run([python, "-m", "coverage", "run", f"--rcfile={rc}", f"--data-file={data}",
                    *self.fw.run_files[1:], "-p", "nova_limits",
                    *(f"{rel}::{n}" for n in names)], timeout=self.run_timeout(len(names)),
                   env={"PYTEST_NOVA_SECONDS": f"{self.test_timeout:g}"})
            out = ws.run([python, "-m", "coverage", "json", f"--rcfile={rc}",
                          f"--data-file={data}", "--show-contexts", "-o", str(report)])
            if not out.passed:
                return {}
            files = json.loads(report.read_text()).get("files", {})
        dotted = {n: "." + n.split("[")[0].replace("::", ".") for n in names}
        lines: dict[str, Lines] = {n: {} for n in names}
        for path, info in files.items():
            for line, contexts in (info.get("contexts") or {}).items():
                for ctx in contexts:
                    for name, suffix in dotted.items():
                        if ctx.endswith(suffix):
                            lines[name].setdefault(_relative(ws, path), set()).add(int(line))
        for name in names:  # Hypothesis runs tests inside its engine: the context is not theirs
            if not lines[name]:
                alone = self.line_coverage(ws, [f"{rel}::{name}"])
                if alone:
                    lines[name] = alone[0]
        return lines

    def line_coverage(self, ws: Workspace, test_args: list[str], timeout: float = 300.0
                      ) -> tuple[Lines, Lines] | None:
        with tempfile.TemporaryDirectory() as tmp:
            data, report = str(Path(tmp) / "cov"), str(Path(tmp) / "cov.json")
            python = self.fw.run_files[0]
            # the whole suite is the project's own: the memory limit is for generated tests
            run = ws.run([python, "-m", "coverage", "run", f"--data-file={data}",
                          *self.fw.run_files[1:], *test_args], timeout=timeout,
                         limit_memory=bool(test_args))
            if run.returncode not in (0, 1, 5):  # 1: tests failed, 5: none collected
                return None
            json_run = ws.run([python, "-m", "coverage", "json", f"--data-file={data}",
                               "-o", report])
            if not json_run.passed:
                return None
            files = json.loads(Path(report).read_text()).get("files", {})
        executed: Lines = {}
        missing: Lines = {}
        for name, info in files.items():
            rel = _relative(ws, name)
            executed[rel] = set(info.get("executed_lines", []))
            missing[rel] = set(info.get("missing_lines", []))
        return executed, missing

    def syntax_ok(self, ws: Workspace, rel: str) -> bool:
        try:
            ast.parse(ws.read(rel) or "")
        except SyntaxError:
            return False
        return True

    def unit(self, name: str) -> str:
        """Parametrized cases share one function: it is kept whole or not at all."""
        return name.split("[", 1)[0]

    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]
            ) -> str | None:
        return prune_python(ws.read(rel) or "", keep, collected)


def prune_python(text: str, keep: set[str], collected: list[str]) -> str | None:
    """``text`` without the tests (functions, methods of test classes, classes left empty)
    that were ``collected`` but are not in ``keep``; None when no test is left. Names are
    pytest's (``test_x``, ``TestY::test_z``, ``test_p[1]``)."""
    kept = {k.split("[", 1)[0] for k in keep}
    known = {c.split("[", 1)[0] for c in collected}
    containers = {"::".join(parts[:i]) for name in known
                  for parts in [name.split("::")] for i in range(1, len(parts))}
    drop: list[tuple[int, int]] = []

    def span(node: ast.stmt) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", [])
        return (min([node.lineno, *(d.lineno for d in decorators)]),
                node.end_lineno or node.lineno)

    def walk(body: list[ast.stmt], prefix: str) -> int:
        """Drop what is not kept in ``body``; return how many kept tests are left."""
        left = 0
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            name = prefix + node.name
            if isinstance(node, ast.ClassDef) and name in containers:
                inside = walk(node.body, name + "::")
                if not inside:
                    drop.append(span(node))
                left += inside
            elif name in known:
                if name in kept:
                    left += 1
                else:
                    drop.append(span(node))
        return left

    rows = text.split("\n")
    if not walk(ast.parse(text).body, ""):
        return None
    # a class emptied of its tests is dropped whole, so spans never overlap badly: remove
    # the outermost ones only
    outer = [d for d in drop if not any(o != d and o[0] <= d[0] and d[1] <= o[1] for o in drop)]
    for first, last in sorted(outer, reverse=True):
        del rows[first - 1:last]
    return "\n".join(rows)


# -- node:test ----------------------------------------------------------------------------

REPORTER = Path(__file__).with_name("node_reporter.mjs")
SEPARATOR = " > "  # between a describe() block's name and its tests' names


@dataclass
class _Node:
    """One test or suite of a node:test file, as the reporter saw it."""
    name: str
    full: str
    line: int
    column: int
    parent: _Node | None
    suite: bool = False
    passed: bool | None = None
    skipped: bool = False
    error: str = ""
    children: list[_Node] = field(default_factory=list)


@dataclass
class _NodeRun:
    run: RunResult
    nodes: list[_Node]  # in start order
    coverage: list[dict[str, object]] | None

    def leaves(self) -> list[_Node]:
        return [n for n in self.nodes if not n.suite and not n.children]


def _tree(events: list[dict[str, object]], file: Path) -> list[_Node]:
    nodes: list[_Node] = []
    open_: list[_Node] = []
    for e in events:
        name, nesting = str(e.get("name", "")), int(str(e.get("nesting", 0)))
        where = e.get("file")
        if where is not None and (Path(str(where)).resolve() != file or name == where):
            continue  # another file, or the file itself (it failed to load)
        if e["event"] == "start":
            parent = open_[nesting - 1] if 0 < nesting <= len(open_) else None
            full = f"{parent.full}{SEPARATOR}{name}" if parent else name
            node = _Node(name, full, int(str(e.get("line") or 0)),
                         int(str(e.get("column") or 0)), parent)
            if parent:
                parent.children.append(node)
            open_ = [*open_[:nesting], node]
            nodes.append(node)
        elif e["event"] in ("pass", "fail"):
            done = open_[nesting] if nesting < len(open_) else None
            if done is None or done.name != name:
                continue
            done.suite = bool(e.get("suite"))
            done.skipped = bool(e.get("skip"))
            done.passed = e["event"] == "pass" and not done.skipped
            done.error = str(e.get("error") or "")
    return nodes


class NodeTestRunner(Runner):
    language = "javascript"

    def _run(self, ws: Workspace, args: list[str], *, coverage: bool = False,
             timeout: float = 300.0, file: str | None = None) -> _NodeRun:
        node, rest = self.fw.run_files[0], list(self.fw.run_files[1:])
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "events.jsonl"
            run = ws.run([node, *rest, f"--test-reporter={REPORTER}",
                          f"--test-reporter-destination={out}",
                          f"--test-timeout={int(self.test_timeout * 1000)}",
                          *(["--experimental-test-coverage"] if coverage else []), *args],
                         timeout=min(timeout, self.run_timeout(20)), limit_memory=False,
                         env={"NODE_OPTIONS": f"--max-old-space-size={self.memory_mb}"})
            raw = out.read_text(encoding="utf-8", errors="replace") if out.is_file() else ""
        events: list[dict[str, object]] = []
        for row in raw.splitlines():
            try:
                events.append(json.loads(row))
            except json.JSONDecodeError:
                continue
        cov = next((e["files"] for e in events if e.get("event") == "coverage"), None)
        if isinstance(cov, list) and any(f.get("covered") is None for f in cov):
            cov = None  # this node has no per-line counts
        nodes = _tree(events, (ws.root / file).resolve()) if file else []
        return _NodeRun(run, nodes, cov if isinstance(cov, list) else None)

    def collect(self, ws: Workspace, rel: str) -> tuple[list[str], dict[str, bool] | None]:
        """node:test learns a file's tests by running it."""
        leaves = self._run(ws, [rel], file=rel).leaves()
        return [n.full for n in leaves], _passed(leaves, {n.full for n in leaves})

    def outcomes(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, bool]:
        leaves = self._run(ws, [rel], file=rel).leaves()
        for n in leaves:
            if n.full in names and "timed out after" in n.error:
                self.limit_hits[f"{rel}::{n.full}"] = (
                    f"hit the time limit: {n.error[:120]} (the limit per test is "
                    f"{self.test_timeout:g} s)")
        return _passed(leaves, set(names))

    def _lines(self, ws: Workspace, files: list[dict[str, object]], key: str) -> Lines:
        out: Lines = {}
        for f in files:
            lines = f.get(key)
            if isinstance(lines, list):
                out[_relative(ws, str(f.get("path", "")))] = {int(n) for n in lines}
        return out

    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """One coverage run per test, selected by name; a test whose name selects other
        tests too cannot be measured on its own."""
        out: dict[str, Lines] = {}
        for name in names:
            leaf = name.rsplit(SEPARATOR, 1)[-1]
            res = self._run(ws, [f"--test-name-pattern=^{re.escape(leaf)}$", rel],
                            coverage=True, file=rel)
            ran = [n.full for n in res.leaves() if not n.skipped]
            if ran == [name] and res.coverage is not None:
                out[name] = self._lines(ws, res.coverage, "covered")
        return out

    def line_coverage(self, ws: Workspace, test_args: list[str], timeout: float = 300.0
                      ) -> tuple[Lines, Lines] | None:
        args = test_args or list(self.fw.run_suite[2:])
        res = self._run(ws, args, coverage=True, timeout=timeout)
        if res.run.timed_out or res.coverage is None:
            return None
        return (self._lines(ws, res.coverage, "covered"),
                self._lines(ws, res.coverage, "uncovered"))

    def syntax_ok(self, ws: Workspace, rel: str) -> bool:
        return ws.run([self.fw.run_files[0], "--check", rel], timeout=60,
                      limit_memory=False).passed

    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]
            ) -> str | None:
        text = ws.read(rel) or ""
        nodes = self._run(ws, [rel], file=rel).nodes
        kept = [n for n in nodes if n.full in keep and not n.suite and not n.children]
        if not kept:
            return None
        alive: set[int] = set()
        for n in kept:
            walk: _Node | None = n
            while walk is not None:
                alive.add(id(walk))
                walk = walk.parent
        # remove each biggest subtree without a kept test
        gone = [n for n in nodes if id(n) not in alive
                and (n.parent is None or id(n.parent) in alive)]
        return _remove_calls(text, [(n.line, n.column) for n in gone])


def _passed(leaves: list[_Node], wanted: set[str]) -> dict[str, bool]:
    return {n.full: bool(n.passed) for n in leaves
            if n.full in wanted and not n.skipped and n.passed is not None}


_CALLEE = re.compile(r"^\s*((?:[\w$]+\.)*)$")


def _remove_calls(text: str, places: list[tuple[int, int]]) -> str:
    """Remove the call statements whose callee's last name starts at (line, column) (both
    1-based, as node:test reports them); each must fill its own lines."""
    rows = text.split("\n")
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row) + 1)
    spans: list[tuple[int, int]] = []
    for line, column in places:
        if not 1 <= line <= len(rows):
            raise PruneFailed(f"no line {line}")
        before = _CALLEE.match(rows[line - 1][: column - 1])
        if before is None:
            raise PruneFailed(f"line {line}: the test is not a statement of its own")
        begin = starts[line - 1] + column - 1 - len(before.group(1))
        try:
            end = statement_end(text, begin)
        except JsScanError as exc:
            raise PruneFailed(f"line {line}: {exc}") from exc
        newline = text.find("\n", end)
        tail = text[end: len(text) if newline < 0 else newline].strip()
        if tail and not tail.startswith("//"):
            raise PruneFailed(f"line {line}: code follows the test on its last line")
        spans.append((starts[line - 1], len(text) if newline < 0 else newline + 1))
    for begin, end in sorted(spans, reverse=True):
        # the blank line that separated the removed test goes with it
        blank_before = begin == 0 or text[max(0, begin - 2):begin] == "\n\n"
        while blank_before and end < len(text) and text[end] == "\n":
            end += 1
        if end == len(text):
            while text[max(0, begin - 2):begin] == "\n\n":
                begin -= 1
        text = text[:begin] + text[end:]
    return text


class RunnerUnavailable(Exception):
    """Nova cannot run and check this framework's tests here; the message says why."""


def runner_for(fw: Framework, test_timeout: float = 20.0, memory_mb: int = 1024) -> Runner:
    if fw.name in ("pytest", "unittest"):
        return PytestRunner(fw, test_timeout, memory_mb)
    if fw.name == "node-test":
        if not Path(fw.run_files[0]).is_absolute():
            raise RunnerUnavailable("node:test was detected but node is not installed: put "
                                    "Node >= 20 on PATH, or `pip install nova-bot[node]`")
        return NodeTestRunner(fw, test_timeout, memory_mb)
    raise RunnerUnavailable(f"{fw.name} was detected; Nova writes and checks tests for "
                            "pytest, unittest and node:test, so the matrix is all this run "
                            "gives")
