"""Phabricator without Jenkins: the Harbormaster HTTP step calls ``nova serve``; the build
target hears ``work``, then exactly one verdict (the job's own), and ``fail`` when the job
dies before it could send one."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.serve.support import (
    FAKE_JOB,
    PHAB_SECRET,
    ServeProcess,
    base_env,
    basic,
    ended,
    sign,
    started,
)
from tests.serve.test_server import _wait
from tests.servers.conduit_server import TOKEN, FakeConduit, Revision, changes_from_git_diff

pytestmark = pytest.mark.slow
TARGET = "PHID-HMBT-build1"


@pytest.fixture
def phab() -> Iterator[FakeConduit]:
    server = FakeConduit().start()
    yield server
    server.stop()


def _server(tmp: Path, phab: FakeConduit, **env: str) -> ServeProcess:
    conduit = {"PHABRICATOR_URL": phab.url, "PHABRICATOR_API_TOKEN": TOKEN}
    return ServeProcess(tmp / "data", base_env(tmp, **conduit, **env)).start()


def _revision(repo: GitRepo, phab: FakeConduit) -> None:
    repo.write("app/total.py", "def total(xs):\n    return sum(xs)\n")
    base = repo.commit("base")
    repo.write("app/total.py", "import os\n\n\ndef total(xs):\n    return sum(xs)\n")
    head = repo.commit("total")
    changes = changes_from_git_diff(repo.git("diff", base, head))
    phab.add_revision(Revision(123, "Total", "Adds an import.", {4567: changes}, base=base))


def test_a_build_gets_work_then_one_verdict_from_a_real_review(
    phab: FakeConduit, repo: GitRepo, tmp_path: Path
) -> None:
    _revision(repo, phab)
    phab.add_target(TARGET)
    server = _server(tmp_path, phab)
    try:
        url = f"/harbormaster?target={TARGET}&revision=123&diff=4567"
        answer = server.client.post(url, headers={"Authorization": basic()})
        assert answer.status_code == 202, answer.text
        again = server.client.post(url, headers={"Authorization": basic()})
        assert again.json() == {"status": "duplicate"}  # Harbormaster's retry of the target
        server.wait_for(lambda m: ended(m) >= 1, "the review")
        kinds = [m["type"] for m in phab.build_messages[TARGET]]
        assert kinds[0] == "work" and kinds.count("pass") + kinds.count("fail") == 1, kinds
        verdict = phab.build_messages[TARGET][-1]
        assert verdict["unit"][0]["name"] == "nova review", verdict
    finally:
        server.stop()


def test_a_job_that_dies_fails_its_target(phab: FakeConduit, tmp_path: Path) -> None:
    phab.add_target(TARGET)
    hold = tmp_path / "never"
    server = _server(tmp_path, phab, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    try:
        url = f"/harbormaster?target={TARGET}&revision=123&diff=4567"
        assert server.client.get(url, headers={"Authorization": basic()}).status_code == 202
        _wait(lambda: len(started(tmp_path)) == 1)
        (job,) = started(tmp_path)
        assert job["argv"][-2:] == ["--harbormaster-target", TARGET]
        os.kill(job["pid"], signal.SIGKILL)
        m = server.wait_for(lambda m: ended(m) >= 1, "the killed job")
        assert m['nova_serve_jobs_total{outcome="killed"}'] == 1
        _wait(lambda: len(phab.build_messages.get(TARGET, [])) == 2)
        kinds = [msg["type"] for msg in phab.build_messages[TARGET]]
        assert kinds == ["work", "fail"]
        assert phab.targets[TARGET] == "target/failed"
    finally:
        server.stop()


def test_a_herald_webhook_reviews_the_revisions_current_diff(
    phab: FakeConduit, repo: GitRepo, tmp_path: Path
) -> None:
    _revision(repo, phab)
    server = _server(tmp_path, phab, NOVA_SERVE_JOB_COMMAND=FAKE_JOB)
    try:

        def herald(phid: str, epoch: int) -> int:
            body = json.dumps(
                {"object": {"type": "DREV", "phid": phid}, "action": {"epoch": epoch}}
            ).encode()
            signature = sign(body, PHAB_SECRET)[len("sha256=") :]
            headers = {"X-Phabricator-Webhook-Signature": signature}
            answer = server.client.post("/webhooks/phabricator", content=body, headers=headers)
            return answer.status_code

        assert herald("PHID-DREV-123", 1) == 202
        assert herald("PHID-DREV-123", 1) == 200  # Phorge's retry: the same object and epoch
        assert herald("PHID-DREV-999", 2) == 200  # not visible to Nova: ignored
        server.wait_for(lambda m: ended(m) >= 1, "the review")
        (job,) = started(tmp_path)
        assert job["argv"] == ["review", "D123", "--publish", "phabricator", "-q"]
        phab.fail_methods = {"differential.revision.search"}
        assert herald("PHID-DREV-123", 3) == 503  # Phorge retries a failed delivery later
    finally:
        server.stop()


def test_a_newer_diff_fails_the_older_diffs_target(phab: FakeConduit, tmp_path: Path) -> None:
    old, new = phab.add_target("PHID-HMBT-old"), phab.add_target("PHID-HMBT-new")
    hold = tmp_path / "go"
    server = _server(tmp_path, phab, NOVA_SERVE_JOB_COMMAND=FAKE_JOB, NOVA_FAKE_HOLD=str(hold))
    try:
        auth = {"Authorization": basic()}
        first = server.client.get(f"/harbormaster?target={old}&revision=5&diff=1", headers=auth)
        assert first.status_code == 202
        _wait(lambda: len(started(tmp_path)) == 1)
        newer = server.client.get(f"/harbormaster?target={new}&revision=5&diff=2", headers=auth)
        assert newer.status_code == 202
        _wait(lambda: len(started(tmp_path)) == 2)  # the old diff's job was stopped first
        _wait(lambda: phab.targets[old] == "target/failed")
        assert [m["type"] for m in phab.build_messages[old]] == ["work", "fail"]
        hold.touch()
        server.wait_for(lambda m: m['nova_serve_jobs_total{outcome="done"}'] == 1, "diff 2")
        assert [m["type"] for m in phab.build_messages[new]] == ["work"]  # its job's own next
    finally:
        server.stop()
