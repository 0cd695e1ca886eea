"""An outcome that shows the time (a duration, a rate, a time stamp) is compared with the
clock pinned (issue 35): the side-runner calls it twice more with every read of the clock
giving a fixed instant, one second after the read before (``probe_steady.pinned_clock``);
when both agree, head and parent are compared that way, and the written test pins the
clock with its own copy of the same helper. What a call that returns None wrote to
stdout is part of its outcome. A real sample project (a git repository in tmp, its own
virtualenv, real pytest and coverage subprocesses) whose release changes the unit a
progress bar prints its total in, and the interval a ticker waits between two ticks (a
change the pinned clock cannot show: it claims nothing); and the probe's calls on
functions that show the time."""

from __future__ import annotations

import datetime
import sys
import time
from typing import Any

import pytest

from bot.testgen import probe, probe_steady, render
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

PROGRESS = '''import time


class Progress:
    """A progress bar that says how long it took."""

    def __init__(self, total=0):
        self.total = total
        self.done = 0
        self.started = time.time()

    def add(self, count):
        self.done += count

    def finish(self):
        elapsed = time.time() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        print(f"Done: {self.done} B in {elapsed:.1f} s ({rate:.1f} B/s)")
'''
PROGRESS_NEW = PROGRESS.replace(
    'print(f"Done: {self.done} B in',
    'print(f"Done: {self.done / 1024:.1f} KB in',
)
PROGRESS_TESTS = """from meter.progress import Progress


def test_finish(capsys):
    bar = Progress(100)
    bar.add(2048)
    bar.finish()
    assert "Done" in capsys.readouterr().out
"""

TICKER = '''import time


class Ticker:
    """Counts ticks at most one a tenth of a second apart."""

    def __init__(self):
        self.last = 0.0
        self.shown = 0

    def tick(self):
        now = time.monotonic()
        if now - self.last >= 0.1:
            self.shown += 1
            self.last = now
        return self.shown
'''
TICKER_NEW = TICKER.replace("now - self.last >= 0.1", "now - self.last >= 0.5").replace(
    "a tenth of", "half"
)
TICKER_TESTS = """from meter.ticker import Ticker


def test_tick():
    ticker = Ticker()
    assert ticker.tick() == 1
"""


@pytest.fixture(scope="module")
def meter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {
        "meter/__init__.py": "",
        "meter/progress.py": PROGRESS,
        "tests/test_progress.py": PROGRESS_TESTS,
        "meter/ticker.py": TICKER,
        "tests/test_ticker.py": TICKER_TESTS,
    }
    return sample_testgen(
        tmp_path_factory.mktemp("meter"),
        base,
        {"meter/progress.py": PROGRESS_NEW, "meter/ticker.py": TICKER_NEW},
        "the total in KB; a tick at most twice a second",
    )


