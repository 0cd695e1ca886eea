"""The HTTP requests a call sends are part of its outcome (issue 35, ``bot/testgen/wired.py``,
``bot/testgen/wire.py``). API clients change what goes on the wire (a header, a path, a query
parameter, a body field) while the value stays what a refused connection gives. When the
changed modules use an HTTP client, the side-runner records each call's requests at the layer
the client passes through before it connects and refuses the connection there; where head
and parent differ in steady parts of the requests, a test installs the same recorder with
``monkeypatch`` and asserts those parts. A real sample project (a git repository in tmp, its
own virtualenv, real pytest) whose release sends a new header and query parameter with
requests and a new body field to a new path with urllib; a refactor that sends alike claims
nothing."""

from __future__ import annotations

import json
import signal
import sys
from typing import Any

import pytest

from bot.testgen import probe, wire, wired
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

CLIENT = '''import json
import urllib.parse
import urllib.request

import requests

BASE = "https://api.weather.example"


def forecast(city, days=3):
    """The forecast of a city (a dict), from the service."""
    response = requests.get(
        f"{BASE}/v1/forecast", params={"city": city, "days": days}, timeout=5
    )
    response.raise_for_status()
    return response.json()


def report(station, reading):
    """Send a station's reading; the service's status code."""
    body = json.dumps({"station": station, "reading": reading}).encode()
    request = urllib.request.Request(
        BASE + "/v1/readings", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status


def alerts(region):
    """The alerts of a region."""
    url = BASE + "/v1/alerts?" + urllib.parse.urlencode({"region": region})
    return requests.get(url, timeout=5).json()
'''
# the release: forecast sends a client header and metric units, report sends the unit to
# a new path; alerts is rewritten (the same request)
CLIENT_NEW = (
    CLIENT.replace(
        'params={"city": city, "days": days}, timeout=5\n',
        'params={"city": city, "days": days, "units": "metric"},\n'
        '        headers={"X-Client": "weather-py/2"},\n        timeout=5,\n',
    )
    .replace('"reading": reading}', '"reading": reading, "unit": "C"}')
    .replace('BASE + "/v1/readings"', 'BASE + "/v2/readings"')
    .replace(
        '    url = BASE + "/v1/alerts?" + urllib.parse.urlencode({"region": region})\n'
        "    return requests.get(url, timeout=5).json()\n",
        '    given = {"region": region}\n'
        '    return requests.get(BASE + "/v1/alerts", params=given, timeout=5).json()\n',
    )
)
TESTS = """import io

import requests
import urllib.request

from weather.client import alerts, forecast, report


class Answer:
    status = 200

    def raise_for_status(self):
        pass

    def json(self):
        return {"ok": True}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_forecast(monkeypatch):
    monkeypatch.setattr(requests, "get", lambda *a, **k: Answer())
    assert forecast("Oslo") == {"ok": True}


def test_alerts(monkeypatch):
    monkeypatch.setattr(requests, "get", lambda *a, **k: Answer())
    assert alerts("north") == {"ok": True}


def test_report(monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: Answer())
    assert report("OSL-1", 12.5) == 200
"""


@pytest.fixture(scope="module")
def weather(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("weather"),
        {"weather/__init__.py": "", "weather/client.py": CLIENT, "tests/test_client.py": TESTS},
        {"weather/client.py": CLIENT_NEW},
        "forecast asks for metric units and names the client; readings carry their unit",
    )


