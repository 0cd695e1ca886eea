"""Nova's pytest plugin for generated test runs, loaded as ``-p nova_limits`` in the
sandbox with the project's interpreter (so: the standard library and pytest only).

- ``PYTEST_NOVA_SECONDS``: the wall-clock limit of one test's call. A test still running
  then gets ``TestTimeLimit`` (a ``BaseException``: its own ``except Exception`` cannot
  swallow it). Code stuck inside one C call does not see the signal; the run's own
  timeout ends that, and the log says which test was running.
- ``PYTEST_NOVA_RUN_SECONDS``: no test starts after the run has lasted that long; pytest
  ends as after ``-x`` (so ``coverage run`` still saves what ran).
- ``PYTEST_NOVA_LOG``: one JSON object per line, written as it happens, so a run that was
  killed from outside still tells which test had started and not ended: ``start``,
  ``end`` (seconds) and ``limit`` (``time`` or ``memory``: a MemoryError under the
  sandbox's RLIMIT_DATA).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # annotations only: the sandbox's pytest may be older
    from pluggy import Result

_LOG = os.environ.get("PYTEST_NOVA_LOG")
_SECONDS = float(os.environ.get("PYTEST_NOVA_SECONDS") or 0)
_RUN_SECONDS = float(os.environ.get("PYTEST_NOVA_RUN_SECONDS") or 0)
_STARTED = time.monotonic()


class TestTimeLimit(BaseException):
    """The test ran past the per-test limit."""

    __test__ = False  # not a test class, whatever its name


def _write(**row: object) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


def _alarm(signum: int, frame: object) -> None:
    raise TestTimeLimit(f"still running after {_SECONDS:g} s (the limit per test)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, None, None]:
    _write(event="start", nodeid=item.nodeid)
    started = time.monotonic()
    yield
    _write(event="end", nodeid=item.nodeid, seconds=round(time.monotonic() - started, 3))
    if _RUN_SECONDS and time.monotonic() - _STARTED > _RUN_SECONDS:
        item.session.shouldstop = f"Nova's time limit for this run ({_RUN_SECONDS:g} s)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    timed = _SECONDS > 0 and hasattr(signal, "setitimer")
    if timed:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, _SECONDS)
    try:
        yield
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or call.excinfo is None:
        return
    if call.excinfo.errisinstance(TestTimeLimit):
        _write(event="limit", nodeid=item.nodeid, kind="time", seconds=_SECONDS)
    elif call.excinfo.errisinstance(MemoryError) or "MemoryError" in str(report.longrepr)[-3000:]:
        _write(event="limit", nodeid=item.nodeid, kind="memory")
