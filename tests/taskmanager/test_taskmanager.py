"""Task Manager clients: the seed's properties (hypothesis) and real-socket behaviour."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import load_settings
from bot.taskmanager.client import (
    STATUSES,
    MockTaskManagerClient,
    TaskManagerClientBase,
    create_task_manager_client,
)
from bot.taskmanager.http import HttpTaskManagerClient
from tests.servers import openapi
from tests.servers.taskmanager_server import FakeTaskManager

ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
messages = st.none() | st.text(max_size=40)
bad_status = st.text(max_size=12).filter(lambda s: s not in STATUSES)
per_module = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def tm() -> Iterator[FakeTaskManager]:
    server = FakeTaskManager().start()
    yield server
    server.stop()


@pytest.fixture
def http(tm: FakeTaskManager) -> Iterator[HttpTaskManagerClient]:
    client = HttpTaskManagerClient(tm.url, timeout=2, backoff=0.001)
    yield client
    client.close()


def _assert_envelope(result: dict) -> None:
    assert isinstance(result["success"], bool)
    if result["success"]:
        assert "data" in result and isinstance(result["message"], str)
    else:
        assert isinstance(result["error"], str) and result["error"]
        assert set(result) <= {"success", "error", "error_code", "status_code"}


calls = st.one_of(
    st.tuples(st.just("patch_execution"), ids, messages, messages),
    st.tuples(
        st.just("create_step"),
        ids,
        ids,
        messages,
        st.none() | st.sampled_from(STATUSES) | bad_status,
    ),
    st.tuples(
        st.just("patch_step"),
        ids,
        ids,
        st.none() | st.sampled_from(STATUSES) | bad_status,
        messages,
    ),
    st.tuples(st.just("health_check")),
)


@pytest.mark.slow
@per_module
@given(call=calls)
def test_property_1_every_call_returns_the_envelope(call, http, tm) -> None:
    tm.add_execution("exec-known")
    for client in (MockTaskManagerClient(), http):
        _assert_envelope(getattr(client, call[0])(*call[1:]))


@pytest.mark.slow
@per_module
@given(status=bad_status, step=ids, message=messages)
def test_property_2_unknown_status_is_refused(status, step, message, http) -> None:
    expected = f"Invalid status '{status}'. Must be one of: running, completed, failed, skipped"
    for client in (MockTaskManagerClient(), http):
        for result in (
            client.patch_step("e", step, status=status, message=message),
            client.create_step("e", "name", message, status),
        ):
            assert result["success"] is False and result["error"] == expected


@pytest.mark.slow
@given(updates=st.lists(st.tuples(st.sampled_from(STATUSES), messages), max_size=6), missing=ids)
def test_property_3_mock_state_is_consistent(updates, missing) -> None:
    client = MockTaskManagerClient()
    step_id = client.create_step("e1", "review")["data"]["step_id"]
    for status, message in updates:
        assert client.patch_step("e1", step_id, status=status, message=message)["success"]
        assert client.steps[step_id]["status"] == status
        if message is not None:
            assert client.steps[step_id]["message"] == message
    if missing != step_id:
        result = client.patch_step("e1", missing, status="completed")
        assert result == {
            "success": False,
            "error": f"Step {missing} not found",
            "error_code": "NOT_FOUND",
        }


@pytest.mark.slow
@given(
    value=st.text(max_size=8)
    | st.sampled_from(["true", "TRUE", "True", "tRuE", "false", "1", "yes", " true"])
)
def test_property_4_factory_choice(value) -> None:
    client = create_task_manager_client(load_settings(env={"USE_MOCK_CLIENT": value}).task_manager)
    expected = MockTaskManagerClient if value.lower() == "true" else HttpTaskManagerClient
    assert type(client) is expected
    client.close()


@pytest.mark.slow
@per_module
@given(status=st.integers(400, 599))
def test_property_5_http_errors_become_failures(status, tm, http) -> None:
    tm.fail_next(status, times=3)
    result = http.patch_step("e", "s", status="completed")
    tm._failures.clear()
    assert result["success"] is False and result["status_code"] == status
    assert result["error"] == "injected failure" and result["error_code"] == f"HTTP_{status}"


@pytest.mark.slow
@per_module
@given(status=st.none() | st.sampled_from(STATUSES), name=st.text(min_size=1, max_size=20))
def test_property_6_initial_status_defaults_to_running(status, name, tm, http) -> None:
    tm.add_execution("exec-6")
    for client in (MockTaskManagerClient(), http):
        data = client.create_step("exec-6", name, None, status)["data"]
        assert data["status"] == (status or "running") and data["step_name"] == name


def test_requests_and_responses_follow_the_openapi_file(tm, http) -> None:
    tm.add_execution("exec-spec")
    session = http.patch_execution("exec-spec", session_id="s1", worktree_path="/w")
    step = http.create_step("exec-spec", "review", "started")
    done = http.patch_step("exec-spec", step["data"]["step_id"], status="completed")
    health = http.health_check()
    assert all(r["success"] for r in (session, step, done, health))
    assert tm.violations == []
    assert (
        openapi.errors(
            {"success": True, "message": "x", "data": session["data"]}, "ExecutionEnvelope"
        )
        == []
    )
    assert openapi.errors({"success": True, "data": done["data"]}, "StepEnvelope") == []
    assert openapi.errors({"success": True, "data": health["data"]}, "HealthEnvelope") == []
    assert openapi.errors({"success": False, "error": "x"}, "ErrorEnvelope") == []
    # and the validator does bite:
    assert openapi.errors({"step_name": "x", "status": "done"}, "StepCreate")
    assert openapi.errors({}, "StepPatch")


def test_nothing_to_update_and_ids_are_escaped(tm, http) -> None:
    assert http.patch_step("e", "s") == {
        "success": False,
        "error": "Provide at least status or message to update",
        "error_code": "NOTHING_TO_UPDATE",
    }
    before = len(tm.requests)
    http.patch_step("a/b", "c?d", status="completed")
    assert tm.requests[before][1] == "/api/executions/a%2Fb/steps/c%3Fd"


def test_retries_idempotent_calls_but_never_a_post_on_5xx(tm, http) -> None:
    tm.add_execution("exec-r")
    tm.fail_next(503, times=2)
    before = len(tm.requests)
    assert http.patch_execution("exec-r", session_id="x")["success"]
    assert len(tm.requests) - before == 3
    tm.fail_next(500, times=1)
    before = len(tm.requests)
    result = http.create_step("exec-r", "step")
    assert result["status_code"] == 500 and len(tm.requests) - before == 1


@pytest.mark.slow
def test_timeout_and_connection_refused() -> None:
    slow = FakeTaskManager().start()
    slow.delay = 5
    try:
        client = HttpTaskManagerClient(slow.url, timeout=0.2, retry_timeouts=False)
        assert client.health_check() == {
            "success": False,
            "error": "Request timeout",
            "error_code": "TIMEOUT",
        }
        assert len(slow.requests) == 1
        client.close()
    finally:
        slow.stop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    client = HttpTaskManagerClient(url, retries=1, backoff=0.001)
    result = client.health_check()
    assert result["error"] == f"Connection failed to {url}"
    client.close()


def test_bearer_token_is_sent_and_never_echoed(tm) -> None:
    tm.token = "tm-secret-token-123"
    try:
        good = HttpTaskManagerClient(tm.url, token="tm-secret-token-123")
        bad = HttpTaskManagerClient(tm.url, token="wrong-token-value", retries=0)
        assert good.health_check()["success"]
        result = bad.health_check()
        assert result["status_code"] == 401 and "wrong-token" not in str(result)
        good.close()
        bad.close()
    finally:
        tm.token = None


def test_unconfigured_http_client_says_what_is_missing() -> None:
    client = create_task_manager_client(load_settings(env={}).task_manager)
    assert "NOVA_TASK_MANAGER_URL" in client.health_check()["error"]
    assert isinstance(client, TaskManagerClientBase)
