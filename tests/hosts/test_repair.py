"""A failed publish is loud, and the next run repairs it, on every host (see contract.py).

When the host fails the inline comments (HTTP 500: GitHub's review, a GitLab thread, the
Phabricator extension's call) — not because the token may not write — the run exits 3,
every finding is in the summary, and the summary says what failed. The re-run guard then
tells that degraded review from a complete one: a plain re-run on the same head reviews
again, posts the inline comments that are missing once, and nothing twice; the run after
it posts nothing. When the host fails every time, every run exits 3 and loses nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.change import SEVERITIES, Change, Comment, Placement, Severity
from bot.review.result import ReviewResult, parse_verdict, verdict_marker
from tests.hosts.contract import (
    BODIES,
    EXPECTED,
    HostChange,
    HostHarness,
    Inline,
    json_output,
    model_reply,
)
from tests.servers.openai_server import FakeOpenAI, text

GATE = ("--analyzers", "none", "--fail-on", "error")  # "None items crash" is an error


def _count(inline: list[Inline]) -> Counter[str]:
    """How many inline comments carry each finding."""
    return Counter(body for c in inline for body in EXPECTED if body in c.body)


def _run(host: HostHarness, change: HostChange, tmp_path: Path, llm: FakeOpenAI) -> object:
    llm.enqueue(text(model_reply()))
    return host.review(tmp_path, change.ref, "--publish", host.name, *GATE, "-o", "json")


def _nothing_lost(host: HostHarness) -> str:
    """Every finding is inline or in Nova's latest summary; return that summary."""
    summary = host.summaries()[-1]
    inline = host.inline_comments()
    for body in BODIES:
        assert body in summary or any(body in c.body for c in inline), body
    return summary


@pytest.mark.slow  # three runs of `nova review`
def test_a_host_failure_once_exits_3_and_the_next_run_posts_what_is_missing_once(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    host.fail_inline(1)
    first = _run(host, change, tmp_path, llm_env)
    assert first.exit_code == 3, first.stderr  # type: ignore[attr-defined]
    summary = _nothing_lost(host)
    assert "500" in summary  # the summary says what failed
    missing = [b for b in EXPECTED if b not in _count(host.inline_comments())]
    assert missing and all(b in summary for b in missing)
    assert "Error:" in json_output(first.stdout)["summary"]  # type: ignore[attr-defined]

    second = _run(host, change, tmp_path, llm_env)  # a plain re-run: no --force
    assert second.exit_code == 1, second.stderr  # type: ignore[attr-defined]
    assert len(llm_env.requests) == 2  # the degraded review was done again
    assert "incomplete" in json_output(second.stdout)["summary"]  # type: ignore[attr-defined]
    assert _count(host.inline_comments()) == Counter(EXPECTED.keys())  # each once, none twice
    assert {(c.path, c.line) for c in host.inline_comments()} == set(EXPECTED.values())
    _nothing_lost(host)
    assert len(host.summaries()) == (1 if host.edits_summary else 2)

    writes = host.writes()
    third = _run(host, change, tmp_path, llm_env)  # now complete: skipped, as the first
    assert third.exit_code == 1, third.stderr  # type: ignore[attr-defined]
    assert "already reviewed" in json_output(third.stdout)["summary"]  # type: ignore[attr-defined]
    assert host.writes() == writes and len(llm_env.requests) == 2


@pytest.mark.slow  # two runs of `nova review`
def test_a_host_that_always_fails_exits_3_every_run_and_loses_nothing(
    host: HostHarness, change: HostChange, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    host.fail_inline(50)
    for run in (1, 2):
        result = _run(host, change, tmp_path, llm_env)
        assert result.exit_code == 3, (run, result.stderr)  # type: ignore[attr-defined]
        assert len(llm_env.requests) == run  # never taken for a finished review
        assert host.inline_comments() == []
        summary = _nothing_lost(host)
        assert "500" in summary
        assert len(host.summaries()) == (1 if host.edits_summary else run)


@given(
    severities=st.lists(st.sampled_from(SEVERITIES), max_size=30),
    errors=st.integers(0, 3),
    failed=st.integers(0, 3),
)
@settings(max_examples=200)
def test_the_verdict_marker_tells_a_complete_review_from_a_degraded_one(
    severities: list[Severity], errors: int, failed: int
) -> None:
    """What a summary records is read back as written: the findings, and whether any
    service (the model, a host write of this publish) failed."""
    change = Change(id="x#1", source="github", head_ref="a" * 40)
    result = ReviewResult(
        change=change,
        summary="",
        placements=[Placement(Comment("f.py", 1, "b", severity=s)) for s in severities],
        errors=["e"] * errors,
    )
    prior = parse_verdict("a" * 40, verdict_marker(result, failed=failed))
    assert prior is not None
    assert Counter(prior.severities) == Counter(severities)
    assert prior.complete == (errors + failed == 0)
