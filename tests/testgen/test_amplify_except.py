"""Amplification's trace plugin tells a call that raised from one that returned None
when the exception left through an ``except`` clause that did not match it (the clause's
line is traced after the exception, and the exception then leaves with no new event).
A real project in a git repository, observed by a real sandboxed pytest run."""

from __future__ import annotations

from typing import Any

from bot.testgen.amplify import _observe
from bot.testgen.frameworks import detect_framework
from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo

CALC = """def _steps(n):
    if n < 0:
        raise ValueError("negative")
    return None


def run(n):
    try:
        return _steps(n)
    except KeyError:
        return -1


def caught(n):
    try:
        _steps(n)
    except ValueError:
        pass
"""

TESTS = """import pytest

import calc


def test_negative():
    with pytest.raises(ValueError):
        calc.run(-1)
    assert calc.run(1) is None
    assert calc.caught(-1) is None
"""


def test_an_exception_through_an_except_that_does_not_match_is_a_raise(repo: GitRepo) -> None:
    repo.write("calc.py", CALC)
    repo.write("tests/test_calc.py", TESTS)
    repo.commit("a function whose except clause does not match")
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        assert ws.framework is not None
        seen = _observe(ws, ws.framework, ["tests/test_calc.py"], {"calc.py": [9]}, 0, 120, 30)
    calls: list[dict[str, Any]] = seen.tests["tests/test_calc.py::test_negative"]["calls"]
    raised, returned, handled = (c for c in calls if c["name"] in ("run", "caught"))
    assert (raised["name"], raised["kind"], raised["type"]) == ("run", "raises", "ValueError")
    # a None returned, also after an exception was caught inside, stays a value
    assert (returned["name"], returned["kind"], returned["value"]) == ("run", "value", "None")
    assert (handled["name"], handled["kind"], handled["value"]) == ("caught", "value", "None")
