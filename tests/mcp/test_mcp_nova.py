"""Nova's review and test tools over MCP, through the official MCP client: the real
``nova mcp serve`` process over stdio and streamable HTTP, a real git repository, real
pytest runs in the sandbox, and the local GitHub server for publishing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import load_settings
from bot.mcp.nova import ServeOptions
from bot.mcp.server import build_server
from tests.conftest import GitRepo
from tests.hosts.github.support import pull_from_repo
from tests.mcp.test_mcp_server import ALL_TOOLS, RecordingClient, _wait_for_url
from tests.servers.github_server import FakeGitHub
from tests.servers.openai_server import FakeOpenAI, text

TOKEN = "ghs_mcpsecrettoken000000000000000000"
REPO = "acme/shop"
OLD = '''def discount(price: int, percent: int) -> int:
    """Price after a percentage discount."""
    return price - price * percent // 100
'''
NEW = '''import os


def discount(price: int, percent: int) -> int:
    """Price after a percentage discount, never below zero."""
    if percent < 0:
        raise ValueError("negative percent")
    return max(0, price - price * percent // 100)
'''
HEADER = "from shop.prices import discount\n\n\n"
# fails on the parent (it returns -50 there): it catches the change
CATCHES = "def test_clamped():\n    assert discount(100, 150) == 0\n"
# passes on the parent too: it runs the changed line but does not tell the change apart
SAME = "def test_half():\n    assert discount(100, 50) == 50\n"
WRONG = "def test_wrong():\n    assert discount(100, 50) == 51\n"
# one file: the gates run a file's tests together
AGENTS = HEADER + "\n\n".join([CATCHES, SAME, WRONG])


@pytest.fixture
def shop(repo: GitRepo) -> tuple[GitRepo, str, str]:
    """A package whose last commit changes a function's behaviour and adds an unused
    import (ruff's F401 on an added line)."""
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("shop/__init__.py", "")
    repo.write("shop/prices.py", OLD)
    repo.write("tests/test_prices.py", HEADER + SAME.replace("test_half", "test_existing"))
    base = repo.commit("base")
    repo.write("shop/prices.py", NEW)
    head = repo.commit("Discounts never go below zero")
    return repo, base, head


@pytest.fixture
def gh(shop: tuple[GitRepo, str, str]) -> Iterator[FakeGitHub]:
    repo, base, head = shop
    server = FakeGitHub(TOKEN).start()
    server.add_pull(pull_from_repo(repo, base, head, title="Clamp discounts"))
    yield server
    server.stop()


def _env(gh: FakeGitHub) -> dict[str, str]:
    return {
        **os.environ,
        "USE_MOCK_CLIENT": "true",
        "PYTHONUNBUFFERED": "1",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": gh.base_url,
        "NOVA_GITHUB_WRITE_INTERVAL": "0",
    }


class Calls:
    """Every tool result as the client received it (raw JSON, to look for the token)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.raw: list[str] = []
        self.progress: list[str] = []

    async def __call__(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append(message or "")

        result = await self.session.call_tool(name, args, progress_callback=on_progress)
        self.raw.append(result.model_dump_json())
        assert not result.isError, result
        data = result.structuredContent or json.loads(result.content[0].text)
        return data.get("result", data) if set(data) == {"result"} else data


async def _exercise(session: Any, gh: FakeGitHub, allow_writes: bool, runs: int = 3) -> None:
    await session.initialize()
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == ALL_TOOLS
    schema = tools["run_tests"].inputSchema
    assert schema["required"] == ["files"]
    assert schema["$defs"]["TestFile"]["required"] == ["path", "content"]
    assert "github" in tools["review_change"].inputSchema["properties"]["publish"]["description"]
    call = Calls(session)

    analyzed = await call("analyze_change", {"change": "HEAD"})
    assert analyzed["success"], analyzed
    placed = {(c["path"], c["line"], c["rule"]) for c in analyzed["data"]["comments"]}
    assert ("shop/prices.py", 1, "F401") in placed
    assert any("[analyze] completed" in p for p in call.progress)  # the CLI's step lines

    framework = await call("detect_test_framework", {})
    assert framework["data"]["framework"]["name"] == "pytest"
    assert framework["data"]["framework"]["evidence"]  # what it was detected from

    matrix = await call("analyze_test_matrix", {"change": "HEAD"})
    rows = {r["target"]: r for r in matrix["data"]["matrix"]}
    assert "shop/prices.py::discount" in rows, rows
    row = rows["shop/prices.py::discount"]
    assert row["change_kind"] == "modified" and row["changed_lines"] == [5, 6, 7, 8]
    assert row["existing_tests"] == ["tests/test_prices.py"]

    ran = await call(
        "run_tests",
        {
            "files": [
                {"path": "tests/test_agents.py", "content": AGENTS},
                {"path": "shop/test_outside.py", "content": AGENTS},
            ],
            "runs": runs,
        },
    )
    assert ran["success"], ran
    tests = {t["name"]: t for t in ran["data"]["tests"]}
    catches, same, wrong = tests["test_clamped"], tests["test_half"], tests["test_wrong"]
    assert catches["runs_passed"] == runs
    assert (catches["status"], catches["fails_on_parent"], catches["catches_change"]) == (
        "passed",
        True,
        True,
    )
    assert catches["kept"] and "shop/prices.py::discount" in catches["targets"]
    assert (same["status"], same["fails_on_parent"], same["catches_change"]) == (
        "passed",
        False,
        False,
    )
    assert same["mutant_killed"] or same["reason"].startswith("no bite")
    assert (wrong["status"], wrong["kept"]) == ("failed", False)
    assert wrong["reason"].startswith("fails") and "assert" in wrong["reason"]  # names it
    outside = next(t for t in ran["data"]["tests"] if t["path"] == "shop/test_outside.py")
    assert outside["status"] is None and "tests go under tests/" in outside["reason"]
    assert any("[check-tests] completed" in p for p in call.progress)

    published = await call("review_change", {"change": f"{REPO}#1", "publish": "github"})
    if allow_writes:
        assert published["success"], published
        assert published["data"]["published"][0]["host"] == "github"
        assert len(gh.reviews) == 1 and gh.issue_comments  # the review and the summary
    else:
        assert published["error_code"] == "WRITES_DISABLED"
        assert "--allow-writes" in published["error"]
        assert gh.reviews == [] and gh.issue_comments == []
    for raw in call.raw:
        assert TOKEN not in raw


def _serve_args(repo: GitRepo, *extra: str) -> list[str]:
    return ["-m", "bot", "mcp", "serve", "--repo", str(repo.path), *extra]


@pytest.mark.slow
def test_over_stdio_read_only(shop: tuple[GitRepo, str, str], gh: FakeGitHub) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, env=_env(gh), args=_serve_args(shop[0], "--transport", "stdio")
    )

    async def go() -> None:
        with tempfile.TemporaryFile("w+") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await _exercise(session, gh, allow_writes=False)

    asyncio.run(go())


@pytest.mark.slow
def test_over_streamable_http_with_writes(shop: tuple[GitRepo, str, str], gh: FakeGitHub) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    proc = subprocess.Popen(
        [sys.executable, *_serve_args(shop[0], "--transport", "http", "--port", "0")]
        + ["--allow-writes"],
        env=_env(gh),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = _wait_for_url(proc)

        async def go() -> None:
            async with (
                httpx.AsyncClient(timeout=120) as http,
                streamable_http_client(url, http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await _exercise(session, gh, allow_writes=True, runs=1)

        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()


def _in_process(repo: Path, allow_writes: bool = False) -> Any:
    return build_server(
        load_settings(env={}),
        repo,
        client=RecordingClient(),
        options=ServeOptions(allow_writes=allow_writes),
    )


def _call(server: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    from mcp.shared.memory import create_connected_server_and_client_session

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(server._mcp_server) as client:
            return await Calls(client)(name, args)

    return asyncio.run(go())


def test_propose_tests_is_refused_on_a_read_only_server(shop: tuple[GitRepo, str, str]) -> None:
    server = _in_process(shop[0].path)
    files = [{"path": "tests/test_agents.py", "content": AGENTS}]
    answer = _call(server, "propose_tests", {"files": files, "publish": "github"})
    assert answer["success"] is False and answer["error_code"] == "WRITES_DISABLED"
    assert "propose_tests" in answer["error"] and "--allow-writes" in answer["error"]
    assert shop[0].git("branch", "--list", "nova/*") == ""  # nothing ran, nothing was made


@pytest.mark.parametrize(
    ("tool", "args", "what"),
    [
        ("run_tests", {"files": [{"path": "tests/test_a.py", "content": "x"}] * 21}, "files: 21"),
        (
            "run_tests",
            {"files": [{"path": "tests/test_a.py", "content": "#" * 100_001}]},
            "content: 100,001",
        ),
        ("review_change", {"change": "H" * 5000}, "change: 5,000"),
        ("review_change", {"publish": "g" * 100}, "publish: 100"),
        ("propose_tests", {"files": [], "publish": "p" * 100}, "publish: 100"),
    ],
)
def test_arguments_over_their_limits_are_refused(
    shop: tuple[GitRepo, str, str], tool: str, args: dict[str, Any], what: str
) -> None:
    answer = _call(_in_process(shop[0].path, allow_writes=True), tool, args)
    assert answer["success"] is False and answer["error_code"] == "ARGUMENT_TOO_LONG"
    assert answer["error"].startswith(what)


def test_the_servers_token_never_reaches_the_client(repo: GitRepo) -> None:
    """A token that reaches a result (here the change's title quotes it) is redacted on the
    way out, in every string of the answer."""
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("a.py", "import os\nx = 2\n")
    repo.commit(f"rotate {TOKEN}")
    settings = load_settings(env={"GITHUB_TOKEN": TOKEN})
    server = build_server(settings, repo.path, client=RecordingClient())
    answer = _call(server, "analyze_change", {"change": "HEAD"})
    assert answer["success"] and answer["data"]["change"]["title"] == "rotate ***"
    assert TOKEN not in json.dumps(answer)


@pytest.mark.slow
def test_generate_tests_returns_the_kept_tests_and_the_patch_without_pushing(
    shop: tuple[GitRepo, str, str], tmp_path: Path
) -> None:
    repo = shop[0]
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    answer = _call(_in_process(repo.path), "generate_tests", {"change": "HEAD"})
    assert answer["success"], answer
    data = answer["data"]
    assert data["kept"] and data["stats"]["catching"] >= 1, data
    assert all(k["path"].startswith("tests/") for k in data["kept"])
    assert data["patch"].startswith("From ") and f"+++ b/{data['kept'][0]['path']}" in data["patch"]
    assert data["mr_url"] is None
    assert repo.git("branch", "--list", "nova/*").strip() == data["branch"]  # as the CLI
    assert (
        subprocess.run(  # nothing was pushed
            ["git", "-C", str(origin), "branch", "--list"], capture_output=True, text=True
        ).stdout
        == ""
    )


@pytest.mark.slow
def test_propose_tests_opens_a_pull_request_with_the_tests_that_pass_the_gates(
    shop: tuple[GitRepo, str, str], gh: FakeGitHub, tmp_path: Path
) -> None:
    repo = shop[0]
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    env = {k: v for k, v in _env(gh).items() if k.startswith(("GITHUB_", "NOVA_"))}
    settings = load_settings(env={**env, "GITHUB_REPOSITORY": REPO})
    server = build_server(
        settings, repo.path, client=RecordingClient(), options=ServeOptions(allow_writes=True)
    )
    files = [{"path": "tests/test_agents.py", "content": AGENTS}]
    answer = _call(server, "propose_tests", {"files": files, "publish": "github"})
    assert answer["success"], answer
    (pull,) = gh.created_pulls
    assert answer["data"]["url"] == pull["html_url"]
    assert "test_clamped" in pull["body"] and "test_wrong" in pull["body"]  # kept, dropped
    verdicts = {t["name"]: t for t in answer["data"]["tests"]}
    assert verdicts["test_clamped"]["kept"]
    assert verdicts["test_wrong"]["reason"].startswith("fails")
    pushed = subprocess.run(
        ["git", "-C", str(origin), "show", f"{answer['data']['branch']}:tests/test_agents.py"],
        capture_output=True,
        text=True,
    ).stdout
    assert "def test_clamped" in pushed and "def test_wrong" not in pushed
    assert TOKEN not in json.dumps(answer)


@pytest.mark.slow
def test_review_change_asks_the_model_and_analyze_change_never_does(
    shop: tuple[GitRepo, str, str], llm_env: FakeOpenAI
) -> None:
    reply = {
        "summary": "Discounts are clamped.",
        "comments": [
            {
                "path": "shop/prices.py",
                "line": 7,
                "code": 'raise ValueError("negative percent")',
                "body": "Say which percent was refused.",
            },
            {"path": "shop/nowhere.py", "line": 1, "body": "not in the change"},
        ],
    }
    llm_env.enqueue(text(json.dumps(reply)))
    server = build_server(load_settings(), shop[0].path, client=RecordingClient())
    analyzed = _call(server, "analyze_change", {})
    assert analyzed["success"] and llm_env.requests == []  # the analyzers only
    assert {c["origin"] for c in analyzed["data"]["comments"]} == {"ruff"}
    reviewed = _call(server, "review_change", {})
    assert reviewed["success"] and len(llm_env.requests) >= 1
    placed = {(c["path"], c["line"], c["origin"]) for c in reviewed["data"]["comments"]}
    assert ("shop/prices.py", 7, "llm") in placed and ("shop/prices.py", 1, "ruff") in placed
    (unplaced,) = reviewed["data"]["unplaced"]
    assert (
        unplaced["path"] == "shop/nowhere.py" and "not a file of this change" in unplaced["reason"]
    )
    assert "sk-test-secret-key-1234567890" not in json.dumps([analyzed, reviewed])
