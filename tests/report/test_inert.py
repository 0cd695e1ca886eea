"""Nothing Nova renders acts: no line of a finding, a suggestion's surroundings, the
summary, the walkthrough, an answer or a test proposal's description is read as a GitLab
quick action, a Prow command or a bors command (readers in ``tests/report/readers.py``),
and the reader still sees the text."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.change import Comment, Placement
from bot.conversation.answers import model_answer_text, safe
from bot.hosts.github.publisher import _inline_body
from bot.hosts.gitlab.publisher import _thread_body
from bot.hosts.phabricator.publisher import PhabricatorPublisher
from bot.hosts.phabricator.summary import Summary
from bot.report.digest import REFUSED, Listed
from bot.report.summary import render_summary
from bot.report.testgen import render_testgen_body
from bot.report.untrusted import clean_suggestion, clean_text
from bot.review.result import Walk
from tests.report import test_testgen_body
from tests.report.readers import bors_commands, commands, gitlab_quick_actions, prow_commands
from tests.report.test_golden_surfaces import golden_result

pieces = st.sampled_from(
    [
        "/approve", "/merge", "/lgtm", "/hold", "/Approve", "/MERGE", "/label ~x", "/", "//",
        "/_x", "/é",
        "bors r+", "BORS merge", "bors: r+", "bors try", "bors", "b", "ors r+",
        "\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e",
        " ", "\t", "  ", ">", "> ", "\u200b", "\ufeff", "\u2060", "\u3164", "\u00a0",
        "```", "```suggestion", "~~~", "\\", "x", "@", "a", "-", "*", "`",
    ]
)  # fmt: skip
texts = st.lists(pieces | st.text(max_size=4), max_size=16).map("".join)


def _findings(text: str) -> list[Placement]:
    return [
        Placement(Comment("a.py", 2, text, severity="error"), "a.py", 2, suggestion=text),
        Placement(Comment("a.py", 3, "x", severity="info", rule=text), "a.py", 3),
    ]


def _summaries(text: str) -> list[str]:
    result = golden_result()
    result.summary = text
    result.walkthrough = [Walk("src/pay/api.py", text), Walk(text, text)]
    result.notes.append(text)
    result.placements[0] = dataclasses.replace(
        result.placements[0], comment=dataclasses.replace(result.placements[0].comment, body=text)
    )
    placed = result.placed
    out = [
        render_summary(
            result,
            outside=[Listed(placed[2], REFUSED, text)],
            notes=[text],
            clean=clean,
            host=host,
            limit=65_536,
        )
        for clean, host in [(clean_text, "GitHub"), (clean_text, "GitLab")]
    ]
    fps = [(f"{i:016x}", p) for i, p in enumerate(result.placements)]
    out.append(
        Summary(
            result,
            4567,
            {"src/pay/api.py": 11},
            mode="lint",
            placed=[(fp, p) for fp, p in fps if p.placed],
            unplaced=[(fp, p) for fp, p in fps if not p.placed],
            all_fps=[fp for fp, _p in fps],
        ).text()
    )
    return out


def rendered(text: str) -> list[str]:
    """Every body Nova builds around ``text`` (model or linter output), on every host."""
    found = _findings(text)
    proposal = test_testgen_body.result()
    proposal.change = dataclasses.replace(proposal.change, title=text)
    proposal.notes.append(text)
    proposal.dropped[0] = dataclasses.replace(proposal.dropped[0], reason=text)
    return [
        clean_text(text),
        _inline_body(found, "0" * 16, "1" * 12),
        _thread_body(found, "0" * 16, "1" * 12),
        PhabricatorPublisher._inline(found[0], "0" * 16)["content"],
        *_summaries(text),
        model_answer_text(text),
        safe(text),
        clean_text(render_testgen_body(proposal)),  # how every host's proposer renders it
        clean_text(f"Tests for {text}")[:250],
    ]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(text=texts)
def test_no_reader_finds_a_command_in_anything_nova_renders(text: str) -> None:
    for body in rendered(text):
        assert commands(body) == [], (text, body)


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_the_reader_still_sees_the_text(text: str) -> None:
    """Only what a renderer hides is added (a backslash before ``/``, which Markdown does
    not show; an invisible space in ``bors``); line breaks become plain ones."""
    text = text.replace("@", "").replace("<!--", "")
    out = clean_text(text).replace("\u200b", "")
    seen = text.replace("\u200b", "").replace("\r\n", "\n")
    for br in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029":
        seen = seen.replace(br, "\n")
    assert out.replace("\\/", "/") == seen.replace("\\/", "/")
    assert clean_text("src/bors/x.py and the neighbours") == "src/bors/x.py and the neighbours"


def test_the_readers_read_what_the_hosts_read() -> None:
    """The readers themselves: each finds what its program runs, and not what it skips."""
    assert gitlab_quick_actions("x\r\n/Approve\n/merge now") == ["approve", "merge"]
    assert gitlab_quick_actions("a\r/approve") == []  # the CR is deleted: "a/approve"
    assert gitlab_quick_actions("```\n/approve\n```") == []  # a closed fence hides it
    assert gitlab_quick_actions("```\n/approve") == ["approve"]  # an open one does not
    assert gitlab_quick_actions(" /approve\n> /merge") == []
    assert prow_commands(" > \u200b/lgtm\n\u2028/hold") == ["lgtm", "hold"]
    assert bors_commands("ok, Bors r+ please") == ["r+"]
    assert commands("the path /usr/bin is fine") == []


def test_a_quick_action_is_shown_and_inert() -> None:
    body = clean_text("Looks wrong.\n/approve\r/merge\n  > /lgtm\nbors r+")
    assert body == "Looks wrong.\n\\/approve\n\\/merge\n  > \\/lgtm\nb\u200bors r+"
    assert commands(body) == []


def test_a_suggestion_that_carries_a_command_is_left_out() -> None:
    assert clean_suggestion("x = 1\n/lgtm") is None
    assert clean_suggestion("x = 1  # bors r+") is None
    assert clean_suggestion("path = '/usr'") == "path = '/usr'"
    code = "  // keep the fee\n  /* in cents */\n  x = y / 2"
    assert clean_suggestion(code) == code  # a comment or a division is no command
    assert clean_text(code) == code


def test_an_answer_offers_no_suggestion_block() -> None:
    answer = model_answer_text("Do this:\n```suggestion\nx = 2\n```\n  ~~~ Suggestion:-0+1\ny\n~~~")
    assert "suggestion" not in answer.lower()
    assert "```\nx = 2\n```" in answer
