"""The testgen proposal's body: what each kept test pins (the call, before and after), the
dropped tests and why, in tables that untrusted names cannot break."""

from __future__ import annotations

import os
from pathlib import Path

from bot.change import Change
from bot.report.testgen import render_testgen_body
from bot.testgen import gates, report
from bot.testgen.matrix import Target

case, outcome = gates.TestCase, report.TestgenResult  # Test* names pytest would collect

GOLDEN = Path(__file__).parents[1] / "data" / "report" / "testgen-body.md"
UPDATE = os.environ.get("NOVA_UPDATE_GOLDEN") == "1"  # read before conftest clears NOVA_*


def result() -> report.TestgenResult:
    kept = [
        case(
            "tests/test_nova_calc.py",
            "test_ceil_div_changed",
            ["calc.ceil_div"],
            {
                "runs": 5,
                "changed_lines_covered": 2,
                "catches_change": True,
                "calls": [
                    {"call": "ceil_div(7, 2)", "head": 4, "parent": 3, "changed": True},
                    {"call": "ceil_div(8, 2)", "head": 4, "parent": 4, "changed": False},
                ],
            },
        ),
        case(
            "tests/test_nova_calc.py",
            "test_parse_ratio",
            ["calc.parse_ratio"],
            {"runs": 5, "changed_lines_covered": 1, "mutant_killed": "calc.py:9 '<' -> '<='"},
        ),
        case(
            "tests/test_nova_calc.py",
            "test_new_helper",
            ["calc.helper"],
            {"runs": 3, "changed_lines_covered": 1, "new_name": True},
        ),
    ]
    dropped = [
        case("tests/test_nova_calc.py", "test_flaky", reason="failed 1 of 5 runs (flaky)"),
        case("tests/test_nova_calc.py", "test_x|y", reason="runs no changed line\n| injected |"),
    ]
    matrix = [Target("calc.py", "ceil_div", "modified", [3, 4], ["tests/test_calc.py"], [4])]
    return outcome(
        Change("acme/calc#3", "github", "Round up"),
        matrix=matrix,
        kept=kept,
        dropped=dropped,
        suite_passed=True,
        coverage_before=1,
        coverage_after=2,
        notes=["ghostwriter wrote tests/test_nova_calc.py"],
    )


def test_golden() -> None:
    body = render_testgen_body(result())
    if UPDATE:
        GOLDEN.write_text(body, encoding="utf-8")
    assert body == GOLDEN.read_text(encoding="utf-8")


def test_each_pinned_call_is_a_row_with_before_and_after() -> None:
    lines = render_testgen_body(result()).splitlines()
    pins = lines[lines.index("**What each kept test pins**") + 2 :]
    assert pins[0] == "| test | call | before (parent) | after (this change) | evidence |"
    assert pins[2].startswith(
        "| `tests/test_nova_calc.py::test_ceil_div_changed` | `ceil_div(7, 2)` | `3` | `4` | "
        "passed 5x · covers 2 changed lines · fails on the parent commit |"
    )
    assert pins[3] == "| 〃 | `ceil_div(8, 2)` | same | `4` |  |"
    assert "kills mutant `calc.py:9 '<' -> '<='`" in pins[4]
    assert "tests a name new in this change" in pins[5]


def test_untrusted_names_stay_in_their_cells() -> None:
    body = render_testgen_body(result())
    for row in body.splitlines():
        if row.startswith("| "):
            header = next(r for r in body.splitlines() if r.startswith("| ") and r.count("|"))
            assert row.count("|") in {header.count("|"), 3}, row  # 5 columns, or 2 (dropped)
    assert "| `tests/test_nova_calc.py::test_x/y` | runs no changed line / injected / |" in body


def test_nothing_kept_says_so() -> None:
    empty = outcome(Change("D1", "phabricator"))
    assert "None was kept." in render_testgen_body(empty)
    assert len(render_testgen_body(result(), limit=300)) <= 300
