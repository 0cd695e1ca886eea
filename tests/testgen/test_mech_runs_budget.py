"""The differential's side-runner runs within the job's budget (issue 35: at most 120 s a
job). Each of its four runs (head twice, parent twice) had a fixed 40 s, whatever was left
of the job, and a run whose call blocked where no timer reaches it (a lock waited for again
in a ``finally``) hung until Nova's 180 s limit; with the run's watchdog it is ended 20 s
past its budget, and it would hang each later run the same way. Now each run gets a share
of what is left of the job (``differential._Clock``), and a function a run's watchdog
found hung is left out of the later runs. The clock itself, and a real sample project (a
git repository in tmp, its own virtualenv, real side-runner subprocesses) whose second
head run hangs in one function: that run is ended once, the parent's runs do not hang, and
the other changed function is still caught."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bot.testgen import differential
from bot.testgen.differential import DifferentialPlan, _Clock
from tests.testgen.sample import caught, sample_testgen


def test_each_run_gets_a_share_of_what_is_left_and_never_less_than_the_least() -> None:
    assert _Clock(None).seconds(4, differential.FIRST_SHARE) == differential.RUN_SECONDS
    soon = _Clock(1000.0 + 60)
    assert soon.seconds(4, 0.4, now=1000.0) == 24  # 40% of 60 s
    assert soon.seconds(2, now=1000.0) == 30  # half of it
    assert soon.seconds(1, now=1000.0) == differential.RUN_SECONDS  # capped
    spent = _Clock(1000.0 - 5)  # the job's time is over
    assert spent.seconds(3, now=1000.0) == differential.RUN_LEAST
    assert spent.left(1000.0) == -5 and _Clock(None).left() == float("inf")
    assert _Clock(time.monotonic() - 5).left() < 0  # without ``now``: this moment


def test_a_function_found_hung_is_left_out_of_the_later_runs() -> None:
    clock = _Clock(None)
    notes: list[str] = []
    clock.note({"modules": {}}, "head-1", notes)  # a run that ended in its budget
    assert notes == [] and not clock.hung
    plans = [
        DifferentialPlan("pkg/a.py", "pkg.a", {"f": [{"args": []}], "g": [{"args": []}]}),
        DifferentialPlan("pkg/b.py", "pkg.b", {"g": [{"args": []}]}),
    ]
    assert clock.left_out(plans) is plans
    clock.note({"modules": {}, "stopped": 21.0, "hung": ["pkg.b", "g"]}, "head-2", notes)
    assert len(notes) == 1 and "pkg.b.g" in notes[0] and "head-2" in notes[0]
    kept = clock.left_out(plans)
    assert [(p.module, sorted(p.functions)) for p in kept] == [("pkg.a", ["f", "g"])]
    clock.note({"modules": {}, "stopped": 21.0}, "parent-0", notes)  # ended, none named
    assert len(notes) == 2 and "parent-0" in notes[1]


# hangs on the second head run only (the side-runner's runs are seeded 0, 1, 0, 1): a
# wait that the call's timer interrupts, then another in its ``finally`` that nothing does
SERVICE = '''import os
import threading

_never = threading.Event()


def scale(x):
    """x scaled by the service's factor."""
    return 2 * x


def settle(x):
    """x once the service has settled."""
    if os.environ.get("PYTHONHASHSEED") == "1":
        try:
            _never.wait()
        finally:
            _never.wait()
    return x + 1
'''
SERVICE_NEW = SERVICE.replace("return 2 * x", "return 3 * x").replace(
    "return x + 1", "return x + 2"
)
SERVICE_TESTS = """from service.core import scale, settle


def test_scale():
    assert scale(2) > 0


def test_settle():
    assert settle(1) > 0
"""


@pytest.fixture(scope="module")
def hanging(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOVA_TEST_JOB_SECONDS", "30")  # each run gets the least: 10 s
        _, data = sample_testgen(
            tmp_path_factory.mktemp("hanging"),
            {
                "service/__init__.py": "",
                "service/core.py": SERVICE,
                "tests/test_core.py": SERVICE_TESTS,
            },
            {"service/core.py": SERVICE_NEW},
            "a larger factor; settle by two",
            exits=(0, 1),
        )
    return data


@pytest.mark.slow
def test_a_run_that_hangs_is_ended_once_and_the_rest_of_the_change_is_caught(
    hanging: dict[str, Any],
) -> None:
    ended = [n for n in hanging["notes"] if "past its budget" in n]
    assert len(ended) == 1, hanging["notes"]  # the parent's seeded-1 run left it out
    assert "head-2" in ended[0] and "service.core.settle" in ended[0], ended
    assert caught(hanging, "scale("), hanging["kept"]
