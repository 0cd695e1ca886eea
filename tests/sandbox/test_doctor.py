"""``nova doctor`` names the isolation generated tests get on this machine, and why."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.sandbox.test_sandbox import AVAILABLE


def _line(output: str) -> str:
    (line,) = [row for row in output.splitlines() if "test sandbox" in row]
    return line


@pytest.mark.parametrize("name", AVAILABLE)
def test_doctor_names_the_tier_and_what_it_holds(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_TEST_ISOLATION", name)
    line = _line(CliRunner().invoke(cli, ["doctor"], catch_exceptions=False).output)
    mark = "-" if name == "none" else "ok"
    assert re.match(rf"^\s*{mark}\s+test sandbox\s+{name}: \S", line), line
    assert ("PID" in line) == (name != "none")
    assert "dies with" in line


def test_doctor_without_a_setting_names_the_strongest_tier() -> None:
    line = _line(CliRunner().invoke(cli, ["doctor"], catch_exceptions=False).output)
    assert f"test sandbox  {AVAILABLE[0]}: " in line
