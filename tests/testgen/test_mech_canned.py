"""What the server answers is an input (issue 35, ``bot/testgen/wire.py``'s ``answered``,
``bot/testgen/wired.py``). The side-runner refuses each connection a call opens, so the code
that handles an answer (a status code, an error body, a body that is not JSON, an empty one)
never runs there. A call that sent a request is called again under each of a few canned
answers, built in memory at the layer the request went through; where head and parent
handle one otherwise (value, exception, requests sent), a test installs the same answer
with ``monkeypatch`` and asserts head's outcome. A real sample project (a git repository in
tmp, its own virtualenv, real pytest) whose release turns an HTML 502 into the client's own
error (requests) and a 404 into None (urllib); a rewrite that handles answers alike claims
nothing."""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest

from bot.testgen import probe, wire, wired
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

CLIENT = '''import json
import urllib.error
import urllib.request

import requests

BASE = "https://api.shop.example"


class ShopError(Exception):
    """The shop refused a request."""


def product(pid):
    """A product of the shop (a dict), None when there is none."""
    response = requests.get(f"{BASE}/v1/products/{pid}", timeout=5)
    if response.status_code == 404:
        return None
    if response.status_code >= 400:
        raise ShopError(response.json().get("error", "failed"))
    return response.json()


def stock(sku):
    """How many items of a SKU are in stock."""
    with urllib.request.urlopen(f"{BASE}/v1/stock/{sku}", timeout=5) as answer:
        return json.loads(answer.read())["count"]


def categories():
    """The names of the shop's categories."""
    response = requests.get(BASE + "/v1/categories", timeout=5)
    response.raise_for_status()
    return [c["name"] for c in response.json()]
'''
# the release: an error page that is not JSON is the shop's error, a SKU it does not know
# has no stock; categories is rewritten (it handles every answer alike)
CLIENT_NEW = (
    CLIENT.replace(
        '        raise ShopError(response.json().get("error", "failed"))\n',
        "        try:\n"
        '            detail = response.json().get("error", "failed")\n'
        "        except ValueError:\n"
        '            detail = f"HTTP {response.status_code}"\n'
        "        raise ShopError(detail)\n",
    )
    .replace(
        '    with urllib.request.urlopen(f"{BASE}/v1/stock/{sku}", timeout=5) as answer:\n'
        '        return json.loads(answer.read())["count"]\n',
        "    try:\n"
        '        with urllib.request.urlopen(f"{BASE}/v1/stock/{sku}", timeout=5) as answer:\n'
        '            return json.loads(answer.read())["count"]\n'
        "    except urllib.error.HTTPError as error:\n"
        "        if error.code == 404:\n"
        "            return 0\n"
        "        raise\n",
    )
    .replace(
        '    return [c["name"] for c in response.json()]\n',
        "    names = []\n"
        "    for category in response.json():\n"
        '        names.append(category["name"])\n'
        "    return names\n",
    )
)
TESTS = """import io
import json

import requests
import urllib.request

from shop.client import categories, product, stock


class Answer:
    status_code = 200

    def raise_for_status(self):
        pass

    def json(self):
        return [{"name": "toys"}]

    def read(self):
        return json.dumps({"count": 3}).encode()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_product(monkeypatch):
    monkeypatch.setattr(requests, "get", lambda *a, **k: Answer())
    assert product(7) == [{"name": "toys"}]


def test_stock(monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: Answer())
    assert stock("A-1") == 3


def test_categories(monkeypatch):
    monkeypatch.setattr(requests, "get", lambda *a, **k: Answer())
    assert categories() == ["toys"]
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("shop"),
        {"shop/__init__.py": "", "shop/client.py": CLIENT, "tests/test_client.py": TESTS},
        {"shop/client.py": CLIENT_NEW},
        "an error page that is not JSON is a ShopError; an unknown SKU has no stock",
    )


@pytest.mark.slow
def test_an_error_page_handled_otherwise_is_caught_under_a_canned_answer(
    shop: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = shop
    facts = caught(data, "product(")
    assert facts, data["notes"]
    assert "canned 502" in facts[0]["head"], facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_shop_client.py")
    assert "monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool" in committed
    assert "pytest.raises(shop.client.ShopError" in committed, committed
    assert "Connection refused" not in committed  # the answer, not the refusal


@pytest.mark.slow
def test_a_not_found_answer_handled_otherwise_is_caught_through_urllib(
    shop: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = shop
    assert caught(data, "stock("), data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_shop_client.py")
    assert "monkeypatch.setattr(http.client.HTTPConnection, 'getresponse'" in committed


@pytest.mark.slow
def test_answers_handled_alike_claim_nothing(shop: tuple[Any, dict[str, Any]]) -> None:
    _repo, data = shop
    assert not caught(data, "categories("), data["kept"]
    said = [n for n in data["notes"] if "canned answer otherwise" in n]
    assert said and not [n for n in said if "::categories" in n], said
    alike = [n for n in data["notes"] if "::categories" in n and "under canned answers" in n]
    assert alike, data["notes"]  # it was called under the answers, and handled them alike


def fetch(pid: int) -> object:
    import requests

    answer = requests.get(f"https://api.example.org/v1/items/{pid}", timeout=5)
    if answer.status_code >= 500:
        return ["retried", requests.get(f"https://api.example.org/v1/items/{pid}").status_code]
    return [answer.status_code, answer.headers.get("Content-Type"), answer.text]


def test_each_request_of_a_call_gets_the_canned_answer_in_memory() -> None:
    named = Named("function", None, "fetch", fetch)
    case = probe._Case(None, [], ([7], {}), {}, "tests")
    wire.configure(True)
    before = signal.signal(signal.SIGALRM, probe._on_alarm)
    sys.addaudithook(probe._audit)  # (once a process: silent while no call runs)
    try:
        refused = probe.call(named, case, 2.0)
        wire.kept()
        found = wire.answered("fetch", probe.call, named, case, 2.0)["answered"]
    finally:
        wire.configure(False)
        signal.signal(signal.SIGALRM, before)
    assert refused["type"] == "requests.exceptions.ConnectionError", refused
    assert found["json"]["outcome"]["value"] == str(
        [200, "application/json", wire.ANSWERS["json"][3].decode()]
    )
    assert found["json"]["sent"] == 1
    assert found["no_content"]["outcome"]["value"] == "[204, None, '']"
    assert found["bad_gateway"]["outcome"]["value"] == "['retried', 502]"
    assert found["bad_gateway"]["sent"] == 2  # the request sent after the answer counts
    assert set(found) == set(wire.ANSWERS)


def test_a_written_answer_is_the_side_runners() -> None:
    lines = wired._answerer("http.client", "bad_gateway")
    raw = wire.answer_bytes("bad_gateway")
    assert f"            return io.BytesIO({raw!r})" in lines
    assert raw.startswith(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n")
    lines = wired._answerer("httpx", "no_content")
    assert any(
        "httpx.Response(204, headers={'Content-Length': '0'}, content=b''" in x for x in lines
    )


def _run(answered: dict[str, Any]) -> dict[str, Any]:
    """One side-runner's answer for ``fetch(7)``, refused, then under the answers."""
    row = {
        "args": ["7"],
        "kwargs": {},
        "imports": [],
        "outcome": {"kind": "raises", "type": "ConnectionError", "imports": []},
        "wire": [["urllib3", "GET", "https://api.example.org/v1/items/7", [], None]],
        "answered": answered,
    }
    return {"functions": {"fetch": {"kind": "function", "results": [row]}}}


