"""node:test: Nova's reporter, V8 line coverage per test (selected by name), and cutting
test calls out of a file with the JavaScript scanner."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from bot.sandbox.run import RunResult
from bot.testgen.jsscan import JsScanError, statement_end
from bot.testgen.runners.base import Lines, PruneFailed, Runner, relative
from bot.testgen.workspace import Workspace

__all__ = ["REPORTER", "SEPARATOR", "NodeTestRunner"]

REPORTER = Path(__file__).parent.parent / "node_reporter.mjs"
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
            node = _Node(
                name, full, int(str(e.get("line") or 0)), int(str(e.get("column") or 0)), parent
            )
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

    def _run(
        self,
        ws: Workspace,
        args: list[str],
        *,
        coverage: bool = False,
        timeout: float = 300.0,
        file: str | None = None,
    ) -> _NodeRun:
        node, rest = self.fw.run_files[0], list(self.fw.run_files[1:])
        with ws.outputs() as tmp:
            out = tmp / "events.jsonl"
            run = ws.run(
                [
                    node,
                    *rest,
                    f"--test-reporter={REPORTER}",
                    f"--test-reporter-destination={out}",
                    f"--test-timeout={int(self.test_timeout * 1000)}",
                    *(["--experimental-test-coverage"] if coverage else []),
                    *args,
                ],
                timeout=min(timeout, self.run_timeout(20)),
                limit_memory=False,
                env={"NODE_OPTIONS": f"--max-old-space-size={self.memory_mb}"},
            )
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
        res = self._run(ws, [rel], file=rel)
        leaves = res.leaves()
        # a run that cannot be trusted counts for nothing: the gates run the tests again
        first = None if res.run.escape() else _passed(leaves, {n.full for n in leaves})
        self._failures(rel, leaves)
        return [n.full for n in leaves], first

    def run_once(
        self, ws: Workspace, rel: str, names: list[str], *, outside: bool = True
    ) -> tuple[dict[str, bool], str | None]:
        """The named tests (selected by name when they are not the whole file)."""
        res = self._run(ws, [*self._select(names, rel), rel], file=rel)
        leaves = res.leaves()
        for n in leaves:
            if n.full in names and "timed out after" in n.error:
                self.limit_hits[f"{rel}::{n.full}"] = (
                    f"hit the time limit: {n.error[:120]} (the limit per test is "
                    f"{self.test_timeout:g} s)"
                )
        self._failures(rel, leaves)
        return _passed(leaves, set(names)), res.run.escape(outside=outside)

    def _failures(self, rel: str, leaves: list[_Node]) -> None:
        """What each failing test's error said, for the reason it is dropped with."""
        for n in leaves:
            if n.passed is False and n.error:
                self.failures[f"{rel}::{n.full}"] = " ".join(n.error.split())[:300]

    def _select(self, names: list[str], rel: str) -> list[str]:
        """``--test-name-pattern`` for one test run alone; nothing for several (the file
        runs whole and the others' outcomes are not read)."""
        if len(names) != 1:
            return []
        leaf = names[0].rsplit(SEPARATOR, 1)[-1]
        return [f"--test-name-pattern=^{re.escape(leaf)}$"]

    def _lines(self, ws: Workspace, files: list[dict[str, object]], key: str) -> Lines:
        out: Lines = {}
        for f in files:
            lines = f.get(key)
            if isinstance(lines, list):
                out[relative(ws, str(f.get("path", "")))] = {int(n) for n in lines}
        return out

    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """One coverage run per test, selected by name; a test whose name selects other
        tests too cannot be measured on its own."""
        out: dict[str, Lines] = {}
        for name in names:
            leaf = name.rsplit(SEPARATOR, 1)[-1]
            res = self._run(
                ws, [f"--test-name-pattern=^{re.escape(leaf)}$", rel], coverage=True, file=rel
            )
            ran = [n.full for n in res.leaves() if not n.skipped]
            if ran == [name] and res.coverage is not None:
                out[name] = self._lines(ws, res.coverage, "covered")
        return out

    def line_coverage(
        self, ws: Workspace, test_args: list[str], timeout: float = 300.0, run_seconds: float = 0.0
    ) -> tuple[Lines, Lines] | None:
        args = test_args or list(self.fw.run_suite[2:])
        res = self._run(ws, args, coverage=True, timeout=timeout)
        if res.run.timed_out or res.coverage is None:
            return None
        return (
            self._lines(ws, res.coverage, "covered"),
            self._lines(ws, res.coverage, "uncovered"),
        )

    def syntax_ok(self, ws: Workspace, rel: str) -> bool:
        return ws.run([self.fw.run_files[0], "--check", rel], timeout=60, limit_memory=False).passed

    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]) -> str | None:
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
        gone = [
            n for n in nodes if id(n) not in alive and (n.parent is None or id(n.parent) in alive)
        ]
        return _remove_calls(text, [(n.line, n.column) for n in gone])


def _passed(leaves: list[_Node], wanted: set[str]) -> dict[str, bool]:
    return {
        n.full: bool(n.passed)
        for n in leaves
        if n.full in wanted and not n.skipped and n.passed is not None
    }


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
        tail = text[end : len(text) if newline < 0 else newline].strip()
        if tail and not tail.startswith("//"):
            raise PruneFailed(f"line {line}: code follows the test on its last line")
        spans.append((starts[line - 1], len(text) if newline < 0 else newline + 1))
    for begin, end in sorted(spans, reverse=True):
        # the blank line that separated the removed test goes with it
        blank_before = begin == 0 or text[max(0, begin - 2) : begin] == "\n\n"
        while blank_before and end < len(text) and text[end] == "\n":
            end += 1
        if end == len(text):
            while text[max(0, begin - 2) : begin] == "\n\n":
                begin -= 1
        text = text[:begin] + text[end:]
    return text
