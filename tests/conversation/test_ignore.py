"""`@nova dismiss always` answers a ready `[[ignore]]` entry; committed to the base
revision's .nova.toml it ignores the finding, counted in the summary; bad entries are
refused with a clear error."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from bot.config import parse_repo_config
from bot.errors import ConfigError
from tests.conftest import GitRepo, run
from tests.conversation.support import (
    BASE,
    ERROR,
    HEAD,
    WARNING,
    findings,
    inline,
    nova,
    nova_replies,
    open_pull,
    review,
)
from tests.hosts.github.support import REPO
from tests.servers.github_server import FakeGitHub
from tests.servers.openai_server import FakeOpenAI, text


def test_dismiss_always_answers_an_ignore_entry_that_then_ignores_the_finding(
    repo: GitRepo, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    open_pull(repo, gh)
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    gh.permissions["alice"] = "admin"
    ask = gh.reply_as("alice", inline(gh, "error"), '@nova dismiss always "fee" is ``` fine')
    assert nova(tmp_path, "respond", f"{REPO}#1", "--comment", str(ask["id"])).exit_code == 0
    (answer,) = nova_replies(gh)
    snippet = re.search(r"```toml\n(.*?)\n```", answer["body"], re.S)
    assert snippet is not None, answer["body"]
    entry = tomllib.loads(snippet.group(1))["ignore"][0]
    assert entry["path"] == "pay.py" and len(entry["fingerprint"]) == 16
    assert "fine" in entry["reason"]
    # the team commits it to the base branch: the next change's review ignores the finding
    other = GitRepo(tmp_path / "other")
    other.write(".nova.toml", snippet.group(1) + "\n")
    other.write("pay.py", BASE)
    other.commit("base with the rule")
    other.write("pay.py", HEAD)
    other.commit("fee")
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    result = run(
        "review",
        "HEAD",
        "--repo",
        str(other.path),
        "-q",
        "--analyzers",
        "none",
        "--fail-on",
        "error",
        "-o",
        "json",
    )
    assert result.exit_code == 0, result.stderr  # the error is ignored; the warning stays
    data = json.loads(result.stdout)
    assert [c["severity"] for c in data["comments"]] == ["warning"]
    assert "1 finding(s) ignored by [[ignore]]" in data["summary"]


def test_an_ignored_finding_leaves_the_gate_and_is_counted(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    repo.write(
        ".nova.toml",
        '[[ignore]]\npath = "pay*.py"\nfingerprint = ""\nrule = ""\nreason = "legacy"\n',
    )
    repo.write("pay.py", BASE)
    repo.commit("base")
    repo.write("pay.py", HEAD)
    repo.commit("fee")
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    result = run(
        "review",
        "HEAD",
        "--repo",
        str(repo.path),
        "-q",
        "--analyzers",
        "none",
        "--fail-on",
        "warning",
        "-o",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["comments"] == []
    assert "2 finding(s) ignored by [[ignore]]" in data["summary"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[[ignore]]\nreason = 'x'\n", "names no path, rule or fingerprint"),
        ("[[ignore]]\npath = 1\n", "must be a string"),
        ("[[ignore]]\npaht = 'x'\n", "unknown keys paht"),
        ("ignore = 'x'\n", "must be tables"),
    ],
)
def test_bad_ignore_entries_are_refused(text: str, error: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(error)):
        parse_repo_config(text, ".nova.toml")
