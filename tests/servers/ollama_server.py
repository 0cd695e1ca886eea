"""A local Ollama-compatible server with scripted replies (the native API, not /v1).

Speaks what the ``ollama`` client (and so ``langchain_ollama.ChatOllama``) sends and reads:

- ``POST /api/chat``: NDJSON chunks when ``stream`` is true (ChatOllama always streams),
  one JSON object otherwise; each chunk ``{model, created_at, message: {role, content},
  done: false}``, tool calls as ``message.tool_calls[{function: {name, arguments: <object>}}]``
  (arguments are an object, not a JSON string as in OpenAI's API), and a last chunk with
  ``done: true``, ``done_reason`` and the token counts (``prompt_eval_count``,
  ``eval_count``).
- ``GET /api/tags``: the installed models (``name`` with its ``:latest`` tag).
- ``POST /api/show``: one model's details and capabilities.
- Errors as Ollama returns them: ``{"error": "..."}`` with the HTTP status (404 for a model
  that is not pulled, 500 for a failed run).

    server = FakeOllama(models=("qwen2.5-coder",)).start()
    server.enqueue(text('{"summary": "ok", "comments": []}'))
    ... NOVA_LLM_BASE_URL=server.base_url ...

The scripted replies are ``tests.servers.openai_server.Reply`` objects (``text``,
``tool_call``, ``error``, ``hang``).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from datetime import UTC, datetime
from typing import Any

from tests.servers.base import JsonHandler, LocalHTTPServer
from tests.servers.openai_server import Reply, error

__all__ = ["FakeOllama"]


class FakeOllama(LocalHTTPServer):
    def __init__(self, models: tuple[str, ...] = ("qwen2.5-coder",)) -> None:
        self.models = [m if ":" in m else f"{m}:latest" for m in models]
        self.queue: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []  # /api/chat bodies, in order
        self.paths: list[str] = []  # every request's method and path
        self._lock = threading.Lock()

    def enqueue(self, *replies: Reply) -> FakeOllama:
        self.queue.extend(replies)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _installed(self, name: str) -> str | None:
        full = name if ":" in name else f"{name}:latest"
        return full if full in self.models else None

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.queue:
                return self.queue.popleft()
        return error(500, "the test server has no scripted reply left")

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                owner.paths.append(f"GET {self.path}")
                if self.path.rstrip("/") != "/api/tags":
                    return self.send_json(404, {"error": "404 page not found"})
                return self.send_json(200, {"models": [owner._tag(m) for m in owner.models]})

            def do_POST(self) -> None:  # noqa: N802
                owner.paths.append(f"POST {self.path}")
                body = json.loads(self.read_body() or b"{}")
                path = self.path.rstrip("/")
                if path == "/api/show":
                    return owner._show(self, str(body.get("model") or body.get("name")))
                if path != "/api/chat":
                    return self.send_json(404, {"error": "404 page not found"})
                model = str(body.get("model", ""))
                if owner._installed(model) is None:
                    return self.send_json(404, {"error": f"model '{model}' not found"})
                reply = owner._next(body)
                if reply.hang:
                    owner.stopping.wait(30)
                    return None
                if reply.status != 200:
                    return self.send_json(
                        reply.status, {"error": reply.error_message}, reply.headers
                    )
                if body.get("stream", True):
                    return owner._stream(self, body, reply)
                return self.send_json(200, owner._final(body, reply, whole=True))

        return Handler

    # wire format ---------------------------------------------------------------------
    @staticmethod
    def _tag(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "model": name,
            "modified_at": "2026-01-01T00:00:00Z",
            "size": 4_683_087_332,
            "digest": "0" * 64,
            "details": {
                "format": "gguf",
                "family": "qwen2",
                "parameter_size": "7.6B",
                "quantization_level": "Q4_K_M",
            },
        }

    def _show(self, handler: JsonHandler, name: str) -> None:
        if self._installed(name) is None:
            return handler.send_json(404, {"error": f"model '{name}' not found"})
        return handler.send_json(
            200,
            {
                "modelfile": "",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": self._tag(name)["details"],
                "model_info": {},
                "capabilities": ["completion", "tools"],
            },
        )

    @staticmethod
    def _head(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": body.get("model"),
            "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }

    def _final(self, body: dict[str, Any], reply: Reply, *, whole: bool) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": (reply.content or "") if whole else "",
        }
        if whole and reply.tool_calls:
            message["tool_calls"] = self._calls(reply)
        prompt = len(json.dumps(body.get("messages", []))) // 4
        return {
            **self._head(body),
            "message": message,
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "load_duration": 1000,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 1000,
            "eval_count": len(reply.content or "") // 4 + 10 * len(reply.tool_calls),
            "eval_duration": 1000,
        }

    @staticmethod
    def _calls(reply: Reply) -> list[dict[str, Any]]:
        return [
            {
                "function": {
                    "name": name,
                    "arguments": json.loads(args) if isinstance(args, str) else args,
                }
            }
            for name, args in reply.tool_calls
        ]

    def _stream(self, handler: JsonHandler, body: dict[str, Any], reply: Reply) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/x-ndjson")
        handler.send_header("connection", "close")
        handler.end_headers()

        def line(data: dict[str, Any]) -> None:
            handler.wfile.write(json.dumps(data).encode() + b"\n")

        content = reply.content or ""
        for start in range(0, len(content), 16):
            line(
                {
                    **self._head(body),
                    "done": False,
                    "message": {"role": "assistant", "content": content[start : start + 16]},
                }
            )
        if reply.tool_calls:  # Ollama sends the calls in one chunk before the last
            line(
                {
                    **self._head(body),
                    "done": False,
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": self._calls(reply),
                    },
                }
            )
        line(self._final(body, reply, whole=False))
        handler.wfile.flush()
        handler.close_connection = True
