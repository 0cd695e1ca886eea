"""The differential generator leaves amplification its share of the job when the project
has tests amplification would run (``pipeline.differential_until``): on a slow or busy
machine its search of inputs used to spend the time, and amplification was skipped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.amplify import amplifiable
from bot.testgen.frameworks import detect_framework
from bot.testgen.matrix import Target
from bot.testgen.pipeline import (
    AMPLIFY_LEAST,
    CHECK_SHARE,
    amplify_seconds,
    differential_until,
)
from bot.testgen.workspace import Workspace
from tests.conftest import GitRepo

TARGET = Target("pkg/calc.py", "scale", "modified", [2])


@settings(max_examples=200, deadline=None)
@given(
    job_seconds=st.floats(20, 900),
    start=st.floats(0, 1e6),
    ended=st.floats(0, 1),
)
def test_a_differential_run_that_ends_in_time_leaves_amplification_a_run(
    job_seconds: float, start: float, ended: float
) -> None:
    deadline = start + job_seconds
    until = differential_until(deadline, job_seconds, True)
    now = start + (until - start) * ended  # the differential generator ended by its end
    assert amplify_seconds(deadline, job_seconds, now) >= AMPLIFY_LEAST - 1e-6


@settings(max_examples=100, deadline=None)
@given(job_seconds=st.floats(20, 900), start=st.floats(0, 1e6))
def test_without_tests_to_amplify_the_differential_keeps_its_whole_share(
    job_seconds: float, start: float
) -> None:
    deadline = start + job_seconds
    whole = differential_until(deadline, job_seconds, False)
    assert whole == deadline - CHECK_SHARE * job_seconds
    assert differential_until(deadline, job_seconds, True) < whole


def _project(repo: GitRepo, tests: dict[str, str]) -> None:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/calc.py", "def scale(x):\n    return x * 2\n")
    for path, text in tests.items():
        repo.write(path, text)
    repo.commit("base")


def test_a_project_with_tests_of_the_changed_module_is_amplifiable(repo: GitRepo) -> None:
    test = "from pkg.calc import scale\n\n\ndef test_scale():\n    assert scale(2) == 4\n"
    _project(repo, {"tests/test_calc.py": test})
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        assert ws.framework is not None
        assert amplifiable(ws, ws.framework, [TARGET])
        # a change to no Python source line gives amplification nothing to run
        readme = Target("README.md", "", "modified", [1])
        assert not amplifiable(ws, ws.framework, [readme])


def test_a_project_without_tests_is_not(repo: GitRepo) -> None:
    # pytest configured, tests yet to be written
    config = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    _project(repo, {"pyproject.toml": config, "docs/usage.md": "scale(2) is 4\n"})
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        assert ws.framework is not None
        assert not amplifiable(ws, ws.framework, [TARGET])
