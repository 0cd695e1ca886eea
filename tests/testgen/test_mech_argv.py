"""A changed module whose settings are set by a CLI's ``main()`` is still probed. The
differential generator calls a project's own setters of what the changed lines read
(``projstate``); ``main()`` parses the side-runner's own command line and exits
(``SystemExit``), which ended the whole run: "the changed modules could not be probed:
tool: error: unrecognized arguments: .../plan-head-1.json ..." and no differential test at
all (blind set 17 F). A setter that exits now ends that setting only."""

from __future__ import annotations

from pathlib import Path

from tests.testgen.sample import sample_testgen

CORE = """import argparse

DEBUG = False


def label(name):
    if DEBUG:
        return "debug:" + name
    return name.upper()


def main():
    global DEBUG
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--debug", action="store_true")
    DEBUG = parser.parse_args().debug
    print(label("x"))
"""

BASE = {
    "tool/__init__.py": "",
    "tool/core.py": CORE,
    "tests/test_core.py": (
        "from tool.core import label\n\n\ndef test_label():\n    assert label('ab') == 'AB'\n"
    ),
}


def test_a_setting_set_by_a_cli_main_does_not_end_the_probe(tmp_path: Path) -> None:
    # the changed lines read DEBUG (set by main) and change the plain path
    changed = CORE.replace("    if DEBUG:\n", "    if DEBUG and name:\n").replace(
        "return name.upper()", "return name.upper().replace(' ', '_')"
    )
    _, data = sample_testgen(tmp_path, BASE, {"tool/core.py": changed}, "underscores")
    notes = "\n".join(data["notes"])
    assert "set by tool.core.main" in notes, notes  # the setter was found and tried
    assert "could not be probed" not in notes, notes
    written = [c for c in data["kept"] if "test_nova_" in c["path"]]
    caught = [c for c in written if c["evidence"].get("catches_change")]
    assert caught, data["kept"]
    # head's underscores where the parent kept the space
    heads = [str(f["head"]) for c in caught for f in c["evidence"].get("calls") or []]
    assert any("_" in h for h in heads), heads


def test_the_same_module_changed_without_a_new_behaviour_claims_nothing(tmp_path: Path) -> None:
    same = CORE.replace("    if DEBUG:\n", "    if DEBUG is True or DEBUG:\n")
    _, data = sample_testgen(tmp_path, BASE, {"tool/core.py": same}, "same", (0, 1, 4))
    assert "could not be probed" not in "\n".join(data["notes"]), data["notes"]
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
