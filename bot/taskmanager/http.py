"""The Task Manager over HTTP (httpx), following docs/task-manager.openapi.yaml.

Retries: idempotent calls (PATCH, GET) are retried on timeouts (unless ``retry_timeouts``
is off, as for step tracking, whose budget is one timeout), connection errors, 429 and 5xx,
with exponential backoff or the server's numeric ``retry-after``. POST (create_step) is
retried only when the connection was refused, because then nothing reached the server; a
retried POST could otherwise create the step twice.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx

from bot.errors import redact
from bot.taskmanager.client import Envelope, TaskManagerClientBase, fail, ok
from bot.text import without_surrogates_in

__all__ = ["HttpTaskManagerClient"]

_RETRY_STATUS = {429, 500, 502, 503, 504}


def _q(segment: str) -> str:
    return quote(str(segment), safe="")


class HttpTaskManagerClient(TaskManagerClientBase):
    def __init__(
        self,
        base_url: str | None,
        *,
        token: str | None = None,
        timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.2,
        retry_timeouts: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = (base_url or "").rstrip("/")
        self.retries = retries
        self.retry_timeouts = retry_timeouts
        self.backoff = backoff
        self._headers = {"Accept": "application/json", "User-Agent": "nova-bot"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.Client | None = None

    @property
    def _http(self) -> httpx.Client:
        """Created on first use: building one loads the TLS trust store (~50 ms)."""
        if self._client is None:
            self._client = httpx.Client(
                base_url=self.base_url,
                headers=self._headers,
                timeout=self._timeout,
                transport=self._transport,
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, idempotent: bool = True
    ) -> Envelope:
        if not self.base_url:
            return fail(
                "Task Manager URL is not configured (NOVA_TASK_MANAGER_URL)",
                error_code="NOT_CONFIGURED",
            )
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.request(method, path, json=without_surrogates_in(body))
            except httpx.TimeoutException:
                result: Envelope = fail("Request timeout", error_code="TIMEOUT")
                retryable = idempotent and self.retry_timeouts
            except httpx.ConnectError:
                result = fail(
                    f"Connection failed to {self.base_url}", error_code="CONNECTION_FAILED"
                )
                retryable = True
            except httpx.HTTPError as exc:
                result = fail(redact(f"HTTP error: {exc}"), error_code="HTTP_ERROR")
                retryable = idempotent
            else:
                result = self._envelope(response)
                retryable = idempotent and response.status_code in _RETRY_STATUS
            if result["success"] or not retryable or attempt >= self.retries:
                return result
            time.sleep(self._delay(attempt, response if retryable else None))
            attempt += 1

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Honour a numeric ``retry-after`` (capped at 5 s), else exponential backoff."""
        header = response.headers.get("retry-after", "") if response is not None else ""
        if header.isdigit():
            return min(float(header), 5.0)
        return self.backoff * (2.0**attempt)

    @staticmethod
    def _envelope(response: httpx.Response) -> Envelope:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = (body or {}).get("error") if isinstance(body, dict) else None
            code = (body or {}).get("error_code") if isinstance(body, dict) else None
            return fail(
                redact(
                    str(error or f"HTTP {response.status_code} {response.reason_phrase}".strip())
                ),
                error_code=str(code or f"HTTP_{response.status_code}"),
                status_code=response.status_code,
            )
        if isinstance(body, dict) and "success" in body:
            if body["success"]:
                return ok(body.get("data"), str(body.get("message") or "OK"))
            return fail(
                str(body.get("error") or "Task Manager reported a failure"),
                error_code=body.get("error_code"),
                status_code=response.status_code,
            )
        return ok(body, "OK")

    def _patch_execution(
        self, execution_id: str, session_id: str | None, worktree_path: str | None
    ) -> Envelope:
        body = {
            k: v
            for k, v in (("session_id", session_id), ("worktree_path", worktree_path))
            if v is not None
        }
        return self._request("PATCH", f"/api/executions/{_q(execution_id)}", body)

    def _create_step(
        self, execution_id: str, step_name: str, message: str | None, status: str
    ) -> Envelope:
        body: dict[str, Any] = {"step_name": step_name, "status": status}
        if message is not None:
            body["message"] = message
        return self._request(
            "POST", f"/api/executions/{_q(execution_id)}/steps", body, idempotent=False
        )

    def _patch_step(
        self, execution_id: str, step_id: str, status: str | None, message: str | None
    ) -> Envelope:
        body = {k: v for k, v in (("status", status), ("message", message)) if v is not None}
        return self._request(
            "PATCH", f"/api/executions/{_q(execution_id)}/steps/{_q(step_id)}", body
        )

    def health_check(self) -> Envelope:
        return self._request("GET", "/api/health")
