"""A test file that opens with a UTF-8 byte order mark is read as Python reads it: the
mark is no text, so ``ast.parse`` sees the module and its calls give the inputs
(``Workspace.read``). Before, the mark made every test of the file unreadable to the
differential generator and to amplification ("its module does not parse"): sshconf's
tests, blind set 16 C."""

from __future__ import annotations

from pathlib import Path

from tests.testgen.sample import caught, sample_testgen

TEXT = '''
def clip(text, width):
    """The text cut to ``width`` characters, an ellipsis marking the cut."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "~"
'''

# the mark first, as an editor on Windows saves it; pytest and Python read it alike
TESTS = """\ufefffrom clipper.text import clip


def test_short_text_is_kept():
    assert clip("spam", 10) == "spam"


def test_long_text_is_cut():
    assert len(clip("a rather long sentence", 8)) == 8
"""

BASE = {
    "clipper/__init__.py": "",
    "clipper/text.py": TEXT,
    "tests/test_text.py": TESTS,
}


def test_the_inputs_of_a_test_file_with_a_byte_order_mark_catch_the_change(
    tmp_path: Path,
) -> None:
    dots = TEXT.replace('width - 1] + "~"', 'width - 3] + "..."')
    _, data = sample_testgen(tmp_path, BASE, {"clipper/text.py": dots}, "three dots")
    # the test file's own text (steered towards the changed lines): no other source
    # holds it, and the function has no hints to draw from
    found = caught(data, "clip('a rather long sentenc")
    assert found, data["notes"]
    assert all(f["head"].endswith("...'") for f in found), found


def test_a_change_that_keeps_behaviour_claims_nothing(tmp_path: Path) -> None:
    same = TEXT.replace(
        '    if len(text) <= width:\n        return text\n    return text[: width - 1] + "~"\n',
        '    if len(text) > width:\n        return text[: width - 1] + "~"\n    return text\n',
    )
    assert same != TEXT
    _, data = sample_testgen(tmp_path, BASE, {"clipper/text.py": same}, "flip", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
