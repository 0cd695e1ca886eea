"""What every test generation test shares."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _probe_alarm() -> Iterator[None]:
    """The side-runner's probe, called in pytest's own process (``probe.call``), arms a
    SIGALRM timer around each call. A call that outlasts it under load (a ``gc.collect()``
    over the suite's heap) must end as the probe ends it, with ``CallTimeout``: without
    the probe's handler, the signal's default action ends the whole pytest process."""
    from bot.testgen import probe

    before = signal.signal(signal.SIGALRM, probe._on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
