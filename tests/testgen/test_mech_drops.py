"""Inputs that leave one part out (``amplify_drops``), end to end: the change handles a
key missing from the mapping a settings object reads (``if host is None``), and the
project's only test passes every key. No literal changed in place reaches the new branch
(the reader tests the key's presence, not its value); the differential's call with the
constructor's dict without the key the changed condition tests does. A function that reads
the environment the test sets is reached by a copy of the test with that variable unset.
A refactor that keeps the behaviour, whose inputs leave the same keys out, claims
nothing."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from bot.testgen.amplify_drops import drop_variants, left_out, read_keys
from bot.testgen.amplify_inputs import add_variants, steer_from_change
from bot.testgen.inputs import Candidate
from tests.testgen.sample import caught, sample_testgen
from tests.testgen.test_mech_amplify import amplified

SETTINGS = """
class Settings:
    def __init__(self, env):
        self.env = env

    def _read(self, name):
        if name in self.env:
            return str(self.env[name])
        return None

    def endpoint(self):
        host = self._read("APP_HOST")
        port = self._read("APP_PORT")
        return f"http://{host}:{port}/"
"""

# the fix: no endpoint when the host is not given (it was "http://None:...")
SETTINGS_FIXED = SETTINGS.replace(
    '        return f"http://{host}:{port}/"\n',
    '        if host is None:\n            return None\n        return f"http://{host}:{port}/"\n',
)

# a refactor: the same text, built in two steps
SETTINGS_SAME = SETTINGS.replace(
    '        return f"http://{host}:{port}/"\n',
    '        address = f"{host}:{port}"\n        return "http://" + address + "/"\n',
)

TESTS = """
from settings.core import Settings


def test_endpoint_joins_host_and_port():
    settings = Settings({"APP_PORT": "8080", "APP_HOST": "example.test", "APP_MODE": "dev"})
    assert settings.endpoint() == "http://example.test:8080/"
"""


def _project(tmp: Any, new: str, message: str) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp,
        {"settings/__init__.py": "", "settings/core.py": SETTINGS, "tests/test_core.py": TESTS},
        {"settings/core.py": new},
        message,
        exits=(0, 1, 4),
    )
    return data


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("fixed"), SETTINGS_FIXED, "no endpoint without host")


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _project(tmp_path_factory.mktemp("same"), SETTINGS_SAME, "endpoint in two steps")


def test_the_differentials_input_without_the_key_the_changed_condition_tests_catches_the_fix(
    fixed: dict[str, Any],
) -> None:
    facts = caught(fixed, "endpoint")
    assert facts, fixed["notes"]
    # the constructor's dict without the key the fix tests for; the parent built a url
    fact = facts[0]
    assert "APP_HOST" not in fact["call"] and "'APP_PORT': '8080'" in fact["call"], fact
    assert "http://None:8080/" in str(fact["parent"]), fact


ENDPOINT = """import os


def endpoint():
    host = os.environ.get("APP_HOST")
    port = int(os.environ["APP_PORT"])
    return f"http://{host}:{port}/"
"""

ENDPOINT_FIXED = ENDPOINT.replace(
    '    return f"http://{host}:{port}/"\n',
    '    if host is None:\n        return None\n    return f"http://{host}:{port}/"\n',
)

ENDPOINT_TESTS = """
from service.core import endpoint


def test_endpoint_reads_the_environment(monkeypatch):
    monkeypatch.setenv("APP_PORT", "8080")
    monkeypatch.setenv("APP_HOST", "example.test")
    assert endpoint() == "http://example.test:8080/"
