"""A call that reads the clock is pinned when what it shows does not depend on the time
(issue 35): the side-runner calls it again with the clock moved three days, half a year
and 30 years ahead (``probe_steady``), and keeps the outcome only when it stays the same and every
read of the clock went through the moved stand-ins. A real sample project (a git
repository in tmp, its own virtualenv, real pytest and coverage subprocesses) whose
release changes a function that checks a token's expiry on the way; and the probe's
calls on functions whose value does depend on the time."""

from __future__ import annotations

import datetime
import importlib
import os
import re
import sys
import time
from datetime import datetime as imported
from pathlib import Path
from typing import Any

import pytest

from bot.testgen import probe, probe_steady
from bot.testgen.inputs import Candidate
from bot.testgen.nearby import containment_names, nearby_strings
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

SCOPES = '''import time
from datetime import datetime, timezone


def scopes(claims):
    """The scopes a token grants, once its expiry is checked."""
    if "exp" in claims and claims["exp"] < time.time():
        raise PermissionError("the token has expired")
    if "nbf" in claims and datetime.now(tz=timezone.utc).timestamp() < claims["nbf"]:
        raise PermissionError("the token is not valid yet")
    return claims.get("scope", "").split(" ")
'''
SCOPES_NEW = SCOPES.replace(
    '    return claims.get("scope", "").split(" ")',
    '    return [s for s in claims.get("scope", "").split(" ") if s]',
)
SCOPES_TESTS = """import time

from tokens.scopes import scopes


def test_scopes():
    assert "read" in scopes({"scope": "read  write", "exp": 4102444800})


def test_fresh():
    assert scopes({"scope": "admin", "exp": time.time() + 3600}) == ["admin"]


def test_no_scope():
    assert isinstance(scopes({"sub": "ann"}), list)
"""


ORIGINS = '''def allowed(origin, origins):
    """Whether a request's origin is one the site allows (one, or a list of them)."""
    return origin in origins
'''
ORIGINS_NEW = ORIGINS.replace(
    "    return origin in origins",
    "    if isinstance(origins, str):\n"
    "        return origin == origins\n"
    "    return origin in origins",
)
ORIGINS_TESTS = """from tokens.origins import allowed


def test_allowed():
    assert allowed("https://a.example", "https://a.example")
    assert not allowed("https://b.example", ["https://a.example"])
"""


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {
        "tokens/__init__.py": "",
        "tokens/scopes.py": SCOPES,
        "tests/test_scopes.py": SCOPES_TESTS,
        "tokens/origins.py": ORIGINS,
        "tests/test_origins.py": ORIGINS_TESTS,
    }
    return sample_testgen(
        tmp_path_factory.mktemp("tokens"),
        base,
        {"tokens/scopes.py": SCOPES_NEW, "tokens/origins.py": ORIGINS_NEW},
        "empty scopes are not scopes; one origin is matched whole",
    )


@pytest.mark.slow
def test_a_call_that_only_checks_an_expiry_is_pinned(tokens: tuple[Any, dict[str, Any]]) -> None:
    repo, data = tokens
    (note,) = [n for n in data["notes"] if n.startswith("differential: tokens/scopes.py::scopes")]
    assert "read the clock but came out the same with it moved ahead" in note, note
    facts = caught(data, "scopes(")
    assert facts, data["notes"]
    assert all(f["changed"] and not f["new_name"] for f in facts)
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_tokens_scopes.py")
    # the token that expires within the hour is not pinned: it depends on the time
    now = time.time()
    stamps = [float(n) for n in re.findall(r"\b\d{10}(?:\.\d+)?\b", committed)]
    assert not [s for s in stamps if now - 86400 < s < now + 86400 * 2], committed
    # the token that expires within the hour is compared with the clock pinned only (and
    # so is its copy without "scope", the key the changed line reads: amplify_drops)
    pinned = re.search(r"(\d+) steady with the clock pinned", note)
    assert pinned and 1 <= int(pinned.group(1)) <= 2, note


def expiry_checked(claims: dict[str, float]) -> list[str]:
    """Reads the clock; what it returns does not depend on it."""
    if "exp" in claims and claims["exp"] < time.time():
        raise PermissionError("expired")
    return sorted(claims)


def days_left(until: datetime.date) -> int:
    """A value computed from today."""
    return (until - datetime.date.today()).days


def expired(claims: dict[str, float], now: Any = time.time) -> bool:
    """The clock bound before any stand-in could be: moving it cannot be seen."""
    return "exp" in claims and claims["exp"] < now()


def where_stamped(name: str) -> str:
    """The clock and the machine."""
    datetime.datetime.now()
    return name if os.getcwd() else ""


