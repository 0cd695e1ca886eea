"""Nova's extension on a REAL Phorge refuses a line outside the changeset (issue 27, section 5:
it published line 99,999 of a 1,096-line file). Skipped without PHORGE_SOURCE, like
test_phorge.py, whose ``phorge`` fixture it shares; the same check runs without a Phorge in
test_extension_check.py."""

from __future__ import annotations

import pytest

from tests.e2e.phorge import Phorge
from tests.e2e.test_phorge import phorge  # noqa: F401 - the module's Phorge fixture

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
