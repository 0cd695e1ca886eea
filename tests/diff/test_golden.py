"""Golden files: tests/data/diffs/<name>.diff -> <name>.numbered.txt and <name>.json.

Regenerate after an intended change with NOVA_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.diff import decode_diff, diff_to_dict, parse_diff, render_files
from bot.errors import DiffParseError

DATA = Path(__file__).parents[1] / "data" / "diffs"
CASES = sorted(p.stem for p in DATA.glob("*.diff"))
UPDATE = os.environ.get("NOVA_UPDATE_GOLDEN") == "1"


def _check(path: Path, actual: str, update: bool = UPDATE) -> None:
    """Compare with the golden file; only NOVA_UPDATE_GOLDEN=1 writes one (a missing golden
    written on the fly would be compared with itself and always pass)."""
    if update:
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), (
        f"golden {path.name} is missing: write it with NOVA_UPDATE_GOLDEN=1 "
        "python -m pytest tests/diff/test_golden.py, then review it"
    )
    assert actual == path.read_text(encoding="utf-8"), f"golden {path.name} differs"


def test_a_missing_golden_fails_and_is_not_written(tmp_path: Path) -> None:
    golden = tmp_path / "new_case.numbered.txt"
    with pytest.raises(AssertionError, match="missing: write it with NOVA_UPDATE_GOLDEN=1"):
        _check(golden, "rendered\n", update=False)
    assert not golden.exists()
    _check(golden, "rendered\n", update=True)
    assert golden.read_text(encoding="utf-8") == "rendered\n"
    with pytest.raises(AssertionError, match="differs"):
        _check(golden, "changed\n", update=False)


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    files = parse_diff(decode_diff((DATA / f"{name}.diff").read_bytes()))
    _check(DATA / f"{name}.numbered.txt", render_files(files))
    _check(
        DATA / f"{name}.json", json.dumps(diff_to_dict(files), indent=1, ensure_ascii=False) + "\n"
    )


def test_goldens_cover_the_tricky_cases() -> None:
    expected = {
        "added_deleted",
        "binary_added",
        "copy",
        "crlf",
        "empty",
        "mode_only",
        "modified_hunks",
        "no_newline",
        "non_utf8",
        "plain_unified",
        "quoted_paths",
        "rename_edit",
        "rename_pure",
        "long_context",
    }
    assert expected <= set(CASES)


def _parsed(name: str):
    return parse_diff(decode_diff((DATA / f"{name}.diff").read_bytes()))


def test_statuses_and_paths() -> None:
    (added, deleted) = sorted(_parsed("added_deleted"), key=lambda f: f.status)
    assert (added.status, added.old_path, added.new_path) == ("added", None, "added.txt")
    assert (deleted.status, deleted.path, deleted.new_path) == ("deleted", "gone.txt", None)
    (pure,) = _parsed("rename_pure")
    assert (pure.status, pure.old_path, pure.new_path, pure.hunks) == (
        "renamed",
        "moved.txt",
        "sub/moved.txt",
        (),
    )
    (edit,) = _parsed("rename_edit")
    assert edit.status == "renamed" and edit.new_path == "moved_edited.txt" and edit.hunks
    (copy,) = _parsed("copy")
    assert (copy.status, copy.old_path, copy.new_path) == ("copied", "orig.txt", "copy.txt")
    (mode,) = _parsed("mode_only")
    assert (mode.old_mode, mode.new_mode, mode.hunks) == ("100644", "100755", ())
    (binary,) = _parsed("binary_added")
    assert binary.is_binary and binary.status == "added" and binary.path == "logo.png"
    assert {f.path for f in _parsed("quoted_paths")} == {
        "tab\there.txt",
        "with space.txt",
        "ünï.txt",
    }
    assert _parsed("empty") == []


def test_no_newline_and_crlf() -> None:
    (f,) = _parsed("no_newline")
    flagged = [ln for h in f.hunks for ln in h.lines if ln.no_newline]
    assert [(ln.kind, ln.text) for ln in flagged] == [("removed", "no newline"), ("added", "added")]
    (crlf,) = _parsed("crlf")
    assert all(not ln.text.endswith("\r") for h in crlf.hunks for ln in h.lines)
    assert [ln.text for ln in crlf.hunks[0].lines if ln.kind == "added"] == ["B"]


def test_non_utf8_bytes_are_replaced_not_fatal() -> None:
    (f,) = _parsed("non_utf8")
    added = [ln.text for h in f.hunks for ln in h.lines if ln.kind == "added"]
    assert added == ["caf\ufffd!"]


@pytest.mark.parametrize(
    "text, where",
    [
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n", "line 8"),
        ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,x +1 @@\n", "line 4"),
        ("@@ -1 +1 @@\n-a\n+b\n", "line 1"),
        ("this is not a diff at all\n", "not a unified diff"),
    ],
)
def test_malformed_diffs_raise_clear_errors(text: str, where: str) -> None:
    with pytest.raises(DiffParseError) as info:
        parse_diff(text)
    assert where in str(info.value)