@pytest.mark.slow
def test_a_printed_duration_is_compared_with_the_clock_pinned(
    meter: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = meter
    notes = [n for n in data["notes"] if "meter/progress.py::Progress.finish" in n]
    assert any("steady with the clock pinned" in n for n in notes), data["notes"]
    facts = caught(data, ".finish()")
    assert facts, data["notes"]
    assert all(f["changed"] and f["call"].startswith("with _pinned_clock()") for f in facts)
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_meter_progress.py")
    assert "def _pinned_clock(known=None):" in committed
    assert "with _pinned_clock():" in committed
    assert "assert capsys.readouterr().out == 'Done: 2.0 KB in 1.0 s (2048.0 B/s)\\n'" in (
        committed
    ), committed


@pytest.mark.slow
def test_a_change_the_pinned_clock_cannot_show_claims_nothing(
    meter: tuple[Any, dict[str, Any]],
) -> None:
    _, data = meter
    assert not caught(data, "tick("), data["kept"]


def shown_took(count: int) -> None:
    """Prints a duration and a rate."""
    started = time.perf_counter()
    took = time.perf_counter() - started
    print(f"{count} in {took:.6f} s, {count / took:.1f} a second")


def stamped(name: str) -> str:
    return f"{name} at {datetime.datetime.now().isoformat()}"


def checked_late(deadline: float, now: Any = time.time) -> bool:
    """The clock bound before any stand-in could be: pinning it cannot be seen."""
    return now() > deadline


def _call(func: Any, *args: object) -> dict[str, Any]:
    named = Named("function", None, func.__name__, func)
    return probe.call(named, probe._Case(None, [], (list(args), {}), {}, "tests"), 1.0)


def test_a_printed_duration_is_steady_with_the_clock_pinned() -> None:
    assert _call(shown_took, 3) == {
        "kind": "value",
        "value": "None",
        "imports": [],
        "ordered": True,
        "printed": "3 in 1.000000 s, 3.0 a second\n",
        "pinned": "the same twice with the clock (time.perf_counter) pinned",
    }


def test_a_time_stamp_is_the_pinned_instant() -> None:
    outcome = _call(stamped, "ann")
    assert outcome["value"] == "'ann at 2024-01-02T03:04:05'"
    assert outcome["pinned"].endswith("pinned")


def test_a_clock_that_cannot_be_pinned_is_not_trusted() -> None:
    outcome = _call(checked_late, time.time() + 3600)
    assert outcome == {"kind": "depends", "on": "the clock (time.time)"}


def test_the_pinned_clock_steps_and_is_taken_back() -> None:
    # Nova's own test process may hold other threads (the local servers of earlier
    # tests) whose reads also step the clock: what is asserted holds whatever they read
    start = 1704164645.0  # 2024-01-02 03:04:05 UTC
    with probe_steady.pinned_clock() as reads:
        first = time.time()
        assert first >= start and first == int(first)
        assert time.time() - first >= 1.0  # one second a read, at least
        assert time.monotonic() - time.perf_counter() <= -1.0
        now = datetime.datetime.now()
        assert now >= datetime.datetime(2024, 1, 2, 3, 4, 8) and now.microsecond == 0
        assert datetime.date.today() >= datetime.date(2024, 1, 2)
        aware = datetime.datetime.now(datetime.UTC)
        assert aware > now.replace(tzinfo=datetime.UTC)
        assert isinstance(aware, datetime.datetime)
        assert reads[0] >= 7
    assert time.time() > start + 86400 * 300
    assert datetime.datetime is probe_steady._REAL["datetime"]


def test_the_written_helper_is_the_probes_clock_without_annotations() -> None:
    source = render.clock_helper()
    assert source.startswith("@contextlib.contextmanager\ndef _pinned_clock(known=None):")
    assert "->" not in source and "typing" not in source
    scope: dict[str, Any] = {"contextlib": __import__("contextlib")}
    exec(compile(source, "<helper>", "exec"), scope)  # the text a written test holds
    with scope["_pinned_clock"]():
        first, second = time.time(), time.time()
        assert first >= 1704164645.0 and second - first >= 1.0  # other threads read too
    assert time.time() > 1704164646.0 + 86400 * 300


def test_a_file_whose_pinned_tests_were_dropped_loses_the_helper() -> None:
    helper = render.clock_helper()
    kept = "def test_b():\n    assert 1\n"
    pinned = "def test_a():\n    with _pinned_clock():\n        assert 1\n"
    text = f'"""doc"""\n\nimport contextlib\n\n\n{helper}\n\n\n{pinned}\n\n{kept}'
    assert render.tidy(text) == text.rstrip("\n") + "\n"
    assert render.tidy(text.replace(pinned, "")) == '"""doc"""\n\n\n' + kept


def test_where_the_clock_is_bound_is_kept_until_a_module_is_imported(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    known: list[Any] = []
    with probe_steady.pinned_clock(known):
        assert time.time() == 1704164645.0
    count = known[0]
    with probe_steady.pinned_clock(known):
        assert time.time() == 1704164645.0  # each use starts at the same instant
    assert known[0] == count
    (tmp_path / "nova_pinned_later.py").write_text("from time import monotonic\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("nova_pinned_later")
    with probe_steady.pinned_clock(known):
        assert sys.modules["nova_pinned_later"].monotonic() == 1704164645.0
    assert known[0] == len(sys.modules)
    assert sys.modules["nova_pinned_later"].monotonic is probe_steady._REAL["monotonic"]
    monkeypatch.delitem(sys.modules, "nova_pinned_later")
