"""pytest (which also runs unittest-style tests): runs through Nova's limits plugin,
junit reports, coverage.py contexts per test, and cutting tests out of a file by its AST.

Coverage is Nova's own measurement, whatever the project configured: coverage.py reads
only the configuration file Nova writes (not the project's ``.coveragerc``, ``setup.cfg``,
``tox.ini`` or ``pyproject.toml``, whose ``omit`` patterns a newer coverage may reject),
and pytest-cov is not loaded (``-p no:pytest_cov``: its own tracer would replace Nova's),
with its options taken out of the project's ``addopts`` and every other option kept."""

from __future__ import annotations

import ast
import configparser
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from bot.sandbox.run import RunResult
from bot.testgen.runners.base import Lines, Runner, relative
from bot.testgen.workspace import Workspace

__all__ = ["PytestRunner", "collect_error", "measured_args", "project_addopts", "prune_python"]

# pytest-cov's options that take a value (``--cov`` takes one optionally)
_COV_VALUED = {"--cov", "--cov-report", "--cov-config", "--cov-fail-under", "--cov-context"}


def project_addopts(root: Path, option: str = "addopts") -> list[str] | None:
    """The ``addopts`` (or ``option``) of the pytest configuration file pytest would pick
    in ``root`` (pytest.toml, .pytest.toml, pytest.ini, .pytest.ini, pyproject.toml, tox.ini,
    setup.cfg, in pytest's order), or None when that file sets none."""
    for name, section in (
        ("pytest.toml", "pytest"),  # pytest 9: a [pytest] table of native TOML
        (".pytest.toml", "pytest"),
        ("pytest.ini", "pytest"),
        (".pytest.ini", "pytest"),
        ("pyproject.toml", "tool"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = root / name
        if not path.is_file():
            continue
        if name.endswith(".toml"):
            try:
                table = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            options = _toml_options(table, section)
            if options is None:
                continue
            value = options.get(option)
            if isinstance(value, list):
                return [str(v) for v in value]
            return shlex.split(str(value)) if value is not None else None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section) or name in ("pytest.ini", ".pytest.ini"):
            if not parser.has_option(section, option):
                return None
            try:
                return shlex.split(parser.get(section, option))
            except ValueError:  # unbalanced quotes: pytest cannot read it either
                return None
    return None


def _toml_options(table: dict[str, Any], section: str) -> dict[str, Any] | None:
    """pytest's settings in a TOML file: the ``[pytest]`` table of pytest.toml (which
    counts even when empty), or pyproject's ``[tool.pytest]`` (pytest 9, native TOML) or
    ``[tool.pytest.ini_options]``; None when pyproject has neither."""
    if section == "pytest":
        found = table.get("pytest", {})
        return found if isinstance(found, dict) else {}
    tool = table.get("tool", {}).get("pytest")
    if not isinstance(tool, dict):
        return None
    ini = tool.get("ini_options")
    if isinstance(ini, dict):
        return ini
    return {k: v for k, v in tool.items() if not isinstance(v, dict)}


def _without_cov(options: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for opt in options:
        if skip:
            skip = False
            if not opt.startswith("-"):
                continue
        if opt.startswith(("--cov", "--no-cov")):
            skip = opt in _COV_VALUED
            continue
        out.append(opt)
    return out


# what pytest prints when ``nova_limits`` stops a run (PYTEST_NOVA_RUN_SECONDS)
RUN_LIMIT = "Nova's time limit for this run"


def measured_args(root: Path) -> list[str]:
    """pytest options for a run Nova measures: pytest-cov not loaded, and its options
    taken out of the project's ``addopts`` (which pytest would otherwise reject)."""
    args = ["-p", "no:pytest_cov"]
    options = project_addopts(root)
    if options is not None and _without_cov(options) != options:
        args += ["-o", f"addopts={shlex.join(_without_cov(options))}"]
    return args


def _rcfile(where: Path, contexts: bool = False) -> Path:
    """Nova's coverage configuration: the project's is never read. A source that cannot
    be read when the report is made (a module imported from a zip archive a test made and
    removed) is left out of the report instead of failing the whole measurement."""
    rc = where / "nova-coveragerc"
    rc.write_text(
        "[run]\n"
        + ("dynamic_context = test_function\n" if contexts else "")
        + "[report]\nignore_errors = True\n"
    )
    return rc


class PytestRunner(Runner):
    language = "python"

    def _limited(
        self, ws: Workspace, args: list[str], tests: int, timeout: float | None = None
    ) -> tuple[RunResult, set[str]]:
        """Run pytest with Nova's limits plugin; record the tests that hit a limit. Returns
        the run and the node ids that started but never ended (the run was killed)."""
        with ws.outputs() as tmp:
            log = tmp / "limits.jsonl"
            run = ws.run(
                # the project's pytest-cov options stay out of every run of Nova's: a
                # --cov-fail-under would fail each good test, and a --cov is rejected by an
                # interpreter without pytest-cov
                [*self.fw.run_files, *measured_args(ws.root), "-p", "nova_limits", *args],
                timeout=timeout or self.run_timeout(tests),
                env={"PYTEST_NOVA_LOG": str(log), "PYTEST_NOVA_SECONDS": f"{self.test_timeout:g}"},
            )
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
                self.limit_hits[node] = (
                    f"hit the time limit: still running after "
                    f"{self.test_timeout:g} s (the limit per test)"
                )
            elif e.get("event") == "limit":
                self.limit_hits[node] = (
                    f"hit the memory limit: MemoryError under the "
                    f"{self.memory_mb} MiB limit of a test run"
                )
        if run.timed_out:
            for node in open_:
                self.limit_hits[node] = (
                    "hit the time limit: still running when its run was killed after "
                    f"{self.run_timeout(tests):g} s (the limit per test is "
                    f"{self.test_timeout:g} s; it did not answer the signal)"
                )
        return run, open_ if run.timed_out else set()

    def collect(self, ws: Workspace, rel: str) -> tuple[list[str], dict[str, bool] | None]:
        # node ids, one a line, whatever -q / -v the project's addopts carry (-qq prints
        # only counts): --verbosity sets the level after them
        run, _ = self._limited(ws, ["--collect-only", "--verbosity=-1", rel], 0, timeout=120)
        names = [
            row.split("::", 1)[1] for row in run.output.splitlines() if row.startswith(rel + "::")
        ]
        if not names:
            self.failures[f"{rel}::*"] = collect_error(run.output)
        return names, None

    def run_once(
        self, ws: Workspace, rel: str, names: list[str], *, outside: bool = True
    ) -> tuple[dict[str, bool], str | None]:
        """Run the named tests; a test that hangs past the signal is killed with its run,
        marked, and the tests after it are run again without it."""
        out: dict[str, bool] = {}
        left = list(names)
        escape: str | None = None
        while left:
            ran, stuck, run = self._outcomes_once(ws, rel, left)
            escape = escape or run.escape(outside=outside)
            out.update(ran)
            hung = {n for n in left if f"{rel}::{n}" in stuck}
            for name in hung:
                out[name] = False
            if not hung:
                break
            left = [n for n in left if n not in out]
        return out, escape

    def _outcomes_once(
        self, ws: Workspace, rel: str, names: list[str]
    ) -> tuple[dict[str, bool], set[str], RunResult]:
        module = rel[:-3].replace("/", ".")
        with ws.outputs() as tmp:
            report = tmp / "junit.xml"
            run, stuck = self._limited(
                ws,
                [f"--junitxml={report}", "-p", "no:randomly", *(f"{rel}::{n}" for n in names)],
                len(names),
            )
            if not report.is_file():
                self.failures[f"{rel}::*"] = _tail(run.output)
                return {}, stuck, run
            root = ElementTree.parse(report).getroot()
        out: dict[str, bool] = {}
        for case in root.iter("testcase"):
            cls, name = case.get("classname", ""), case.get("name", "")
            inner = cls[len(module) :].lstrip(".").replace(".", "::")
            key = f"{inner}::{name}" if inner else name
            bad = [child for child in case if child.tag in ("failure", "error")]
            out[key] = not bad
            if bad:
                self.failures[f"{rel}::{key}"] = _failure_text(bad[0])
        if not out:
            self.failures[f"{rel}::*"] = _tail(run.output)
        return out, stuck, run

    def per_test_lines(self, ws: Workspace, rel: str, names: list[str]) -> dict[str, Lines]:
        """One coverage run with per-test contexts."""
        with ws.outputs() as tmp:
            data, report = (tmp / n for n in ("data", "cov.json"))
            rc = _rcfile(tmp, contexts=True)
            python = self.fw.run_files[0]
            ws.run(
                [
                    python,
                    "-m",
                    "coverage",
                    "run",
                    f"--rcfile={rc}",
                    f"--data-file={data}",
                    *self.fw.run_files[1:],
                    *measured_args(ws.root),
                    "-p",
                    "nova_limits",
                    *(f"{rel}::{n}" for n in names),
                ],
                timeout=self.run_timeout(len(names)),
                env={"PYTEST_NOVA_SECONDS": f"{self.test_timeout:g}"},
            )
            out = ws.run(
                [
                    python,
                    "-m",
                    "coverage",
                    "json",
                    f"--rcfile={rc}",
                    f"--data-file={data}",
                    "--show-contexts",
                    "-o",
                    str(report),
                ]
            )
            if not out.passed:
                return {}
            files = json.loads(report.read_text()).get("files", {})
        dotted = {n: "." + n.split("[")[0].replace("::", ".") for n in names}
        lines: dict[str, Lines] = {n: {} for n in names}
        self.imported = {}
        for path, info in files.items():
            for line, contexts in (info.get("contexts") or {}).items():
                for ctx in contexts:
                    if not ctx:  # outside every test: imports, collection
                        self.imported.setdefault(relative(ws, path), set()).add(int(line))
                    for name, suffix in dotted.items():
                        if ctx.endswith(suffix):
                            lines[name].setdefault(relative(ws, path), set()).add(int(line))
        for name in names:  # Hypothesis runs tests inside its engine: the context is not theirs
            if not lines[name]:
                alone = self.line_coverage(ws, [f"{rel}::{name}"])
                if alone:
                    lines[name] = alone[0]
        return lines

    def line_coverage(
        self, ws: Workspace, test_args: list[str], timeout: float = 300.0, run_seconds: float = 0.0
    ) -> tuple[Lines, Lines] | None:
        # a session limit (``nova_limits``): pytest stops between tests and coverage
        # saves what ran, where a timeout would kill the run and lose it all
        limited = ["-p", "nova_limits"] if run_seconds else []
        self.stopped = False
        with ws.outputs() as tmp:
            data, report = str(tmp / "cov"), str(tmp / "cov.json")
            rc = f"--rcfile={_rcfile(tmp)}"
            python = self.fw.run_files[0]
            # the whole suite is the project's own: the memory limit is for generated tests
            run = ws.run(
                [
                    python,
                    "-m",
                    "coverage",
                    "run",
                    rc,
                    f"--data-file={data}",
                    *self.fw.run_files[1:],
                    *measured_args(ws.root),
                    *limited,
                    *test_args,
                ],
                timeout=timeout,
                limit_memory=bool(test_args),
                env={"PYTEST_NOVA_RUN_SECONDS": f"{run_seconds:g}"} if run_seconds else None,
            )
            self.stopped = RUN_LIMIT in run.output
            # 1: tests failed, 5: none collected, 2: interrupted (by the run limit)
            if run.returncode not in (0, 1, 5) and not (self.stopped and run.returncode == 2):
                self.coverage_failure = collect_error(run.output)
                return None
            json_run = ws.run(
                [python, "-m", "coverage", "json", rc, f"--data-file={data}", "-o", report]
            )
            if not json_run.passed:
                # "No data to report": the run recorded nothing
                self.coverage_failure = _tail(json_run.output)
                return {}, {}
            files = json.loads(Path(report).read_text()).get("files", {})
        executed: Lines = {}
        missing: Lines = {}
        for name, info in files.items():
            rel = relative(ws, name)
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

    def cut(self, ws: Workspace, rel: str, keep: set[str], collected: list[str]) -> str | None:
        return prune_python(ws.read(rel) or "", keep, collected)


def _failure_text(element: ElementTree.Element) -> str:
    """The junit failure's message (``AssertionError: assert 3 == 4``), else the last line
    of its traceback (``E   ValueError: ...``)."""
    message = " ".join((element.get("message") or "").split())
    if message:
        return message[:300]
    rows = [r.strip() for r in (element.text or "").splitlines() if r.strip().startswith("E ")]
    return rows[-1][1:].strip()[:300] if rows else "no message in the report"


# the exception line of a traceback pytest printed (``E   ImportError: attempted ...``)
_RAISED = re.compile(r"^E\s+((?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Warning)\b.*)$")


def collect_error(output: str) -> str:
    """Why pytest collected nothing from a file: the first exception line of its
    collection error (``ImportError: attempted relative import with no known parent
    package``), else the last line it printed (``no tests ran``)."""
    for row in output.splitlines():
        raised = _RAISED.match(row.strip())
        if raised:
            return " ".join(raised.group(1).split())[:300]
    for row in output.splitlines():  # a usage error (`pytest: error: ...`), not the rootdir
        if ": error: " in row:
            return " ".join(row.split(": error: ", 1)[1].split())[:300]
    return _tail(output)


def _tail(output: str) -> str:
    rows = [r.strip() for r in output.strip().splitlines() if r.strip()]
    return rows[-1][:300] if rows else "no output"


def prune_python(text: str, keep: set[str], collected: list[str]) -> str | None:
    """``text`` without the tests (functions, methods of test classes, classes left empty)
    that were ``collected`` but are not in ``keep``; None when no test is left. Names are
    pytest's (``test_x``, ``TestY::test_z``, ``test_p[1]``)."""
    kept = {k.split("[", 1)[0] for k in keep}
    known = {c.split("[", 1)[0] for c in collected}
    containers = {
        "::".join(parts[:i])
        for name in known
        for parts in [name.split("::")]
        for i in range(1, len(parts))
    }
    drop: list[tuple[int, int]] = []

    def span(node: ast.stmt) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", [])
        return (min([node.lineno, *(d.lineno for d in decorators)]), node.end_lineno or node.lineno)

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
        del rows[first - 1 : last]
    return "\n".join(rows)
