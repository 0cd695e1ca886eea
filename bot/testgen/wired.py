"""The HTTP requests a call sends are part of its outcome (the differential generator).

Many releases of API clients change only what goes on the wire: a header, a URL path, a
query parameter, a body field, a method. When the changed modules use an HTTP client
(requests, httpx, urllib3, urllib, http.client, aiohttp), the side-runner records each
call's requests at the layer its client passes through before it connects, and refuses
the connection there (``wire.py``): the call ends as it would with the server down. A
request is cut into parts: ``(method, host, path)``, each query parameter, each header
(name and value), each top-level field of a JSON body (else the body, when short). Parts
a side gave in every run are steady; those head gave in every run and the parent in none
(or the other way) are asserted, never the whole request. A header value that holds a
value of the machine's environment (a token) is not recorded, nor the user agents of the
HTTP libraries (their versions are the machine's). The written test installs the same
recorder with ``monkeypatch`` (refusing the connection the same way), makes the call
(within ``pytest.raises`` of the client's error when it raised), and asserts the parts
with ``in`` / ``not in``. Other tests of an input that used the network are dropped:
without the recorder they would reach the network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from bot.testgen.ambient import ENVIRON
from bot.testgen.wire import ANSWERS, MAX_REQUESTS, answer_bytes, answer_parts

__all__ = ["needed", "offline", "recorded", "unrecorded", "wired_examples", "within_wire"]

MAX_WIRED = 2  # tests of requests per name (each one of its own input)
MAX_SHOWN = 4  # parts a test asserts present, and absent
MAX_SHOWN_BODY = 300  # characters of a body that is not JSON
_CLIENTS = re.compile(
    r"^\s*(?:import|from)\s+(?:requests|httpx|urllib3|urllib\.request|http\.client|aiohttp)\b"
    r"|\b(?:requests|httpx|urllib3|aiohttp)\.\w|\burlopen\(|\bHTTPS?Connection\(",
    re.MULTILINE,
)
_LIBRARY_AGENT = re.compile(r"^(?:python-requests|python-urllib3|python-httpx|Python-urllib)/")
_STEADY_KINDS = ("value", "raises")
_MACHINE = ("the environment", "the machine")  # reads that make a request this machine's
_RETURNED = ("value", "object", "identity", "unrenderable")

Part = tuple[str, ...]


def needed(pairs: list[tuple[str | None, str]]) -> bool:
    """Whether a changed module (on head or the parent) uses an HTTP client."""
    return any(_CLIENTS.search(text or "") for pair in pairs for text in pair)


def recorded(effect: str, source: str) -> bool:
    """Whether a function the static reading says uses the network is probed all the same:
    its module uses an HTTP client, whose requests the side-runner records."""
    return effect.startswith("uses the network") and needed([(None, source)])


def unrecorded(reader: Callable[[str, str], str | None]) -> Callable[[str, str], str | None]:
    """``reader`` (the static reading of what a function does) without the uses of the
    network whose requests are recorded: a constructor that makes a session is built."""

    def read(source: str, name: str) -> str | None:
        effect = reader(source, name)
        return None if effect and recorded(effect, source) else effect

    return read


def _parts(requests: list[Any]) -> set[Part]:
    out: set[Part] = set()
    for _layer, method, url, headers, body in requests:
        split = urlsplit(str(url))
        out.add(("request", str(method), split.hostname or "", split.path))
        out.update(("query", k, v) for k, v in parse_qsl(split.query, keep_blank_values=True))
        for name, value in headers:
            if not (name.lower() == "user-agent" and _LIBRARY_AGENT.match(value)):
                out.add(("header", str(name), str(value)))
        fields = _fields(body)
        if fields is not None:
            out.update(("field", k, json.dumps(v, sort_keys=True)) for k, v in fields.items())
        elif isinstance(body, str) and body and len(body) <= MAX_SHOWN_BODY:
            out.add(("body", body))
    return out


def unstamped(new: set[Part], gone: set[Part]) -> tuple[set[Part], set[Part]]:
    """``new`` and ``gone`` without the parts that differ only in a version number (a
    client's ``User-Agent: lib/1.2`` that each release stamps): the release, not its
    behaviour (as the lines that only stamp it are no changed lines, matrix.py)."""
    from bot.testgen.matrix import versions_masked

    masked = {versions_masked(repr(p)) for p in gone}
    stamped = {p for p in new if versions_masked(repr(p)) in masked}
    masks = {versions_masked(repr(p)) for p in stamped}
    return new - stamped, {p for p in gone if versions_masked(repr(p)) not in masks}


def _fields(body: object) -> dict[str, Any] | None:
    if not isinstance(body, str) or not body.lstrip().startswith("{"):
        return None
    try:
        loaded = json.loads(body)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _sent(result: dict[str, Any]) -> set[Part]:
    return _parts(result.get("wire") or [])


def _layers(results: list[dict[str, Any]]) -> set[str]:
    return {str(r[0]) for result in results for r in result.get("wire") or []}


def _input(result: dict[str, Any]) -> str:
    shown = [result.get("args"), result.get("kwargs"), result.get("ctor")]
    return json.dumps([*shown, result.get("steps") or []], sort_keys=True)


def offline(examples: list[Any], results: list[dict[str, Any]]) -> list[Any]:
    """The examples whose input did not use the network (one that did reaches it when its
    test runs without the recorder); an example that matches no input is kept only when
    no input used the network."""
    used = {_input(r) for r in results if "wire" in r}
    if not used:
        return examples
    quiet = {_input(r) for r in results if "wire" not in r and not r.get("ambient")}
    out = []
    for e in examples:
        key = json.dumps([e.args, e.kwargs, e.ctor, e.steps or []], sort_keys=True)
        if key in quiet and key not in used:
            out.append(e)
    return out


def wired_examples(
    name: str,
    first: dict[str, Any],
    head: list[dict[str, Any]],
    parent: list[dict[str, Any]],
) -> tuple[list[Any], str]:
    """Tests of the inputs of ``name`` whose requests differ between head and parent, or
    that handle a canned answer otherwise, and a note (``""`` when none differ)."""
    entry = (first.get("functions") or {}).get(name) or {}
    results = entry.get("results") or []
    if not any("wire" in r for r in results):
        return [], ""  # no call used the network
    from bot.testgen.warned import compared, fresh  # (it imports render, which imports this)

    sides = [s for s in compared(name, first, head, parent) if len(s[2]) >= len(parent) > 0]
    answered = _answered_examples(entry, sides)
    out: list[Any] = []
    signatures: set[str] = set()
    for result, ours, theirs in sides:
        if result.get("ambient") not in (None, "", ENVIRON):
            continue  # a setting's row: only an empty environment (a token, a base URL)
        if result["outcome"].get("kind") in ("side effect", "timeout", "resources"):
            continue
        if len(ours) < 2 or not any("wire" in r for r in ours + theirs):
            continue
        mine = [_sent(r) for r in ours]
        other = [_sent(r) for r in theirs]
        new = set.intersection(*mine) - set().union(*other)
        gone = set.intersection(*other) - set().union(*mine)
        new, gone = unstamped(new, gone)
        present, absent = _shown(new), _shown(gone)
        if not (present or absent) or not fresh(signatures, present, absent):
            continue
        layers = sorted(_layers(ours + theirs))
        example = _example(result, entry, ours, present, absent, layers)
        if example is not None:
            out.append(example)
        if len(out) >= MAX_WIRED:
            break
    note = f", {len(out)} where its HTTP requests differ (a test of the requests)" if out else ""
    if answered:
        note += f", {len(answered)} where it handles a canned answer otherwise (a test of it)"
    elif tried := sum(1 for r in results if r.get("answered")):
        note += f", {tried} called under canned answers: each handled alike or unsteady"
    return out + answered, note


MAX_ANSWERED = 2  # tests of canned answers per name


def _answered_examples(
    entry: dict[str, Any], sides: list[tuple[dict[str, Any], list[Any], list[Any]]]
) -> list[Any]:
    """Tests of the inputs whose call handles a canned answer (wire.py's ``answered``)
    otherwise on head than on the parent: each run of a side alike (the outcome, and the
    number of requests it sent), the sides not. ``sides``: ``warned.compared``'s, each
    input reached by every parent run."""
    from bot.testgen.differential import _describe  # (it imports render, which imports this)
    from bot.testgen.render import Example
    from bot.testgen.warned import fresh

    out: list[Any] = []
    signatures: set[str] = set()
    for result, ours, theirs in sides:
        if not result.get("answered") or len(ours) < 2:
            continue
        if any((r.get("wire_call") or {}).get("threads") for r in ours):
            continue  # its requests are sent by threads: how many, when, is theirs
        for answer in ANSWERS:
            mine = {json.dumps((r.get("answered") or {}).get(answer), sort_keys=True) for r in ours}
            other = {
                json.dumps((r.get("answered") or {}).get(answer), sort_keys=True) for r in theirs
            }
            if len(mine) != 1 or len(other) != 1 or mine == other or "null" in mine | other:
                continue
            now, then = json.loads(mine.pop()), json.loads(other.pop())
            outcome = {k: v for k, v in now["outcome"].items() if k != "printed"}
            counted = max(now["sent"], then["sent"]) < MAX_REQUESTS  # (noted up to it)
            sent = now["sent"] if now["sent"] != then["sent"] and counted else None
            if outcome == {k: v for k, v in then["outcome"].items() if k != "printed"}:
                if sent is None:
                    continue  # it printed otherwise only
            if not fresh(signatures, outcome, then["outcome"], sent):
                continue
            said = _describe(json.dumps(then["outcome"], sort_keys=True))
            said += f" after {then['sent']} request(s)" if sent is not None else ""
            status = ANSWERS[answer][0]
            wire = {"layers": sorted(_layers(ours + theirs)), "answer": answer, "sent": sent}
            said = f"under a canned {status} answer ({answer}): {said}"
            out.append(Example.of(result, entry, outcome, said, wire=wire))
            break  # one answer an input
        if len(out) >= MAX_ANSWERED:
            break
    return out


def _example(
    result: dict[str, Any],
    entry: dict[str, Any],
    ours: list[dict[str, Any]],
    present: list[Part],
    absent: list[Part],
    layers: list[str],
) -> Any:
    from bot.testgen.render import Example  # (render imports this module's writer)

    outcome = dict(result["outcome"])
    outcomes = [r["outcome"] for r in ours]
    if any(str(o.get("on", "")).startswith(_MACHINE) for o in outcomes):
        return None  # what it sends may be this machine's (its row with none set is kept)
    if any(o.get("kind") == "depends" for o in outcomes):  # how each call ended, then
        outcomes = [r.get("wire_call") or {} for r in ours]
        outcome = dict(outcomes[0])
        if outcome.get("kind") not in ("raises", *_RETURNED):
            return None
    if all(o.get("kind") == "raises" and o.get("type") == outcome.get("type") for o in outcomes):
        outcome = {"kind": "raises", "type": outcome["type"], "imports": outcome["imports"]}
    elif outcome["kind"] in _STEADY_KINDS and all(o == outcome for o in outcomes):
        outcome.pop("printed", None)
    elif all(o.get("kind") in _RETURNED for o in outcomes):
        outcome = {"kind": "call"}  # its value is not steady: the call alone
    else:
        return None
    if result.get("pinned"):
        return None  # its clock pinned: not with a recorder too
    said = "; ".join(
        [f"sent {_said(p)}" for p in absent] + [f"did not send {_said(p)}" for p in present]
    )
    wire: dict[str, Any] = {"layers": layers, "present": [list(p) for p in present]}
    wire["absent"] = [list(p) for p in absent]
    if any((r.get("wire_call") or {}).get("threads") for r in ours):
        wire["threads"] = True  # its requests are sent by threads it starts: waited for
    return Example.of(
        result,
        entry,
        outcome,
        said,
        ambient=str(result.get("ambient") or ""),  # an empty environment (ambient.py)
        wire=wire,
    )


_ORDER = ("request", "field", "query", "header", "body")  # what a reader looks at first
_DERIVED = {"content-length"}  # a header that follows from the body


def _shown(parts: set[Part]) -> list[Part]:
    """The parts a test asserts: the request, fields, query, headers, body in that order,
    a header that follows from the body only when nothing else differs."""
    plain = [p for p in parts if not (p[0] == "header" and p[1].lower() in _DERIVED)]
    chosen = plain or list(parts)
    return sorted(chosen, key=lambda p: (_ORDER.index(p[0]), p))[:MAX_SHOWN]


def _said(part: Part | list[str]) -> str:
    kind, *rest = part
    if kind == "request":
        return f"a {rest[0]} request to {rest[1]}{rest[2]}"
    if kind == "body":
        return f"the body {rest[0][:40]!r}"
    shown = rest[1] if len(rest[1]) <= 40 else rest[1][:37] + "..."
    return f"the {kind} {rest[0]}: {shown}"


# the written test's recorder of each layer (wire.py's, as a test installs it)
_RECORDERS = {
    "urllib3": [
        "    def urlopen(self, method, url, body=None, headers=None, *args, **kwargs):",
        "        where = url if '://' in url else f'{self.scheme}://{self.host}{url}'",
        "        given = self.headers if headers is None else headers",
        "        sent.append((method, where, list(dict(given).items()), body))",
        "        reason = urllib3.exceptions.NewConnectionError(self, 'Connection refused')",
        "        error = urllib3.exceptions.MaxRetryError(self, url, reason)",
        "        error.args = ('Connection refused',)",
        "        raise error",
        "",
        "    monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool, 'urlopen', urlopen)",
    ],
    "http.client": [
        "    def putrequest(self, method, url, *args, **kwargs):",
        "        where = url if '://' in url else f'//{self.host}{url}'",
        "        sent.append((method, where, [], None))",
        "        return original_putrequest(self, method, url, *args, **kwargs)",
        "",
        "    def putheader(self, header, *values):",
        "        value = ', '.join(v if isinstance(v, str) else str(v) for v in values)",
        "        sent[-1][2].append((header, value))",
        "        return original_putheader(self, header, *values)",
        "",
        "    def endheaders(self, message_body=None, **kwargs):",
        "        sent[-1] = (*sent[-1][:3], message_body)",
        "        raise ConnectionRefusedError(errno.ECONNREFUSED, 'Connection refused')",
        "",
        "    original_putrequest = http.client.HTTPConnection.putrequest",
        "    original_putheader = http.client.HTTPConnection.putheader",
        "    monkeypatch.setattr(http.client.HTTPConnection, 'putrequest', putrequest)",
        "    monkeypatch.setattr(http.client.HTTPConnection, 'putheader', putheader)",
        "    monkeypatch.setattr(http.client.HTTPConnection, 'endheaders', endheaders)",
    ],
    "httpx": [
        "    def handle_request(self, request):",
        "        sent.append((request.method, str(request.url), request.headers.multi_items(),"
        " request.content))",
        "        raise httpx.ConnectError('Connection refused', request=request)",
        "",
        "    async def handle_async_request(self, request):",
        "        handle_request(self, request)",
        "",
        "    monkeypatch.setattr(httpx.HTTPTransport, 'handle_request', handle_request)",
        "    monkeypatch.setattr(",
        "        httpx.AsyncHTTPTransport, 'handle_async_request', handle_async_request",
        "    )",
    ],
}
_IMPORTS = {
    "urllib3": ["import urllib3", "import urllib3.connectionpool", "import urllib3.exceptions"],
    "http.client": ["import errno", "import http.client"],
    "httpx": ["import httpx"],
}
# the lines that cut the recorded requests into the parts a test asserts
_CUTS = {
    "request": "    sent_to = [(m, urlsplit(u).hostname or '', urlsplit(u).path)"
    " for m, u, _, _ in sent]",
    "query": "    sent_query = [q for _, u, _, _ in sent"
    " for q in parse_qsl(urlsplit(u).query, True)]",
    "header": "    sent_headers = [tuple(pair) for _, _, h, _ in sent for pair in h]",
    "body": "    sent_bodies = [b.decode() if isinstance(b, bytes) else b for _, _, _, b in sent]",
}
_FIELDS = [
    "    sent_fields = [",
    "        item",
    "        for b in sent_bodies",
    "        if isinstance(b, str) and b.lstrip().startswith('{')",
    "        for item in json.loads(b).items()",
    "    ]",
]
_JOINED = [
    "    for thread in threading.enumerate():  # the threads the call started send them",
    "        if thread not in running:",
    "            thread.join(0.5)",
]
_NAMES = {"request": "sent_to", "query": "sent_query", "header": "sent_headers"}
_NAMES.update(body="sent_bodies", field="sent_fields")


# the written test's canned answer at each layer (wire.py's, as a test installs it)
_ANSWERERS = {
    "urllib3": [
        "    def urlopen(self, method, url, body=None, headers=None, *args, **kwargs):",
        "        sent.append((method, url))",
        "        return urllib3.response.HTTPResponse(",
        "            body=io.BytesIO(BODY),",
        "            headers=FIELDS,",
        "            status=STATUS,",
        "            reason=REASON,",
        "            preload_content=kwargs.get('preload_content', True),",
        "            decode_content=kwargs.get('decode_content', True),",
        "            request_method=method,",
        "            request_url=url,",
        "        )",
        "",
        "    monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool, 'urlopen', urlopen)",
    ],
    "http.client": [
        "    class Answer:  # a socket that holds the server's answer",
        "        def makefile(self, *args, **kwargs):",
        "            return io.BytesIO(RAW)",
        "",
        "    def endheaders(self, message_body=None, **kwargs):",
        "        sent.append(self._method)  # nothing goes out: the answer is canned",
        "",
        "    def getresponse(self):",
        "        response = http.client.HTTPResponse(Answer(), method=self._method)",
        "        response.begin()",
        "        return response",
        "",
        "    monkeypatch.setattr(http.client.HTTPConnection, 'endheaders', endheaders)",
        "    monkeypatch.setattr(http.client.HTTPConnection, 'getresponse', getresponse)",
    ],
    "httpx": [
        "    def handle_request(self, request):",
        "        sent.append((request.method, str(request.url)))",
        "        return httpx.Response(STATUS, headers=FIELDS, content=BODY, request=request)",
        "",
        "    async def handle_async_request(self, request):",
        "        return handle_request(self, request)",
        "",
        "    monkeypatch.setattr(httpx.HTTPTransport, 'handle_request', handle_request)",
        "    monkeypatch.setattr(",
        "        httpx.AsyncHTTPTransport, 'handle_async_request', handle_async_request",
        "    )",
    ],
}
_ANSWER_IMPORTS = {
    "urllib3": [
        "import io",
        "import urllib3",
        "import urllib3.connectionpool",
        "import urllib3.response",
    ],
    "http.client": ["import io", "import http.client"],
    "httpx": ["import httpx"],
}


def _answerer(layer: str, answer: str) -> list[str]:
    """The lines that give each request at ``layer`` the canned ``answer``."""
    status, reason, fields, body = answer_parts(answer)  # (the side-runner's own)
    raw = answer_bytes(answer)
    words = {"STATUS": str(status), "REASON": repr(reason), "FIELDS": repr(fields)}
    words.update(BODY=repr(body), RAW=repr(raw))
    pattern = re.compile(r"\b(" + "|".join(words) + r")\b")
    return [pattern.sub(lambda m: words[m.group(1)], line) for line in _ANSWERERS[layer]]


def imports(wire: dict[str, Any]) -> list[str]:
    """The import lines a test of requests needs."""
    if wire.get("answer"):
        return [i for layer in wire.get("layers") or [] for i in _ANSWER_IMPORTS.get(layer, [])]
    out = [i for layer in wire.get("layers") or [] for i in _IMPORTS.get(layer, [])]
    kinds = {p[0] for p in [*(wire.get("present") or []), *(wire.get("absent") or [])]}
    if kinds & {"request", "query"}:
        out.append("from urllib.parse import parse_qsl, urlsplit")
    out += ["import threading"] if wire.get("threads") else []
    return out + (["import json"] if "field" in kinds else [])


def named(wire: dict[str, Any]) -> str:
    """The end of a test's name: what it asserts."""
    return f"_answered_{wire['answer']}" if wire.get("answer") else "_requests"


def _check(part: list[str], there: bool) -> str:
    kind, *rest = part
    test = "in" if there else "not in"
    if kind == "body":
        return f"    assert {rest[0]!r} {test} sent_bodies"
    if kind == "field":
        return f"    assert ({rest[0]!r}, {json.loads(rest[1])!r}) {test} sent_fields"
    return f"    assert {tuple(rest)!r} {test} {_NAMES[kind]}"


def within_wire(lines: list[str], body: list[str], wire: dict[str, Any]) -> list[str]:
    """A test's lines with the requests it asserts: the recorders installed before the
    call, the parts present and absent after it."""
    signature = lines[0]
    if "monkeypatch" not in signature:  # (a test run in tmp_path has it: scratch.py)
        signature = (
            signature.replace("():", "(monkeypatch):", 1)
            if signature.endswith("():")
            else signature.replace("):", ", monkeypatch):", 1)
        )
    lines = [signature, *lines[1:]]
    if wire.get("answer"):  # each request gets the canned answer (wire.py's ``answered``)
        setup = ["    sent = []  # each request the call sends, answered as a server would"]
        for layer in wire.get("layers") or []:
            setup += ["", *(_answerer(layer, wire["answer"]) if layer in _ANSWERERS else [])]
        count = [] if wire.get("sent") is None else [f"    assert len(sent) == {wire['sent']}"]
        return [*lines, *setup, "", *body, *count]
    setup = ["    sent = []  # each request the call sends, refused as by a server that is down"]
    if wire.get("threads"):  # its requests are sent by threads it starts
        setup.append("    running = threading.enumerate()")
        body = [*body, *_JOINED]
    for layer in wire.get("layers") or []:
        setup += ["", *_RECORDERS.get(layer, [])]
    parts = [*(wire.get("present") or []), *(wire.get("absent") or [])]
    kinds = {p[0] for p in parts}
    cuts = [line for kind, line in _CUTS.items() if kind in kinds]
    if "field" in kinds:
        cuts = [*cuts, _CUTS["body"], *_FIELDS] if "body" not in kinds else [*cuts, *_FIELDS]
    checks = [_check(p, True) for p in wire.get("present") or []]
    checks += [_check(p, False) for p in wire.get("absent") or []]
    return [*lines, *setup, "", *body, *cuts, *checks]


def wire_head(wire: dict[str, Any], value: str) -> str:
    """What head did, for the facts: the parts, and the value when one is asserted."""
    if wire.get("answer"):
        count = f" after {wire['sent']} request(s)" if wire.get("sent") is not None else ""
        return f"under a canned {ANSWERS[wire['answer']][0]} answer: {value}{count}"
    said = [f"sends {_said(p)}" for p in wire.get("present") or []]
    said += [f"does not send {_said(p)}" for p in wire.get("absent") or []]
    return ", ".join(said) + (f"; {value}" if value else "")
