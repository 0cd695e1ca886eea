"""The review agent's context tools against hostile requests (issue 19, items 5 and 8):
patterns built to backtrack forever, a tool that never returns, reads of ``.git/`` and of
credential stores, and tokens hidden in base64 or URL-encoding. Real git repositories, the
real tools, the local model and GitHub servers."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from bot.agent.tools import ContextTool, context_tools
from bot.cli import cli
from bot.hosts.api_tree import ApiTree
from bot.hosts.git.source import GitTree, _Watchdog
from bot.search import PatternError, line_matcher
from tests.conftest import GitRepo
from tests.hosts.github.test_github import pull_from_repo
from tests.servers.github_server import FakeGitHub
from tests.servers.openai_server import FakeOpenAI, text, tool_call

REDOS = r"(x*)*\1\1y$"
TOKEN = "hostile-test-token-0123456789abcdefABCDEF"
TM_TOKEN = "tm/s3cret+t0ken=42&x"  # a token that URL-encoding changes


def tools_of(tree) -> dict[str, ContextTool]:
    return {t.name: t for t in context_tools(tree)}


def search(tree, pattern: str, regex: bool = True) -> str:
    run = tools_of(tree)["search_code"].run
    assert run is not None
    return run(pattern=pattern, regex=regex)


def read(tree, path: str) -> str:
    run = tools_of(tree)["read_file"].run
    assert run is not None
    return run(path=path)


@pytest.fixture
def big_repo(repo: GitRepo) -> GitRepo:
    """A 2 MB file of x's: ``git grep -E`` with the issue's pattern ran past 240 s on such."""
    repo.write("data/big.txt", ("x" * 5000 + "\n") * 400)
    repo.write("src/app.py", "def handler(event):\n    return event['x']\n")
    repo.commit("big")
    return repo


def _head_tree(repo: GitRepo) -> GitTree:
    import git

    return GitTree(git.Repo(repo.path), repo.git("rev-parse", "HEAD").strip())


def test_backreference_pattern_is_refused_with_a_clear_message(big_repo: GitRepo) -> None:
    out = search(_head_tree(big_repo), REDOS)
    assert out.startswith("error: the regex cannot be run")
    assert "backreferences" in out and "fixed string" in out


def test_catastrophic_but_valid_regex_runs_in_linear_time(big_repo: GitRepo) -> None:
    tree = _head_tree(big_repo)
    # exponential for a backtracking engine on a line of 5000 x's; RE2 answers at once
    assert search(tree, r"(x+x+)+y") == "no matches for '(x+x+)+y'"
    assert search(tree, r"def \w+\(event\)") == "src/app.py:1: def handler(event):"
    assert search(tree, "return event[", regex=False) == "src/app.py:2:     return event['x']"


def test_line_matcher_limits() -> None:
    with pytest.raises(PatternError, match="longer than"):
        line_matcher("a" * 1001, regex=False)
    with pytest.raises(PatternError, match="lookaround"):
        line_matcher("(?=secret)", regex=True)
    assert line_matcher("a.c", regex=False)("xa.cx") and not line_matcher("a.c", regex=False)("abc")


def test_a_search_that_runs_too_long_is_killed(tmp_path: Path) -> None:
    with pytest.raises(TimeoutError, match="stopped after 0.2s"):  # noqa: SIM117
        with _Watchdog(["sleep", "30"], str(tmp_path), 0.2) as rows:
            list(rows)  # blocks until the watchdog kills the process


def test_every_tool_call_has_a_time_limit() -> None:
    release = threading.Event()
    tool = ContextTool(
        "slow",
        "never returns in time",
        {"type": "object"},
        run=lambda: "done" if release.wait(20) else "late",
    )

    async def call() -> str:
        try:
            return await tool.invoke({}, timeout=0.2)
        finally:
            release.set()  # lets the worker thread end (asyncio.run waits for it)

    out = asyncio.run(call())
    assert (
        out == "error: slow did not finish within 0.2s (NOVA_TOOL_TIMEOUT); try a narrower request"
    )


@pytest.mark.slow
def test_redos_through_a_whole_review(big_repo: GitRepo, llm_env: FakeOpenAI) -> None:
    llm_env.enqueue(
        tool_call("search_code", {"pattern": REDOS, "regex": True}),
        text(json.dumps({"summary": "ok", "comments": []})),
    )
    result = CliRunner().invoke(
        cli, ["review", "--repo", str(big_repo.path), "-q"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    tool_msgs = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_msgs[0].startswith("error: the regex cannot be run")


@pytest.mark.slow
def test_redos_on_the_github_contents_tree(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No checkout at hand: the PR's files are read through the API and matched in Python."""
    repo.write("big.txt", "start\n")
    base = repo.commit("base")
    # 80 x's a line: 2**80 ways to split them for a backtracking engine
    repo.write("big.txt", "".join(f'v{i} = "{"x" * 80}"\n' for i in range(20)))
    head = repo.commit("grow")
    gh = FakeGitHub(TOKEN).start()
    try:
        gh.add_pull(pull_from_repo(repo, base, head))
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        llm_env.enqueue(
            tool_call("search_code", {"pattern": REDOS, "regex": True}),
            tool_call("search_code", {"pattern": "(x+x+)+y", "regex": True}),
            text(json.dumps({"summary": "ok", "comments": []})),
        )
        empty = tmp_path / "no-checkout"
        empty.mkdir()
        result = CliRunner().invoke(
            cli, ["review", "acme/shop#1", "--repo", str(empty), "-q"], catch_exceptions=False
        )
    finally:
        gh.stop()
    assert result.exit_code == 0, result.stderr
    tool_msgs = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_msgs[0].startswith("error: the regex cannot be run")
    assert tool_msgs[1] == "no matches for '(x+x+)+y'"


