"""Test amplification of an ``async`` test: the awaited method's value is observed where
the coroutine ends (not at each of its awaits), and the written test awaits it too."""

from __future__ import annotations

from typing import Any

import pytest

from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

BELL = """
import asyncio
import os


class Bell:
    def __init__(self, sound):
        self.sound = sound

    async def ring(self, times):
        if os.getpid() < 0:  # the differential's calls read the machine: it pins none
            return []  # of them (they are awaited), and amplification's turn comes
        out = []
        for _ in range(times):
            await asyncio.sleep(0)
            out.append(self.sound)
        return out
"""

# the change: a ring of more than one ends with a closing sound
BELL_NEW = BELL.replace(
    "        return out\n", '        return out + ["dong"] if times > 1 else out\n'
)

TESTS = """
import pytest

from bell.core import Bell


@pytest.mark.asyncio
async def test_ring(monkeypatch):
    monkeypatch.setenv("BELL_QUIET", "0")
    bell = Bell("ding")
    got = await bell.ring(2)
    assert "ding" in got
"""


@pytest.fixture(scope="module")
def bell(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("bell"),
        {"bell/__init__.py": "", "bell/core.py": BELL, "tests/test_core.py": TESTS},
        {"bell/core.py": BELL_NEW},
        "a ring ends with a closing sound",
    )
    return data


def test_an_awaited_method_of_an_async_test_is_observed_at_its_end(bell: dict[str, Any]) -> None:
    facts = amplified(bell, "await bell.ring(2)")
    assert facts, bell["notes"]
    fact = facts[0]
    assert fact["amplifies"] == "tests/test_core.py::test_ring"
    # its value where it returned, not None from a suspension at an await
    assert "'dong'" in str(fact["head"]) and "'dong'" not in str(fact["parent"])
    assert "'ding', 'ding'" in str(fact["parent"])
