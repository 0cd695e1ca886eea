"""GitHub App mode: each job gets an installation token minted for its one repository and
writes as the App's bot; the App's key stays in the server."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import GitRepo
from tests.hosts.cart import cart_change
from tests.hosts.github.support import REPO, pull_from_repo
from tests.serve.support import (
    FAKE_JOB,
    ServeProcess,
    base_env,
    ended,
    github_post,
    pull_request,
    started,
)
from tests.serve.test_kubernetes import _kubeconfig
from tests.serve.test_server import _wait
from tests.servers.github_app_server import FakeGitHubApp
from tests.servers.kubernetes_server import FakeKubernetes

pytestmark = pytest.mark.slow
APP_ID = 4242
INSTALLATION = 77


@pytest.fixture(scope="module")
def key_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture
def app(key_pair: tuple[str, str]) -> Iterator[FakeGitHubApp]:
    server = FakeGitHubApp(APP_ID, key_pair[1], "nova-app", {INSTALLATION}).start()
    yield server
    server.stop()


def _serve(tmp: Path, app: FakeGitHubApp, private: str, **env: str) -> ServeProcess:
    key_file = tmp / "app.pem"
    key_file.write_text(private)
    env = base_env(
        tmp,
        GITHUB_API_URL=app.base_url,
        NOVA_GITHUB_WRITE_INTERVAL="0",
        NOVA_GITHUB_APP_ID=str(APP_ID),
        NOVA_GITHUB_APP_PRIVATE_KEY=str(key_file),
        **env,
    )
    return ServeProcess(tmp / "data", env).start()


def _event(number: int, head: str) -> dict:
    return {**pull_request(REPO, number, head), "installation": {"id": INSTALLATION}}


def test_a_job_reviews_with_a_token_for_its_one_repository(
    app: FakeGitHubApp, key_pair: tuple[str, str], repo: GitRepo, tmp_path: Path
) -> None:
    base, head = cart_change(repo)
    app.add_pull(pull_from_repo(repo, base, head))
    server = _serve(tmp_path, app, key_pair[0])
    try:
        assert github_post(server.client, "pull_request", _event(1, head), "a-1").status_code == 202
        m = server.wait_for(lambda m: ended(m) >= 1, "the review")
        assert m['nova_serve_jobs_total{outcome="done"}'] == 1, "".join(server.lines)
        assert len(app.reviews) == 1
        (grant,) = app.minted.values()
        assert grant == {"installation": INSTALLATION, "repositories": ["shop"]}
        own = {
            "action": "created",
            "issue": {"number": 1, "pull_request": {}},
            "comment": {"id": 5, "body": "@nova x", "user": {"login": "nova-app[bot]"}},
            "repository": {"full_name": REPO},
        }
        answer = github_post(server.client, "issue_comment", own, "a-2")
        assert answer.json()["status"] == "ignored"  # the App's own bot, known by its slug
    finally:
        server.stop()


def test_the_app_key_never_reaches_a_job(
    app: FakeGitHubApp, key_pair: tuple[str, str], tmp_path: Path
) -> None:
    hold = tmp_path / "go"
    server = _serve(
        tmp_path, app, key_pair[0], NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold)
    )
    try:
        github_post(server.client, "pull_request", _event(2, "a" * 40), "k-1")
        _wait(lambda: len(started(tmp_path)) == 1)
        (job,) = started(tmp_path)
        raw = Path(f"/proc/{job['pid']}/environ").read_bytes().decode()
        env = dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
        hold.touch()
        assert "NOVA_GITHUB_APP_PRIVATE_KEY" not in env and "NOVA_GITHUB_APP_ID" not in env
        assert "PRIVATE KEY" not in raw
        (token,) = app.minted
        assert env["GITHUB_TOKEN"] == token and env["NOVA_GITHUB_LOGIN"] == "nova-app[bot]"
        server.wait_for(lambda m: ended(m) >= 1, "the job")
    finally:
        server.stop()


def test_a_kubernetes_job_gets_its_installation_token_only_by_reference(
    app: FakeGitHubApp, key_pair: tuple[str, str], tmp_path: Path
) -> None:
    k8s = FakeKubernetes().start()
    key_file = tmp_path / "app.pem"
    key_file.write_text(key_pair[0])
    env = base_env(
        tmp_path,
        GITHUB_API_URL=app.base_url,
        NOVA_GITHUB_APP_ID=str(APP_ID),
        NOVA_GITHUB_APP_PRIVATE_KEY=str(key_file),
        KUBECONFIG=str(_kubeconfig(tmp_path, k8s)),
    )
    env.pop("KUBERNETES_SERVICE_HOST", None)
    server = ServeProcess(tmp_path / "data", env, "--executor", "kubernetes").start()
    try:
        github_post(server.client, "pull_request", _event(3, "c" * 40), "k8s-1")
        _wait(lambda: len(k8s.jobs) == 1 and len(k8s.secrets) == 1)
        ((_, name),) = k8s.jobs
        _wait(lambda: bool(k8s.secrets[("nova", name)]["metadata"].get("ownerReferences")))
        (token,) = app.minted
        job = k8s.jobs[("nova", name)]
        assert token not in json.dumps(job) and token not in json.dumps(k8s.creates)
        (container,) = job["spec"]["template"]["spec"]["containers"]
        refs = {e["name"]: e.get("valueFrom") for e in container["env"]}
        assert refs["GITHUB_TOKEN"] == {"secretKeyRef": {"name": name, "key": "GITHUB_TOKEN"}}
        secret = k8s.secrets[("nova", name)]
        assert base64.b64decode(secret["data"]["GITHUB_TOKEN"]).decode() == token
        assert secret["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
        k8s.finish(name, exit_code=1)  # findings at --fail-on: the job's outcome, not a crash
        m = server.wait_for(lambda m: ended(m) >= 1, "the Job's end")
        assert m['nova_serve_jobs_total{outcome="done"}'] == 1
        assert len(k8s.pods[name]) == 1
    finally:
        server.stop()
        k8s.stop()
