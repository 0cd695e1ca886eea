"""The full-suite gate, honest about what was broken before Nova came.

The project's suite runs with the kept tests. When it fails, the test files that failed
run once more without Nova's tests (the baseline). Tests that fail in both runs already
failed: they are named in the report and never blamed on Nova's tests. A kept test that
fails only inside the whole suite is dropped; a project test that fails only when Nova's
tests are there means Nova's tests disturb the suite, and nothing is proposed.

A suite slower than the job's time (``seconds``) is stopped; the test files that name the
changed code (``nearby``) then run with the kept tests instead, under the same limit. When
those are stopped too, the suite is not judged (``SuiteVerdict.unjudged``): the kept tests
already passed on their own, repeatably, and the report says the suite did not finish.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from bot.testgen.frameworks import Framework
from bot.testgen.workspace import Workspace

__all__ = ["SuiteRun", "SuiteVerdict", "judge_suite", "run_suite", "test_id_module"]

_UNITTEST_FAILURE = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+)\)", re.MULTILINE)
SUITE_SECONDS = 1800


@dataclass
class SuiteRun:
    passed: bool
    failures: set[str]  # test ids ("path::Class::name" for pytest) that failed or errored
    output: str
    itemised: bool  # whether failures could be told apart (else only pass/fail is known)
    timed_out: bool = False  # stopped at its time limit: nothing is known


@dataclass
class SuiteVerdict:
    passed: bool  # nothing failed that the kept tests cause
    preexisting: list[str] = field(default_factory=list)  # fail without Nova's tests too
    blamed: list[str] = field(default_factory=list)  # project tests that fail only with them
    nova_failed: list[str] = field(default_factory=list)  # Nova's tests failing in the suite
    output: str = ""
    scope: str = ""  # what ran when it was not the whole suite
    unjudged: str = ""  # why the suite could not be judged (it did not finish)


def _pytest_failures(report: Path) -> set[str]:
    """``module.Class::name`` of each test that failed or errored (junit's own names)."""
    root = ElementTree.parse(report).getroot()
    return {
        (f"{case.get('classname')}::" if case.get("classname") else "") + case.get("name", "")
        for case in root.iter("testcase")
        if any(child.tag in ("failure", "error") for child in case)
    }


def test_id_module(path: str) -> str:
    """How junit names a test file's module: ``tests/test_x.py`` -> ``tests.test_x``."""
    return path[:-3].replace("/", ".") if path.endswith(".py") else path


def _files_of(ws: Workspace, failures: set[str]) -> list[str] | None:
    """The test files of junit ids (``tests.test_x.TestY::name``), or None when one
    cannot be told."""
    files = set()
    for test_id in failures:
        parts = test_id.split("::", 1)[0].split(".")
        found = next(
            (
                "/".join(parts[:i]) + ".py"
                for i in range(len(parts), 0, -1)
                if (ws.root / ("/".join(parts[:i]) + ".py")).is_file()
            ),
            None,
        )
        if found is None:
            return None
        files.add(found)
    return sorted(files)


def run_suite(
    ws: Workspace,
    fw: Framework,
    hidden: Sequence[str] = (),
    only: Sequence[str] = (),
    seconds: float = SUITE_SECONDS,
) -> SuiteRun:
    """The whole suite (or the test files ``only``, with pytest), with the ``hidden``
    files (Nova's tests) absent for this run, stopped after ``seconds``."""
    with ws.outputs() as tmp, ws.replaced(dict.fromkeys(hidden)):
        report = tmp / "suite.xml"
        args = list(fw.run_suite)
        pytest = "pytest" in args
        if pytest:  # a file that does not import must not stop the rest of the suite
            args += [f"--junitxml={report}", "--continue-on-collection-errors", *only]
        run = ws.run(args, timeout=seconds, limit_memory=False)
        if run.timed_out:
            return SuiteRun(False, set(), run.output, False, timed_out=True)
        if pytest and report.is_file():
            try:
                failures = _pytest_failures(report)
            except ElementTree.ParseError:
                return SuiteRun(run.passed, set(), run.output, False)
            return SuiteRun(run.passed, failures, run.output, True)
    if fw.name == "unittest":
        found = {f"{cls}.{name}" for name, cls in _UNITTEST_FAILURE.findall(run.output)}
        return SuiteRun(run.passed, found, run.output, bool(found) or run.passed)
    return SuiteRun(run.passed, set(), run.output, False)


def _is_nova(test_id: str, files: list[str]) -> bool:
    module = test_id.split("::", 1)[0]
    return any(module == m or module.startswith(m + ".") for m in map(test_id_module, files))


def judge_suite(
    ws: Workspace,
    fw: Framework,
    files: list[str],
    seconds: float = SUITE_SECONDS,
    nearby: Sequence[str] = (),
    too_slow: str = "",
) -> SuiteVerdict:
    """Run the suite with Nova's test ``files``; on failure, once more without them. A
    suite stopped after ``seconds`` is replaced by the test files ``nearby`` (pytest); so
    is one known beforehand not to finish (``too_slow`` says why), without being started."""
    started = time.monotonic()
    project = [f for f in dict.fromkeys(nearby) if f not in files]
    if too_slow and "pytest" in fw.run_suite and project:
        with_tests = SuiteRun(False, set(), "", False, timed_out=True)  # not started
    else:
        with_tests = run_suite(ws, fw, seconds=seconds)
        too_slow = f"the whole suite did not finish in {seconds:g} s"
    scope, only = "", list[str]()
    if with_tests.timed_out:
        stopped = too_slow
        if "pytest" not in fw.run_suite or not project:
            return SuiteVerdict(True, unjudged=stopped, output=with_tests.output)
        only = [*project, *files]
        with_tests = run_suite(ws, fw, only=only, seconds=seconds)
        if with_tests.timed_out:
            took = time.monotonic() - started
            return SuiteVerdict(
                True,
                unjudged=f"{stopped}, nor did its {len(project)} test file(s) that name the "
                f"changed code ({took:.0f} s in all)",
                output=with_tests.output,
            )
        scope = f"{stopped}: its {len(project)} test file(s) that name the changed code ran instead"
    if with_tests.passed:
        return SuiteVerdict(True, output=with_tests.output, scope=scope)
    # the baseline: the files that failed, again without Nova's tests (the whole suite
    # when they cannot be told, or it is not pytest)
    failed_files = _files_of(ws, with_tests.failures) if with_tests.itemised else None
    project_files = [f for f in failed_files or [] if f not in files]
    if failed_files is not None and not project_files:
        baseline = SuiteRun(True, set(), "", True)  # only Nova's own tests failed
    else:
        rerun = project_files if failed_files is not None else [f for f in only if f not in files]
        baseline = run_suite(ws, fw, files, rerun, seconds)
    if baseline.timed_out:
        return SuiteVerdict(
            True,
            unjudged=f"the suite without Nova's tests did not finish in {seconds:g} s",
            output=with_tests.output,
        )
    if not with_tests.itemised or not baseline.itemised:
        # only pass/fail is known: the kept tests are blamed only if the suite passed
        # without them
        return SuiteVerdict(
            not baseline.passed,
            preexisting=["(the suite fails without Nova's tests too)"]
            if not baseline.passed
            else [],
            blamed=[] if not baseline.passed else ["(the suite passes without Nova's tests)"],
            output=with_tests.output,
            scope=scope,
        )
    nova = sorted(t for t in with_tests.failures if _is_nova(t, files))
    others = with_tests.failures - set(nova)
    blamed = sorted(others - baseline.failures)
    return SuiteVerdict(
        not blamed,
        preexisting=sorted(baseline.failures),
        blamed=blamed,
        nova_failed=nova,
        output=with_tests.output,
        scope=scope,
    )