@pytest.mark.slow
def test_a_new_header_and_query_parameter_are_caught_on_the_wire(
    weather: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = weather
    facts = caught(data, "forecast(")
    assert facts, data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_weather_client.py")
    assert "monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool" in committed
    assert "('X-Client', 'weather-py/2') in sent_headers" in committed, committed
    assert "('units', 'metric') in sent_query" in committed, committed
    assert "pytest.raises(requests.exceptions.ConnectionError)" in committed, committed


@pytest.mark.slow
def test_a_new_path_and_body_field_are_caught_through_urllib(
    weather: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = weather
    assert caught(data, "report("), data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_weather_client.py")
    assert "monkeypatch.setattr(http.client.HTTPConnection, 'endheaders'" in committed
    assert "('unit', 'C') in sent_fields" in committed, committed
    assert "('POST', 'api.weather.example', '/v2/readings') in sent_to" in committed


@pytest.mark.slow
def test_a_request_sent_alike_claims_nothing(weather: tuple[Any, dict[str, Any]]) -> None:
    _repo, data = weather
    assert not caught(data, "alerts("), data["kept"]
    said = [n for n in data["notes"] if "HTTP requests differ" in n]
    assert said and not [n for n in said if "::alerts" in n], said


def test_only_modules_that_use_an_http_client_turn_the_recording_on() -> None:
    assert wired.needed([(CLIENT, CLIENT_NEW)])
    assert wired.needed([(None, "import httpx\n")])
    assert not wired.needed([("def f():\n    return 1\n", "def f():\n    return 2\n")])


def via_requests(city: str, token: str) -> object:
    import requests

    headers = {"Authorization": f"Bearer {token}", "X-Client": "sample/1"}
    answer = requests.get("https://api.example.org/v2/x", params={"q": city}, headers=headers)
    return answer.json()


def test_the_side_runner_records_a_request_and_refuses_its_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WIRE_TEST_TOKEN", "tok-1234567890")
    named = Named("function", None, "via_requests", via_requests)
    case = probe._Case(None, [], (["Oslo", "tok-1234567890"], {}), {}, "tests")
    wire.configure(True)
    before = signal.signal(signal.SIGALRM, probe._on_alarm)
    sys.addaudithook(probe._audit)  # (once a process: silent while no call runs)
    try:
        outcome = probe.call(named, case, 2.0)
        sent = wire.kept()["wire"]
    finally:
        wire.configure(False)
        signal.signal(signal.SIGALRM, before)
    # no environment read counted (requests' proxies), the connection refused
    assert outcome["kind"] == "raises", outcome
    assert outcome["type"] == "requests.exceptions.ConnectionError", outcome
    (layer, method, url, headers, body), *_ = sent
    assert (layer, method, url, body) == (
        "urllib3",
        "GET",
        "https://api.example.org/v2/x?q=Oslo",
        None,
    )
    parts = wired._parts(sent)
    assert ("request", "GET", "api.example.org", "/v2/x") in parts
    assert ("query", "q", "Oslo") in parts
    assert ("header", "X-Client", "sample/1") in parts
    assert not [p for p in parts if p[:2] == ("header", "User-Agent")]  # the library's version
    assert "tok-1234567890" not in json.dumps(sent)  # a value of this machine's environment


def in_background(city: str) -> None:
    import threading

    import requests

    def run() -> None:
        try:
            requests.get("https://api.example.org/v2/stream", headers={"Accept": city})
        except requests.ConnectionError:
            pass

    threading.Thread(target=run, daemon=True).start()


def test_a_request_a_thread_of_the_call_sends_is_the_calls() -> None:
    named = Named("function", None, "in_background", in_background)
    case = probe._Case(None, [], (["text/event-stream"], {}), {}, "tests")
    wire.configure(True)
    before = signal.signal(signal.SIGALRM, probe._on_alarm)
    sys.addaudithook(probe._audit)
    try:
        outcome = probe.call(named, case, 2.0)
        kept = wire.kept()
    finally:
        wire.configure(False)
        signal.signal(signal.SIGALRM, before)
    assert outcome["kind"] == "value" and outcome["value"] == "None", outcome
    assert kept["wire_call"].get("threads") is True, kept
    assert ("header", "Accept", "text/event-stream") in wired._parts(kept["wire"])


def test_another_test_of_an_input_that_used_the_network_is_dropped() -> None:
    from bot.testgen.render import Example

    def example(arg: str) -> Example:
        return Example([arg], {}, [], {"kind": "value", "value": "1", "imports": []})

    row = {"kwargs": {}, "ctor": None, "steps": []}
    results = [{**row, "args": ["'a'"]}, {**row, "args": ["'b'"], "wire": []}]
    kept = wired.offline([example("'a'"), example("'b'"), example("'c'")], results)
    assert [e.args for e in kept] == [["'a'"]]  # 'b' reached the network, 'c' is unknown
    quiet = [{**row, "args": ["'a'"]}]
    assert len(wired.offline([example("'a'"), example("'c'")], quiet)) == 2


def test_a_header_that_differs_only_in_the_release_version_is_not_asserted() -> None:
    """A client's ``User-Agent: Client/0.1.88`` stamps the release: a test of it would
    fail on every other release whatever the change does (as a line that only stamps
    the version is no changed line). A header whose value really changed stays."""
    new = {
        ("header", "User-Agent", "Client/0.1.88"),
        ("header", "X-Api", "v2"),
        ("header", "Accept", "application/json"),
    }
    gone = {("header", "User-Agent", "Client/0.1.87"), ("header", "Accept", "text/plain")}
    kept_new, kept_gone = wired.unstamped(new, gone)
    assert kept_new == {("header", "X-Api", "v2"), ("header", "Accept", "application/json")}
    assert kept_gone == {("header", "Accept", "text/plain")}