"""


@pytest.fixture(scope="module")
def unset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("unset"),
        {
            "service/__init__.py": "",
            "service/core.py": ENDPOINT,
            "tests/test_core.py": ENDPOINT_TESTS,
        },
        {"service/core.py": ENDPOINT_FIXED},
        "no endpoint without a host",
    )
    return data


def test_a_copy_with_the_variable_the_changed_condition_tests_unset_catches_the_fix(
    unset: dict[str, Any],
) -> None:
    # the differential cannot set the environment: without APP_PORT the call raises on
    # both sides; the test's copy without APP_HOST (and with APP_PORT) reaches the fix
    facts = amplified(unset, "endpoint")
    assert facts, unset["notes"]
    origin = "tests/test_core.py::test_endpoint_reads_the_environment"
    told = [str(f["amplifies"]) for f in facts]
    assert any(t.startswith(origin) and "'APP_HOST' left out" in t for t in told), told
    fact = next(f for f in facts if "'APP_HOST' left out" in str(f["amplifies"]))
    assert "None" in str(fact["parent"]) and fact["head"] != fact["parent"]
    kept = [c for c in unset["kept"] if c["evidence"].get("catches_change")]
    assert kept and all("test_nova_vary_" not in c["path"] for c in kept)


def test_a_refactor_whose_copies_leave_the_same_keys_out_claims_nothing(
    same: dict[str, Any],
) -> None:
    claimed = [c for c in same["kept"] if c["evidence"].get("catches_change")]
    assert claimed == [], claimed


def _changed(old: str, new: str) -> set[int]:
    old_rows, new_rows = old.split("\n"), new.split("\n")
    return {n for n, row in enumerate(new_rows, 1) if row not in old_rows}


def test_the_key_the_changed_condition_tests_is_left_out_first() -> None:
    steer = steer_from_change(SETTINGS_FIXED, SETTINGS, _changed(SETTINGS, SETTINGS_FIXED))
    assert steer.drop_keys[0] == "APP_HOST"
    assert "APP_PORT" in steer.drop_keys
    text, made = add_variants(TESTS, "test_endpoint_joins_host_and_port", steer, 3)
    assert made[0].description.endswith("'APP_HOST' left out"), made
    copy = text[len(TESTS) :]
    first = copy.split("def ")[1]
    assert '"APP_HOST"' not in first and '"APP_PORT": "8080"' in first
    assert '"APP_MODE": "dev"}' in first  # the rest of the dict as written


ENVIRON = """import os


def timeout(default=30, strict=False):
    raw = os.environ.get("SVC_TIMEOUT")
    if raw is None:
        return None if strict else default
    return int(raw)
"""

ENV_TESTS = """
def test_timeout(monkeypatch):
    monkeypatch.setenv("SVC_TIMEOUT", "5")
    assert timeout(default=10, strict=True) == 5
"""


def test_an_environment_variable_is_unset_and_a_tested_keyword_left_to_its_default() -> None:
    lines = [n for n, row in enumerate(ENVIRON.split("\n"), 1) if "None" in row]
    keys, params, _aimed = read_keys(ENVIRON, None, lines, [])
    assert keys[0] == "SVC_TIMEOUT" and "strict" in params and "default" not in params
    func = ast.parse(ENV_TESTS).body[0]
    assert isinstance(func, ast.FunctionDef)
    put = [new for _where, new in drop_variants(ENV_TESTS, func, keys, params)]
    assert put[0] == 'monkeypatch.delenv("SVC_TIMEOUT", raising=False)'.replace('"', "'")
    assert "timeout(default=10)" in put


def test_the_differentials_input_leaves_out_the_read_key_of_a_dict_argument() -> None:
    lines = [n for n, row in enumerate(SETTINGS_FIXED.split("\n"), 1) if "None" in row]
    given = "{'APP_PORT': '8080', 'APP_HOST': 'example.test'}"
    built = Candidate(args=(), ctor=((given,), ()), steps=(), origin="tests")
    made = left_out([built], SETTINGS_FIXED, lines)
    assert made and made[0].ctor == (("{'APP_PORT': '8080'}",), ())
    assert all("(left out)" in c.origin for c in made)
    assert left_out([built], SETTINGS_FIXED, []) == []
