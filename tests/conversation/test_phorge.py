"""The conversation on a Differential revision against the local Conduit (python-
phabricator): a reviewer's dismissal opens the gate, anyone else's is refused once, a
fixed inline is marked done through Nova's extension, and without the extension Nova
still answers (plain comments) and says it cannot resolve."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bot.cli import cli
from tests.conftest import GitRepo
from tests.conversation.support import BASE, ERROR, HEAD, WARNING, findings, names_dismissal
from tests.servers.conduit_server import BOT_PHID, Revision, changes_from_git_diff
from tests.servers.conduit_threads import FakePhorge
from tests.servers.openai_server import FakeOpenAI, text

REVIEWER, STRANGER = "PHID-USER-rita", "PHID-USER-sam"


def _diff(repo: GitRepo, phorge: FakePhorge, rev: Revision | None, text_: str, did: int):
    base = repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    repo.write("pay.py", text_)
    head = repo.commit(f"diff {did}")
    changes = changes_from_git_diff(repo.git("diff", base, head))
    if rev is None:
        return phorge.add_revision(Revision(7, "Payment fee", "", {did: changes}, base=base))
    rev.diffs[did] = changes
    return rev


@pytest.fixture
def rev(repo: GitRepo, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path) -> Revision:
    repo.write("pay.py", BASE)
    repo.commit("base")
    revision = _diff(repo, phorge, None, HEAD, 100)
    phorge.reviewers[7] = [REVIEWER]
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    return revision


def review(tmp_path: Path, *args: str) -> Result:
    empty = tmp_path / "no-checkout"
    empty.mkdir(exist_ok=True)
    return CliRunner().invoke(
        cli,
        ["review", "D7", "--repo", str(empty), "-q", "--publish", "phabricator"]
        + ["--analyzers", "none", *args],
        catch_exceptions=False,
    )


def inline(phorge: FakePhorge, severity: str) -> dict:
    return next(
        i for i in phorge.inlines if f"**{severity}**" in i["content"] or severity in i["content"]
    )


def nova_replies(phorge: FakePhorge) -> list[dict]:
    return [i for i in phorge.inlines if i.get("replyTo") and i["authorPHID"] == BOT_PHID]


def test_a_reviewers_dismissal_opens_the_gate_a_strangers_does_not(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    error = inline(phorge, "30%")
    phorge.reply_inline(STRANGER, error, "@nova dismiss not a bug")
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    (refusal,) = nova_replies(phorge)
    assert "the revision's reviewers" in refusal["content"]
    assert "//nova:re:" in refusal["content"] and "<!--" not in refusal["content"]
    phorge.reply_inline(REVIEWER, error, "@nova dismiss the fee is right")
    llm_env.enqueue(text(findings(ERROR, WARNING)))
    second = review(tmp_path, "--fail-on", "error", "-o", "json")
    assert second.exit_code == 0, second.stderr
    assert any(names_dismissal(c, "rita", "the fee is right") for c in phorge.comments(7)), (
        phorge.comments(7)[-1][-800:]
    )
    assert len(nova_replies(phorge)) == 2
    third = review(tmp_path, "--fail-on", "error")
    assert third.exit_code == 0 and len(nova_replies(phorge)) == 2


def test_a_fixed_inline_is_marked_done(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    warning, error = inline(phorge, "print left in"), inline(phorge, "30%")
    _diff(repo, phorge, rev, HEAD.replace("print('paid', total)", "log.info(total)"), 101)
    llm_env.enqueue(text(findings(ERROR)))
    assert review(tmp_path, "--fail-on", "error").exit_code == 1
    assert warning.get("done") and not error.get("done")
    (fixed,) = nova_replies(phorge)
    assert fixed["replyTo"] == warning["cphid"] and fixed["content"].startswith("Fixed in")


def test_without_the_extension_answers_are_comments_and_nothing_is_resolved(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, repo: GitRepo, tmp_path: Path
) -> None:
    phorge.respond_extension = False
    phorge.reply_inline(STRANGER, inline(phorge, "30%"), "@nova help")
    _diff(repo, phorge, rev, HEAD.replace("print('paid', total)", "log.info(total)"), 101)
    llm_env.enqueue(text(findings(ERROR)))
    result = review(tmp_path, "--fail-on", "error", "-o", "json")
    assert result.exit_code == 1, result.stderr  # the gate, not a failure (exit 3)
    assert not nova_replies(phorge)
    assert any("@nova dismiss" in c and "(on `pay.py:" in c for c in phorge.comments(7))
    assert "needs Nova's Conduit extension" in result.stdout


def test_a_question_under_an_inline_is_answered_once(
    rev: Revision, phorge: FakePhorge, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    question = phorge.reply_inline(REVIEWER, inline(phorge, "30%"), "@nova why 30%?")
    llm_env.enqueue(text("0.3 is thirty percent; the contract says 3%."))
    args = ["respond", "D7", "--repo", str(tmp_path), "-q"]
    first = CliRunner().invoke(cli, [*args, "--comment", question["cphid"]])
    assert first.exit_code == 0, first.stderr
    again = CliRunner().invoke(cli, args)  # every pending command: none left
    assert again.exit_code == 0, again.stderr
    (answer,) = nova_replies(phorge)
    assert answer["replyTo"] == inline(phorge, "30%")["cphid"] and "3%" in answer["content"]
    assert f"//nova:re:{question['cphid']}//" in answer["content"]
