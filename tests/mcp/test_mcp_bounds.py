"""``nova mcp serve`` bounds its arguments: a multi-megabyte one is refused at once and the
next call is served (issue 27, section 6). A 200 KB ``read_file`` path of ``a/a/a/…`` took
5 s before (quadratic in its parts), so 4 MB kept the server busy for many minutes."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bot.config import load_settings
from bot.mcp.server import LIMITS, MAX_ITEMS, build_server
from tests.conftest import GitRepo
from tests.mcp.test_mcp_server import RecordingClient, _call, _payload

HUGE_PATH = "a/" * 2_000_000  # 4 MB


@pytest.fixture
def served(repo: GitRepo) -> tuple[Any, RecordingClient]:
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")
    repo.commit("one")
    client = RecordingClient()
    return build_server(load_settings(env={}), repo.path, client=client), client


def test_a_4mb_path_is_refused_and_the_next_call_is_served(served) -> None:
    server, _ = served
    refused = _call(server, "read_file", {"path": HUGE_PATH})
    assert refused["success"] is False and refused["error_code"] == "ARGUMENT_TOO_LONG"
    assert "path: 4,000,000 characters; at most 4,096" in refused["error"]
    served_next = _call(server, "read_file", {"path": "calc.py"})
    assert served_next["success"] is True and "return a + b" in served_next["data"]


def test_a_path_at_the_limit_is_looked_up_as_usual(served) -> None:
    server, _ = served
    at_limit = _call(server, "read_file", {"path": "a" * LIMITS["path"]})
    assert at_limit["success"] is False and at_limit["error_code"] != "ARGUMENT_TOO_LONG"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("fetch_change", {"change": "H" * 5000}),
        ("list_change_files", {"change": "H" * 5000}),
        ("read_file", {"path": "calc.py", "change": "H" * 5000}),
        ("create_step", {"execution_id": "e", "step_name": "s", "message": "m" * 70_000}),
        ("update_step", {"execution_id": "e" * 300, "step_id": "s"}),
        ("update_execution_session", {"execution_id": "e", "session_id": "s" * 300}),
        ("anchor_comments", {"comments": [{"path": "calc.py", "body": "b" * 70_000}]}),
        ("anchor_comments", {"comments": [{"path": "calc.py", "body": "b"}] * 1001}),
    ],
)
def test_every_tool_refuses_an_argument_over_its_limit_before_any_work(
    served, tool: str, args: dict[str, Any]
) -> None:
    server, client = served
    answer = _call(server, tool, args)
    assert answer["success"] is False and answer["error_code"] == "ARGUMENT_TOO_LONG"
    assert client.calls == []  # nothing reached the Task Manager


@pytest.mark.slow
def test_over_stdio_the_real_client_gets_the_refusal_then_an_answer(repo: GitRepo) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    repo.write("calc.py", "x = 1\n")
    repo.commit("one")
    params = StdioServerParameters(
        command=sys.executable,
        # in GitHub Actions too: the command guard on stdout must leave JSON-RPC alone
        env={**os.environ, "USE_MOCK_CLIENT": "true", "GITHUB_ACTIONS": "true"},
        args=["-m", "bot", "mcp", "serve", "--transport", "stdio", "--repo", str(repo.path)],
    )

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        with tempfile.TemporaryFile("w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                big = await session.call_tool("read_file", {"path": HUGE_PATH})
                nxt = await session.call_tool("read_file", {"path": "calc.py"})
                return _payload(big), _payload(nxt)

    big, nxt = asyncio.run(go())
    assert big["error_code"] == "ARGUMENT_TOO_LONG"
    assert nxt["success"] is True and "x = 1" in nxt["data"]


def test_limits_name_real_parameters() -> None:
    """A renamed parameter must not silently lose its limit."""
    server = build_server(load_settings(env={}), Path("."), client=RecordingClient())
    params: set[str] = set()
    for tool in asyncio.run(server.list_tools()):
        params |= set(tool.inputSchema.get("properties", {}))
        for model in tool.inputSchema.get("$defs", {}).values():  # ProposedComment, TestFile
            params |= set(model.get("properties", {}))
    assert set(LIMITS) <= params and set(MAX_ITEMS) <= params
