"""Issue 27, section 5, on a REAL Phorge: Nova's extension refuses a line outside the
changeset (it published line 99,999 of a 1,096-line file), and without the extension Nova
says once, in the summary and the job log, that inline comments need it. Skipped without
PHORGE_SOURCE, like test_phorge.py, whose fixtures and helpers it shares; the line check
also runs without a Phorge in test_extension_check.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.phorge import Phorge
from tests.e2e.test_phorge import nova, phorge, seen_by_reader  # noqa: F401 - phorge: fixture
from tests.servers.openai_server import FakeOpenAI

pytestmark = pytest.mark.slow


def _publish(phorge: Phorge, rev_id: int, diff_id: int, path: str, line: int) -> str:  # noqa: F811
    """The extension's answer: "published" or the error it raised."""
    try:
        phorge.call(
            "bot",
            "nova.differential.publish",
            revisionID=rev_id,
            diffID=diff_id,
            inlines=[{"path": path, "line": line, "content": f"line {line} check"}],
        )
    except RuntimeError as exc:
        return str(exc)
    return "published"


def test_the_extension_refuses_a_line_outside_the_changeset(phorge: Phorge) -> None:  # noqa: F811
    phorge.install_extension()
    rev = phorge.new_revision("extension line check")
    # d1.diff: app/cart.py new lines 1-16 (one hunk), app/fmt.py new lines 1-9
    assert _publish(phorge, rev.id, rev.diff_id, "app/cart.py", 16) == "published"
    past = _publish(phorge, rev.id, rev.diff_id, "app/cart.py", 99999)
    assert "ERR-BAD-INLINE" in past and 'line 99999 of "app/cart.py"' in past
    assert "new lines 1-16" in past
    assert "ERR-BAD-INLINE" in _publish(phorge, rev.id, rev.diff_id, "app/fmt.py", 10)
    assert phorge.drafts(rev) == 0  # a refused call leaves nothing behind


def test_without_the_extension_nova_says_once_that_inlines_need_it(
    phorge: Phorge,  # noqa: F811
    llm_env: FakeOpenAI,
    tmp_path: Path,
) -> None:
    phorge.remove_extension()
    rev = phorge.new_revision("no extension note")
    run = nova(phorge, llm_env, rev, tmp_path)
    assert run.returncode == 0, run.stderr
    notes = [ln for ln in run.stderr.splitlines() if "need Nova's Conduit extension" in ln]
    assert len(notes) == 1 and notes[0].startswith("nova: note:")
    (summary,) = seen_by_reader(phorge, rev)["comments"]
    assert summary.count("need Nova's Conduit extension") == 1
    assert "docs/phabricator.md#the-conduit-extension" in summary