def _call(func: Any, *args: object) -> dict[str, Any]:
    named = Named("function", None, func.__name__, func)
    return probe.call(named, probe._Case(None, [], (list(args), {}), {}, "tests"), 1.0)


def test_an_outcome_the_same_with_the_clock_moved_is_kept() -> None:
    far = {"exp": 4102444800.0}  # 2100: past every move of the clock
    outcome = _call(expiry_checked, far)
    assert outcome == {
        "kind": "value",
        "value": "['exp']",
        "imports": [],
        "ordered": True,
        "clock": "the same with the clock (time.time) moved ahead",
    }
    soon = {"exp": time.time() + 3600}  # expires within the first move
    # kept only as it comes out with the clock pinned (test_mech_clock_pinned.py)
    pinned = "the same twice with the clock (time.time) pinned"
    assert _call(expiry_checked, soon)["pinned"] == pinned


def test_a_value_computed_from_today_depends_on_it() -> None:
    outcome = _call(days_left, datetime.date(2100, 1, 1))
    assert "clock" not in outcome  # kept only with the clock pinned: never as it is now
    assert outcome["pinned"] == "the same twice with the clock (date.today) pinned"


def weekend() -> bool:
    return datetime.date.today().weekday() >= 5


def morning() -> bool:
    return datetime.datetime.now().hour < 12


def test_a_day_of_the_week_and_an_hour_of_the_day_are_not_pinned() -> None:
    # whatever day and hour the test runs at, one move reaches the other side
    assert "clock" not in _call(weekend) and "pinned" in _call(weekend)
    assert "clock" not in _call(morning) and "pinned" in _call(morning)


def test_from_any_hour_of_the_week_one_move_crosses_a_weekend_and_noon() -> None:
    # the moves themselves, from every hour of a whole week (not only the hour the test
    # runs at): the 30-year move reached a Monday from a Friday after 07:00
    start = datetime.datetime(2026, 11, 23)  # a Monday
    for hour in range(7 * 24):
        now = start + datetime.timedelta(hours=hour)
        later = [now + shift for shift in probe_steady.SHIFTS]
        weekend = now.weekday() >= 5
        assert any((t.weekday() >= 5) != weekend for t in later), now
        assert any((t.hour < 12) != (now.hour < 12) for t in later), now
        assert any(t.month != now.month for t in later), now


def test_a_clock_that_cannot_be_moved_is_not_trusted() -> None:
    # the same at every move (it never saw one): the read was not through a stand-in
    outcome = _call(expired, {"exp": 4102444800.0})
    assert outcome == {"kind": "depends", "on": "the clock (time.time)"}


def test_a_call_that_also_reads_the_machine_depends_on_it() -> None:
    outcome = _call(where_stamped, "ann")
    assert outcome == {"kind": "depends", "on": "the clock (datetime.now)"}


def colour_wanted(text: str) -> str:
    """A value that depends on the environment the test later runs in."""
    return f"[{text}]" if "NO_COLOUR" not in os.environ else text


def home_of(name: str) -> str:
    return os.getenv("HOME", "/") + "/" + name


def test_a_call_that_reads_the_environment_depends_on_it() -> None:
    # os is a frozen module on 3.11 ('<frozen os>'): its reads are seen all the same
    assert _call(colour_wanted, "a") == {"kind": "depends", "on": "the environment (os.environ)"}
    assert _call(home_of, "a") == {"kind": "depends", "on": "the environment (os.environ)"}


def test_the_stand_ins_move_the_clock_and_are_taken_back() -> None:
    before = time.time()
    with probe_steady.moved() as shift:
        shift[0] = datetime.timedelta(days=400)
        assert imported.__name__ == "datetime" and imported is datetime.datetime
        ahead = imported.now().timestamp() - before
        assert 400 * 86400 <= ahead < 401 * 86400
        assert 400 * 86400 <= time.time() - before < 401 * 86400
        assert (datetime.date.today() - datetime.date.fromtimestamp(before)).days in (400, 401)
        made = imported(2020, 1, 2)
        assert type(made) is probe_steady._REAL["datetime"]
        assert isinstance(made, imported) and isinstance(made, datetime.date)
        assert str(imported.fromtimestamp(0, datetime.UTC)).startswith("1970-01-01")
    assert time.time() - before < 3600
    assert imported.now().timestamp() - before < 3600
    assert datetime.datetime is probe_steady._REAL["datetime"]
    assert time.time is probe_steady._REAL["time"]


