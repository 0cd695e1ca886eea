"""``transaction.search`` answers newest first on a live Phorge (checked on a real one, see
tests/e2e): Nova's re-run guard must read its LATEST summary of a diff, not its first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.phabricator.test_phabricator import answer, review
from tests.hosts.phabricator.test_phabricator import revision as revision  # noqa: F401
from tests.servers.conduit_server import TOKEN, FakeConduit, Revision
from tests.servers.openai_server import FakeOpenAI, text


@pytest.fixture
def phab(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeConduit]:
    server = FakeConduit(newest_first=True).start()
    monkeypatch.setenv("PHABRICATOR_URL", server.url)
    monkeypatch.setenv("PHABRICATOR_API_TOKEN", TOKEN)
    yield server
    server.stop()


def test_the_fake_answers_newest_first(
    revision: Revision,  # noqa: F811
    phab: FakeConduit,
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    for n in range(3):
        phab.timeline.append({"revision": 123, "author": "PHID-USER-bob", "text": f"c{n}"})
    ids = [tx["id"] for tx in phab._m_transaction_search({"objectIdentifier": "D123"})["data"]]
    assert ids == sorted(ids, reverse=True) and len(ids) == 3


@pytest.mark.slow
def test_a_repaired_review_is_not_redone_when_the_server_answers_newest_first(
    revision: Revision,  # noqa: F811
    phab: FakeConduit,
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    """Run 1 fails to publish inline (a degraded verdict), run 2 repairs it (a complete
    verdict on the same diff), run 3 must see run 2's verdict: nothing to do, no model."""
    phab.extension = True
    phab.crash_methods = {"nova.differential.publish": "boom"}
    llm_env.enqueue(text(answer()))
    assert review(tmp_path, "D123", "--publish", "phabricator").exit_code == 3
    phab.crash_methods = {}
    llm_env.enqueue(text(answer()))
    assert review(tmp_path, "D123", "--publish", "phabricator").exit_code == 0
    assert len(llm_env.requests) == 2
    summaries = len(phab.comments(123))
    third = review(tmp_path, "D123", "--publish", "phabricator", "--fail-on", "error")
    assert third.exit_code == 1, third.stderr  # run 2's verdict: "None items" is an error
    assert len(llm_env.requests) == 2  # the latest summary is complete: the model rests
    assert len(phab.comments(123)) == summaries
