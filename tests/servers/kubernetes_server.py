"""A local server that answers like the Kubernetes API for Jobs (``batch/v1``), for the
official ``kubernetes`` client: create (201; 409 ``AlreadyExists``; 422 ``Invalid`` for a
name that is not a DNS-1123 label), get (404 ``NotFound``), list, delete, and the watch
stream (``?watch=true``: chunked JSON lines of ADDED / MODIFIED / DELETED events, ended
at ``timeoutSeconds``). Errors are ``Status`` objects, as the API server sends them; a
request without the bearer token is 401.

Also Secrets (``v1``: create, get, replace, merge-patch, delete; ``stringData`` is stored
as base64 ``data``; a Secret whose ``ownerReferences`` name a deleted Job is collected, as
the garbage collector does) and the pods of a Job (list by ``labelSelector=job-name=…``).

No API server installs on these machines (not on PyPI, npm or Debian); this one follows
the API's documented shapes. Tests finish Jobs with ``finish(name, ok)``, or with a
container's ``exit_code``: then the Job's ``podFailurePolicy`` decides (a ``FailJob`` rule
on the code: ``Failed``/``PodFailurePolicy`` after one pod; else pods are retried up to
``backoffLimit``, then ``Failed``/``BackoffLimitExceeded``).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.servers.base import JsonHandler, LocalHTTPServer

__all__ = ["FakeKubernetes"]

_JOBS = re.compile(r"^/apis/batch/v1/namespaces/([^/]+)/jobs(?:/([^/]+))?$")
_SECRETS = re.compile(r"^/api/v1/namespaces/([^/]+)/secrets(?:/([^/]+))?$")
_PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }


class FakeKubernetes(LocalHTTPServer):
    def __init__(self, token: str = "k8s-test-token") -> None:
        self.token = token
        self.jobs: dict[tuple[str, str], dict[str, Any]] = {}
        self.events: list[tuple[int, str, dict[str, Any]]] = []  # (rv, type, object)
        self.creates: list[dict[str, Any]] = []  # every POST body, accepted or not
        self.deleted: list[str] = []
        self.rv = 100
        self.create_faults: list[int] = []  # statuses for the next creates (503, 429, 403)
        self.secrets: dict[tuple[str, str], dict[str, Any]] = {}
        self.pods: dict[str, list[dict[str, Any]]] = {}  # job name -> its pods
        self.cond = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- what tests do -------------------------------------------------------------
    def finish(
        self, name: str, ok: bool = True, reason: str = "", exit_code: int | None = None
    ) -> None:
        with self.cond:
            job = next(j for (ns, n), j in self.jobs.items() if n == name)
            if exit_code is not None:
                ok, reason = exit_code == 0, self._run_pods(job, exit_code)
            kind = "Complete" if ok else "Failed"
            job["status"] = {
                "succeeded" if ok else "failed": 1,
                "conditions": [{"type": kind, "status": "True", "reason": reason or kind}],
            }
            self._event("MODIFIED", job)

    def _run_pods(self, job: dict[str, Any], exit_code: int) -> str:
        """The pods the Job controller would run for a container that exits so."""
        spec = job["spec"]
        fail_job = any(
            rule.get("action") == "FailJob"
            and exit_code in (rule.get("onExitCodes") or {}).get("values", [])
            for rule in (spec.get("podFailurePolicy") or {}).get("rules", [])
        )
        runs = 1 if exit_code == 0 or fail_job else int(spec.get("backoffLimit", 6)) + 1
        name = job["metadata"]["name"]
        ns = job["metadata"]["namespace"]
        for n in range(runs):
            terminated = {
                "exitCode": exit_code,
                "reason": "Completed" if not exit_code else "Error",
            }
            self.pods.setdefault(name, []).append(
                {
                    "metadata": {
                        "name": f"{name}-{n}",
                        "namespace": ns,
                        "labels": {"job-name": name},
                    },
                    "status": {
                        "phase": "Succeeded" if not exit_code else "Failed",
                        "containerStatuses": [
                            {
                                "name": "nova",
                                "state": {"terminated": terminated},
                                "ready": False,
                                "restartCount": 0,
                                "image": "",
                                "imageID": "",
                            }
                        ],
                    },
                }
            )
        return (
            "Complete"
            if not exit_code
            else "PodFailurePolicy"
            if fail_job
            else "BackoffLimitExceeded"
        )

    def _event(self, kind: str, job: dict[str, Any]) -> None:
        self.rv += 1
        job["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, kind, json.loads(json.dumps(job))))
        self.cond.notify_all()

    # -- the API -------------------------------------------------------------------
    def handler(self) -> type[JsonHandler]:
        owner = self

        class Handler(JsonHandler):
            def _handle(self) -> None:
                url = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                raw = self.read_body()
                if self.headers.get("authorization") != f"Bearer {owner.token}":
                    self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
                    return
                if _SECRETS.match(url.path) or _PODS.match(url.path):
                    code, body = owner._core(self.command, url.path, raw, query)
                    self.send_json(code, body)
                    return
                m = _JOBS.match(url.path)
                if not m:
                    self.send_json(
                        404,
                        status(404, "NotFound", "the server could not find the requested resource"),
                    )
                    return
                ns, name = m.group(1), m.group(2)
                if self.command == "GET" and name is None and query.get("watch") in ("true", "1"):
                    owner._watch(self, ns, query)
                    return
                code, body = owner._route(self.command, ns, name, raw, query)
                self.send_json(code, body)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _handle  # noqa: N815

        return Handler

    def _route(
        self, method: str, ns: str, name: str | None, raw: bytes, query: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        with self.cond:
            if method == "POST" and name is None:
                return self._create(ns, json.loads(raw or b"{}"))
            if method == "GET" and name is None:
                items = [j for (n_s, _), j in self.jobs.items() if n_s == ns]
                items = [j for j in items if _selected(j, query.get("fieldSelector", ""))]
                return 200, {
                    "kind": "JobList",
                    "apiVersion": "batch/v1",
                    "metadata": {"resourceVersion": str(self.rv)},
                    "items": items,
                }
            job = self.jobs.get((ns, name or ""))
            if job is None:
                return 404, status(
                    404,
                    "NotFound",
                    f'jobs.batch "{name}" not found',
                    name=name,
                    group="batch",
                    kind="jobs",
                )
            if method == "GET":
                return 200, job
            if method == "DELETE":
                del self.jobs[(ns, name or "")]
                uid = job["metadata"]["uid"]
                for key, secret in list(self.secrets.items()):  # the garbage collector
                    owners = secret["metadata"].get("ownerReferences") or []
                    if any(o.get("uid") == uid for o in owners):
                        del self.secrets[key]
                self.deleted.append(name or "")
                self._event("DELETED", job)
                return 200, status(200, "", "", name=name, group="batch", kind="jobs")
        return 405, status(405, "MethodNotAllowed", "method not allowed")

    def _core(
        self, method: str, path: str, raw: bytes, query: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        with self.cond:
            pods = _PODS.match(path)
            if pods and method == "GET":
                _, _, job = query.get("labelSelector", "").partition("job-name=")
                items = self.pods.get(job, [])
                return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}
            m = _SECRETS.match(path)
            assert m is not None
            ns, name = m.group(1), m.group(2)
            body = json.loads(raw or b"{}")
            if method == "POST" and name is None:
                name = str(body["metadata"]["name"])
                if (ns, name) in self.secrets:
                    message = f'secrets "{name}" already exists'
                    return 409, status(409, "AlreadyExists", message, name=name, kind="secrets")
                return 201, self._store_secret(ns, name, body)
            secret = self.secrets.get((ns, name or ""))
            if secret is None:
                return 404, status(404, "NotFound", f'secrets "{name}" not found', name=name)
            if method == "GET":
                return 200, secret
            if method == "PUT":
                return 200, self._store_secret(ns, name or "", body)
            if method == "PATCH":  # a JSON merge patch
                merged = json.loads(json.dumps(secret))
                merged["metadata"].update(body.get("metadata") or {})
                merged.setdefault("data", {}).update(body.get("data") or {})
                return 200, self._store_secret(ns, name or "", merged)
            if method == "DELETE":
                del self.secrets[(ns, name or "")]
                return 200, status(200, "", "", name=name, kind="secrets")
        return 405, status(405, "MethodNotAllowed", "method not allowed")

    def _store_secret(self, ns: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        data = dict(body.get("data") or {})
        for key, value in (body.get("stringData") or {}).items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        secret = {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {**body["metadata"], "name": name, "namespace": ns},
            "type": body.get("type", "Opaque"),
            "data": data,
        }
        self.secrets[(ns, name)] = secret
        return secret

    def _create(self, ns: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.creates.append(body)
        if self.create_faults:
            code = self.create_faults.pop(0)
            reason = {403: "Forbidden", 429: "TooManyRequests"}.get(code, "ServiceUnavailable")
            message = (
                'jobs.batch is forbidden: User "system:serviceaccount:nova:nova-serve" cannot '
                'create resource "jobs"'
                if code == 403
                else "the server is currently unable to handle the request"
            )
            return code, status(code, reason, message, group="batch", kind="jobs")
        name = str((body.get("metadata") or {}).get("name") or "")
        if not _DNS1123.match(name) or len(name) > 63:
            message = f'Job.batch "{name}" is invalid: metadata.name: Invalid value'
            return 422, status(422, "Invalid", message, name=name, group="batch", kind="Job")
        if (ns, name) in self.jobs:
            message = f'jobs.batch "{name}" already exists'
            return 409, status(409, "AlreadyExists", message, name=name, group="batch", kind="jobs")
        job = {
            "kind": "Job",
            "apiVersion": "batch/v1",
            **body,
            "metadata": {
                **body["metadata"],
                "namespace": ns,
                "uid": f"uid-{len(self.creates)}",
                "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
            "status": {},
        }
        self.jobs[(ns, name)] = job
        self._event("ADDED", job)
        return 201, job

    def _watch(self, handler: JsonHandler, ns: str, query: dict[str, str]) -> None:
        """Chunked JSON lines, from ``resourceVersion`` on, until ``timeoutSeconds``."""
        since = int(query.get("resourceVersion") or 0)
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 30)
        selector = query.get("fieldSelector", "")
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        sent = since
        try:
            while time.monotonic() < deadline and not self.stopping.is_set():
                with self.cond:
                    fresh = [e for e in self.events if e[0] > sent]
                    if not fresh:
                        self.cond.wait(min(0.2, max(0.0, deadline - time.monotonic())))
                        continue
                for rv, kind, obj in fresh:
                    sent = rv
                    if obj["metadata"].get("namespace") != ns or not _selected(obj, selector):
                        continue
                    line = json.dumps({"type": kind, "object": obj}).encode() + b"\n"
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


def _selected(job: dict[str, Any], selector: str) -> bool:
    for part in filter(None, selector.split(",")):
        key, _, value = part.partition("=")
        if key == "metadata.name" and job["metadata"].get("name") != value:
            return False
    return True
