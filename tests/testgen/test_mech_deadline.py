"""The job's time budget (``NOVA_TEST_JOB_SECONDS``): each stage after analyze-test-matrix
reads what is left of it. A real sample project (a git repository in tmp, its own
virtualenv, real pytest and coverage subprocesses) whose tests do real work for a while
(a loop that computes until its own clock says two seconds passed: no sleeping), with a
release that changes two modules. With the default budget both generated files are
checked; with a budget the slow suite has spent before generation ends, amplification
is skipped and the second file is dropped unchecked, said in a note, while the first
still catches the change: the verdicts stay sound, only less runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.pipeline import NOT_CHECKED
from tests.testgen.sample import sample_testgen

SCALE = "def scale(x):\n    return x * 2\n"
SHIFT = "def shift(x):\n    return x + 1\n"
# the project's tests: their asserts hold on both sides; each file works ~2 s on a clock
WORK = """

def test_work():
    started = time.monotonic()
    done = 0
    while time.monotonic() - started < 2.0:
        done += sum(i * i for i in range(2000)) % 7 + 1
    assert done > 0
"""
TESTS = {
    "tests/test_scale.py": "import time\n\nfrom calc.scale import scale\n\n\n"
    "def test_scale():\n    assert scale(3) > 3\n" + WORK,
    "tests/test_shift.py": "import time\n\nfrom calc.shift import shift\n\n\n"
    "def test_shift():\n    assert shift(3) > 3\n" + WORK,
}
BASE = {
    "calc/__init__.py": "",
    "calc/scale.py": SCALE,
    "calc/shift.py": SHIFT,
    **TESTS,
    # the rest of a suite: files that never name the changed code
    **{
        f"tests/test_other_{i}.py": f"def test_other_{i}():\n    assert {i} == {i}\n"
        for i in range(3)
    },
}
CHANGED = {
    "calc/scale.py": SCALE.replace("x * 2", "x * 3"),
    "calc/shift.py": SHIFT.replace("x + 1", "x + 2"),
}


def _run(tmp: Path, change: dict[str, str], seconds: str | None) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        if seconds is None:
            mp.delenv("NOVA_TEST_JOB_SECONDS", raising=False)
        else:
            mp.setenv("NOVA_TEST_JOB_SECONDS", seconds)
        _, data = sample_testgen(tmp, BASE, change, "the release", exits=(0, 1, 4))
    return data


def _checked(case: dict[str, Any]) -> bool:
    """A kept test's evidence is complete: it passed every run, ran a changed line, and
    failed on the parent or killed a mutant."""
    ev = case["evidence"]
    bites = bool(ev.get("fails_on_parent")) or bool(ev.get("mutant_killed"))
    return ev.get("runs") == 3 and bool(ev.get("changed_lines_covered")) and bites


def _catching(data: dict[str, Any]) -> set[str]:
    return {
        c["path"]
        for c in data["kept"]
        if c["evidence"].get("catches_change") and not c["evidence"].get("new_name")
    }


@pytest.mark.slow
def test_a_short_budget_checks_less_and_keeps_only_checked_tests(tmp_path: Path) -> None:
    roomy = _run(tmp_path / "roomy", CHANGED, None)
    # the default budget: both modules' generated files are checked, and both catch
    both = {"tests/test_nova_calc_scale.py", "tests/test_nova_calc_shift.py"}
    assert both <= _catching(roomy)
    assert not any(NOT_CHECKED in str(d.get("reason")) for d in roomy["dropped"])
    assert all(_checked(c) for c in roomy["kept"])

    # a budget the slow suite spends before generation ends: less runs, nothing unchecked
    short = _run(tmp_path / "short", CHANGED, "2")
    notes = "\n".join(short["notes"])
    assert "amplify: skipped:" in notes
    late = [d for d in short["dropped"] if d["reason"] == NOT_CHECKED]
    assert [d["path"] for d in late] == ["tests/test_nova_calc_shift.py"]
    assert "1 test file(s) not checked (tests/test_nova_calc_shift.py)" in notes
    # the first file is still checked whole, and its catch is a real one
    assert _catching(short) == {"tests/test_nova_calc_scale.py"}
    assert short["kept"] and all(_checked(c) for c in short["kept"])
    assert all(c["path"] != "tests/test_nova_calc_shift.py" for c in short["kept"])
    failures = [str(c["evidence"].get("parent_failure")) for c in short["kept"]]
    assert any("assert" in f for f in failures), failures


@pytest.mark.slow
def test_a_short_budget_claims_nothing_for_a_change_that_keeps_behaviour(tmp_path: Path) -> None:
    same = {
        "calc/scale.py": "def scale(x):\n    doubled = x + x\n    return doubled\n",
        "calc/shift.py": "def shift(x):\n    one = 1\n    return x + one\n",
    }
    data = _run(tmp_path, same, "2")
    assert not _catching(data)
    assert all(_checked(c) for c in data["kept"])
