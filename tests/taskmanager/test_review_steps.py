"""A full `nova review` mirrored to the local Task Manager: sessions, steps, outages."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from bot.cli import cli
from tests.conftest import GitRepo
from tests.servers.taskmanager_server import FakeTaskManager

STAGES = ["fetch-change", "analyze", "review", "anchor", "publish"]


@pytest.fixture
def tm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTaskManager]:
    server = FakeTaskManager().start()
    server.add_execution("exec-42")
    monkeypatch.setenv("NOVA_TASK_MANAGER_URL", server.url)
    monkeypatch.setenv("NOVA_EXECUTION_ID", "exec-42")
    # roomy: a loaded CI machine must not turn a healthy server into an outage
    monkeypatch.setenv("NOVA_TASK_MANAGER_TIMEOUT", "5")
    yield server
    server.stop()


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 2\n")
    repo.commit("change")
    return repo


def review(repo: GitRepo, *extra: str):
    return CliRunner().invoke(
        cli, ["review", "--repo", str(repo.path), "-o", "json", *extra], catch_exceptions=False
    )


def test_session_and_one_closed_step_per_stage(change: GitRepo, tm: FakeTaskManager) -> None:
    result = review(change)
    assert result.exit_code == 0, result.stderr
    execution = tm.executions["exec-42"]
    assert execution["session_id"].startswith("nova-")
    assert execution["worktree_path"] == str(change.path.resolve())
    steps = tm.steps_of("exec-42")
    assert [s["step_name"] for s in steps] == STAGES
    status = {s["step_name"]: s["status"] for s in steps}
    assert status == {
        "fetch-change": "completed",
        "analyze": "completed",
        "review": "skipped",
        "anchor": "completed",
        "publish": "completed",
    }
    assert all(len(s["history"]) == 1 for s in steps)  # opened once, closed once
    assert "no model configured" in next(s for s in steps if s["step_name"] == "review")["message"]
    assert tm.violations == []


@pytest.mark.slow
def test_a_failing_stage_is_closed_as_failed(change: GitRepo, tm: FakeTaskManager) -> None:
    result = review(change, "no-such-ref")
    assert result.exit_code == 2
    (step,) = tm.steps_of("exec-42")
    assert step["step_name"] == "fetch-change" and step["status"] == "failed"
    assert "unknown revision 'no-such-ref'" in step["message"]


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["down", "500", "slow"])
def test_task_manager_outage_never_fails_the_job(
    change: GitRepo, tm: FakeTaskManager, monkeypatch, fault: str
) -> None:
    if fault == "down":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            monkeypatch.setenv("NOVA_TASK_MANAGER_URL", f"http://127.0.0.1:{s.getsockname()[1]}")
    elif fault == "500":
        tm.fail_next(500, times=10)
    else:
        monkeypatch.setenv("NOVA_TASK_MANAGER_TIMEOUT", "0.5")
        tm.delay = 5
    result = review(change)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["comments"]  # the review itself is complete
    warnings = [ln for ln in result.stderr.splitlines() if "Task Manager" in ln]
    assert len(warnings) == 1 and "continuing without step sync" in warnings[0]
    if fault != "down":
        assert len(tm.requests) <= 3  # given up after the first failure (+ its retries)


def test_mock_client_needs_no_service(change: GitRepo, monkeypatch) -> None:
    monkeypatch.setenv("USE_MOCK_CLIENT", "TRUE")
    monkeypatch.setenv("NOVA_EXECUTION_ID", "exec-mock")
    result = review(change)
    assert result.exit_code == 0 and "Task Manager" not in result.stderr


def test_no_execution_id_means_no_tracking(
    change: GitRepo, tm: FakeTaskManager, monkeypatch
) -> None:
    monkeypatch.delenv("NOVA_EXECUTION_ID")
    assert review(change).exit_code == 0
    assert tm.requests == []
