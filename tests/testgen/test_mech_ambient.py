"""A change that makes a result independent of a process-wide setting (issue 35): under
the default setting head and parent agree, so the differential's comparison saw nothing.
When the changed lines (removed or added) use a name that reads such a setting
(``calendar.monthcalendar``: the first day of the week; ``time.localtime``: the time
zone; a relative path: the working directory; ``Decimal``: the context's precision), the
side-runner calls each input again under that setting changed (``ambient.py``), on both
sides, and a changed function of one argument is also given the arguments the tests give
other functions; a difference seen only there becomes a test that applies the setting with its own
copy of the same helper and restores it. A real sample project (a git repository in tmp,
its own virtualenv, real pytest and coverage subprocesses) whose release stops reading
the first day of the week, the time zone and the working directory, and rewrites a
reader of the first day of the week without changing what it does (it claims nothing);
and the probe's calls under the settings."""

from __future__ import annotations

import calendar
import os
import time
from typing import Any

import pytest

from bot.testgen import ambient, probe, render
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

DAYS = '''import calendar
import datetime


def _nth_weekday(year, month, weekday, n):
    """The day of the month of the n-th given weekday."""
    weeks = calendar.monthcalendar(year, month)
    days = [week[weekday] for week in weeks if week[weekday]]
    return days[n - 1]


def is_coming_of_age_day(day):
    """The second Monday of January."""
    return day.month == 1 and day.day == _nth_weekday(day.year, 1, calendar.MONDAY, 2)


def weekday_name(day):
    return calendar.day_name[day.weekday()]
'''
DAYS_NEW = DAYS.replace(
    "calendar.monthcalendar(year, month)",
    "calendar.Calendar(firstweekday=calendar.MONDAY).monthdayscalendar(year, month)",
)
DAYS_TESTS = """import datetime

from dates.days import is_coming_of_age_day, weekday_name


def test_coming_of_age_day():
    assert not is_coming_of_age_day(datetime.date(2024, 2, 12))


def test_weekday_name():
    assert weekday_name(datetime.date(2024, 1, 8)) == "Monday"
"""

STAMP = '''import time


def day_of(seconds):
    """The calendar day of a Unix time."""
    return time.strftime("%Y-%m-%d", time.localtime(seconds))
'''
STAMP_NEW = STAMP.replace("time.localtime(seconds)", "time.gmtime(seconds)").replace(
    "calendar day", "calendar day (UTC)"
)
STAMP_TESTS = """from dates.stamp import day_of


def test_day_of():
    assert day_of(86399) == "1970-01-01"
"""

NAMES = '''import os


def holiday_names(kind):
    """The names listed in the package's data file of that kind (none without one)."""
    path = os.path.join("dates", "data", kind + ".txt")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return handle.read().split()
'''
NAMES_NEW = NAMES.replace(
    'os.path.join("dates", "data", kind + ".txt")',
    'os.path.join(os.path.dirname(__file__), "data", kind + ".txt")',
)
NAMES_TESTS = """from dates.names import holiday_names


def test_names():
    assert holiday_names("spring") == ["Equinox"]
"""

WEEKS = '''import calendar


def weeks_in(year, month):
    """How many rows the month's calendar has."""
    return len(calendar.monthcalendar(year, month))
'''
WEEKS_NEW = WEEKS.replace(
    "calendar.monthcalendar(year, month)", "calendar.monthcalendar(year=year, month=month)"
)
WEEKS_TESTS = """from dates.weeks import weeks_in


def test_weeks_in():
    assert weeks_in(2024, 9) == 6
"""


@pytest.fixture(scope="module")
def dates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {
        "dates/__init__.py": "",
        "dates/days.py": DAYS,
        "tests/test_days.py": DAYS_TESTS,
        "dates/stamp.py": STAMP,
        "tests/test_stamp.py": STAMP_TESTS,
        "dates/names.py": NAMES,
        "dates/data/spring.txt": "Equinox\n",
        "tests/test_names.py": NAMES_TESTS,
        "dates/weeks.py": WEEKS,
        "tests/test_weeks.py": WEEKS_TESTS,
    }
    return sample_testgen(
        tmp_path_factory.mktemp("dates"),
        base,
        {
            "dates/days.py": DAYS_NEW,
            "dates/stamp.py": STAMP_NEW,
            "dates/names.py": NAMES_NEW,
            "dates/weeks.py": WEEKS_NEW,
        },
        "weeks from Monday, days in UTC, data beside the package",
    )


