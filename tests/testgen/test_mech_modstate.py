"""A change to what a module does when it is imported is pinned by the state it leaves
(issue 35): a real sample project (a git repository in tmp, its own virtualenv, real
pytest and coverage subprocesses) whose release changes (a) its package logger's setup
(no level of its own, a NullHandler instead of a stream handler) and (b) a registry dict
filled at import (a converter more), which no function of the package reads; and another
whose release changes only a version string, a comment and the way a table is written.
One real ``nova testgen`` run each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.testgen.matrix import Target
from bot.testgen.moddata import data_change
from bot.testgen.modstate import _compare, _unpinned, _version_only, import_hits
from tests.testgen.sample import caught, sample_testgen

LOGS = """import logging

log = logging.getLogger("shouty")
log.setLevel(logging.INFO)
handler = logging.StreamHandler()
handler.setFormatter(logging.Formatter("%(name)s - %(message)s"))
log.addHandler(handler)
"""
LOGS_NEW = """import logging

log = logging.getLogger("shouty")
log.addHandler(logging.NullHandler())
"""
CORE = """from shouty.logs import log


def shout(text):
    log.debug("shouting %s", text)
    return text.upper() + "!"
"""
REGISTRY = """\"\"\"Converters of config values, by type name: applications look them up.\"\"\"


def _to_list(value):
    return [v.strip() for v in value.split(",")]


CONVERTERS = {}
CONVERTERS["int"] = int
CONVERTERS["float"] = float
"""
REGISTRY_NEW = REGISTRY + 'CONVERTERS["list"] = _to_list\n'
TESTS = """from shouty.core import shout


def test_shout():
    assert shout("hi") == "HI!"
"""
INIT = '__version__ = "1.0"\n'


def test_logger_setup_and_registry_changes_are_caught(tmp_path: Path) -> None:
    base = {
        "shouty/__init__.py": INIT,
        "shouty/logs.py": LOGS,
        "shouty/core.py": CORE,
        "shouty/registry.py": REGISTRY,
        "tests/test_core.py": TESTS,
    }
    change = {"shouty/logs.py": LOGS_NEW, "shouty/registry.py": REGISTRY_NEW}
    _repo, data = sample_testgen(tmp_path, base, change, "quiet logger, list converter")
    notes = "\n".join(data["notes"])
    assert "modstate: shouty/logs.py: log differs" in notes, notes
    assert "modstate: shouty/registry.py: CONVERTERS differs" in notes, notes
    logger = caught(data, "from shouty.logs import log")
    assert logger, (notes, data["dropped"])
    # the headline, as the pytest run sees it: a NullHandler, where the parent had its own
    assert any("NullHandler" in f["head"] for f in logger), logger
    registry = caught(data, "from shouty.registry import CONVERTERS")
    assert [f["head"] for f in registry] == ["'list' in CONVERTERS"], registry
    kept = [c for c in data["kept"] if c["path"].endswith("test_nova_module_state.py")]
    # a changed line counts: the import ran it, and the test reads the name it configures
    assert all(c["evidence"]["changed_lines_covered"] for c in kept), kept
    assert {t for c in kept for t in c["targets"]} == {
        "shouty/logs.py::<module>",
        "shouty/registry.py::<module>",
    }


REGISTRY_LITERAL = """CONVERTERS = {"int": int, "float": float}
TIMEOUT = 10  # seconds
USER_AGENT = "shouty/1.0"
"""
REGISTRY_CALLS = """# one entry per converter
CONVERTERS = dict(int=int, float=float)
TIMEOUT = 5 + 5  # seconds, as before
USER_AGENT = "shouty/1.1"
"""


def test_version_comment_and_refactor_claim_nothing(tmp_path: Path) -> None:
    base = {
        "shouty/__init__.py": INIT,
        "shouty/logs.py": LOGS,
        "shouty/core.py": CORE,
        "shouty/registry.py": REGISTRY_LITERAL,
        "tests/test_core.py": TESTS,
    }
    change = {
        "shouty/__init__.py": '__version__ = "1.1"\n',
        "shouty/logs.py": LOGS.replace("import logging\n", "import logging  # stdlib\n"),
        "shouty/registry.py": REGISTRY_CALLS,
    }
    data = _nothing_kept(tmp_path, base, change, "1.1: tidy the registry")
    notes = "\n".join(data["notes"])
    # a table written another way, its items named: written out, left to its readers
    assert "CONVERTERS, USER_AGENT not observed: a value written out" in notes, notes
    assert "modstate: shouty/registry.py: TIMEOUT is the same on both sides" in notes, notes
    assert "__version__" not in notes
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
    assert "modstate wrote" not in notes


def _nothing_kept(
    tmp: Path, base: dict[str, str], change: dict[str, str], message: str
) -> dict[str, Any]:
    """``sample_testgen``'s run, where nothing to propose (exit 4) is the expected end."""
    return sample_testgen(tmp, base, change, message, exits=(0, 4))[1]


