"""The ASGI app: verify, classify, queue, answer — within milliseconds; jobs run elsewhere.

Every webhook endpoint refuses (403) while its secret is unset, answers 413 for a body over
``NOVA_SERVE_MAX_BODY`` and 401 for a bad or missing signature, before anything is parsed
or stored. A delivery that starts no job is answered 200 ``ignored`` (GitLab disables a
hook after repeated 4xx/5xx).

What is not authenticated yet costs little: GitLab's token (a header) is checked before
the body is read, and a GitHub or Herald delivery without a well-formed signature header is
refused before it; the bodies read at once share one memory budget
(``NOVA_SERVE_BODY_MEMORY``: a body reserves its size before its first byte is read, and
waits at most ``NOVA_SERVE_BODY_TIMEOUT`` for room), and a body must arrive within
``NOVA_SERVE_BODY_TIMEOUT``: else 408, and the connection is closed. Unread bodies stay
in the kernel's socket buffers: uvicorn stops reading a connection whose request the app
has not consumed."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bot.errors import NovaError, redact
from bot.hosts.github import webhook as github
from bot.hosts.gitlab import webhook as gitlab
from bot.hosts.phabricator import webhook as phabricator
from bot.serve import metrics
from bot.serve.classify import Context
from bot.serve.dispatch import Dispatcher
from bot.serve.jobs import Cancel, Ignored, JobRequest
from bot.serve.origins import Origins
from bot.serve.queue import Queue
from bot.serve.settings import ServeSettings

__all__ = ["Server", "build_app"]

log = logging.getLogger("nova.serve")
Resolver = Callable[[JobRequest], "JobRequest | Ignored"]


class Verifier(Protocol):
    """A host's webhook module: ``signed`` looks at the headers only (before the body is
    read), ``verify`` at the body too."""

    def signed(self, headers: Mapping[str, str], secret: str) -> bool: ...

    def verify(self, headers: Mapping[str, str], body: bytes, secret: str) -> bool: ...


class _TooLarge(Exception):
    pass


class Budget:
    """Bytes of request bodies held in memory at once, across all requests."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.free = total
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def reserve(self, size: int, wait: float) -> AsyncIterator[None]:
        """``size`` bytes for the block; TimeoutError when they are not free within
        ``wait`` seconds."""
        size = min(size, self.total)
        async with asyncio.timeout(wait), self._changed:
            await self._changed.wait_for(lambda: self.free >= size)
            self.free -= size
        try:
            yield
        finally:
            async with self._changed:
                self.free += size
                self._changed.notify_all()