@pytest.mark.slow
def test_a_change_seen_only_under_a_setting_is_caught_with_it_applied(
    dates: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = dates
    notes = [n for n in data["notes"] if "process-wide setting" in n]
    assert notes and "weeks starting on Sunday" in notes[0], data["notes"]
    for call, helper in (
        ("is_coming_of_age_day(", "_weeks_from_sunday"),
        ("day_of(", "_far_time_zone"),
        ("holiday_names(", "_in_empty_folder"),
    ):
        facts = caught(data, call)
        assert facts, (call, data["notes"])
        assert all(f["changed"] and f["call"].startswith(f"with {helper}()") for f in facts)
    # its own test gives it a day in February: the day another function's test gives
    # (``weekday_name(datetime.date(2024, 1, 8))``) reaches the line that reads the setting
    facts = caught(data, "is_coming_of_age_day(")
    assert any("datetime.date(2024, 1, 8)" in f["call"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_dates_days.py")
    assert "def _weeks_from_sunday():" in committed, committed
    assert "with _weeks_from_sunday():" in committed


@pytest.mark.slow
def test_a_rewrite_that_keeps_the_behaviour_under_the_setting_claims_nothing(
    dates: tuple[Any, dict[str, Any]],
) -> None:
    _, data = dates
    assert not caught(data, "weeks_in("), data["kept"]
    notes = [n for n in data["notes"] if "dates/weeks.py::weeks_in" in n]
    assert notes and "only under" not in notes[0], data["notes"]


def test_the_settings_the_changed_lines_read() -> None:
    assert ambient.relevant([(DAYS, DAYS_NEW)]) == ["firstweekday"]
    assert ambient.relevant([(STAMP, STAMP_NEW), (NAMES, NAMES_NEW)]) == ["tz", "cwd"]
    # only the changed lines count, and not a comment
    assert ambient.relevant([(STAMP, STAMP.replace("seconds)\n", "seconds)  # localtime\n"))]) == []
    assert ambient.relevant([(None, "from decimal import Decimal\n")]) == ["decimal"]


def second_monday(year: int, month: int) -> int:
    return [w[0] for w in calendar.monthcalendar(year, month) if w[0]][1]


def local_hour(seconds: float) -> int:
    return time.localtime(seconds).tm_hour


def where() -> str:
    return os.getcwd()


def listed() -> list[str]:
    return sorted(os.listdir("."))


def _rows(func: Any, *args: object) -> list[dict[str, Any]]:
    named = Named("function", None, func.__name__, func)
    case = probe._Case(None, [], (list(args), {}), {}, "tests")
    return probe._under_settings(named, case, 1.0, {"args": [], "origin": "tests"})


def test_each_input_is_called_again_under_the_relevant_settings() -> None:
    before = (calendar.firstweekday(), os.environ.get("TZ"), os.getcwd())
    probe.AMBIENT[:] = list(ambient.SETTINGS)
    try:
        rows = {r["ambient"]: r["outcome"] for r in _rows(second_monday, 2024, 9)}
        # Sunday first, the first column holds the Sundays: 1 and 8 September 2024
        assert rows["firstweekday"]["value"] == "8"
        assert rows["tz"]["value"] == rows["cwd"]["value"] == "9"
        assert {r["ambient"]: r["outcome"]["value"] for r in _rows(local_hour, 0)}["tz"] == "14"
        # a value that holds the (new) working directory is another in every run (each
        # call gets a new folder): the comparison of a side's two runs drops it
        first, second = ({r["ambient"]: r["outcome"] for r in _rows(where)} for _ in "12")
        assert first["cwd"] != second["cwd"]
        assert "tz" not in first  # under another setting it reads the machine: not kept
        assert {r["ambient"]: r["outcome"]["value"] for r in _rows(listed)}["cwd"] == "[]"
    finally:
        probe.AMBIENT[:] = []
    assert (calendar.firstweekday(), os.environ.get("TZ"), os.getcwd()) == before


def test_the_written_test_holds_the_same_helper() -> None:
    source = render.helper_source(ambient.SETTINGS["tz"].apply, "_far_time_zone")
    scope: dict[str, Any] = {}
    exec("import contextlib\n" + source, scope)
    with scope["_far_time_zone"]():
        assert time.localtime(0).tm_hour == 14
    assert "->" not in source and ": Iterator" not in source


def test_the_tests_arguments_to_other_functions_are_taken_file_by_file() -> None:
    tests = {
        "tests/test_a.py": "import datetime\nfrom p import f, g\n\n\ndef test_a():\n"
        "    assert f(datetime.date(2024, 1, 1))\n    assert f(datetime.date(2024, 1, 2))\n"
        "    assert g(x)\n",
        "tests/test_b.py": "import datetime\nfrom p import h\n\n\ndef test_b():\n"
        "    assert h(datetime.date(2025, 1, 13)) == h(Other(1))\n",
    }
    found = ambient.sibling_arguments(tests)
    # the first of each file, then the second; a name no import binds is not taken
    assert [a for a, _ in found] == [
        "datetime.date(2024, 1, 1)",
        "datetime.date(2025, 1, 13)",
        "datetime.date(2024, 1, 2)",
    ]
    assert found[0][1] == ("import datetime",)
