"""Input variants inside a string, end to end: the project's only test of the changed
code feeds it a JSON body kept in its class (``body = '{..., "expires_in": 3600}'``)
through a helper of the test module (nothing the differential generator replays), and
the body's number is an int where the change now handles floats. A copy of that test
with the body's ``3600`` made ``3600.5`` (the kind the changed ``isinstance`` tests), the
rest of the body kept, reaches the change; the kept test is that copy, cut after the
differing call, and it catches the change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

CLIENT = """
import json


class Client:
    def __init__(self):
        self.token = None

    def receive(self, body):
        data = json.loads(body)
        expires = data.get("expires_in")
        if isinstance(expires, int):
            data["expires_in"] = expires
        elif expires is not None:
            raise ValueError("expires_in must be a number")
        self.token = data
"""

# the change: a float lifetime is accepted, made a whole number of seconds
CLIENT_NEW = CLIENT.replace(
    '        if isinstance(expires, int):\n            data["expires_in"] = expires\n',
    "        if isinstance(expires, (int, float)):\n"
    '            data["expires_in"] = int(expires)\n',
)

TESTS = """
from tokens.client import Client


def received(body):
    client = Client()
    client.receive(body)
    return client


class TestClient:
    body = '{"access_token": "abc", "token_type": "Bearer", "expires_in": 3600}'

    def test_receive(self):
        client = received(self.body)
        assert client.token["token_type"] == "Bearer"
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    assert CLIENT_NEW != CLIENT
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("client"),
        {"tokens/__init__.py": "", "tokens/client.py": CLIENT, "tests/test_client.py": TESTS},
        {"tokens/client.py": CLIENT_NEW},
        "a float expires_in is accepted",
    )
    return data


def test_a_copy_with_the_bodys_number_made_a_float_catches_the_change(
    client: dict[str, Any],
) -> None:
    facts = amplified(client, "received")
    assert facts, client["notes"]
    fact = facts[0]
    origin = "tests/test_client.py::TestClient::test_receive"
    assert str(fact["amplifies"]).startswith(origin), fact
    # one piece of the body changed, the rest kept
    assert "self.body" in str(fact["amplifies"]), fact
    assert '"expires_in": 3600.5}' in fact["call"], fact
    assert '"token_type": "Bearer"' in fact["call"], fact
    assert "ValueError" in str(fact["parent"]) and fact["head"] != fact["parent"]
    # the kept test is the copy, beside the project's test, claimed as catching
    kept = [c for c in client["kept"] if c["evidence"].get("catches_change")]
    assert any("test_nova_amp_" in c["path"] and "__v" in c["name"] for c in kept), kept