def _checkout_with_credentials(repo: GitRepo) -> str:
    """A checkout as actions/checkout leaves it: the token, base64-encoded, in .git/config;
    plus credential stores and a CI script that carries the same header."""
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    repo.git("config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {header}")
    repo.write("app.py", "x = 1\n")
    repo.write(".env", f"GITHUB_TOKEN={TOKEN}\n")
    repo.write("config/.npmrc", f"//registry.npmjs.org/:_authToken={TOKEN}\n")
    repo.write(
        "ci/fetch.sh",
        f"curl -H 'Authorization: Basic {header}' 'https://h/?t={quote(TM_TOKEN, safe='')}'\n",
    )
    repo.commit("base")
    (repo.path / "gitconfig-link").symlink_to(".git/config")
    repo.write("app.py", "x = 2\n")
    return header


def test_git_dir_and_credential_stores_are_never_read(repo: GitRepo) -> None:
    import git

    _checkout_with_credentials(repo)
    work_tree = GitTree(git.Repo(repo.path), None)  # what `git diff | nova review -` reads
    for path in (
        ".git/config",
        "./.git/config",
        "sub/../.git/config",
        ".GIT/config",
        ".git",
        "gitconfig-link",
        ".env",
        "config/.npmrc",
        ".env.production",
    ):
        assert read(work_tree, path).startswith(f"error: {path!r} cannot be read"), path
    assert "x = 2" in read(work_tree, "app.py")
    # the token is in .env and config/.npmrc only: their lines never come back
    assert search(work_tree, TOKEN[:12], regex=False) == f"no matches for {TOKEN[:12]!r}"
    assert search(work_tree, "TOKEN", regex=False) == "no matches for 'TOKEN'"
    assert search(work_tree, "Basic", regex=False).startswith("ci/fetch.sh:1: curl")


@pytest.mark.slow
def test_no_form_of_the_token_reaches_the_model(
    repo: GitRepo, llm_env: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    header = _checkout_with_credentials(repo)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # registered as secrets at load time
    monkeypatch.setenv("NOVA_TASK_MANAGER_TOKEN", TM_TOKEN)
    llm_env.enqueue(
        tool_call("read_file", {"path": ".git/config"}),
        tool_call("read_file", {"path": "gitconfig-link"}),
        tool_call("read_file", {"path": ".env"}),
        tool_call("read_file", {"path": "ci/fetch.sh"}),
        tool_call("search_code", {"pattern": "AUTHORIZATION"}),
        tool_call("search_code", {"pattern": "_authToken"}),
        text(json.dumps({"summary": "ok", "comments": []})),
    )
    diff = repo.git("diff")
    events = tmp_path / "events.jsonl"
    result = CliRunner().invoke(
        cli,
        ["review", "-", "--repo", str(repo.path), "-o", "json", "--events-file", str(events)],
        input=diff,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    everything = json.dumps(llm_env.requests) + result.stdout + result.stderr + events.read_text()
    for form in (
        TOKEN,
        header,
        base64.b64encode(TOKEN.encode()).decode(),
        TM_TOKEN,
        quote(TM_TOKEN, safe=""),
        quote(TM_TOKEN, safe="").lower(),
    ):
        assert form not in everything
    tools = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert all(t.startswith("error:") for t in tools[:3])
    assert "Authorization: Basic ***" in tools[3] and "?t=***" in tools[3]
    assert tools[5] == "no matches for '_authToken'"  # only in config/.npmrc: refused


class _MemoryTree(ApiTree):
    """An API tree whose 'API' is a dict: what GitHubTree and GitLabTree share."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__("0" * 40, sorted(files))
        self.files = files

    def fetch(self, path: str) -> bytes | None:
        return self.files.get(path)

    def paths(self) -> list[str] | None:
        return None


def test_every_api_tree_searches_in_linear_time() -> None:
    from bot.hosts.github.source import GitHubTree
    from bot.hosts.gitlab.source import GitLabTree

    assert issubclass(GitHubTree, ApiTree) and issubclass(GitLabTree, ApiTree)
    text = ("x" * 5000 + "\n") * 200 + "the end\n"
    tree = _MemoryTree({"a.txt": text.encode(), "bin.dat": b"\x00\x01"})
    assert search(tree, REDOS).startswith("error: the regex cannot be run")
    assert search(tree, r"(x+x+)+y") == "no matches for '(x+x+)+y'"
    assert search(tree, r"the \w+") == "a.txt:201: the end"
    assert tree.read_text("bin.dat") is None and tree.list_files() == ["a.txt", "bin.dat"]
