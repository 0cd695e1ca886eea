"""The line check of Nova's Conduit extension (ci/phabricator/extension/): a line past the end
of the file, or outside the changeset, is refused like an unknown path (issue 27, section 5;
the extension published line 99,999 of a 1,096-line file on a real Phorge).

The extension's own PHP runs here under php-cli, with the few Phorge classes it touches
stubbed (tests/e2e/extension_harness.php); the real-Phorge run is in test_phorge.py
(``test_the_extension_refuses_a_line_outside_the_changeset``, needs PHORGE_SOURCE)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "ci/phabricator/extension/NovaDifferentialPublishConduitAPIMethod.php"
HARNESS = Path(__file__).with_name("extension_harness.php")

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php-cli is not installed")


def check(*cases: dict[str, Any]) -> list[dict[str, Any]]:
    run = subprocess.run(
        ["php", str(HARNESS), str(EXTENSION)],
        input=json.dumps(list(cases)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(run.stdout)


def case(hunks: dict[str, list[list[int]]], *inlines: dict[str, Any]) -> dict[str, Any]:
    return {"hunks": hunks, "inlines": [{"content": "x", **i} for i in inlines]}


WHOLE_FILE = {"app/cart.py": [[1, 1095, 1, 1096]]}  # a 1,096-line file, shown whole
TWO_HUNKS = {"app/cart.py": [[1, 3, 1, 4], [10, 3, 11, 3]]}  # new lines 1-4 and 11-13


def test_a_line_past_the_end_of_the_file_is_refused() -> None:
    (refused,) = check(case(WHOLE_FILE, {"path": "app/cart.py", "line": 99999}))
    assert refused["error"] == "ERR-BAD-INLINE"
    assert refused["message"] == (
        'inline 0: line 99999 of "app/cart.py" is not in diff 7 (new lines 1-1096).'
    )
    last, past = check(
        case(WHOLE_FILE, {"path": "app/cart.py", "line": 1096}),
        case(WHOLE_FILE, {"path": "app/cart.py", "line": 1096, "length": 1}),
    )
    assert last == {"ok": [[1, 1096]]} and past["error"] == "ERR-BAD-INLINE"


def test_lines_between_hunks_and_the_old_side() -> None:
    results = check(
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 6}),  # between the hunks
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 12, "length": 1}),
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 12, "length": 2}),  # runs out
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 12, "isNewFile": False}),  # old 10-12
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 13, "isNewFile": False}),
        case({"gone.py": [[1, 5, 0, 0]]}, {"path": "gone.py", "line": 1}),  # deleted file
    )
    assert [r.get("error", "ok") for r in results] == [
        "ERR-BAD-INLINE",
        "ok",
        "ERR-BAD-INLINE",
        "ok",
        "ERR-BAD-INLINE",
        "ERR-BAD-INLINE",
    ]
    assert "(new lines 1-4, 11-13)" in results[0]["message"]
    assert results[5]["message"].endswith("(no new lines).")


def test_one_bad_line_refuses_the_whole_call() -> None:
    (result,) = check(
        case(
            TWO_HUNKS,
            {"path": "app/cart.py", "line": 2},
            {"path": "app/cart.py", "line": 500},
        )
    )
    assert result["error"] == "ERR-BAD-INLINE" and result["message"].startswith("inline 1:")


def test_the_other_checks_still_hold() -> None:
    results = check(
        case(TWO_HUNKS, {"path": "nope.py", "line": 1}),
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 0}),
        case(TWO_HUNKS, {"path": "app/cart.py", "line": 2, "length": -1}),
    )
    assert all(r["error"] == "ERR-BAD-INLINE" for r in results)


hunk_rows = st.lists(
    st.tuples(st.integers(0, 50), st.integers(0, 8), st.integers(0, 50), st.integers(0, 8)),
    min_size=1,
    max_size=4,
)


@pytest.mark.slow
@given(
    st.lists(
        st.tuples(hunk_rows, st.integers(-2, 70), st.integers(0, 5), st.booleans()),
        min_size=1,
        max_size=40,
    )
)
def test_the_extension_accepts_exactly_the_lines_its_hunks_show(cases: list) -> None:
    """Batched: one php run per example, every case in it checked against the model."""
    results = check(
        *(
            case(
                {"f.py": [list(r) for r in rows]},
                {"path": "f.py", "line": line, "length": n, "isNewFile": new},
            )
            for rows, line, n, new in cases
        )
    )
    for (rows, line, n, new), result in zip(cases, results, strict=True):
        shown = [(r[2], r[3]) if new else (r[0], r[1]) for r in rows]
        fits = line >= 1 and any(
            length > 0 and start <= line and line + n <= start + length - 1
            for start, length in shown
        )
        assert ("ok" in result) == fits, (rows, line, n, new, result)
