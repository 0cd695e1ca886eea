"""The first screen of every surface on a many-file change (issue 29's done-when, small):
the verdict, the severity counts and the walkthrough first; nothing "skipped" outside the
folded details; the counts add up (every finding inline or listed, once). The requests
2.28 -> 2.32 version of this is bench/summary.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.hosts.git.source import GitSource
from tests.conftest import GitRepo, run
from tests.hosts.contract import BODIES, EXPECTED, HostHarness, build_change, model_reply
from tests.hosts.harness_github import GitHubHarness
from tests.hosts.harness_gitlab import GitLabHarness
from tests.hosts.harness_phabricator import PhabricatorHarness
from tests.report.screen import many_findings, read_markdown, read_remarkup, read_text
from tests.servers.openai_server import FakeOpenAI, text

READERS = {"github": read_markdown, "gitlab": read_markdown, "phabricator": read_remarkup}


@pytest.fixture(params=(GitHubHarness, GitLabHarness, PhabricatorHarness), ids=lambda h: h.name)
def host(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[HostHarness]:
    harness: HostHarness = request.param()
    harness.start(request, monkeypatch)
    yield harness
    harness.stop()


def big_change(repo: GitRepo) -> tuple[str, str]:
    """Twelve files in four directories, with a key and package metadata (excluded, so
    skipped) and a file renamed without a change: (base, head)."""
    for d in ("app", "app/api", "docs", "tests"):
        for n in range(3):
            repo.write(f"{d}/m{n}.py", "".join(f"v_{i} = {i}\n" for i in range(30)))
    repo.write("old_name.py", "same = 1\n")
    base = repo.commit("base")
    for d in ("app", "app/api", "docs", "tests"):
        for n in range(3):
            repo.write(f"{d}/m{n}.py", "".join(f"v_{i} = {i * 7}\n" for i in range(30)))
    repo.write("deploy/server.key", "-----BEGIN KEY-----\nabc\n-----END KEY-----\n")
    repo.write("PKG-INFO", "Metadata-Version: 2.1\nName: app\n")
    repo.git("mv", "old_name.py", "new_name.py")
    head = repo.commit("Rework the values")
    return base, head


@pytest.mark.slow
def test_every_host_opens_with_verdict_counts_and_walkthrough(
    host: HostHarness,
    repo: GitRepo,
    llm_env: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, head = big_change(repo)
    ref = host.add_change(repo, base, head)
    llm_env.responder = many_findings(GitSource(repo.path).fetch("HEAD").files, every=4)
    monkeypatch.setenv("NOVA_MAX_INLINE_COMMENTS", "10")
    monkeypatch.setenv("NOVA_FAIL_ON", "error")
    result = host.review(tmp_path, ref, "--publish", host.name, "-o", "json")
    assert result.exit_code == 1, result.stderr  # the scripted errors block
    data = json.loads(result.stdout)
    findings = len(data["comments"]) + len(data["unplaced"])
    assert findings > 40
    (body,) = host.summaries()
    screen = READERS[host.name](body)
    assert screen.problems(findings) == []
    assert screen.rows >= 12  # problems() checked they are as many as the counts say
    assert any("deploy/server.key" in line for line in screen.folded)  # skipped, folded
    if host.name != "phabricator":  # its inline comments are not capped (one call)
        assert "over the cap: 10 inline comments per run" in body


@pytest.mark.slow
def test_the_terminal_opens_with_verdict_counts_and_walkthrough(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    big_change(repo)
    llm_env.responder = many_findings(GitSource(repo.path).fetch("HEAD").files, every=4)
    text = run("review", "HEAD", "--repo", str(repo.path), "-q", "--fail-on", "error")
    data = json.loads(run("review", "HEAD", "--repo", str(repo.path), "-q", "-o", "json").stdout)
    findings = len(data["comments"]) + len(data["unplaced"])
    screen = read_text(text.stdout)
    assert screen.problems(findings) == [] and screen.rows == findings
    assert data["verdict"]["text"].startswith("Not blocking")  # -o json: fail-on never
    assert data["verdict"]["severities"]["error"] > 0
    assert {e["label"] for e in data["walkthrough"]["entries"]} >= {"app/m0.py", "docs/m2.py"}
    assert any("deploy/server.key" in s["files"] for s in data["details"]["skipped"])


@pytest.mark.slow
@pytest.mark.parametrize("harness", [GitHubHarness, GitLabHarness], ids=lambda h: h.name)
def test_a_refused_finding_says_the_hosts_own_words(
    harness: type[HostHarness],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    repo: GitRepo,
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    host = harness()
    host.start(request, monkeypatch)
    try:
        base, head = build_change(repo)
        ref = host.add_change(repo, base, head)
        host.refuse(*EXPECTED["magic number"])
        llm_env.enqueue(text(model_reply()))
        host.review(tmp_path, ref, "--publish", host.name, "--analyzers", "none")
        (summary,) = host.summaries()
    finally:
        host.stop()
    (row,) = [ln for ln in summary.splitlines() if "magic number" in ln]
    words = {"github": "GitHub rejected the inline comments", "gitlab": "GitLab refused 1 thread"}
    assert f"— _host refused: {words[host.name]}" in row
    assert read_markdown(summary).problems(len(BODIES)) == []
