"""A local OpenAI-compatible chat completions server with scripted replies.

Speaks the wire format the real ``openai`` client (and so ``langchain_openai``) expects:
``POST /v1/chat/completions``, plain JSON or SSE when ``stream: true``, tool calls as
``tool_calls[{id, type: "function", function: {name, arguments: <JSON string>}}]`` with
``finish_reason: "tool_calls"``, usage numbers, and OpenAI's error body on failures.

    server = FakeOpenAI().start()
    server.enqueue(text('{"summary": "ok", "comments": []}'))
    ... NOVA_LLM_BASE_URL=server.base_url ...
    server.requests  # every request body, in order

Structured output: a request with ``response_format`` is honoured (the scripted reply is the
answer; a real server constrains its decoding to the schema) unless ``refuse_response_format``
is set: then it is answered 400 the way servers without JSON schema support answer, and no
scripted reply is used up.

Load: ``latency`` seconds before every answer (a hosted model's fixed time per call);
``in_flight`` / ``max_in_flight`` count the requests being answered at once (a request
leaves before its answer is written, so the client's next request never overlaps it), and
``spans`` holds each request's (arrived, answered) ``time.time()`` pair, comparable with
event timestamps, for ordering proofs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.base import JsonHandler, LocalHTTPServer

__all__ = ["FakeOpenAI", "Reply", "error", "garbage", "hang", "text", "tool_call", "truncated"]


@dataclass
class Reply:
    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # never answer (until the server stops): a client timeout
    raw_body: bytes | None = None  # HTTP 200 with exactly these bytes as the JSON body


def text(content: str) -> Reply:
    return Reply(content=content)


def tool_call(name: str, args: dict[str, Any] | str) -> Reply:
    """A call to ``name``; a str ``args`` is sent verbatim (to script malformed JSON)."""
    return Reply(tool_calls=[(name, args)])


def error(status: int, message: str = "scripted failure", **headers: str) -> Reply:
    return Reply(status=status, error_message=message, headers=headers)


def hang() -> Reply:
    return Reply(hang=True)


def garbage(body: bytes = b"\xff\xfe<html>\x00\x81 not json") -> Reply:
    """HTTP 200, ``content-type: application/json``, and a body that is not JSON (nor UTF-8)."""
    return Reply(raw_body=body)


def truncated(content: str = '{"summary": "ok", "comments": []}') -> Reply:
    """HTTP 200 with a chat completion cut off in the middle (a proxy closed early)."""
    whole = json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    )
    return Reply(raw_body=whole[: len(whole) // 2].encode())


Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAI(LocalHTTPServer):
    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.responder: Responder | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.refuse_response_format = False
        self.latency = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self.spans: list[tuple[float, float]] = []
        self.models: list[str] | None = ["test-model"]  # GET /v1/models; None: 404 (no list)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)

    # scripting -----------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> FakeOpenAI:
        self.queue.extend(replies)
        return self

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> int:
        """The number of requests seen once ``count`` have arrived, or ``timeout`` passed.

        A client that gives up on a hung request (a 0.3 s timeout) may exit before this
        server's thread has read that request's body: the request was sent, and is counted
        as soon as the thread gets to it."""
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.requests) >= count, timeout)
            return len(self.requests)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self._arrived.notify_all()
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return error(500, "the test server has no scripted reply left")

    # lifecycle -----------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802 - GET /v1/models, as `nova doctor` asks
                if self.path.split("?")[0].rstrip("/") != "/v1/models" or owner.models is None:
                    return owner._send_error(self, error(404, f"unknown path {self.path}"))
                return owner._send_json(
                    self,
                    200,
                    {
                        "object": "list",
                        "data": [{"id": m, "object": "model"} for m in owner.models],
                    },
                )

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                ticket = owner._enter()
                try:
                    return self._answer(ticket)
                finally:
                    owner._leave(ticket)

            def _answer(self, ticket: list[float]) -> None:
                body = json.loads(self.read_body() or b"{}")
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return owner._send_error(self, error(404, f"unknown path {self.path}"))
                if owner.refuse_response_format and "response_format" in body:
                    with owner._lock:
                        owner.requests.append(body)
                        owner._arrived.notify_all()
                    kind = (body["response_format"] or {}).get("type")
                    return owner._send_error(
                        self,
                        error(
                            400, f"response_format of type {kind!r} is not supported by this server"
                        ),
                    )
                reply = owner._next(body)
                if owner.latency:
                    owner.stopping.wait(owner.latency)
                owner._leave(ticket)
                if reply.hang:
                    owner.stopping.wait(30)
                    return None
                if reply.raw_body is not None:
                    return owner._send_raw(self, reply.raw_body)
                if reply.status != 200:
                    return owner._send_error(self, reply)
                if body.get("stream"):
                    return owner._send_stream(self, body, reply)
                return owner._send_json(self, 200, owner._completion(body, reply))

        return Handler

    def _enter(self) -> list[float]:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return [time.time()]

    def _leave(self, ticket: list[float]) -> None:
        """Once per request (the second call is a no-op)."""
        with self._lock:
            if len(ticket) == 1:
                ticket.append(time.time())
                self.in_flight -= 1
                self.spans.append((ticket[0], ticket[1]))

    # wire format ---------------------------------------------------------------------
    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
        prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = len(reply.content or "") // 4 + 10 * len(reply.tool_calls)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    @staticmethod
    def _calls(reply: Reply) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{i}_{int(time.time() * 1000) % 100000}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = self._calls(reply)
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": self._usage(body, reply),
        }

    @staticmethod
    def _send_json(
        handler: JsonHandler, status: int, data: Any, headers: dict[str, str] | None = None
    ) -> None:
        handler.send_json(status, data, headers)

    @staticmethod
    def _send_raw(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _send_error(self, handler: JsonHandler, reply: Reply) -> None:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_exceeded",
        }.get(reply.status, "server_error")
        self._send_json(
            handler,
            reply.status,
            {"error": {"message": reply.error_message, "type": kind, "code": None}},
            reply.headers,
        )

    def _send_stream(
        self, handler: BaseHTTPRequestHandler, body: dict[str, Any], reply: Reply
    ) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("connection", "close")
        handler.end_headers()
        base = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> None:
            data = {
                **base,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            handler.wfile.write(f"data: {json.dumps(data)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        content = reply.content or ""
        for start in range(0, len(content), 16):
            chunk({"content": content[start : start + 16]})
        for i, call in enumerate(self._calls(reply)):
            chunk({"tool_calls": [{"index": i, **call}]})
        chunk({}, "tool_calls" if reply.tool_calls else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            data = {**base, "choices": [], "usage": self._usage(body, reply)}
            handler.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True
