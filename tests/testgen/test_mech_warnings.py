"""Warnings are part of a call's outcome (issue 35, ``bot/testgen/warned.py``). Many
releases fix a deprecation: the changed call stops warning (or starts to) while its value
stays the same, or reads the environment and is never pinned. The side-runner records the
warnings of each call; where head and parent differ in them, a test asserts the warning
behaviour (``simplefilter("error", Category)``, or ``pytest.warns``) without pinning a value
that is not steady. A real sample project (a git repository in tmp, its own virtualenv, real
pytest) whose release stops one deprecation warning and starts another; a refactor that
keeps its warning, a warning of a module imported on the way and one a function gives once
per process claim nothing."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from bot.testgen import probe
from bot.testgen.probe_objects import Named
from bot.testgen.warned import prefix
from tests.testgen.sample import caught, sample_testgen

UA = '''import os
import warnings

_WARNED = []


def _legacy_system():
    warnings.warn(
        "legacy_system() is deprecated; use system() instead", DeprecationWarning, stacklevel=2
    )
    return "Linux"


def _system():
    return "Linux"


def user_agent(client):
    """The client's user agent: its name, the system and the user's shell."""
    system = _legacy_system()
    return f"{client} ({system}; {os.environ.get('SHELL', 'sh')})"


def parse_size(text):
    """Bytes in a size like '10kb' or '512'."""
    text = text.strip().lower()
    if text.endswith("kb"):
        return int(text[:-2]) * 1024
    return int(text)


def double(x):
    warnings.warn("double() is deprecated", DeprecationWarning, stacklevel=2)
    return x * 2


def convert(x):
    from agents import _compat

    return _compat.plus(x, 1)


def shout(text):
    return text.upper()
'''
# the release: user_agent stops using the deprecated helper (its value reads the
# environment); parse_size starts warning about units (same value); double and convert
# are rewritten (double still warns alike); shout warns once per process
UA_NEW = (
    UA.replace("    system = _legacy_system()\n", "    system = _system()\n")
    .replace(
        '    if text.endswith("kb"):\n',
        '    if text.endswith("kb"):\n        warnings.warn(\n'
        '            "a size with a unit is deprecated; give bytes", FutureWarning, stacklevel=2\n'
        "        )\n",
    )
    .replace("    return x * 2\n", "    return 2 * x\n")
    .replace("    return _compat.plus(x, 1)\n", "    return _compat.plus(a=x, b=1)\n")
    .replace(
        "    return text.upper()\n",
        "    if not _WARNED:\n        _WARNED.append(1)\n"
        '        warnings.warn("shout() will add a mark", FutureWarning, stacklevel=2)\n'
        "    return text.upper()\n",
    )
)
COMPAT = "def plus(a, b):\n    return a + b\n"
# a module the call imports on the way now warns when it is imported: not the call's
COMPAT_NEW = (
    'import warnings\n\nwarnings.warn("agents._compat is provisional", UserWarning)\n\n\n' + COMPAT
)
TESTS = """from agents.ua import convert, double, parse_size, shout, user_agent


def test_user_agent():
    assert user_agent("probe").startswith("probe (")


def test_parse_size():
    assert parse_size("10kb") == 10240
    assert parse_size("512") == 512


def test_double():
    assert double(2) == 4


def test_convert():
    assert convert(1) == 2


def test_shout():
    assert shout("hi") == "HI"
"""


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("agents"),
        {
            "agents/__init__.py": "",
            "agents/ua.py": UA,
            "agents/_compat.py": COMPAT,
            "tests/test_ua.py": TESTS,
        },
        {"agents/ua.py": UA_NEW, "agents/_compat.py": COMPAT_NEW},
        "user_agent uses system(); sizes with a unit are deprecated",
    )


@pytest.mark.slow
def test_a_call_that_stops_warning_is_caught_without_pinning_its_value(
    agents: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = agents
    facts = [f for f in caught(data, "user_agent(") if "no DeprecationWarning" in f["head"]]
    assert facts, data["notes"]
    assert all("legacy_system() is deprecated" in f["parent"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_agents_ua.py")
    assert "warnings.simplefilter('error', DeprecationWarning)" in committed, committed
    # the value reads the environment: never pinned
    assert "Linux;" not in committed, committed


@pytest.mark.slow
def test_a_call_that_starts_warning_is_caught_with_pytest_warns(
    agents: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = agents
    facts = [f for f in caught(data, "parse_size(") if "warns FutureWarning" in f["head"]]
    assert facts, data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_agents_ua.py")
    assert "with pytest.warns(FutureWarning, match='a size with a unit is deprecated" in committed


@pytest.mark.slow
def test_warnings_alike_of_an_import_or_once_a_process_claim_nothing(
    agents: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = agents
    for call in ("double(", "convert(", "shout("):
        assert not caught(data, call), (call, data["kept"])
    said = [n for n in data["notes"] if "warnings differ" in n]
    assert said and not [n for n in said if "::double" in n or "::convert" in n], said
    assert not [n for n in said if "::shout" in n], said


def noisy(x: int) -> int:
    warnings.warn(f"noisy() at 0x{id(x):x} in /tmp/where/{x}.py is old", UserWarning, stacklevel=2)
    return x


_ONCE: list[int] = []


def once(x: int) -> int:
    if not _ONCE:
        _ONCE.append(1)
        warnings.warn("once() is old", FutureWarning, stacklevel=2)
    return x


def _probed(func: Any) -> dict[str, Any]:
    named = Named("function", None, func.__name__, func)
    case = probe._Case(None, [], ([3], {}), {}, "tests")
    outcome = probe.call(named, case, 1.0)
    return {**outcome, **probe._steady_warnings(named, case, 1.0)}


def test_the_side_runner_records_steady_warnings_without_addresses_or_paths() -> None:
    seen = _probed(noisy)
    assert seen["warned"] == [["UserWarning", "noisy() at 0x... in <path> is old", []]]
    assert seen["warned_call"] == {"kind": "value", "imports": []}
    assert prefix(seen["warned"][0][1]) == "noisy() at "
    # given once a process: the second call does not repeat it, so it is not steady
    assert "warned" not in _probed(once)
    # the probe's filters are its own: the caller's are as they were
    with warnings.catch_warnings(record=True) as caught_here:
        warnings.simplefilter("always")
        noisy(1)
    assert len(caught_here) == 1