def test_a_top_level_line_counts_only_for_a_test_reading_its_name() -> None:
    source = "import logging\n\nlog = logging.getLogger('x')\nlog.setLevel(10)\nOTHER = 1\n"
    data = data_change("pkg/logs.py", source, [4], dict)
    target = Target("pkg/logs.py", "<module>", "modified", [4], data=data)
    test = (
        "from pkg.logs import log as the_log\nimport pkg.logs\n\n\n"
        "def test_reads():\n    assert the_log.level == 10\n\n\n"
        "def test_through_module():\n    assert pkg.logs.log.level == 10\n\n\n"
        "def test_other():\n    assert pkg.logs.OTHER == 1\n"
    )
    ran = {"pkg/logs.py": {1, 3, 4, 5}}
    assert import_hits(target, ran, source, test, "test_reads") == [4]
    assert import_hits(target, ran, source, test, "test_through_module") == [4]
    assert import_hits(target, ran, source, test, "test_other") == []
    assert import_hits(target, {}, source, test, "test_reads") == []  # the import never ran


def test_what_differs_is_asserted_entry_by_entry() -> None:
    head = {"kind": "value", "type": "dict", "value": "{'a': 1, 'b': 3}", "imports": []}
    parent = {"kind": "value", "type": "dict", "value": "{'a': 1, 'c': 2}", "imports": []}
    head["items"] = [["'a'", "1"], ["'b'", "3"]]
    parent["items"] = [["'a'", "1"], ["'c'", "2"]]
    checks, said = _compare(head, parent)
    assert [c.assertion for c in checks] == ["assert {r}['b'] == 3", "assert 'c' not in {r}"]
    assert said == "differs in 2 entries"
    assert _version_only("'lib/1.2.0'", "'lib/1.3.0'")
    assert not _version_only("'lib/1.2.0 fast'", "'lib/1.2.0 slow'")


def test_a_table_another_generator_pins_through_its_reader_is_left_to_it() -> None:
    wanted = {
        "glyphs.table": ("glyphs/table.py", ["ZERO", "WIDE"]),
        "glyphs.data": ("glyphs/data.py", ["NAMES"]),
    }
    reads = {"call": "width('a')", "changed": True, "new_name": False}
    facts = {
        "tests/test_nova_glyphs_width.py": {"t": [{**reads, "reaches": ["glyphs.table.ZERO"]}]},
        "tests/test_nova_glyphs_data.py": {"u": [{**reads, "reaches": ["<module>"]}]},
        "tests/test_nova_glyphs_other.py": {"v": [{**reads, "changed": False, "reaches": []}]},
    }
    left, notes = _unpinned(wanted, facts)
    assert left == {"glyphs.table": ("glyphs/table.py", ["WIDE"])}
    assert notes[0].startswith("modstate: glyphs/table.py: ZERO not observed")


def test_a_value_the_change_writes_out_is_left_to_its_readers() -> None:
    from bot.testgen.modstate import written_out

    source = (
        "import logging\n"
        'IGNORED = ("a-release", "b-release")\n'
        'URL = "https://example.org/zones.xml"\n'
        "KINDS = frozenset({'x', 'y'})\n"
        "TABLE = {}\n"
        'TABLE["list"] = list\n'
        "log = logging.getLogger('p')\n"
        "log.addHandler(logging.NullHandler())\n"
        "LIMIT = compute()\n"
        'NAMES = (URL, "b-release")\n'
        "ALIAS = TABLE\n"
        "BUILT = [make(x) for x in IGNORED]\n"
    )
    assert written_out(source, "IGNORED", [2])
    assert written_out(source, "URL", [3])
    assert written_out(source, "KINDS", [4])
    # filled or configured at import: state, not source
    assert not written_out(source, "TABLE", [6])
    assert not written_out(source, "log", [8])
    assert not written_out(source, "LIMIT", [9])
    # reached through another name's value, no changed statement binding it: its own
    assert written_out(source, "ALIAS", []) and not written_out(source, "log", [])
    assert written_out(source, "NAMES", [10]) and written_out(source, "ALIAS", [11])
    assert not written_out(source, "BUILT", [12])
