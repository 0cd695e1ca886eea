"""A local Task Manager implementing docs/task-manager.openapi.yaml, with injectable faults.

tm = FakeTaskManager().start(); tm.add_execution("exec-1")
tm.fail_next(500, times=2)      # the next two requests answer 500
tm.delay = 3.0                  # every answer waits 3 s (a slow service)
tm.token = "secret"             # require "Authorization: Bearer secret"
tm.violations                   # requests whose body broke the OpenAPI schema
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from typing import Any

from tests.servers import openapi
from tests.servers.base import JsonHandler, LocalHTTPServer

_EXEC = re.compile(r"^/api/executions/([^/]+)$")
_STEPS = re.compile(r"^/api/executions/([^/]+)/steps$")
_STEP = re.compile(r"^/api/executions/([^/]+)/steps/([^/]+)$")


class FakeTaskManager(LocalHTTPServer):
    def __init__(self) -> None:
        self.executions: dict[str, dict[str, Any]] = {}
        self.steps: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, Any, dict[str, str]]] = []
        self.violations: list[str] = []
        self.delay = 0.0
        self.token: str | None = None
        self._failures: list[tuple[int, str]] = []
        self._lock = threading.Lock()

    def add_execution(self, execution_id: str) -> None:
        self.executions[execution_id] = {"execution_id": execution_id}

    def fail_next(self, status: int, times: int = 1, error: str = "injected failure") -> None:
        self._failures += [(status, error)] * times

    def steps_of(self, execution_id: str) -> list[dict[str, Any]]:
        return [s for s in self.steps.values() if s["execution_id"] == execution_id]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                raw = self.read_body()
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = owner._route(self.command, self.path, body, headers)
                if owner.delay and owner.stopping.wait(owner.delay):
                    return
                self.send_json(status, payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle  # noqa: N815

        return Handler

    # -- the API ---------------------------------------------------------------------
    @staticmethod
    def _error(status: int, error: str, code: str) -> tuple[int, dict[str, Any]]:
        return status, {"success": False, "error": error, "error_code": code}

    def _check(self, body: Any, schema: str) -> tuple[int, dict[str, Any]] | None:
        problems = openapi.errors(body, schema)
        if problems:
            self.violations.append(f"{schema}: {problems[0]}")
            return self._error(400, f"invalid request body: {problems[0]}", "VALIDATION_ERROR")
        return None

    def _route(
        self, method: str, path: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append((method, path, body, headers))
            if self._failures:
                status, error = self._failures.pop(0)
                return self._error(status, error, f"HTTP_{status}")
            if self.token and headers.get("authorization") != f"Bearer {self.token}":
                return self._error(401, "missing or wrong bearer token", "UNAUTHORIZED")
            if method == "GET" and path == "/api/health":
                return 200, {"success": True, "message": "healthy", "data": {"status": "ok"}}
            if method == "PATCH" and (m := _EXEC.match(path)):
                return self._patch_execution(m.group(1), body)
            if method == "POST" and (m := _STEPS.match(path)):
                return self._create_step(m.group(1), body)
            if method == "PATCH" and (m := _STEP.match(path)):
                return self._patch_step(m.group(1), m.group(2), body)
            return self._error(404, f"no route {method} {path}", "NOT_FOUND")

    def _patch_execution(self, eid: str, body: Any) -> tuple[int, dict[str, Any]]:
        if (bad := self._check(body, "ExecutionPatch")) is not None:
            return bad
        if eid not in self.executions:
            return self._error(404, f"Execution {eid} not found", "NOT_FOUND")
        self.executions[eid].update(body)
        return 200, {"success": True, "message": "Execution updated", "data": self.executions[eid]}

    def _create_step(self, eid: str, body: Any) -> tuple[int, dict[str, Any]]:
        if (bad := self._check(body, "StepCreate")) is not None:
            return bad
        if eid not in self.executions:
            return self._error(404, f"Execution {eid} not found", "NOT_FOUND")
        step = {
            "step_id": uuid.uuid4().hex[:10],
            "execution_id": eid,
            "step_name": body["step_name"],
            "message": body.get("message"),
            "status": body.get("status", "running"),
            "history": [],
        }
        self.steps[step["step_id"]] = step
        return 201, {
            "success": True,
            "message": "Step created",
            "data": {k: v for k, v in step.items() if k != "history"},
        }

    def _patch_step(self, eid: str, sid: str, body: Any) -> tuple[int, dict[str, Any]]:
        if (bad := self._check(body, "StepPatch")) is not None:
            return bad
        step = self.steps.get(sid)
        if step is None or step["execution_id"] != eid:
            return self._error(404, f"Step {sid} not found", "NOT_FOUND")
        step["history"].append(dict(body))
        step.update(body)
        return 200, {
            "success": True,
            "message": "Step updated",
            "data": {k: v for k, v in step.items() if k != "history"},
        }