@dataclass
class Server:
    """What the handlers share. It holds the webhook secrets (``ServeSettings``) and the
    queue — never a host token or the model key."""

    settings: ServeSettings
    context: Context
    queue: Queue
    make_dispatcher: Callable[[Queue], Dispatcher]
    herald: Resolver | None = None  # looks a revision up over Conduit
    dispatcher: Dispatcher | None = None
    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    lock: IO[str] | None = None  # the data directory's lock (``queue.hold``)
    origins: Origins = field(default_factory=lambda: Origins({}))  # where tokens may go
    budget: Budget | None = None  # made on first use (an asyncio object: in the loop)

    def close(self) -> None:
        self.queue.close()
        if self.lock is not None:
            self.lock.close()

    # -- the endpoints -------------------------------------------------------------
    async def github(self, request: Request) -> Response:
        secret = self.settings.github_webhook_secret
        body, refused = await self._checked(request, "github", secret, github)
        if refused:
            return refused
        if request.headers.get("x-github-event") == "ping":
            return self._answer("github", 200, {"status": "pong"})
        payload = _json(body)
        if payload is None:
            return self._answer("github", 400, {"error": "the body is not a JSON object"})
        delivery = github.delivery_id(request.headers, body)
        return await self._submit(
            "github", github.classify(request.headers, payload, delivery, self.context)
        )

    async def gitlab(self, request: Request) -> Response:
        secret = self.settings.gitlab_webhook_token
        body, refused = await self._checked(request, "gitlab", secret, gitlab)
        if refused:
            return refused
        payload = _json(body)
        if payload is None:
            return self._answer("gitlab", 400, {"error": "the body is not a JSON object"})
        delivery = gitlab.delivery_id(request.headers, body)
        return await self._submit(
            "gitlab", gitlab.classify(request.headers, payload, delivery, self.context)
        )

    async def phabricator(self, request: Request) -> Response:
        secret = self.settings.phabricator_webhook_secret
        body, refused = await self._checked(request, "phabricator", secret, phabricator)
        if refused:
            return refused
        payload = _json(body)
        if payload is None:
            return self._answer("phabricator", 400, {"error": "the body is not a JSON object"})
        found = phabricator.classify_herald(payload)
        if isinstance(found, JobRequest):
            if self.herald is None:
                found = Ignored("Phabricator is not configured (PHABRICATOR_URL, ..._API_TOKEN)")
            else:
                try:
                    found = await asyncio.wait_for(asyncio.to_thread(self.herald, found), 10)
                except (NovaError, TimeoutError) as exc:  # Phorge retries a failed delivery
                    log.warning("herald lookup: %s", redact(str(exc)))
                    return self._answer("phabricator", 503, {"error": "Conduit lookup failed"})
        return await self._submit("phabricator", found)

    async def harbormaster(self, request: Request) -> Response:
        auth = self.settings.harbormaster_auth
        if not auth:
            return self._refused("harbormaster", "NOVA_HARBORMASTER_AUTH")
        if not phabricator.verify_basic(request.headers, auth):
            return self._answer("harbormaster", 401, {"error": "bad credentials"})
        return await self._submit("harbormaster", phabricator.classify_build(request.query_params))

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(self, request: Request) -> Response:
        fault = self.dispatcher.fault if self.dispatcher is not None else None
        if fault is None and not await asyncio.to_thread(self.queue.writable):
            fault = "the storage is not writable"
        if fault is not None:
            return PlainTextResponse(f"the queue {fault}\n", status_code=503)
        return PlainTextResponse("ready\n")

    async def metrics(self, request: Request) -> Response:
        try:  # in a thread: a write stalled on the storage holds the queue's lock
            stats = await asyncio.to_thread(self.queue.stats)
        except sqlite3.Error as exc:
            return PlainTextResponse(f"the queue cannot be read: {exc}\n", status_code=503)
        text = metrics.render(stats, self.requests)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    # -- the steps -----------------------------------------------------------------
    async def _checked(
        self,
        request: Request,
        endpoint: str,
        secret: str | None,
        host: Verifier,
    ) -> tuple[bytes, Response | None]:
        """The raw body, or the refusal: no secret (403), not signed (401: the headers are
        checked before the body is read), too large (413), no room to read it in time or
        too slow (408)."""
        if not secret:
            env = {"github": "NOVA_GITHUB_WEBHOOK_SECRET", "gitlab": "NOVA_GITLAB_WEBHOOK_TOKEN"}
            return b"", self._refused(
                endpoint, env.get(endpoint, "NOVA_PHABRICATOR_WEBHOOK_SECRET")
            )
        if not host.signed(request.headers, secret):
            return b"", self._answer(endpoint, 401, {"error": "bad or missing signature"})
        length = request.headers.get("content-length", "")
        size = int(length) if length.isdigit() else self.settings.max_body
        if size > self.settings.max_body:
            return b"", self._answer(endpoint, 413, {"error": "the body is too large"})
        if self.budget is None:
            self.budget = Budget(max(self.settings.body_memory, self.settings.max_body))
        wait = self.settings.body_timeout
        try:
            async with self.budget.reserve(size, wait), asyncio.timeout(wait):
                body = await _read(request, size)
        except _TooLarge:
            return b"", self._answer(endpoint, 413, {"error": "the body is too large"})
        except TimeoutError:
            return b"", self._answer(endpoint, 408, {"error": "the body came too slowly"})
        if not host.verify(request.headers, body, secret):
            return b"", self._answer(endpoint, 401, {"error": "bad or missing signature"})
        return body, None

    async def _submit(self, endpoint: str, found: JobRequest | Cancel | Ignored) -> Response:
        if isinstance(found, JobRequest):
            found = self.origins.route(found)
            if isinstance(found, Ignored):
                log.warning("%s delivery: %s", endpoint, found.reason)
        if isinstance(found, Ignored):
            return self._answer(endpoint, 200, {"status": "ignored", "reason": found.reason})
        try:  # in a thread: a storage stall never stops the other handlers
            if isinstance(found, Cancel):
                submitted = await asyncio.to_thread(self.queue.cancel, found.change)
            else:
                submitted = await asyncio.to_thread(self.queue.submit, found)
        except sqlite3.Error as exc:  # a full or read-only disk, a lock: nothing was queued
            log.error("queue: cannot take a delivery: %s", exc)
            return self._answer(endpoint, 503, {"error": "the queue cannot take the job now"})
        if submitted.status == "duplicate":
            return self._answer(endpoint, 200, {"status": "duplicate"})
        if submitted.status == "coalesced":  # folded into the change's waiting answer job
            return self._answer(endpoint, 202, {"status": "coalesced", "job": submitted.job})
        if self.dispatcher is not None:
            self.dispatcher.cancel(submitted.cancel)
            self.dispatcher.dropped(submitted.dropped)
            self.dispatcher.wake.set()
        if isinstance(found, Cancel):
            stopped = len(submitted.cancel) + len(submitted.dropped)
            return self._answer(endpoint, 200, {"status": "cancelled", "jobs": stopped})
        body = {
            "status": "queued",
            "job": submitted.job,
            "kind": found.kind,
            "change": found.change,
        }
        return self._answer(endpoint, 202, body)

    def _refused(self, endpoint: str, variable: str) -> Response:
        return self._answer(endpoint, 403, {"error": f"{variable} is not set on this server"})

    def _answer(self, endpoint: str, status: int, body: dict[str, Any]) -> Response:
        self.requests[(endpoint, str(status))] += 1
        # a refused request's connection goes: what is left of its body is never read
        headers = {"connection": "close"} if status >= 400 else None
        return JSONResponse(body, status_code=status, headers=headers)

    # -- the app -------------------------------------------------------------------
    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        requeued, failed = self.queue.recover(self.settings.max_attempts)
        if requeued or failed:
            log.warning(
                "restart: %d jobs queued again, %d failed after their last attempt",
                requeued,
                failed,
            )
        self.dispatcher = self.make_dispatcher(self.queue)
        loop_task = asyncio.create_task(self.dispatcher.loop())
        try:
            yield
        finally:
            await self.dispatcher.stop()
            loop_task.cancel()
            await asyncio.gather(loop_task, return_exceptions=True)


def build_app(server: Server) -> Starlette:
    routes = [
        Route("/webhooks/github", server.github, methods=["POST"]),
        Route("/webhooks/gitlab", server.gitlab, methods=["POST"]),
        Route("/webhooks/phabricator", server.phabricator, methods=["POST"]),
        Route("/harbormaster", server.harbormaster, methods=["GET", "POST"]),
        Route("/healthz", server.healthz, methods=["GET"]),
        Route("/readyz", server.readyz, methods=["GET"]),
        Route("/metrics", server.metrics, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=server.lifespan)


async def _read(request: Request, limit: int) -> bytes:
    """At most ``limit`` bytes, into one growing buffer. The final copy to ``bytes`` runs
    without a pause in the event loop: at most one body is ever held twice."""
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > limit:
            raise _TooLarge
        body += chunk
    return bytes(body)


def _json(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None
