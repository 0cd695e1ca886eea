"""``nova serve`` measured from outside: a real uvicorn on port 0 in its own process,
deliveries over httpx, jobs as real subprocesses (a real ``nova review`` against the local
GitHub server, and a small fake job where many are needed)."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.hosts.cart import cart_change
from tests.hosts.github.support import REPO, TOKEN, pull_from_repo
from tests.hosts.gitlab.test_gitlab import PROJECT, mr_from_repo
from tests.hosts.gitlab.test_gitlab import TOKEN as GL_API_TOKEN
from tests.serve.support import (
    FAKE_JOB,
    GH_SECRET,
    GL_TOKEN,
    SECRETS,
    GitHTTP,
    ServeProcess,
    base_env,
    basic,
    ended,
    ended_records,
    github_post,
    pull_request,
    sign,
    started,
)
from tests.servers.github_server import FakeGitHub
from tests.servers.gitlab_server import FakeGitLab

pytestmark = pytest.mark.slow


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[ServeProcess]]:
    """Start servers with ``start(env, *args)``; all are stopped at the end."""
    started_servers: list[ServeProcess] = []
    yield started_servers
    for s in started_servers:
        s.stop()


def start(servers: list[ServeProcess], tmp: Path, *args: str, **env: str) -> ServeProcess:
    server = ServeProcess(tmp / "data", base_env(tmp, **env), *args).start()
    servers.append(server)
    return server


def adds_up(m: dict[str, float]) -> bool:
    """Every submitted job is queued, running or ended with one outcome."""
    now = m["nova_serve_queue_depth"] + m["nova_serve_running_jobs"]
    return m["nova_serve_jobs_submitted_total"] == now + ended(m)


def rows(tmp: Path) -> int:
    db = tmp / "data" / "queue.sqlite3"
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])


def test_signed_pull_request_is_answered_at_once_and_reviewed_once(
    serve: list[ServeProcess], repo: GitRepo, tmp_path: Path
) -> None:
    gh = FakeGitHub(TOKEN).start()
    try:
        base, head = cart_change(repo)
        gh.add_pull(pull_from_repo(repo, base, head))
        server = start(
            serve,
            tmp_path,
            GITHUB_TOKEN=TOKEN,
            GITHUB_API_URL=gh.base_url,
            NOVA_GITHUB_WRITE_INTERVAL="0",
        )
        answer = github_post(server.client, "pull_request", pull_request(REPO, 1, head), "d-1")
        assert answer.status_code == 202 and answer.json()["status"] == "queued"
        again = github_post(server.client, "pull_request", pull_request(REPO, 1, head), "d-1")
        assert again.json() == {"status": "duplicate"}
        m = server.wait_for(lambda m: ended(m) >= 1, "the review job")
        assert m['nova_serve_jobs_total{outcome="done"}'] == 1, "".join(server.lines)
        assert len(gh.reviews) == 1
        assert any("F401" in c["body"] or "unused" in c["body"] for c in gh.review_comments)
        assert m["nova_serve_duplicates_total"] == 1 and rows(tmp_path) == 1
    finally:
        gh.stop()


def test_bad_or_missing_signatures_leave_no_row_and_no_process(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    server = start(serve, tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_SERVE_MAX_BODY="4096")
    c = server.client
    event = pull_request("acme/shop", 3, "a" * 40)
    assert github_post(c, "pull_request", event, "x1", secret=None).status_code == 401
    assert github_post(c, "pull_request", event, "x2", secret="wrong").status_code == 401
    body = json.dumps(event).encode()
    assert c.post("/webhooks/gitlab", content=body).status_code == 401
    wrong_token = c.post("/webhooks/gitlab", content=body, headers={"X-Gitlab-Token": "nope"})
    assert wrong_token.status_code == 401
    assert c.post("/webhooks/phabricator", content=body).status_code == 401
    bad_hmac = {"X-Phabricator-Webhook-Signature": sign(body, "wrong")[7:]}
    assert c.post("/webhooks/phabricator", content=body, headers=bad_hmac).status_code == 401
    query = "/harbormaster?target=PHID-HMBT-abc&revision=1&diff=2"
    assert c.get(query).status_code == 401
    assert c.get(query, headers={"Authorization": basic("harbor:wrong")}).status_code == 401
    huge = json.dumps({**event, "pad": "x" * 5000}).encode()
    too_big = c.post(
        "/webhooks/github",
        content=huge,
        headers={"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(huge)},
    )
    assert too_big.status_code == 413
    # not JSON, but signed: still nothing queued
    assert (
        c.post("/webhooks/gitlab", content=b"[1", headers={"X-Gitlab-Token": GL_TOKEN}).status_code
        == 400
    )
    ping = github_post(c, "ping", {"zen": "Keep it logically awesome."}, "x3")
    assert ping.status_code == 200 and ping.json() == {"status": "pong"}
    m = server.metrics()
    assert m["nova_serve_jobs_submitted_total"] == 0 and rows(tmp_path) == 0
    assert started(tmp_path) == []
    assert m['nova_serve_requests_total{endpoint="github",status="401"}'] == 2


def test_an_endpoint_whose_secret_is_unset_refuses_everything(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    env = base_env(tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB)
    del env["NOVA_GITLAB_WEBHOOK_TOKEN"]
    server = ServeProcess(tmp_path / "data", env).start()
    serve.append(server)
    body = b'{"object_kind": "merge_request"}'
    refused = server.client.post("/webhooks/gitlab", content=body, headers={"X-Gitlab-Token": ""})
    assert refused.status_code == 403 and "NOVA_GITLAB_WEBHOOK_TOKEN" in refused.text
    assert rows(tmp_path) == 0


def test_a_burst_of_50_never_runs_more_than_n_and_runs_each_once(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    server = start(
        serve, tmp_path, "--max-jobs", "3", NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_SECONDS="0.1"
    )

    def post(n: int) -> int:
        event = pull_request("acme/shop", n, f"{n:040x}")
        return github_post(server.client, "pull_request", event, f"b-{n}").status_code

    with ThreadPoolExecutor(50) as pool:  # all at once
        assert list(pool.map(post, range(1, 51))) == [202] * 50
    m = server.wait_for(lambda m: ended(m) >= 50, "50 jobs")
    assert m['nova_serve_jobs_total{outcome="done"}'] == 50
    records = ended_records(tmp_path)
    refs = Counter(r["argv"][1] for r in records)
    assert refs == Counter({f"acme/shop#{n}": 1 for n in range(1, 51)})
    assert max(r["siblings"] for r in started(tmp_path)) <= 3
    assert m["nova_serve_queue_depth"] == 0 and m["nova_serve_running_jobs"] == 0
    assert adds_up(m)


def test_heads_a_b_c_review_only_c(serve: list[ServeProcess], tmp_path: Path) -> None:
    hold = tmp_path / "go"
    server = start(serve, tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    c = server.client
    first = github_post(c, "pull_request", pull_request("acme/shop", 7, "a" * 40), "h-a")
    assert first.status_code == 202
    server.wait_for(lambda m: m["nova_serve_running_jobs"] == 1, "head A running")
    _wait(lambda: len(started(tmp_path)) == 1)
    for head, action in (("b", "synchronize"), ("c", "synchronize")):
        event = pull_request("acme/shop", 7, head * 40, action)
        assert github_post(c, "pull_request", event, f"h-{head}").status_code == 202
    server.wait_for(lambda m: m["nova_serve_superseded_total"] == 2, "A and B superseded")
    _wait(lambda: len(started(tmp_path)) == 2)  # C started once A's process was gone
    hold.touch()
    m = server.wait_for(lambda m: m['nova_serve_jobs_total{outcome="done"}'] == 1, "C done")
    (only,) = ended_records(tmp_path)
    assert only["argv"][:2] == ["review", "acme/shop#7"]
    assert [s["argv"][1] for s in started(tmp_path)] == ["acme/shop#7"] * 2
    assert m["nova_serve_jobs_submitted_total"] == 3 and adds_up(m)
    with sqlite3.connect(tmp_path / "data" / "queue.sqlite3") as db:
        states = dict(db.execute("SELECT head, state FROM jobs"))
    assert states == {"a" * 40: "superseded", "b" * 40: "superseded", "c" * 40: "done"}


def test_kill_9_with_20_queued_then_restart_runs_all_20_once(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    hold = tmp_path / "go"
    args = ("--max-jobs", "2")
    env = {"NOVA_SERVE_JOB_COMMAND": FAKE_JOB, "NOVA_FAKE_HOLD": str(hold)}
    first = start(serve, tmp_path, *args, **env)
    for n in range(1, 21):
        event = pull_request("acme/shop", n, f"{n:040x}")
        assert github_post(first.client, "pull_request", event, f"k-{n}").status_code == 202
    _wait(lambda: len(started(tmp_path)) == 2)
    pids = [s["pid"] for s in started(tmp_path)]
    first.kill9()
    _wait(lambda: not any(_alive(p) for p in pids))  # the jobs died with their server
    hold.touch()
    second = start(serve, tmp_path, *args, **env)
    m = second.wait_for(lambda m: ended(m) >= 20, "20 jobs after the restart")
    refs = Counter(r["argv"][1] for r in ended_records(tmp_path))
    assert refs == Counter({f"acme/shop#{n}": 1 for n in range(1, 21)})
    assert m['nova_serve_jobs_total{outcome="done"}'] == 20


def test_a_comment_addressing_nova_starts_one_respond_job(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    server = start(
        serve, tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_GITHUB_LOGIN="nova-bot[bot]"
    )
    c = server.client

    def comment(body: str, login: str = "ada", kind: str = "User", cid: int = 55) -> dict:
        return {
            "action": "created",
            "issue": {"number": 9, "pull_request": {"url": "x"}},
            "comment": {"id": cid, "body": body, "user": {"login": login, "type": kind}},
            "repository": {"full_name": "acme/shop"},
        }

    answer = github_post(c, "issue_comment", comment("@nova why is this wrong?"), "c-1")
    assert answer.status_code == 202 and answer.json()["kind"] == "respond"
    ignored = [
        github_post(c, "issue_comment", comment("@nova again", "nova-bot[bot]", "Bot"), "c-2"),
        github_post(c, "issue_comment", comment("@nova hi", "renovate[bot]", "Bot"), "c-3"),
        github_post(c, "issue_comment", comment("thanks, looks good", cid=56), "c-4"),
        github_post(c, "pull_request", pull_request("acme/shop", 9, "d" * 40, "labeled"), "c-5"),
    ]
    assert [r.status_code for r in ignored] == [200] * 4
    assert all(r.json()["status"] == "ignored" for r in ignored)
    server.wait_for(lambda m: ended(m) >= 1, "the respond job")
    (record,) = ended_records(tmp_path)
    assert record["argv"] == ["respond", "acme/shop#9", "--comment", "55"]


def test_readyz_is_503_when_the_storage_is_not_writable(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    server = start(serve, tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB)
    assert server.client.get("/readyz").status_code == 200
    assert server.client.get("/healthz").status_code == 200
    data = tmp_path / "data"
    data.rename(tmp_path / "moved")
    data.write_text("not a directory")
    assert server.client.get("/readyz").status_code == 503
    assert server.client.get("/healthz").status_code == 200


def test_no_job_environment_holds_a_server_secret(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    hold = tmp_path / "go"
    server = start(
        serve,
        tmp_path,
        NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
        NOVA_FAKE_HOLD=str(hold),
        GITHUB_TOKEN="ghs_job_token",
        GITLAB_TOKEN="glpat-job-token",
        NOVA_LLM_API_KEY="sk-model-key",
    )
    github_post(server.client, "pull_request", pull_request("acme/shop", 1, "e" * 40), "e-1")
    mr = {
        "object_kind": "merge_request",
        "project": {"path_with_namespace": "g/p", "default_branch": "main"},
        "object_attributes": {"action": "open", "iid": 4, "last_commit": {"id": "f" * 40}},
        "user": {"username": "ada"},
    }
    server.client.post(
        "/webhooks/gitlab",
        json=mr,
        headers={"X-Gitlab-Token": GL_TOKEN, "X-Gitlab-Event-UUID": "u1"},
    )
    _wait(lambda: len(started(tmp_path)) == 2)
    environs = {}
    for s in started(tmp_path):
        raw = Path(f"/proc/{s['pid']}/environ").read_bytes()
        env = dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
        environs[s["argv"][1]] = {k.decode(): v.decode() for k, v in env.items()}
    hold.touch()
    for env in environs.values():
        for name, secret in SECRETS.items():
            assert name not in env and not any(secret in v for v in env.values())
        assert env["NOVA_LLM_API_KEY"] == "sk-model-key" and env["CI"] == "true"
    assert environs["acme/shop#1"]["GITHUB_TOKEN"] == "ghs_job_token"
    assert "GITLAB_TOKEN" not in environs["acme/shop#1"]
    assert environs["g/p!4"]["GITLAB_TOKEN"] == "glpat-job-token"
    assert "GITHUB_TOKEN" not in environs["g/p!4"]
    server.wait_for(lambda m: ended(m) >= 2, "both jobs")
    assert GH_SECRET not in "".join(server.lines)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _wait(predicate, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_a_merge_to_the_default_branch_runs_testgen_in_a_fresh_checkout(
    serve: list[ServeProcess], repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("shop/total.py", "def total(xs):\n    return sum(xs)\n")
    repo.commit("base")
    repo.write("shop/total.py", "def total(xs):\n    return sum(xs) + 0\n")
    head = repo.commit("merged change")
    git = GitHTTP(tmp_path / "git").start()
    try:
        git.publish(repo.path, "acme/shop.git")
        server = start(
            serve,
            tmp_path,
            NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
            NOVA_SERVE_TESTGEN="true",
            GITHUB_API_URL=git.url,
            GITHUB_TOKEN="ghs_clone_token_0123",
        )
        answer = github_post(server.client, "push", _push(head, f"{git.url}/acme/shop.git"), "t")
        assert answer.status_code == 202 and answer.json()["kind"] == "testgen"
        server.wait_for(lambda m: ended(m) >= 1, "the testgen job")
    finally:
        git.stop()
    (record,) = ended_records(tmp_path)
    assert record["argv"] == ["testgen", head, "--repo", "checkout", "--publish", "github"]
    assert record["repo_head"] == head
    assert list((tmp_path / "data" / "jobs").iterdir()) == []  # the work directory is gone
    token = "Basic " + base64.b64encode(b"x-access-token:ghs_clone_token_0123").decode()
    assert git.seen and all(auth == token for _, auth in git.seen)


def _push(head: str, clone_url: str, repo: str = "acme/shop") -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "after": head,
        "repository": {"full_name": repo, "default_branch": "main", "clone_url": clone_url},
        "sender": {"login": "ada", "type": "User"},
    }


def test_a_token_goes_only_to_the_configured_host(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    """A delivery that knows the webhook secret names a clone URL on another port, another
    scheme, a local path: refused with a log line, and nothing ever asks the other host."""
    git = GitHTTP(tmp_path / "git").start()
    elsewhere = GitHTTP(tmp_path / "elsewhere").start()
    try:
        server = start(
            serve,
            tmp_path,
            NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
            NOVA_SERVE_TESTGEN="true",
            GITHUB_API_URL=git.url,
            GITHUB_TOKEN="ghs_clone_token_0123",
        )
        other_port = f"{elsewhere.url}/acme/shop.git"
        https = git.url.replace("http://", "https://") + "/acme/shop.git"
        urls = [other_port, https, str(tmp_path / "x.git"), "file:///etc", "ssh://h/a.git"]
        for n, url in enumerate(urls):
            answer = github_post(server.client, "push", _push("a" * 40, url), f"bad-{n}")
            assert answer.status_code == 200 and answer.json()["status"] == "ignored"
            assert "refused" in answer.json()["reason"]
        bad_path = github_post(server.client, "push", _push("a" * 40, "", "a/../b"), "bad-p")
        assert bad_path.json()["status"] == "ignored"
        m = server.metrics()
        assert m["nova_serve_jobs_submitted_total"] == 0
        refused = [line for line in server.lines if "not on the configured github host" in line]
        assert len(refused) == len(urls), server.lines
        assert f"{elsewhere.url}" in refused[0] and "ghs_" not in "".join(server.lines)
    finally:
        git.stop()
        elsewhere.stop()
    assert elsewhere.seen == [] and git.seen == []


def test_a_gitlab_merge_request_is_reviewed_once_by_a_real_job(
    serve: list[ServeProcess], repo: GitRepo, tmp_path: Path
) -> None:

    gl = FakeGitLab(GL_API_TOKEN).start()
    try:
        base, head = cart_change(repo)
        gl.add_merge_request(mr_from_repo(repo, base, head))
        server = start(serve, tmp_path, GITLAB_TOKEN=GL_API_TOKEN, GITLAB_URL=gl.url)
        event = {
            "object_kind": "merge_request",
            "user": {"username": "ada"},
            "project": {"path_with_namespace": PROJECT, "default_branch": "main"},
            "object_attributes": {"action": "open", "iid": 1, "last_commit": {"id": head}},
        }
        headers = {"X-Gitlab-Token": GL_TOKEN, "Idempotency-Key": "gl-1"}
        answer = server.client.post("/webhooks/gitlab", json=event, headers=headers)
        assert answer.status_code == 202, answer.text
        retry = server.client.post("/webhooks/gitlab", json=event, headers=headers)
        assert retry.json() == {"status": "duplicate"}  # GitLab's retry, same key
        m = server.wait_for(lambda m: ended(m) >= 1, "the GitLab review")
        assert m['nova_serve_jobs_total{outcome="done"}'] == 1, "".join(server.lines)
        summaries = [n for n in gl.notes if "nova:summary" in n["body"]]
        assert len(summaries) == 1
        assert any("F401" in str(d) for d in gl.discussions)
    finally:
        gl.stop()


def test_a_job_past_its_deadline_is_killed(serve: list[ServeProcess], tmp_path: Path) -> None:
    server = start(
        serve,
        tmp_path,
        NOVA_SERVE_JOB_COMMAND=FAKE_JOB,
        NOVA_FAKE_HOLD=str(tmp_path / "never"),
        NOVA_SERVE_JOB_TIMEOUT="0.5",
    )
    event = pull_request("acme/shop", 1, "a" * 40)
    assert github_post(server.client, "pull_request", event, "t-1").status_code == 202
    m = server.wait_for(lambda m: ended(m) >= 1, "the deadline")
    assert m['nova_serve_jobs_total{outcome="timeout"}'] == 1
    (job,) = started(tmp_path)
    _wait(lambda: not _alive(job["pid"]))
    assert ended_records(tmp_path) == []


def test_closing_a_pull_request_stops_its_job(serve: list[ServeProcess], tmp_path: Path) -> None:
    hold = tmp_path / "never"
    server = start(serve, tmp_path, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    event = pull_request("acme/shop", 4, "a" * 40)
    assert github_post(server.client, "pull_request", event, "c-1").status_code == 202
    _wait(lambda: len(started(tmp_path)) == 1)
    closed = github_post(server.client, "pull_request", {**event, "action": "closed"}, "c-2")
    assert closed.json() == {"status": "cancelled", "jobs": 1}
    m = server.wait_for(lambda m: m['nova_serve_jobs_total{outcome="cancelled"}'] == 1, "stop")
    (job,) = started(tmp_path)
    _wait(lambda: not _alive(job["pid"]))
    assert ended_records(tmp_path) == [] and adds_up(m)


def test_a_stopped_server_runs_its_interrupted_job_again_after_the_restart(
    serve: list[ServeProcess], tmp_path: Path
) -> None:
    hold = tmp_path / "go"
    env = {"NOVA_SERVE_JOB_COMMAND": FAKE_JOB, "NOVA_FAKE_HOLD": str(hold)}
    first = start(serve, tmp_path, **env)
    event = pull_request("acme/shop", 8, "a" * 40)
    assert github_post(first.client, "pull_request", event, "s-1").status_code == 202
    _wait(lambda: len(started(tmp_path)) == 1)
    first.stop()  # SIGTERM: uvicorn's shutdown stops the job and leaves it queued
    # (uvicorn raises the signal again once it has shut down: the exit status is -15)
    assert "Traceback" not in "".join(first.lines)
    assert not _alive(started(tmp_path)[0]["pid"])
    hold.touch()
    second = start(serve, tmp_path, **env)
    m = second.wait_for(lambda m: ended(m) >= 1, "the job, again")
    assert m['nova_serve_jobs_total{outcome="done"}'] == 1
    assert [r["argv"][1] for r in ended_records(tmp_path)] == ["acme/shop#8"]
