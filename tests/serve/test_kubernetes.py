"""``--executor kubernetes`` against a local server that answers like the Kubernetes API
(tests/servers/kubernetes_server.py), through the official client and a kubeconfig."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.errors import ServiceError
from bot.serve.executors import Outcome
from bot.serve.executors.kubernetes import KubernetesExecutor, job_name
from bot.serve.jobs import JobRequest
from bot.serve.queue import Job
from tests.serve.support import SECRETS, ServeProcess, base_env, github_post, pull_request
from tests.serve.test_server import _wait
from tests.servers.kubernetes_server import FakeKubernetes

pytestmark = pytest.mark.slow


@pytest.fixture
def k8s() -> Iterator[FakeKubernetes]:
    server = FakeKubernetes().start()
    yield server
    server.stop()


def _kubeconfig(tmp: Path, k8s: FakeKubernetes) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": k8s.url}}],
        "users": [{"name": "nova", "user": {"token": k8s.token}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "nova"}}],
        "current-context": "local",
    }
    path = tmp / "kubeconfig"
    path.write_text(json.dumps(config))  # YAML is a superset of JSON
    return path


def _serve(tmp: Path, k8s: FakeKubernetes, name: str) -> ServeProcess:
    env = base_env(
        tmp,
        KUBECONFIG=str(_kubeconfig(tmp, k8s)),
        GITHUB_TOKEN="ghs_server_side_token",
        NOVA_LLM_API_KEY="sk-model-key",
        NOVA_SERVE_JOB_TIMEOUT="600",
        NOVA_SERVE_IMAGE="registry.local/nova:1",
    )
    env.pop("KUBERNETES_SERVICE_HOST", None)
    return ServeProcess(tmp / name, env, "--executor", "kubernetes").start()


def test_the_same_head_twice_is_one_job_even_across_replicas(
    k8s: FakeKubernetes, tmp_path: Path
) -> None:
    replicas = [_serve(tmp_path, k8s, "a"), _serve(tmp_path, k8s, "b")]
    try:
        event = pull_request("acme/shop", 5, "a" * 40)
        for server in replicas:  # a redelivery that reached the other replica
            assert github_post(server.client, "pull_request", event, "d-1").status_code == 202
        assert github_post(replicas[0].client, "pull_request", event, "d-1").json() == {
            "status": "duplicate"
        }
        _wait(lambda: len(k8s.creates) == 2)
        assert len(k8s.jobs) == 1  # the second create was a 409, and counts as done
        ((_, name),) = k8s.jobs
        job = k8s.jobs[("nova", name)]
        spec = job["spec"]
        assert spec["backoffLimit"] >= 0 and spec["activeDeadlineSeconds"] == 600
        assert spec["ttlSecondsAfterFinished"] > 0
        container = spec["template"]["spec"]["containers"][0]
        assert container["args"] == ["review", "acme/shop#5", "--publish", "github", "-q"]
        assert container["image"] == "registry.local/nova:1"
        assert container["envFrom"] == [  # the shared Secret and this host's, no other host's
            {"secretRef": {"name": "nova-job"}},
            {"secretRef": {"name": "nova-job-github", "optional": True}},
        ]
        text = json.dumps(job)
        for secret in [*SECRETS.values(), "ghs_server_side_token", "sk-model-key"]:
            assert secret not in text
        k8s.finish(name, ok=True)
        for server in replicas:
            server.wait_for(
                lambda m: m['nova_serve_jobs_total{outcome="done"}'] == 1, "the Job's end"
            )
    finally:
        for server in replicas:
            server.stop()


def test_a_newer_head_deletes_the_running_job(k8s: FakeKubernetes, tmp_path: Path) -> None:
    server = _serve(tmp_path, k8s, "a")
    try:
        c = server.client
        github_post(c, "pull_request", pull_request("acme/shop", 5, "a" * 40), "d-a")
        _wait(lambda: len(k8s.jobs) == 1)
        ((_, first),) = k8s.jobs
        github_post(c, "pull_request", pull_request("acme/shop", 5, "b" * 40, "synchronize"), "d-b")
        _wait(lambda: first in k8s.deleted and len(k8s.jobs) == 1)
        ((_, second),) = k8s.jobs
        assert second != first
        k8s.finish(second, ok=False, reason="DeadlineExceeded")
        m = server.wait_for(
            lambda m: m['nova_serve_jobs_total{outcome="timeout"}'] == 1, "the deadline"
        )
        assert m["nova_serve_superseded_total"] == 1
    finally:
        server.stop()


def test_a_testgen_job_clones_in_an_init_container(k8s: FakeKubernetes, tmp_path: Path) -> None:
    env = base_env(
        tmp_path,
        KUBECONFIG=str(_kubeconfig(tmp_path, k8s)),
        NOVA_SERVE_TESTGEN="1",
        GITHUB_API_URL="https://github.example/api/v3",
    )
    env.pop("KUBERNETES_SERVICE_HOST", None)
    server = ServeProcess(tmp_path / "a", env, "--executor", "kubernetes").start()
    try:
        push = {
            "ref": "refs/heads/main",
            "after": "d" * 40,
            "repository": {
                "full_name": "acme/shop",
                "default_branch": "main",
                "clone_url": "https://github.example/acme/shop.git",
            },
            "sender": {"login": "ada", "type": "User"},
        }
        assert github_post(server.client, "push", push, "p-1").status_code == 202
        _wait(lambda: len(k8s.jobs) == 1)
        (job,) = k8s.jobs.values()
        pod = job["spec"]["template"]["spec"]
        (init,) = pod["initContainers"]
        assert init["command"][:2] == ["sh", "-c"]
        init_env = {e["name"]: e["value"] for e in init["env"]}
        assert init_env["NOVA_CLONE_URL"] == "https://github.example/acme/shop.git"
        assert init_env["NOVA_HEAD"] == "d" * 40
        assert init_env["NOVA_GIT_BASE"] == "https://github.example"
        (main,) = pod["containers"]
        assert main["args"] == ["testgen", "d" * 40, "--repo", "checkout", "--publish", "github"]
        assert main["workingDir"] == init["workingDir"] == "/work"
        assert {m["mountPath"] for m in main["volumeMounts"]} >= {"/work", "/tmp"}
        assert {e["name"]: e["value"] for e in main["env"]}["GITHUB_REPOSITORY"] == "acme/shop"
    finally:
        server.stop()


def _executor(k8s: FakeKubernetes) -> KubernetesExecutor:
    from kubernetes import client

    config = client.Configuration()
    config.host = k8s.url
    config.api_key = {"authorization": k8s.token}
    config.api_key_prefix = {"authorization": "Bearer"}
    executor = KubernetesExecutor(
        client.BatchV1Api(client.ApiClient(config)), "nova", "img", "nova-job", 60
    )
    executor.backoff = 0.01
    return executor


def _job(n: int) -> Job:
    ref = f"acme/shop#{n}"
    return Job(n, JobRequest("github", "review", f"github:{ref}", ref, "a" * 40, f"d{n}"), 1)


def test_a_busy_api_is_retried_then_the_job_runs(k8s: FakeKubernetes) -> None:
    k8s.create_faults = [503, 429]
    executor = _executor(k8s)

    async def run() -> Outcome:
        task = asyncio.create_task(executor.run(_job(1), {}))
        while not k8s.jobs:
            await asyncio.sleep(0.02)
        k8s.finish(job_name(_job(1)))
        return await task

    assert asyncio.run(run()) == Outcome("done", 0)
    assert len(k8s.creates) == 3


def test_a_refused_create_is_one_clear_error(k8s: FakeKubernetes) -> None:
    k8s.create_faults = [403]
    with pytest.raises(ServiceError, match="Kubernetes refused Job nova-review-.*403"):
        asyncio.run(_executor(k8s).run(_job(2), {}))
    assert len(k8s.creates) == 1 and not k8s.jobs  # a 403 is not retried


def test_a_head_whose_job_failed_runs_again_one_that_passed_does_not(
    k8s: FakeKubernetes,
) -> None:
    executor = _executor(k8s)
    failed, passed = _job(3), _job(4)

    async def run(job: Job, ok: bool) -> Outcome:
        task = asyncio.create_task(executor.run(job, {}))
        name = job_name(job)
        while ("nova", name) not in k8s.jobs or k8s.jobs[("nova", name)]["status"]:
            await asyncio.sleep(0.02)
        k8s.finish(name, ok=ok)
        return await task

    assert asyncio.run(run(failed, ok=False)).state == "failed"
    assert asyncio.run(run(failed, ok=True)) == Outcome("done", 0)  # a new Job for the retry
    # creates: the first, the retry's 409, the retry's after the old Job was deleted
    assert k8s.deleted == [job_name(failed)] and len(k8s.creates) == 3
    assert asyncio.run(run(passed, ok=True)) == Outcome("done", 0)
    assert asyncio.run(executor.run(passed, {})) == Outcome("done", 0)  # 409: done already
    assert len(k8s.creates) == 5 and len(k8s.deleted) == 1  # the last was a 409


def _finish_when_created(k8s: FakeKubernetes, name: str, **how: Any) -> None:
    def finish() -> None:
        _wait(lambda: ("nova", name) in k8s.jobs and not k8s.jobs[("nova", name)]["status"])
        k8s.finish(name, **how)

    threading.Thread(target=finish, daemon=True).start()


def test_a_restarted_build_target_gets_its_own_job_and_its_verdict(k8s: FakeKubernetes) -> None:
    executor = _executor(k8s)
    ref = "D7:12"
    first, restarted = (
        Job(
            n,
            JobRequest("phabricator", "review", "phabricator:D7", ref, "12", f"hm:{t}", target=t),
            1,
        )
        for n, t in ((1, "PHID-HMBT-aaaa"), (2, "PHID-HMBT-bbbb"))
    )
    assert job_name(first) != job_name(restarted)
    for job in (first, restarted):
        _finish_when_created(k8s, job_name(job), ok=True)
        assert asyncio.run(executor.run(job, {})) == Outcome("done", 0)
    assert len(k8s.jobs) == 2 and len(k8s.creates) == 2  # no 409 taken for a verdict


def test_exit_1_and_3_are_outcomes_and_never_retried(k8s: FakeKubernetes) -> None:
    executor = _executor(k8s)
    expected = {
        1: Outcome("done", 1, "findings at --fail-on"),
        3: Outcome("failed", 3, "the publish was incomplete"),
    }
    for n, code in enumerate((1, 3), start=10):
        job = _job(n)
        _finish_when_created(k8s, job_name(job), exit_code=code)
        assert asyncio.run(executor.run(job, {})) == expected[code]
        assert len(k8s.pods[job_name(job)]) == 1  # one pod: not retried
    crashed = _job(20)
    _finish_when_created(k8s, job_name(crashed), exit_code=2)
    assert asyncio.run(executor.run(crashed, {})).state == "failed"
    assert len(k8s.pods[job_name(crashed)]) == 2  # a crash is retried (backoffLimit 1)


def test_a_short_lived_token_reaches_the_job_only_through_its_own_secret(
    k8s: FakeKubernetes,
) -> None:
    executor = _executor(k8s)
    token = "ghs_installation_token_for_one_repo"
    job = _job(30)
    name = job_name(job)
    _finish_when_created(k8s, name, ok=True)
    env = {"GITHUB_TOKEN": token, "NOVA_GITHUB_LOGIN": "nova-app[bot]", "CI": "true"}
    assert asyncio.run(executor.run(job, env)) == Outcome("done", 0)
    created = k8s.jobs[("nova", name)]
    assert token not in json.dumps(created) and token not in json.dumps(k8s.creates)
    container = created["spec"]["template"]["spec"]["containers"][0]
    refs = {e["name"]: e.get("valueFrom") for e in container["env"]}
    assert refs["GITHUB_TOKEN"] == {"secretKeyRef": {"name": name, "key": "GITHUB_TOKEN"}}
    assert refs["NOVA_GITHUB_LOGIN"] is None  # a plain value stays plain
    secret = k8s.secrets[("nova", name)]
    assert base64.b64decode(secret["data"]["GITHUB_TOKEN"]).decode() == token
    (owner,) = secret["metadata"]["ownerReferences"]
    assert owner["kind"] == "Job" and owner["uid"] == created["metadata"]["uid"]
    executor._delete(name)  # the Job goes (superseded, its TTL): its Secret with it
    assert ("nova", name) not in k8s.secrets
