"""The HTTP requests a call sends (the side-runner's part of bot/testgen/wired.py).

Only the standard library (it is copied beside the side-runner as ``nova_wire.py`` and
runs with the project's interpreter); it imports urllib3 and httpx only when the project
has them. When the plan asks (the changed modules use an HTTP client), each call records
the requests it sends at the layer its client passes through before it connects, and the
connection is refused there: the call goes on as it would with the server down (its
client's connection error, or what it does on failure). The layers:

- urllib3's ``HTTPConnectionPool.urlopen`` (urllib3 itself, and requests on it): method,
  the pool's origin and the URL, the headers, the body; it raises ``MaxRetryError`` with
  a ``NewConnectionError`` (requests turns it into its ``ConnectionError``);
- http.client's ``HTTPConnection.putrequest``/``putheader`` (urllib.request, http.client)
  record, ``endheaders(body)`` raises ``ConnectionRefusedError``;
- httpx's ``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request``
  record ``httpx.Request`` and raise ``httpx.ConnectError``.

Any other use of the network (a raw socket, another client) is refused by the audit hook
with ``ConnectionRefusedError`` (``refusal``) and noted as such. A request is noted as
``[layer, method, url, [[name, value], ...], body]``: a header whose value holds a value
of this machine's environment (a token) is left out, the body is text when short.

What the server answers is an input too (``answered``): a call that sent a request is
called again under each of a few canned answers (``ANSWERS``: a JSON object, a JSON list,
an empty 204, a JSON 404, an HTML 502, a plain text), each request getting it at the same
layer instead of the refusal, built in memory from bytes (urllib3's ``HTTPResponse``,
http.client's ``HTTPResponse`` read from a stand-in socket, ``httpx.Response``).
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import io
import os
import sys
import threading
import time
import typing

ON = [False]  # the plan asked for requests to be recorded
ACTIVE = [False]  # a call runs
REFUSED = "Connection refused"
MAX_REQUESTS = 8  # requests noted per call
MAX_BODY = 2000  # characters of a body noted
_sent: list[list[typing.Any]] = []  # the current call's requests
_used = [False]  # the current call used the network (a request, or a refused socket)
_first: list[typing.Any] = [None]  # an input's first call: [requests] or None (no network)
_ended: dict[str, typing.Any] = {}  # how that call ended (its value may depend on the clock)
_before: list[threading.Thread] = []  # the threads that ran before the call
_threaded = [False]  # a request was sent by another thread than the call's
JOIN_SECONDS = 0.5  # waited for the threads a call started (their requests are its own)
# this machine's environment values (read once: a read within a call is the call's)
_ENVIRON: list[str] = []
# the canned answers: name -> (status, reason, content type, body); wired.py writes them too
ANSWERS: dict[str, tuple[int, str, str, bytes]] = {  # errors first (tried in this order)
    "bad_gateway": (502, "Bad Gateway", "text/html", b"<html><h1>502 Bad Gateway</h1></html>"),
    "not_found": (404, "Not Found", "application/json", b'{"error": "not found"}'),
    "no_content": (204, "No Content", "", b""),
    "text": (200, "OK", "text/plain", b"OK"),
    "json": (200, "OK", "application/json", b'{"id": 1, "name": "example"}'),
    "json_list": (200, "OK", "application/json", b'[{"id": 1, "name": "example"}]'),
}
ANSWER = [""]  # the canned answer each request of the current call gets ("": refused)
ANSWERED_INPUTS = 1  # inputs of a function called under the answers
ANSWERED_SECONDS = 4.0  # the calls under answers of one run, in all
_answered: dict[str, int] = {}  # function -> inputs called under the answers
_answering = [0.0]  # seconds spent on them in this run


def configure(on: object) -> None:
    """Put the recorders in place (once; they record only while a call runs)."""
    ON[0] = bool(on)
    _answered.clear()
    _answering[0] = 0.0
    if not ON[0]:
        return
    _ENVIRON[:] = [v for v in os.environ.values() if len(v) >= 8]
    _http_client()
    for name, patch in (("urllib3", _urllib3), ("httpx", _httpx)):
        if importlib.util.find_spec(name) is None:
            continue
        try:
            patch(importlib.import_module(name))
        except Exception:  # another version's layout: its requests are refused unrecorded
            continue


def start() -> None:
    del _sent[:]
    _used[0] = False
    _threaded[0] = False
    ACTIVE[0] = ON[0]
    if ACTIVE[0]:
        _before[:] = threading.enumerate()


def stop() -> None:
    """The call is over: the threads it started are given ``JOIN_SECONDS`` to send their
    requests (a connection opened in the background, an event stream)."""
    if ACTIVE[0]:
        started = [t for t in threading.enumerate() if t not in _before and t.is_alive()]
        deadline = time.monotonic() + JOIN_SECONDS
        for thread in started:
            thread.join(max(0.0, deadline - time.monotonic()))
    ACTIVE[0] = False


# the HTTP libraries, whose own reads of the environment (proxies, a CA bundle, netrc)
# configure the connection the recorder refuses: not what the call's outcome depends on
_LIBRARIES = ("requests", "urllib3", "urllib.request", "httpx", "httpcore", "aiohttp")
_STANDARD = set(getattr(sys, "stdlib_module_names", ())) | {"os", "posixpath", "ntpath"}


def configures(frame: typing.Any) -> bool:
    """Whether a read of the environment (in ``frame``, os's) is an HTTP library's, while
    requests are recorded: the first caller that is not the standard library's (a path's
    ``~`` expanded, a mapping's ``get``) is the library's."""
    if not ACTIVE[0]:
        return False
    for _ in range(30):
        if frame is None:
            return False
        name = str(frame.f_globals.get("__name__", ""))
        if any(name == n or name.startswith(n + ".") for n in _LIBRARIES):
            return True
        if name.split(".")[0] not in _STANDARD:
            return False
        frame = frame.f_back
    return False


def refuse(event: str) -> None:
    """The audit hook's answer to a use of the network while requests are recorded: the
    connection refused, as a server that is down refuses it. ``urllib.request.urlopen``'s
    own event passes: its request reaches http.client, which records and refuses it."""
    _used[0] = True
    if event != "urllib.Request":
        raise ConnectionRefusedError(errno.ECONNREFUSED, REFUSED)


def noted() -> dict[str, typing.Any]:
    """The current call's requests, when it used the network."""
    return {"wire": [list(r) for r in _sent]} if _used[0] else {}


def keep(outcome: dict[str, typing.Any]) -> None:
    """The requests of an input's first call (later calls move or pin the clock), and how
    it ended (its value may depend on the clock or randomness, its raising may not)."""
    _first[0] = [list(r) for r in _sent] if _used[0] else None
    _ended.clear()
    _ended.update({k: outcome[k] for k in ("kind", "type", "imports") if k in outcome})
    _ended.update({"threads": True} if _threaded[0] else {})


def kept() -> dict[str, typing.Any]:
    if _first[0] is None:
        return {}
    return {"wire": _first[0], "wire_call": dict(_ended)}


def answered(
    name: str, call: typing.Callable[..., dict[str, typing.Any]], *args: object
) -> dict[str, typing.Any]:
    """The outcomes of an input's call (``call(*args)``: the probe's, which moves or pins
    the clock to tell a steady outcome) under each canned answer (``ANSWERS``), when its
    first call sent a request at a layer that can be answered (a refused raw socket
    cannot): ``{"answered": {answer: {"outcome": ..., "sent": n}}}`` (``sent``: the
    requests the call sent with that answer, retries and pages included). An outcome
    steady only with the clock pinned, or that depends on randomness or the machine, or
    that neither returned nor raised, is left out; so are the inputs past
    ``ANSWERED_INPUTS`` of a function or ``ANSWERED_SECONDS`` a run."""
    if not _first[0] or _answered.get(name, 0) >= ANSWERED_INPUTS:
        return {}
    if _answering[0] > ANSWERED_SECONDS:
        return {}
    _answered[name] = _answered.get(name, 0) + 1
    started = time.monotonic()
    out: dict[str, typing.Any] = {}
    try:
        for answer in ANSWERS:
            if _answering[0] + time.monotonic() - started > ANSWERED_SECONDS:
                break
            ANSWER[0] = answer
            outcome = call(*args)
            if outcome.get("kind") == "timeout":
                break  # it waits on an answer (a retry's backoff): the others would too
            outcome.pop("clock", None)  # the same with the clock moved ahead
            if outcome.get("kind") in ("value", "raises") and "pinned" not in outcome:
                out[answer] = {"outcome": outcome, "sent": len(_sent)}
    finally:
        ANSWER[0] = ""
        _answering[0] += time.monotonic() - started
    return {"answered": out} if out else {}


def answer_parts(answer: str) -> tuple[int, str, dict[str, str], bytes]:
    """A canned answer's status, reason, header fields and body."""
    status, reason, kind, body = ANSWERS[answer]
    fields = {"Content-Type": kind} if kind else {}
    fields["Content-Length"] = str(len(body))
    return status, reason, fields, body


def answer_bytes(answer: str) -> bytes:
    """A canned answer as a server sends it."""
    status, reason, fields, body = answer_parts(answer)
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in fields.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Answering:
    """A socket that holds the canned answer (http.client's response reads it)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, *args: object, **kwargs: object) -> io.BytesIO:
        return io.BytesIO(self.data)


def _secret(value: str) -> bool:
    """Whether a header's value holds a value of this machine's environment."""
    return any(v in value for v in _ENVIRON)


def _text(value: object) -> str | None:
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) and len(value) <= MAX_BODY else None


def _note(layer: str, method: object, url: str, headers: typing.Any, body: object) -> None:
    _used[0] = True
    _threaded[0] = _threaded[0] or threading.current_thread() not in _before
    if len(_sent) >= MAX_REQUESTS:
        return
    pairs = []
    for name, value in headers:
        name, value = _text(name) or "", _text(value)
        if value is not None and not _secret(value):
            pairs.append([name, value])
    _sent.append([layer, _text(method) or "", url, pairs, _text(body)])


def origin(scheme: str, host: object, port: object) -> str:
    host = str(host)
    host = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + ("" if port in (None, default) else f":{port}")


def _http_client() -> None:
    import http.client

    connection = http.client.HTTPConnection
    putrequest, putheader = connection.putrequest, connection.putheader
    endheaders = connection.endheaders

    def put_request(self: typing.Any, method: str, url: str, *rest: object, **more: object) -> None:
        if ACTIVE[0]:
            scheme = "https" if isinstance(self, http.client.HTTPSConnection) else "http"
            where = url if "://" in url else origin(scheme, self.host, self.port) + url
            _note("http.client", method, where, [], None)
        putrequest(self, method, url, *rest, **more)  # type: ignore[arg-type]

    def put_header(self: typing.Any, header: str, *values: object) -> None:
        if ACTIVE[0] and _sent:
            value = _text(", ".join(v if isinstance(v, str) else str(v) for v in values))
            if value is not None and not _secret(value):
                _sent[-1][3].append([_text(header) or "", value])
        putheader(self, header, *values)  # type: ignore[arg-type]

    def end_headers(self: typing.Any, message_body: object = None, **more: object) -> None:
        if not ACTIVE[0]:
            return endheaders(self, message_body, **more)  # type: ignore[arg-type]
        if _sent:
            _sent[-1][4] = _text(message_body)
        if ANSWER[0]:
            return None  # nothing is sent: the answer is canned (get_response)
        raise ConnectionRefusedError(errno.ECONNREFUSED, REFUSED)

    def get_response(self: typing.Any) -> typing.Any:
        if not (ACTIVE[0] and ANSWER[0]):
            return getresponse(self)
        response = http.client.HTTPResponse(
            _Answering(answer_bytes(ANSWER[0])),  # type: ignore[arg-type]
            method=getattr(self, "_method", None),
        )
        response.begin()
        return response

    getresponse = connection.getresponse
    connection.putrequest = put_request  # type: ignore[method-assign]
    connection.putheader = put_header  # type: ignore[method-assign,assignment]
    connection.endheaders = end_headers  # type: ignore[method-assign]
    connection.getresponse = get_response  # type: ignore[method-assign]


def _urllib3(module: typing.Any) -> None:
    pool = importlib.import_module("urllib3.connectionpool").HTTPConnectionPool
    exceptions = importlib.import_module("urllib3.exceptions")
    responses = importlib.import_module("urllib3.response")
    urlopen = pool.urlopen

    def url_open(self: typing.Any, method: str, url: str, body: object = None,
                 headers: typing.Any = None, *rest: object, **more: object) -> object:  # fmt: skip
        if not ACTIVE[0]:
            return urlopen(self, method, url, body, headers, *rest, **more)
        where = url if "://" in url else origin(self.scheme, self.host, self.port) + url
        given = self.headers if headers is None else headers
        _note("urllib3", method, where, list(dict(given).items()), body)
        if ANSWER[0]:
            status, reason, fields, data = answer_parts(ANSWER[0])
            return responses.HTTPResponse(
                body=io.BytesIO(data),
                headers=fields,
                status=status,
                reason=reason,
                preload_content=more.get("preload_content", True),
                decode_content=more.get("decode_content", True),
                request_method=method,
                request_url=url,
            )
        error = exceptions.MaxRetryError(self, url, exceptions.NewConnectionError(self, REFUSED))
        error.args = (REFUSED,)  # no pool, no address: the same message in every run
        raise error

    pool.urlopen = url_open


def _httpx(module: typing.Any) -> None:
    def record(request: typing.Any) -> None:
        try:
            body = request.content
        except Exception:  # a stream not read: its body is not noted
            body = None
        _note("httpx", request.method, str(request.url), request.headers.multi_items(), body)

    def answer(request: typing.Any) -> object:
        status, _reason, fields, data = answer_parts(ANSWER[0])
        return module.Response(status, headers=fields, content=data, request=request)

    sync, asynchronous = module.HTTPTransport, module.AsyncHTTPTransport
    handle, handle_async = sync.handle_request, asynchronous.handle_async_request

    def handle_request(self: typing.Any, request: typing.Any) -> object:
        if not ACTIVE[0]:
            return handle(self, request)
        record(request)
        if ANSWER[0]:
            return answer(request)
        raise module.ConnectError(REFUSED, request=request)

    async def handle_async_request(self: typing.Any, request: typing.Any) -> object:
        if not ACTIVE[0]:
            return await handle_async(self, request)
        record(request)
        if ANSWER[0]:
            return answer(request)
        raise module.ConnectError(REFUSED, request=request)

    sync.handle_request = handle_request
    asynchronous.handle_async_request = handle_async_request
