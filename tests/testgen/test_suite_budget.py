"""The full-suite gate keeps to the job's time: a suite that does not finish is replaced by
the test files that name the changed code, and one whose files do not finish either is not
judged (said, never counted as passed). Real git repositories, real sandboxed pytest runs;
the slow test blocks until it is killed, so no timing decides the outcome."""

from __future__ import annotations

import pytest

from bot.testgen import report
from tests.conftest import GitRepo

BLOCKS = "import threading\n\n\ndef test_blocks():\n    threading.Event().wait()\n"


def _judge(repo: GitRepo, nearby: list[str], seconds: float):  # type: ignore[no-untyped-def]
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.suite import judge_suite
    from bot.testgen.workspace import Workspace

    with Workspace(repo.path, "HEAD", None) as ws:
        fw = ws.framework = detect_framework(ws.root)
        assert fw is not None
        kept = "import calc\n\n\ndef test_k():\n    assert calc.double(2) == 4\n"
        ws.write_test("tests/test_nova_kept.py", kept)
        return judge_suite(ws, fw, ["tests/test_nova_kept.py"], seconds, nearby)


@pytest.fixture
def slow_project(repo: GitRepo) -> GitRepo:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("calc.py", "FLAG = 0\n\n\ndef double(x):\n    return 2 * x\n")
    near = "import calc\n\n\ndef test_double():\n    assert calc.double(3) == 6\n"
    repo.write("tests/test_calc.py", near)
    repo.write("tests/test_slow.py", BLOCKS)
    repo.commit("a suite with a test that never ends")
    return repo


@pytest.mark.slow
def test_a_suite_that_does_not_finish_is_judged_on_the_files_that_name_the_change(
    slow_project: GitRepo,
) -> None:
    verdict = _judge(slow_project, ["tests/test_calc.py"], 8.0)
    assert verdict.passed and not verdict.unjudged
    assert verdict.scope.startswith("the whole suite did not finish in 8 s")
    assert "1 test file(s) that name the changed code ran instead" in verdict.scope
    # the files that ran are judged as the whole suite would be: a kept test that
    # changes what the project's nearby test reads is blamed
    reads = "import calc\n\n\ndef test_flag():\n    assert calc.FLAG == 0\n"
    slow_project.write("tests/test_calc.py", reads)
    slow_project.commit("a nearby test reads module state")
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.suite import judge_suite
    from bot.testgen.workspace import Workspace

    with Workspace(slow_project.path, "HEAD", None) as ws:
        fw = ws.framework = detect_framework(ws.root)
        assert fw is not None
        sets = "import calc\n\ncalc.FLAG = 1\n\n\ndef test_b():\n    pass\n"
        ws.write_test("tests/test_nova_bad.py", sets)
        bad = judge_suite(ws, fw, ["tests/test_nova_bad.py"], 8.0, ["tests/test_calc.py"])
    assert not bad.passed and bad.blamed == ["tests.test_calc::test_flag"]
    assert bad.scope


@pytest.mark.slow
def test_a_suite_whose_nearby_files_do_not_finish_either_is_not_judged(
    slow_project: GitRepo,
) -> None:
    verdict = _judge(slow_project, ["tests/test_slow.py"], 6.0)
    assert verdict.unjudged.startswith(
        "the whole suite did not finish in 6 s, nor did its 1 test file(s)"
    )
    assert not verdict.blamed and not verdict.nova_failed
    # no file names the change: nothing else to run, said so
    alone = _judge(slow_project, [], 6.0)
    assert alone.unjudged == "the whole suite did not finish in 6 s"


def test_the_report_says_what_the_suite_gate_judged() -> None:
    from bot.report.testgen import render_testgen_body

    unjudged = _result(None, "the whole suite did not finish in 20 s")
    assert unjudged.test_plan().endswith(
        "The project's suite was not judged with them: the whole suite did not finish in 20 s."
    )
    assert "the full suite was not judged (too slow)" in render_testgen_body(unjudged)
    whole = _result(True, "")
    assert whole.test_plan().endswith("The project's suite passed with them.")
    assert "the full suite passed" in render_testgen_body(whole)
    scope = (
        "the whole suite did not finish in 20 s: "
        "its 2 test file(s) that name the changed code ran instead"
    )
    scoped = _result(False, scope)
    assert scoped.test_plan().endswith(f"({scope}).")
    assert "the suite's files that name the change FAILED" in render_testgen_body(scoped)
    assert scoped.to_dict()["stats"]["suite_scope"] == scope


def _result(passed: bool | None, scope: str) -> report.TestgenResult:
    from bot.change import Change

    result = report.TestgenResult(change=Change(id="c", source="git", title="t"))
    result.suite_passed = passed
    result.suite_scope = scope
    return result
