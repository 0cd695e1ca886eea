"""A changed function that reads an environment variable on the way (issue 35): a client's
base URL, a timeout, a debug switch read with ``os.environ.get``. Its value may be
another on another machine, so the differential dropped every such input as
non-deterministic and nothing of the change was compared. An input whose call read the
environment (and nothing else of the machine) is now called again with no variable set
(``ambient.ENVIRON``), on both sides; a difference seen there becomes a test that clears
the environment with its own copy of the helper and restores it after. A real sample
project (a git repository in tmp, its own virtualenv, real pytest and coverage
subprocesses) whose release fixes a double slash in a URL built from a variable's
default, and rewrites another reader without changing what it does (it claims nothing);
and the helper itself."""

from __future__ import annotations

import os
from typing import Any

import pytest

from bot.testgen import ambient
from tests.testgen.sample import caught, sample_testgen

CLIENT = '''import os


def build_url(path):
    """The API's URL of a path (the base from API_BASE, else the public one)."""
    base = os.environ.get("API_BASE", "https://api.example.com")
    return base + "/" + path


def timeout():
    """Seconds to wait for an answer (API_TIMEOUT, else 10)."""
    return float(os.getenv("API_TIMEOUT", "10"))
'''
CLIENT_NEW = CLIENT.replace(
    'base + "/" + path', 'base.rstrip("/") + "/" + path.lstrip("/")'
).replace('float(os.getenv("API_TIMEOUT", "10"))', 'float(os.environ.get("API_TIMEOUT") or "10")')
CLIENT_TESTS = """from client.api import build_url, timeout


def test_build_url():
    assert build_url("users").endswith("/users")


def test_build_url_nested():
    assert build_url("/users/1").endswith("/users/1")


def test_timeout():
    assert timeout() > 0
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {
        "client/__init__.py": "",
        "client/api.py": CLIENT,
        "tests/test_api.py": CLIENT_TESTS,
    }
    return sample_testgen(
        tmp_path_factory.mktemp("client"),
        base,
        {"client/api.py": CLIENT_NEW},
        "no double slash in a URL; the timeout read another way",
    )


@pytest.mark.slow
def test_a_change_in_a_function_that_reads_the_environment_is_caught_with_none_set(
    client: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = client
    facts = caught(data, "build_url(")
    assert facts, data["notes"]
    assert all(f["call"].startswith("with _empty_environment()") for f in facts), facts
    assert any("'/users/1'" in f["call"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_client_api.py")
    assert "def _empty_environment():" in committed, committed
    assert "with _empty_environment():" in committed


@pytest.mark.slow
def test_a_rewrite_of_a_reader_that_keeps_the_behaviour_claims_nothing(
    client: tuple[Any, dict[str, Any]],
) -> None:
    _, data = client
    assert not caught(data, "timeout("), data["kept"]
    notes = [n for n in data["notes"] if "client/api.py::timeout" in n]
    assert notes and "only under" not in notes[0], data["notes"]


def test_the_environment_is_empty_within_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NOVA_SAMPLE_VARIABLE", "1")
    before = dict(os.environ)
    with pytest.raises(KeyError):  # restored even when the body fails
        with ambient.SETTINGS[ambient.ENVIRON].apply():
            assert dict(os.environ) == {}
            os.environ["SET_WITHIN"] = "x"
            raise KeyError("NOVA_SAMPLE_VARIABLE")
    assert dict(os.environ) == before


def test_a_changed_line_that_names_the_environment_makes_it_relevant() -> None:
    assert ambient.relevant([(CLIENT, CLIENT_NEW)]) == [ambient.ENVIRON]
    only_url = CLIENT.replace('base + "/" + path', 'base + "/" + path.lstrip("/")')
    assert ambient.relevant([(CLIENT, only_url)]) == []
