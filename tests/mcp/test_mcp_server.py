"""Nova's MCP server through the real MCP client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bot
from bot.config import load_settings
from bot.mcp.server import build_server
from bot.taskmanager.client import STATUSES, MockTaskManagerClient
from tests.conftest import GitRepo

ALL_TOOLS = {
    "update_execution_session",
    "create_step",
    "update_step",
    "health_check",
    "fetch_change",
    "list_change_files",
    "read_file",
    "anchor_comments",
    "review_change",
    "analyze_change",
    "detect_test_framework",
    "analyze_test_matrix",
    "run_tests",
    "generate_tests",
    "propose_tests",
}


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write(
        "calc.py", "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n"
    )
    repo.commit("div")
    return repo


def _payload(result: Any) -> dict[str, Any]:
    assert not result.isError, result
    if result.structuredContent is not None:
        data = result.structuredContent
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _exercise(session) -> None:
    info = (await session.initialize()).serverInfo
    assert (info.name, info.version) == ("nova", bot.__version__)  # not the mcp library's
    names = {t.name for t in (await session.list_tools()).tools}
    assert names == ALL_TOOLS
    descriptions = {t.name: t.description for t in (await session.list_tools()).tools}
    assert "NOVA_EXECUTION_ID" in descriptions["create_step"]
    created = _payload(
        await session.call_tool("create_step", {"execution_id": "e1", "step_name": "review"})
    )
    assert created["success"] and created["data"]["status"] == "running"
    step_id = created["data"]["step_id"]
    done = _payload(
        await session.call_tool(
            "update_step", {"execution_id": "e1", "step_id": step_id, "status": "completed"}
        )
    )
    assert done["success"] and done["data"]["status"] == "completed"
    bad = _payload(
        await session.call_tool(
            "update_step", {"execution_id": "e1", "step_id": step_id, "status": "done"}
        )
    )
    assert bad == {
        "success": False,
        "error": "Invalid status 'done'. Must be one of: running, completed, failed, skipped",
        "error_code": "INVALID_STATUS",
    }
    missing = _payload(
        await session.call_tool(
            "update_step", {"execution_id": "e1", "step_id": "nope", "message": "x"}
        )
    )
    assert missing["error"] == "Step nope not found"
    assert _payload(await session.call_tool("health_check", {}))["success"]
    diff = _payload(await session.call_tool("fetch_change", {"change": "HEAD"}))
    assert "6 +     return a / b" in diff["data"]["numbered_diff"]
    files = _payload(await session.call_tool("list_change_files", {}))
    assert files["data"] == [
        {
            "path": "calc.py",
            "old_path": "calc.py",
            "status": "modified",
            "binary": False,
            "added": 4,
            "removed": 0,
        }
    ]
    text = _payload(await session.call_tool("read_file", {"path": "calc.py", "start_line": 5}))
    assert "5: def div(a, b):" in text["data"]
    placed = _payload(
        await session.call_tool(
            "anchor_comments",
            {
                "comments": [
                    {"path": "b/calc.py", "line": 2, "code": "return a / b", "body": "b may be 0"},
                    {"path": "calc.py", "line": 1, "code": "nope", "body": "x"},
                ]
            },
        )
    )
    first, second = placed["data"]
    assert (first["path"], first["line"], first["placed"]) == ("calc.py", 6, True)
    assert second["placed"] is False and "not found" in second["reason"]
    unknown = _payload(await session.call_tool("fetch_change", {"change": "no-such"}))
    assert unknown["success"] is False and "unknown revision" in unknown["error"]


def _env() -> dict[str, str]:
    return {**os.environ, "USE_MOCK_CLIENT": "true", "PYTHONUNBUFFERED": "1"}


@pytest.mark.slow
def test_stdio_transport_with_the_real_client(change: GitRepo) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        env=_env(),
        args=["-m", "bot", "mcp", "serve", "--transport", "stdio", "--repo", str(change.path)],
    )

    async def go() -> None:
        with tempfile.TemporaryFile("w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await _exercise(s)

    asyncio.run(go())


def _wait_for_url(proc: subprocess.Popen, deadline_s: float = 30.0) -> str:
    end = time.monotonic() + deadline_s
    buffer = ""
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            line = proc.stderr.readline()
            buffer += line
            if "serving streamable HTTP at " in line:
                return line.rsplit(" ", 1)[-1].strip()
        if proc.poll() is not None:
            break
    raise AssertionError(f"server did not start: {buffer}")


@pytest.mark.slow
def test_streamable_http_transport_with_the_real_client(change: GitRepo) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "mcp",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--repo",
            str(change.path),
        ],
        env=_env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = _wait_for_url(proc)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def go() -> None:
            async with (
                httpx.AsyncClient(timeout=30) as http,
                streamable_http_client(url, http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await _exercise(session)

        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stderr.close()


class RecordingClient(MockTaskManagerClient):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple]] = []

    def patch_execution(self, *args, **kwargs):
        self.calls.append(("patch_execution", (*args, *kwargs.values())))
        return super().patch_execution(*args, **kwargs)

    def create_step(self, *args, **kwargs):
        self.calls.append(("create_step", (*args, *kwargs.values())))
        return super().create_step(*args, **kwargs)

    def patch_step(self, *args, **kwargs):
        self.calls.append(("patch_step", (*args, *kwargs.values())))
        return super().patch_step(*args, **kwargs)


def _call(server, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(server.call_tool(name, args))
    structured = result[1] if isinstance(result, tuple) else None
    if structured is not None:
        return structured.get("result", structured)
    return json.loads(result[0].text)


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=15) | st.sampled_from(
    ["null", "[1, 2]", '{"a": 1}', "true", "12", '"quoted"']
)  # JSON-looking strings
maybe = st.none() | texts
statuses = st.none() | st.sampled_from(STATUSES) | texts


@pytest.mark.slow
@given(
    execution_id=texts, name=texts, message=maybe, status=statuses, session=texts, worktree=maybe
)
def test_properties_1_and_7_envelope_and_parameters_unchanged(
    execution_id, name, message, status, session, worktree, tmp_path_factory
) -> None:
    client = RecordingClient()
    server = build_server(load_settings(env={}), Path("."), client=client)
    results = [
        _call(
            server,
            "update_execution_session",
            {"execution_id": execution_id, "session_id": session, "worktree_path": worktree},
        ),
        _call(
            server,
            "create_step",
            {"execution_id": execution_id, "step_name": name, "message": message, "status": status},
        ),
        _call(
            server,
            "update_step",
            {"execution_id": execution_id, "step_id": "s", "status": status, "message": message},
        ),
        _call(server, "health_check", {}),
    ]
    for r in results:
        assert isinstance(r["success"], bool)
        assert ("data" in r) if r["success"] else isinstance(r["error"], str)
    assert client.calls == [
        ("patch_execution", (execution_id, session, worktree)),
        ("create_step", (execution_id, name, message, status)),
        ("patch_step", (execution_id, "s", status, message)),
    ]
    if status is not None and status not in STATUSES:
        assert results[1]["success"] is False and results[2]["success"] is False
    elif status is None:
        assert results[1]["data"]["status"] == "running"


def test_committed_secrets_never_leave_through_the_tools(repo: GitRepo) -> None:
    key = "\n".join(
        [
            "-----BEGIN RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA7bq98x" * 3,
            "-----END RSA PRIVATE KEY-----",
        ]
    )
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("deploy/id_rsa", key + "\n")
    repo.write("a.py", 'x = 1\nAWS_KEY = "AKIAIOSFODNN7EXAMPLE"\n')
    repo.commit("oops")
    server = build_server(load_settings(env={}), repo.path, client=RecordingClient())
    diff = _call(server, "fetch_change", {"change": "HEAD"})["data"]["numbered_diff"]
    text = _call(server, "read_file", {"path": "a.py"})["data"]
    for shown in (diff, text):
        assert "MIIEowIBAAKCAQEA7bq98x" not in shown and "AKIAIOSFODNN7EXAMPLE" not in shown
    assert "AWS_KEY" in text  # the line stays; only the secret is replaced
