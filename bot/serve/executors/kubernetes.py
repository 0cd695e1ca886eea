"""The Kubernetes executor: one Job per (change, head, build target), through the official
client.

The Job's name is derived from everything that makes a job distinct — its key, head and
Harbormaster build target — so a second create of the same job (a redelivery that reached
another replica, a restart) is answered 409 ``AlreadyExists`` and the existing Job is
watched, while a restarted build target gets a Job (and a verdict) of its own. Each Job
has ``backoffLimit``, ``activeDeadlineSeconds`` (the job's deadline),
``ttlSecondsAfterFinished`` and a ``podFailurePolicy``: exit 1 (findings at ``--fail-on``)
and 3 (publish incomplete) are the job's outcome, never retried (the exit code is read from
the Job's pod); an evicted pod does not count as a failure.

Credentials: the shared Secret ``NOVA_SERVE_JOB_SECRET`` (the model key, settings) and the
job's own host's Secret ``NOVA_SERVE_JOB_SECRET-<host>`` (``nova-job-github``: its token),
never another host's. A job's own secret values (the GitHub App's installation token) go
into a Secret of the Job's own, named after it and owned by it (collected with it), and
reach the container by ``secretKeyRef``: never a plain value in the Job or Pod spec. The
server's secrets never reach a Job. A superseded job's Job is deleted (its pods with it).

The client is synchronous: each call runs in a worker thread; the watch is read in short
windows so a cancelled job's thread ends soon."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from bot.errors import ConfigError, ServiceError
from bot.serve.executors import Outcome
from bot.serve.origins import Origins
from bot.serve.queue import Job

if TYPE_CHECKING:
    from bot.serve.settings import ServeSettings

__all__ = ["CLONE_SCRIPT", "KubernetesExecutor", "job_name", "job_manifest"]

UID = 10001  # the image's user
TTL_AFTER_FINISHED = 3600
BACKOFF_LIMIT = 1
_WATCH_WINDOW = 10  # seconds per watch request
_RETRIES = 3


_SECRET_VALUE = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|AUTH")  # a variable's name says so


def job_name(job: Job) -> str:
    """``nova-<kind>-<digest of key, head and build target>``: a DNS-1123 label, stable
    per job, distinct for a restarted build target."""
    r = job.request
    digest = hashlib.sha256(f"{r.key}\0{r.head}\0{r.target or ''}".encode()).hexdigest()[:24]
    return f"nova-{r.kind}-{digest}"


def split_env(env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(plain values, secret values): a name with TOKEN, KEY, SECRET, PASSWORD or AUTH in
    it is a secret."""
    secret = {k: v for k, v in env.items() if _SECRET_VALUE.search(k)}
    return {k: v for k, v in env.items() if k not in secret}, secret


def _label(text: str) -> str:
    """A label value (63 characters of [A-Za-z0-9_.-], alphanumeric at both ends)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:63].strip("_.-") or "none"


# A testgen Job clones first (an init container, same image): the token becomes git's
# Authorization header in git's environment, never in a URL, an argument or .git/config;
# the URL must be under the configured host's base (NOVA_GIT_BASE) and no redirect is
# followed, so the header goes nowhere else.
CLONE_SCRIPT = """set -eu
export GIT_TERMINAL_PROMPT=0
case "$NOVA_HOST" in
  github) user=x-access-token token="${GITHUB_TOKEN:-}" ;;
  *) user=oauth2 token="${GITLAB_TOKEN:-}" ;;
esac
if [ -n "$token" ]; then
  basic=$(printf '%s:%s' "$user" "$token" | base64 | tr -d '\\n')
  export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=http.extraHeader
  export GIT_CONFIG_VALUE_0="Authorization: Basic $basic"
  export GIT_CONFIG_KEY_1=http.followRedirects GIT_CONFIG_VALUE_1=false
