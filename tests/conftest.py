from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings as hypothesis_settings

from bot.cli import cli
from tests.servers.openai_server import FakeOpenAI

pytest_plugins = ["tests.hosts.github.support"]

hypothesis_settings.register_profile("nova", max_examples=150, deadline=None)
hypothesis_settings.load_profile("nova")

_LEAKY_ENV = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "PHABRICATOR_API_TOKEN",
    "OPENAI_BASE_URL",
    "CI",
    "GITHUB_ACTIONS",
)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """No user configuration leaks in: NOVA_* and provider keys unset, HOME is empty."""
    for name in list(os.environ):
        if name.startswith(("NOVA_", "GITLAB_", "CI_")) or name in _LEAKY_ENV:
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


class GitRepo:
    """A real git repository in a tmp dir."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, input: str | None = None) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada Author",
            "GIT_AUTHOR_EMAIL": "ada@x.invalid",
            "GIT_COMMITTER_NAME": "Ada Author",
            "GIT_COMMITTER_EMAIL": "ada@x.invalid",
        }
        return subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=env,
            input=input,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def write(self, rel: str, content: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def commit(self, message: str, *files: str) -> str:
        self.git("add", "-A", *files)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def llm_env(llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("NOVA_LLM_MODEL", "openai:test-model")
    monkeypatch.setenv("NOVA_LLM_BASE_URL", llm.base_url)
    monkeypatch.setenv("NOVA_LLM_API_KEY", "sk-test-secret-key-1234567890")
    monkeypatch.setenv("NOVA_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("NOVA_LLM_TIMEOUT", "10")
    return llm


def run(*args: str) -> Result:
    """``nova ARGS…`` in this process (click's runner), exceptions not caught."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)