KEYS = '''def key(sender):
    """The key a sender's receivers are filed under."""
    return id(sender)


class Registry:
    def __init__(self):
        self.filed = {}

    def file(self, sender, receiver):
        self.filed.setdefault(key(sender), []).append(receiver)
        return len(self.filed[key(sender)])
'''
KEYS_NEW = KEYS.replace(
    "    return id(sender)",
    "    if isinstance(sender, (str, int)):\n        return sender\n    return id(sender)",
)
KEYS_TESTS = """from signals.keys import Registry, key


def test_key():
    assert key("user") == key("user")


def test_file():
    assert Registry().file("user", print) == 1
"""


@pytest.fixture(scope="module")
def signals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {"signals/__init__.py": "", "signals/keys.py": KEYS, "tests/test_keys.py": KEYS_TESTS}
    return sample_testgen(
        tmp_path_factory.mktemp("signals"),
        base,
        {"signals/keys.py": KEYS_NEW},
        "equal string senders share their receivers",
    )


@pytest.mark.slow
def test_a_value_that_was_an_id_is_compared_by_what_it_was_the_id_of(
    signals: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = signals
    (note,) = [n for n in data["notes"] if n.startswith("differential: signals/keys.py::key:")]
    assert "where the parent differs" in note and " 0 where the parent differs" not in note, note
    facts = caught(data, "key(")
    assert facts, data["notes"]
    assert all(f["parent"] == "returned id(argument 1), another number in every run" for f in facts)
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_signals_keys.py")
    code = [line.split("#")[0] for line in committed.split('"""', 2)[2].splitlines()]
    assert "('user', 'user')" in committed and not [c for c in code if "id(" in c], committed


class Sender:
    def hello(self) -> None:
        """A bound method: keyed by its instance and its function."""


def filed_under(obj: object) -> object:
    method = getattr(obj, "__func__", None)
    return (id(obj.__self__), id(method)) if method else id(obj)  # type: ignore[attr-defined]


def test_an_id_of_an_argument_is_named_not_pinned() -> None:
    assert _call(filed_under, "user") == {
        "kind": "identity",
        "value": "id(argument 1)",
        "on": "object ids",
    }
    outcome = _call(filed_under, Sender().hello)
    assert outcome["value"] == "(id(argument 1.__self__), id(argument 1.__func__))"
    assert _call(filed_under, 7)["kind"] == "identity"
    assert _call(len, "user") == {"kind": "value", "value": "4", "imports": [], "ordered": True}


def test_a_module_imported_while_the_clock_is_moved_gets_the_real_clock_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nova_lazy_clock.py").write_text("from datetime import date\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with probe_steady.moved():
        lazy = importlib.import_module("nova_lazy_clock")
        assert lazy.date is not probe_steady._REAL["date"]  # it took the stand-in
    assert lazy.date is probe_steady._REAL["date"]
    monkeypatch.delitem(sys.modules, "nova_lazy_clock")


def kept_stand_in() -> str:
    """A stand-in kept past ``moved()``: its reads are of the real clock."""
    stand_in: Any = probe_steady._STAND_INS["datetime"]
    return str(stand_in.now().isoformat())


def test_a_stand_in_read_outside_a_moved_clock_is_the_real_clock() -> None:
    assert _call(kept_stand_in) == {"kind": "depends", "on": "the clock (datetime.now)"}


@pytest.mark.slow
def test_a_change_to_containment_is_tried_on_strings_next_to_the_tests(
    tokens: tuple[Any, dict[str, Any]],
) -> None:
    """``origin in origins`` became ``==`` for one origin: the tests' strings are equal or
    unrelated; one character shorter or longer, one contains the other."""
    _, data = tokens
    facts = caught(data, "allowed(")
    assert facts, data["notes"]
    nearby = ("'https://a.exampl'", "'https://a.examplee'")
    assert [f for f in facts if any(n in f["call"] for n in nearby)], facts
    assert all(f["changed"] and f["parent"] == "returned True" for f in facts), facts


def test_containment_is_read_from_the_changed_lines_only() -> None:
    source = "def f(a, b):\n    for x in b:\n        pass\n\n\n    return a.startswith(b)\n"
    assert containment_names(source, [2]) == set()  # a for's in iterates
    assert "b" in containment_names(source, [6]) and "b" in containment_names(source, [4])
    keyed = Candidate(("'some long token'",), (("b", "'urn:foo'"),))
    made = nearby_strings([keyed], source, [6])
    assert made[:2] == [  # the changed lines' own names first
        Candidate(("'some long token'",), (("b", "'urn:fooo'"),)),
        Candidate(("'some long token'",), (("b", "'urn:fo'"),)),
    ]
    assert nearby_strings([keyed], source, [2]) == []