fi
case "$NOVA_CLONE_URL" in
  "${NOVA_GIT_BASE:?}"/*) ;;
  *) echo "refused: the clone URL is not on the configured host $NOVA_GIT_BASE" >&2; exit 2 ;;
esac
work="${NOVA_WORK:-/work}"
git clone --quiet --no-tags "$NOVA_CLONE_URL" "$work/checkout"
git -C "$work/checkout" checkout --quiet --detach "$NOVA_HEAD"
"""
_MOUNTS = [
    {"name": "tmp", "mountPath": "/tmp"},
    {"name": "home", "mountPath": "/home/nova"},
    {"name": "work", "mountPath": "/work"},
]


def _container(
    name: str, image: str, secrets: tuple[str, str, str], env: dict[str, str]
) -> dict[str, Any]:
    """``secrets``: the shared Secret, the host's, the Job's own (its secret values)."""
    shared, host, own = secrets
    plain, secret = split_env(env)
    refs = [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": own, "key": k}}} for k in sorted(secret)
    ]
    return {
        "name": name,
        "image": image,
        "workingDir": "/work",
        "env": [{"name": k, "value": v} for k, v in sorted(plain.items())] + refs,
        "envFrom": [
            {"secretRef": {"name": shared}},
            {"secretRef": {"name": host, "optional": True}},
        ],
        "securityContext": {
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": _MOUNTS,
    }


def job_manifest(
    job: Job, env: dict[str, str], image: str, secret: str, deadline: float, git_base: str = ""
) -> dict[str, Any]:
    request = job.request
    secrets = (secret, f"{secret}-{request.host}", job_name(job))
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": {"runAsUser": UID, "runAsNonRoot": True},
        "containers": [{**_container("nova", image, secrets, env), "args": request.argv()}],
        "volumes": [{"name": m["name"], "emptyDir": {}} for m in _MOUNTS],
    }
    if request.kind == "testgen":
        clone_env = {
            **env,
            "NOVA_HOST": request.host,
            "NOVA_CLONE_URL": request.clone_url or "",
            "NOVA_GIT_BASE": git_base,
            "NOVA_HEAD": request.head,
        }
        clone = _container("checkout", image, secrets, clone_env)
        pod["initContainers"] = [{**clone, "command": ["sh", "-c", CLONE_SCRIPT]}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(job),
            "labels": {"app.kubernetes.io/name": "nova", "nova/kind": request.kind},
            "annotations": {"nova/change": request.change, "nova/head": _label(request.head)},
        },
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "podFailurePolicy": {
                "rules": [
                    {  # the job's outcome (findings; publish incomplete): no retry
                        "action": "FailJob",
                        "onExitCodes": {
                            "containerName": "nova",
                            "operator": "In",
                            "values": [1, 3],
                        },
                    },
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
            "activeDeadlineSeconds": max(1, int(deadline)),
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "nova-job"}},
                "spec": pod,
            },
        },
    }


class KubernetesExecutor:
    def __init__(
        self,
        api: Any,
        namespace: str,
        image: str,
        secret: str,
        deadline: float,
        max_jobs: int = 4,
        origins: Origins | None = None,
        core: Any = None,
    ) -> None:
        self.api = api  # kubernetes.client.BatchV1Api
        if core is None:  # Secrets and pods, through the same connection
            from kubernetes import client

            core = client.CoreV1Api(api.api_client)
        self.core = core  # kubernetes.client.CoreV1Api
        self.origins = origins or Origins({})
        self.namespace = namespace
        self.image = image
        self.secret = secret
        self.deadline = deadline
        self.detached = False
        self.backoff = 1.0  # seconds before the first retry of a 429/5xx create; doubles
        # one thread per watched Job, apart from asyncio's default pool (the handlers'
        # lookups and /readyz must never wait behind a long watch)
        self.threads = ThreadPoolExecutor(max_jobs + 1, thread_name_prefix="nova-k8s")

    def detach(self) -> None:
        self.detached = True

    @classmethod
    def from_settings(cls, serve: ServeSettings, origins: Origins) -> KubernetesExecutor:
        """In a pod: its service account; elsewhere: the kubeconfig (``KUBECONFIG``)."""
        from bot.extras import require_extra

        require_extra("kubernetes", "nova serve --executor kubernetes", "kubernetes")
        from kubernetes import client, config

        try:
            config.load_incluster_config()
        except config.ConfigException:
            try:
                config.load_kube_config()
            except (config.ConfigException, OSError) as exc:
                raise ConfigError(
                    f"no Kubernetes configuration (in-cluster or kubeconfig): {exc}"
                ) from exc
        return cls(
            client.BatchV1Api(),
            serve.namespace,
            serve.image,
            serve.job_secret,
            serve.job_timeout,
            serve.max_jobs,
            origins,
            client.CoreV1Api(),
        )

    async def run(self, job: Job, env: dict[str, str]) -> Outcome:
        stop = threading.Event()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.threads, self._run, job, env, stop)
        except asyncio.CancelledError:
            stop.set()
            if not self.detached:  # superseded: the Job goes (a restart finds it by name)
                await asyncio.shield(asyncio.to_thread(self._delete, job_name(job)))
            raise

    def _run(self, job: Job, env: dict[str, str], stop: threading.Event) -> Outcome:
        name = job_name(job)
        if job.request.kind == "testgen" and not self.origins.allows(job.request):
            return Outcome("failed", None, "no clone URL on the configured host")
        base = self.origins.bases.get(job.request.host, "")
        body = job_manifest(job, env, self.image, self.secret, self.deadline, base)
        _, secret = split_env(env)
        if secret:
            self._put_secret(name, secret)
        if not self._create(name, body) and self._failed(name):
            # this head's Job failed before (and waits for its TTL): a new request for
            # the head is a retry, so the old Job goes and a new one runs
            self._delete(name)
            if secret:  # collected with the old Job
                self._put_secret(name, secret)
            self._create(name, body)
        if secret:
            self._own(name)
        return self._watch(name, stop)

    def _put_secret(self, name: str, data: dict[str, str]) -> None:
        """The Job's own Secret (its short-lived token), created or replaced."""
        from kubernetes.client.exceptions import ApiException

        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "nova-job"}},
            "type": "Opaque",
            "stringData": data,
        }
        try:
            try:
                self.core.create_namespaced_secret(self.namespace, body)
            except ApiException as exc:
                if exc.status != 409:
                    raise
                self.core.replace_namespaced_secret(name, self.namespace, body)
        except ApiException as exc:
            raise ServiceError(f"Kubernetes refused Secret {name}: HTTP {exc.status}") from exc

    def _own(self, name: str) -> None:
        """The Job owns its Secret: the garbage collector removes it with the Job."""
        from kubernetes.client.exceptions import ApiException

        try:
            uid = self.api.read_namespaced_job(name, self.namespace).metadata.uid
            owner = {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid}
            patch = {"metadata": {"ownerReferences": [owner]}}
            self.core.patch_namespaced_secret(name, self.namespace, patch)
        except ApiException as exc:
            raise ServiceError(
                f"Kubernetes: cannot give Secret {name} its Job: {exc.status}"
            ) from exc

    def _outcome(self, name: str, status: Any) -> Outcome | None:
        """The Job's end; for one the pod failure policy ended, the exit code decides."""
        done = _ended(status)
        if done is None or done.detail != "Job failed: PodFailurePolicy":
            return done
        code = self._exit_code(name)
        if code == 1:
            return Outcome("done", 1, "findings at --fail-on")
        if code == 3:
            return Outcome("failed", 3, "the publish was incomplete")
        return Outcome("failed", code, done.detail)

    def _exit_code(self, name: str) -> int | None:
        from kubernetes.client.exceptions import ApiException

        try:
            pods = self.core.list_namespaced_pod(self.namespace, label_selector=f"job-name={name}")
        except ApiException as exc:
            raise ServiceError(f"Kubernetes: cannot read Job {name}'s pods: {exc.status}") from exc
        for pod in pods.items:
            for container in (pod.status.container_statuses if pod.status else None) or []:
                ended = container.state.terminated if container.state else None
                if container.name == "nova" and ended is not None:
                    return int(ended.exit_code)
        return None

    def _failed(self, name: str) -> bool:
        from kubernetes.client.exceptions import ApiException

        try:
            current = self.api.read_namespaced_job(name, self.namespace)
        except ApiException:
            return False  # gone or unreadable: the watch says what happened
        done = self._outcome(name, current.status)
        return done is not None and done.state != "done"

    def _create(self, name: str, body: dict[str, Any]) -> bool:
        """Create the Job; False when this head's Job exists already (409)."""
        from kubernetes.client.exceptions import ApiException

        for attempt in range(_RETRIES):
            try:
                self.api.create_namespaced_job(self.namespace, body)
                return True
            except ApiException as exc:
                if exc.status == 409:
                    return False  # a redelivery, another replica, a restart: watch it
                if exc.status not in (429, 500, 502, 503, 504) or attempt == _RETRIES - 1:
                    raise ServiceError(
                        f"Kubernetes refused Job {name}: HTTP {exc.status} {exc.reason}"
                    ) from exc
            time.sleep(self.backoff * 2**attempt)
        return True  # not reached: the last attempt returns or raises

    def _watch(self, name: str, stop: threading.Event) -> Outcome:
        from kubernetes import watch
        from kubernetes.client.exceptions import ApiException

        selector = f"metadata.name={name}"
        while not stop.is_set():
            try:  # get, then watch from its version: the Role needs no "list"
                current = self.api.read_namespaced_job(name, self.namespace)
            except ApiException as exc:
                if exc.status == 404:
                    return Outcome("failed", None, f"Job {name} was deleted")
                raise ServiceError(f"Kubernetes: cannot read Job {name}: {exc.status}") from exc
            done = self._outcome(name, current.status)
            if done is not None:
                return done
            w = watch.Watch()
            try:
                for event in w.stream(
                    self.api.list_namespaced_job,
                    self.namespace,
                    field_selector=selector,
                    resource_version=current.metadata.resource_version,
                    timeout_seconds=_WATCH_WINDOW,
                ):
                    if event["type"] == "DELETED":
                        return Outcome("failed", None, f"Job {name} was deleted")
                    done = self._outcome(name, event["object"].status)
                    if done is not None or stop.is_set():
                        w.stop()
                        return done or Outcome("superseded")
            except ApiException as exc:
                if exc.status != 410:  # 410 Gone: the version is too old; list again
                    raise ServiceError(f"Kubernetes: watching Job {name}: {exc.status}") from exc
        return Outcome("superseded")

    def _delete(self, name: str) -> None:
        from kubernetes.client.exceptions import ApiException

        try:
            self.api.delete_namespaced_job(name, self.namespace, propagation_policy="Background")
        except ApiException as exc:
            if exc.status != 404:
                raise ServiceError(f"Kubernetes: cannot delete Job {name}: {exc.status}") from exc


def _ended(status: Any) -> Outcome | None:
    for condition in (status.conditions or []) if status is not None else []:
        if condition.status != "True":
            continue
        if condition.type == "Complete":
            return Outcome("done", 0)
        if condition.type == "Failed":
            if condition.reason == "DeadlineExceeded":
                return Outcome("timeout", None, "activeDeadlineSeconds reached")
            return Outcome("failed", None, f"Job failed: {condition.reason}")
    return None
