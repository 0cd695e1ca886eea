"""Coroutine functions, async methods and async generators in the differential generator
(issue 35, ``bot/testgen/asyncs.py``). Calling an ``async def`` gives a coroutine object:
nothing ran, and a change in async code was never seen. The side-runner now builds, calls
and awaits (collects) such a call inside one fresh event loop, and the written test is a
plain sync test that does the same with ``asyncio.run``. A real sample project (a git
repository in tmp, its own virtualenv, real pytest, no pytest-asyncio in its tests) whose
release changes an async method, an async function, an async generator and a method of a
class that can only be built inside a running loop; a refactor of an async method and an
async function whose value reads the clock claim nothing."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.testgen import asyncs, probe
from bot.testgen.differential import side_runner
from bot.testgen.probe_objects import BARE, Named
from tests.testgen.sample import caught, sample_testgen

CORE = '''import asyncio
import time


class Client:
    """A small async client over an in-memory store."""

    def __init__(self, name, store=None):
        self.name = name
        self.store = dict(store or {})
        self.sent = []

    async def fetch(self, key):
        await asyncio.sleep(0)
        return self.store.get(key, "")

    async def send(self, message):
        await asyncio.sleep(0)
        self.sent.append(message)

    async def size(self):
        await asyncio.sleep(0)
        return len(self.store)


class Session:
    """Built inside a running loop only."""

    def __init__(self, user):
        self.loop = asyncio.get_running_loop()
        self.user = user

    async def greet(self, word):
        await asyncio.sleep(0)
        return word + ", " + self.user

    def title(self):
        return self.user.title()


async def total(values):
    await asyncio.sleep(0)
    return sum(values)


async def countdown(n):
    while n > 0:
        yield n
        n -= 1


async def stamp(label):
    await asyncio.sleep(0)
    return {"label": label, "at": time.time()}
'''

# the release: keys are looked up in lower case, messages are stripped, a greeting has
# no comma, an empty total is None, the countdown ends at 0; ``size`` and ``stamp`` are
# rewritten with the same behaviour (``stamp``'s value reads the clock)
CORE_NEW = (
    CORE.replace("store.get(key, ", "store.get(key.lower(), ")
    .replace("        self.sent.append(message)\n", "        self.sent.append(message.strip())\n")
    .replace("        return len(self.store)\n", "        return sum(1 for _ in self.store)\n")
    .replace('        return word + ", " + self.user\n', '        return f"{word} {self.user}"\n')
    .replace("        return self.user.title()\n", "        return self.user.upper()\n")
    .replace("    return sum(values)\n", "    return sum(values) if values else None\n")
    .replace("    while n > 0:\n", "    while n >= 0:\n")
    .replace(
        '    return {"label": label, "at": time.time()}\n',
        '    now = time.time()\n    return {"label": label, "at": now}\n',
    )
)

TESTS = """import asyncio

from shop.core import Client, Session, countdown, stamp, total


def test_fetch():
    client = Client("c", {"a": 1})
    assert asyncio.run(client.fetch("a")) == 1


def test_send():
    client = Client("c")
    asyncio.run(client.send(" hi "))
    assert client.sent


def test_size():
    assert asyncio.run(Client("c", {"a": 1}).size()) == 1


def test_greet():
    async def go():
        session = Session("ann")
        return await session.greet("hello")

    assert "ann" in asyncio.run(go())


def test_title():
    async def go():
        return Session("ann").title()

    assert asyncio.run(go())


def test_total():
    assert asyncio.run(total([1, 2])) == 3


def test_countdown():
    async def go():
        return [n async for n in countdown(3)]

    assert asyncio.run(go())[0] == 3


def test_stamp():
    assert asyncio.run(stamp("x"))["label"] == "x"
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("shop"),
        {"shop/__init__.py": "", "shop/core.py": CORE, "tests/test_core.py": TESTS},
        {"shop/core.py": CORE_NEW},
        "lower-case keys, stripped messages, an empty total is None",
    )


