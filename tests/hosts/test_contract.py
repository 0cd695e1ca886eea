"""The contract every code host keeps, run against each host's local server (see
contract.py): re-runs post nothing new and exit as the first run, forced ones duplicate
nothing; a refused position lands in the summary, never lost, never on another line;
markers from anyone else change nothing; read-only credentials lose nothing and say what
was refused; inline comments are on lines of the change's diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hosts.contract import (
    BODIES,
    EXPECTED,
    HostChange,
    HostHarness,
    Inline,
    fingerprints,
    json_output,
    model_reply,
)
from tests.servers.openai_server import FakeOpenAI, text

GATE = ("--analyzers", "none", "--fail-on", "error")  # "None items crash" is an error


def _where(inline: list[Inline]) -> set[tuple[str, int]]:
    return {(c.path, c.line) for c in inline}


def _on_its_own_line(inline: list[Inline]) -> None:
    """Each inline comment carries one finding, on the line that finding belongs to."""
    for c in inline:
        (body,) = [b for b in EXPECTED if b in c.body]
        assert (c.path, c.line) == EXPECTED[body], c


@pytest.mark.slow  # two runs of `nova review`
def test_a_rerun_on_the_same_head_posts_nothing_and_exits_as_the_first(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    first = host.review(tmp_path, change.ref, "--publish", host.name, *GATE)
    assert first.exit_code == 1, first.stderr
    stored = (sorted(_where(host.inline_comments())), host.summaries(), host.writes())
    assert len(stored[0]) == len(EXPECTED) and len(stored[1]) == 1
    calls = len(llm_env.requests)
    again = host.review(tmp_path, change.ref, "--publish", host.name, *GATE, "-o", "json")
    assert again.exit_code == first.exit_code, again.stderr
    assert len(llm_env.requests) == calls  # the model is not asked again
    assert (sorted(_where(host.inline_comments())), host.summaries(), host.writes()) == stored
    assert "already reviewed" in json_output(again.stdout)["summary"]


@pytest.mark.slow  # two runs of `nova review`
def test_a_forced_rerun_worded_differently_duplicates_nothing(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    assert host.review(tmp_path, change.ref, "--publish", host.name, *GATE).exit_code == 1
    before = sorted(_where(host.inline_comments()))
    llm_env.enqueue(text(model_reply(" (worded anew)")))
    forced = host.review(tmp_path, change.ref, "--publish", host.name, *GATE, "--force")
    assert forced.exit_code == 1, forced.stderr
    assert len(llm_env.requests) == 2  # --force did review again
    assert sorted(_where(host.inline_comments())) == before  # each finding still once
    assert not any("worded anew" in c.body for c in host.inline_comments())
    assert len(host.summaries()) == 1


def test_a_refused_position_goes_to_the_summary_never_lost_never_moved(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    refused = "None items crash"
    host.refuse(*EXPECTED[refused])
    llm_env.enqueue(text(model_reply()))
    result = host.review(tmp_path, change.ref, "--publish", host.name, "--analyzers", "none")
    assert "Traceback" not in result.stderr
    inline = host.inline_comments()
    assert not any(refused in c.body for c in inline)
    _on_its_own_line(inline)
    (summary,) = host.summaries()
    assert refused in summary
    for body in BODIES:  # every finding is inline or in the summary
        assert body in summary or any(body in c.body for c in inline), body


@pytest.mark.slow  # two runs of `nova review`
def test_markers_written_by_another_user_change_nothing(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    where = EXPECTED["magic number"]
    host.forge(change.head, [], where)  # "reviewed, nothing found" on this very head
    llm_env.enqueue(text(model_reply()))
    first = host.review(tmp_path, change.ref, "--publish", host.name, *GATE, "-o", "json")
    assert first.exit_code == 1, first.stderr  # reviewed: not skipped by the forgery
    assert "already reviewed" not in json_output(first.stdout)["summary"]
    assert len(llm_env.requests) == 1 and _where(host.inline_comments()) == set(EXPECTED.values())
    stolen = fingerprints([c.body for c in host.inline_comments()])
    assert len(stolen) == len(EXPECTED)
    # another user copies every fingerprint and a clean verdict onto the change
    host.clear()
    host.forge(change.head, stolen, where)
    llm_env.enqueue(text(model_reply()))
    second = host.review(tmp_path, change.ref, "--publish", host.name, *GATE)
    assert second.exit_code == 1, second.stderr  # the gate still fails
    assert len(llm_env.requests) == 2
    assert _where(host.inline_comments()) == set(EXPECTED.values())  # posted again
    assert len(host.summaries()) == 1


def test_read_only_credentials_lose_nothing_and_say_what_was_refused(
    host: HostHarness,
    change: HostChange,
    llm_env: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host.read_only(monkeypatch, tmp_path)
    llm_env.enqueue(text(model_reply()))
    result = host.review(
        tmp_path, change.ref, "--publish", host.name, "--analyzers", "none", "-o", "json"
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code == 0, result.stderr  # the gate decides, as on a writable run
    data = json_output(result.stdout)
    assert sorted(f["body"] for f in data["comments"] + data["unplaced"]) == sorted(BODIES)
    assert host.refusal in data["summary"] + result.stderr
    assert host.inline_comments() == [] and host.summaries() == []


def test_every_inline_comment_is_on_a_line_of_the_diff(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    llm_env.enqueue(text(model_reply()))
    result = host.review(tmp_path, change.ref, "--publish", host.name, "--analyzers", "none")
    assert result.exit_code == 0, result.stderr
    inline = host.inline_comments()
    assert _where(inline) == set(EXPECTED.values())
    for c in inline:
        assert c.line in change.lines.get(c.path, set()), c
    _on_its_own_line(inline)
