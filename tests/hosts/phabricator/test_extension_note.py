"""Without Nova's Conduit extension, inline comments cannot be posted: Nova says so once, in
the summary comment and in the job log, with where the docs explain it (issue 27, section 5;
before, it said nothing and exited 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.hosts.phabricator.publisher import NO_EXTENSION
from tests.hosts.phabricator.test_phabricator import (  # noqa: F401 - fixtures
    Revision,
    answer,
    phab,
    review,
    revision,
)
from tests.servers.conduit_server import FakeConduit
from tests.servers.openai_server import FakeOpenAI, text

DOCS = "docs/phabricator.md#the-conduit-extension-novadifferentialpublish-contract-version-2"


def _notes(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "need Nova's Conduit extension" in ln]


@pytest.mark.slow
def test_without_the_extension_nova_says_once_that_inlines_need_it(
    revision: Revision,  # noqa: F811 - the fixtures imported above
    phab: FakeConduit,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    llm_env.enqueue(text(answer()))
    result = review(tmp_path, "D123", "--publish", "phabricator", "-o", "json")
    assert result.exit_code == 0, result.stderr
    (line,) = _notes(result.stderr)
    assert line.startswith("nova: note: inline comments need") and DOCS in line
    (comment,) = phab.comments(123)
    assert comment.count("need Nova's Conduit extension") == 1 and DOCS in comment
    assert NO_EXTENSION in json.loads(result.stdout)["summary"]  # and in the report
    # a re-run that posts nothing new still exits as before and does not repeat it inline
    result = review(tmp_path, "D123", "--publish", "phabricator")
    assert result.exit_code == 0 and len(phab.comments(123)) == 1


@pytest.mark.slow
def test_with_the_extension_or_nothing_to_place_there_is_no_such_note(
    revision: Revision,  # noqa: F811 - the fixtures imported above
    phab: FakeConduit,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    phab.extension = True
    llm_env.enqueue(text(answer()))
    result = review(tmp_path, "D123", "--publish", "phabricator")
    assert result.exit_code == 0 and _notes(result.stderr) == []
    assert all("need Nova's Conduit extension" not in c for c in phab.comments(123))
    phab.extension = False
    llm_env.enqueue(text(json.dumps({"summary": "fine", "comments": []})))
    result = review(tmp_path, "D123", "--publish", "phabricator", "--force", "--analyzers", "none")
    assert result.exit_code == 0 and _notes(result.stderr) == []