def _written(repo: Any, data: dict[str, Any]) -> str:
    return str(repo.git("show", f"{data['branch']}:tests/test_nova_shop_core.py"))


@pytest.mark.slow
def test_a_changed_async_method_is_awaited_and_caught(shop: tuple[Any, dict[str, Any]]) -> None:
    repo, data = shop
    facts = caught(data, "await client.fetch(")
    assert facts, data["notes"]
    assert all("client = Client(" in f["call"] for f in facts), facts
    committed = _written(repo, data)
    # a plain sync test: the coroutine runs in asyncio.run, no pytest-asyncio
    assert "async def _scenario():" in committed and "asyncio.run(_scenario())" in committed
    assert "pytest.mark.asyncio" not in committed and "<coroutine" not in committed
    # the state an awaited method leaves is asserted on the instance it returns
    sent = caught(data, "await client.send(")
    assert sent and all("actual.sent == ['hi']" in f["head"] for f in sent), sent


@pytest.mark.slow
def test_an_async_function_and_an_async_generator_are_caught(
    shop: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = shop
    totals = caught(data, "await total(")
    assert any(f["call"] == "await total([])" and f["head"] == "None" for f in totals), totals
    counts = caught(data, "async for item in countdown(")
    assert any(f["head"] == "[3, 2, 1, 0]" for f in counts), counts
    assert all(f["parent"].startswith(("returned", "raised")) for f in counts), counts


@pytest.mark.slow
def test_an_instance_that_needs_a_running_loop_is_built_inside_it(
    shop: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = shop
    facts = caught(data, "await session.greet(")
    assert facts, data["notes"]
    assert all(f["call"].startswith("session = Session(") for f in facts), facts
    assert all(", " in f["parent"] and ", " not in f["head"] for f in facts), facts
    # a plain method of it: built and called inside a running loop too
    titles = caught(data, "session.title() (in a running loop)")
    assert any(f["head"] == "'ANN'" and f["parent"] == "returned 'Ann'" for f in titles), titles


@pytest.mark.slow
def test_a_refactored_coroutine_and_one_that_reads_the_clock_claim_nothing(
    shop: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = shop
    for call in ("size(", "stamp("):
        assert not caught(data, call), (call, data["kept"])
    # kept, they guard: the value that reads the clock only with the clock pinned
    kept = [f for case in data["kept"] for f in case["evidence"].get("calls") or []]
    stamps = [f for f in kept if "stamp(" in f["call"]]
    assert all(not f["changed"] and "_pinned_clock()" in f["call"] for f in stamps), stamps


# -- the side-runner alone (no project): the loop, the time limit, the clock ---------------


async def _double(x: int) -> int:
    await asyncio.sleep(0)
    return x * 2


async def _forever(x: int) -> int:
    await asyncio.sleep(3600)
    return x


async def _ticks(x: int) -> AsyncIterator[int]:
    n = 0
    while True:  # goes on: its first items are the outcome
        yield n * x
        n += 1


async def _waits(x: int) -> int:
    await asyncio.sleep(0.01)  # asyncio's timers read the clock: not the call's reads
    return x


async def _warns(x: int) -> int:
    await asyncio.sleep(0)
    warnings.warn("_warns() is old", DeprecationWarning, stacklevel=2)
    return x


def _returns_a_coroutine(x: int) -> object:
    return _double(x)


class _Bound:
    """Built inside a running loop only; its method is a plain one."""

    def __init__(self, x: int) -> None:
        self.loop = asyncio.get_running_loop()
        self.x = x

    def twice(self) -> int:
        return self.x * 2


class _Looped:
    """A class that makes an event loop of its own (asyncio reads its debug flag from
    the environment then: not the call's read)."""

    def __init__(self, x: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.x = x

    def close(self) -> int:
        self.loop.close()
        return self.x


class _Reads:
    def __init__(self) -> None:
        self.x = 1

    async def get(self) -> int:
        await asyncio.sleep(0)
        return self.x


@pytest.fixture
def alarm() -> Iterator[None]:
    before = signal.signal(signal.SIGALRM, probe._on_alarm)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, before)


def _outcome(func: Any, x: int, seconds: float = 1.0) -> dict[str, Any]:
    named = Named("function", None, func.__name__, func)
    return probe.call(named, probe._Case(None, [], ([x], {}), {}, "tests"), seconds)


def _loops_left() -> object:
    return asyncio.get_event_loop_policy()._local._loop  # type: ignore[attr-defined]


@pytest.mark.usefixtures("alarm")
def test_the_side_runner_awaits_in_a_fresh_loop_and_leaves_none() -> None:
    assert _outcome(_double, 4) == {
        "kind": "value",
        "value": "8",
        "imports": [],
        "ordered": True,
        "awaited": asyncs.AWAIT,
    }
    assert _outcome(_returns_a_coroutine, 4)["value"] == "8"  # awaited too
    ticks = _outcome(_ticks, 2)
    assert ticks["view"] == "islice" and ticks["awaited"] == asyncs.ITERATE
    assert ticks["value"] == str([2 * n for n in range(20)])
    assert _outcome(_waits, 3)["value"] == "3"  # not "depends": the loop's clock is its own
    # its warnings are recorded as a sync call's
    warned = Named("function", None, "_warns", _warns)
    case = probe._Case(None, [], ([3], {}), {}, "tests")
    assert probe.call(warned, case, 1.0)["value"] == "3"
    seen = probe._steady_warnings(warned, case, 1.0)
    assert seen["warned"] == [["DeprecationWarning", "_warns() is old", []]]
    named = Named("method", _Bound, "twice", _Bound.twice)
    built = probe.call(named, probe._Case(([5], {}), [], ([], {}), {}, "tests"), 1.0)
    assert built["value"] == "10" and built["awaited"] == asyncs.INSIDE
    looped = Named("method", _Looped, "close", _Looped.close)
    assert (
        probe.call(looped, probe._Case(([3], {}), [], ([], {}), {}, "tests"), 1.0)["value"] == "3"
    )
    # a receiver built without __init__ whose coroutine reads what was never set: no input
    bare = probe._Case(([], {}), [], ([], {}), {}, "tests", factory=BARE)
    named = Named("method", _Reads, "get", _Reads.get)
    assert probe.call(named, bare, 1.0)["kind"] == probe.NOT_RECEIVER
    assert _loops_left() is None


@pytest.mark.usefixtures("alarm")
def test_a_coroutine_past_its_time_is_cancelled_and_its_loop_closed() -> None:
    started = time.monotonic()
    assert _outcome(_forever, 1, 0.2) == {"kind": "timeout", "seconds": 0.2}
    assert time.monotonic() - started < 0.2 + asyncs.CLEANUP_SECONDS + 1
    assert _loops_left() is None
    assert _outcome(_double, 1)["value"] == "2"  # the next call has a loop of its own


def test_a_written_test_runs_the_call_in_asyncio_run() -> None:
    lines, call, outcome = asyncs.written(
        ["client = Client('c')"],
        "client.send(' hi ')",
        {"kind": "value", "value": "None", "state": {"view": "list"}, "awaited": asyncs.AWAIT},
        "client",
    )
    assert lines == [
        "async def _scenario():",
        "    client = Client('c')",
        "    return client, await client.send(' hi ')",
        "client, returned = asyncio.run(_scenario())",
    ]
    assert call == "returned" and outcome["state"] == {"view": "list"}
    lines, call, outcome = asyncs.written(
        [], "ticks(2)", {"kind": "value", "view": "islice", "awaited": asyncs.ITERATE}, ""
    )
    assert "        if len(items) == 20:" in lines and "view" not in outcome
    assert call == "asyncio.run(_scenario())"


LINGERING = """import asyncio
import threading
import time


def _retry_forever():
    while True:  # a connection's retry loop: it never ends
        time.sleep(0.05)


async def connect(host):
    asyncio.get_running_loop().run_in_executor(None, _retry_forever)
    return host.upper()


def start(name):
    threading.Thread(target=_retry_forever).start()  # not a daemon
    return "started " + name
"""


def test_threads_a_call_leaves_running_do_not_hold_the_side_runner(tmp_path: Path) -> None:
    """A coroutine that hands a never-ending job to the loop's default executor, and a
    function that starts a thread that never ends: the side-runner waited for both (the
    executor's shutdown, then the interpreter's join at exit) and hung past every timer
    (a real package's connection manager took a job past its budget). Its run ends once
    its output is written, with their values."""
    (tmp_path / "lingering.py").write_text(LINGERING)
    side_runner(tmp_path)
    inputs = [{"args": ["'db'"], "kwargs": {}, "imports": [], "ctor": None, "steps": []}]
    plan = {
        "call_seconds": 1,
        "modules": [
            {
                "module": "lingering",
                "functions": [
                    {"qualname": "connect", "inputs": inputs, "draw": 0},
                    {"qualname": "start", "inputs": inputs, "draw": 0},
                ],
            }
        ],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    try:  # a hung run is stopped here, and fails the test
        subprocess.run(
            [sys.executable, "nova_probe.py", "plan.json", "out.json"],
            cwd=tmp_path,
            check=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the side-runner did not end: {exc}")
    found = json.loads((tmp_path / "out.json").read_text())["modules"]["lingering"]["functions"]
    assert found["connect"]["results"][0]["outcome"]["value"] == "'DB'"
    assert found["start"]["results"][0]["outcome"]["value"] == "'started db'"


STUCK = """import threading

_never = threading.Event()


def stuck(x):
    try:
        _never.wait()
    finally:  # the call's timer has fired once: this wait is never interrupted
        _never.wait()
"""


@pytest.mark.slow
def test_a_run_whose_call_blocks_past_its_timer_is_ended_with_what_it_probed(
    tmp_path: Path,
) -> None:
    """A call that waits again in a ``finally`` after its timer's exception blocks where
    no timer reaches it (a real connection manager hung a run until Nova's 180 s limit
    killed it, half the jobs of one package): the run's watchdog ends it a grace period
    past the run's budget, with the modules probed before."""
    (tmp_path / "quick.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "stuck.py").write_text(
        STUCK + "\n\ndef triple(x):\n    return 3 * x\n\n\ndef half(x):\n    return x / 2\n"
    )
    side_runner(tmp_path)
    inputs = [{"args": ["2"], "kwargs": {}, "imports": [], "ctor": None, "steps": []}]
    plan = {
        "call_seconds": 1,
        "run_seconds": 1,
        "modules": [
            {
                "module": m,
                "functions": [{"qualname": q, "inputs": inputs, "draw": 0} for q in names],
            }
            for m, names in (("quick", ["double"]), ("stuck", ["triple", "stuck", "half"]))
        ],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    try:  # a run the watchdog does not end is stopped here, and fails the test
        subprocess.run(
            [sys.executable, "nova_probe.py", "plan.json", "out.json"],
            cwd=tmp_path,
            check=True,
            timeout=60 + probe.RUN_GRACE,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the side-runner did not end: {exc}")
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["stopped"] == 1 + probe.RUN_GRACE
    assert out["modules"]["quick"]["functions"]["double"]["results"][0]["outcome"]["value"] == "4"
    # the functions of the hung module answered before it are kept, the hung one is named
    assert out["hung"] == ["stuck", "stuck"]
    stuck = out["modules"]["stuck"]["functions"]
    assert stuck["triple"]["results"][0]["outcome"]["value"] == "6"
    assert set(stuck) == {"triple"}
