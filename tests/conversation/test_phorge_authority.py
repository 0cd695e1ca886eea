"""Phorge dismissal authority that the author cannot game (the local Conduit answers
``transaction.search`` with reviewer transactions as Phorge does): an accomplice added as
a reviewer after Nova's comment, a reviewer who resigned and the revision's author are
refused; a reviewer from before the comment and a member of the configured project count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conversation import test_phorge as phorge_case
from tests.conversation.support import ERROR, WARNING, findings
from tests.conversation.test_phorge import REVIEWER, inline, nova_replies, review
from tests.servers.conduit_server import Revision
from tests.servers.conduit_threads import FakePhorge
from tests.servers.openai_server import FakeOpenAI, text

ACCOMPLICE, AUTHOR, LEAD = "PHID-USER-ace", "PHID-USER-alice", "PHID-USER-lea"
PROJECT = "PHID-PROJ-leads"

rev = phorge_case.rev  # the revision, reviewed once: Nova's two inlines are there


def _dismiss(phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path, who: str) -> int:
    phorge.reply_inline(who, inline(phorge, "30%"), "@nova dismiss not a bug")
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    return review(tmp_path, "--fail-on", "error").exit_code


def test_an_accomplice_added_after_the_finding_cannot_dismiss_it(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.add_reviewer(7, ACCOMPLICE, by=AUTHOR)  # after Nova's comment
    assert _dismiss(phorge, llm_env, tmp_path, ACCOMPLICE) == 1  # the finding still counts
    (refusal,) = nova_replies(phorge)
    assert "a reviewer only since Nova's comment" in refusal["content"]
    assert "before Nova's comment and have not resigned" in refusal["content"]


def test_a_reviewer_who_resigned_cannot_dismiss(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.resign(7, REVIEWER)
    assert _dismiss(phorge, llm_env, tmp_path, REVIEWER) == 1
    (refusal,) = nova_replies(phorge)
    assert "`resigned`" in refusal["content"]


def test_a_reviewer_removed_and_added_again_later_cannot_dismiss(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    phorge.remove_reviewer(7, REVIEWER)
    phorge.add_reviewer(7, REVIEWER)
    assert _dismiss(phorge, llm_env, tmp_path, REVIEWER) == 0  # was one before the comment
    phorge_two = phorge.reviewer_status(7)
    assert phorge_two[REVIEWER] == "added"


def test_the_author_never_dismisses_even_in_the_project(
    rev: Revision,
    phorge: FakePhorge,
    llm_env: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NOVA_PHABRICATOR_DISMISS_PROJECT", PROJECT)
    phorge.project_members[PROJECT] = {AUTHOR, LEAD}
    assert _dismiss(phorge, llm_env, tmp_path, AUTHOR) == 1
    (refusal,) = nova_replies(phorge)
    assert "the revision's author" in refusal["content"]
    assert _dismiss(phorge, llm_env, tmp_path, LEAD) == 0  # a member of the project counts
