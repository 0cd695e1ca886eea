"""``--executor kubernetes`` against a local server that answers like the Kubernetes API
(tests/servers/kubernetes_server.py), through the official client and a kubeconfig."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

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
        assert container["envFrom"] == [{"secretRef": {"name": "nova-job"}}]
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