def _answer(value: str, sent: int = 1) -> dict[str, Any]:
    return {"outcome": {"kind": "value", "value": value, "imports": []}, "sent": sent}


def test_only_an_answer_each_side_handles_steadily_and_otherwise_is_asserted() -> None:
    head = _run({"bad_gateway": _answer("'retried'", 2), "text": _answer("'OK'")})
    parent = _run({"bad_gateway": _answer("'failed'"), "text": _answer("'OK'")})
    found, note = wired.wired_examples("fetch", head, [head], [parent, parent])
    assert [e.wire["answer"] for e in found] == ["bad_gateway"], note
    assert found[0].outcome["value"] == "'retried'" and found[0].wire["sent"] == 2
    assert "handles a canned answer otherwise" in note
    # head's runs disagree (a value of the run): nothing is asserted
    other = _run({"bad_gateway": _answer("'again'", 2), "text": _answer("'OK'")})
    found, note = wired.wired_examples("fetch", head, [other], [parent, parent])
    assert not found and "handled alike or unsteady" in note, note
    # both sides handle every answer alike: nothing
    found, note = wired.wired_examples("fetch", parent, [parent], [parent, parent])
    assert not found and "handled alike or unsteady" in note, note


def test_a_written_test_counts_the_requests_when_their_number_differs() -> None:
    from bot.testgen.render import render_module

    head = _run({"bad_gateway": _answer("'retried'", 2)})
    parent = _run({"bad_gateway": _answer("'retried'", 1)})
    found, _note = wired.wired_examples("fetch", head, [head], [parent])
    text = render_module("sample.api", "sample/api.py", {"fetch": found}, {"fetch": ["pid"]})
    assert "def test_fetch_answered_bad_gateway(monkeypatch):" in text, text
    assert "status=502," in text and "    assert len(sent) == 2" in text, text
    assert "    assert fetch(7) == 'retried'" in text, text
