"""A changed decorator changes what the function object carries (``modstate``): the
attributes it attaches are compared after import on both sides (a ``pytest_impl`` where a
``pytestmark`` was: pytest-timestamper's hook made ``trylast`` the supported way, blind
set 16 D). Calling the function shows nothing; its tests never read the attributes."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.modstate import _own_attributes, decorator_lines
from tests.testgen.sample import sample_testgen

HOOKS = '''
def marker(**opts):
    """Hook options, read by the host when it orders its hooks."""
    def attach(func):
        func.hook_opts = dict(opts)
        return func
    return attach


def legacy(func):
    """The old way to ask to run last."""
    func.legacy_mark = ["last"]
    return func
'''

PLUGIN = """
from relay.hooks import legacy, marker


@legacy
def configure(config):
    config["ready"] = True
    return config
"""

TESTS = """
from relay.plugin import configure


def test_configure():
    assert configure({}) == {"ready": True}
"""

BASE = {
    "relay/__init__.py": "",
    "relay/hooks.py": HOOKS,
    "relay/plugin.py": PLUGIN,
    "tests/test_plugin.py": TESTS,
}


def test_what_a_changed_decorator_attaches_is_pinned(tmp_path: Path) -> None:
    marked = PLUGIN.replace("@legacy\n", "@marker(last=True)\n")
    _, data = sample_testgen(tmp_path, BASE, {"relay/plugin.py": marked}, "hook options")
    notes = "\n".join(data["notes"])
    assert "+hook_opts, -legacy_mark" in notes, notes
    catching = [
        fact["call"]
        for case in data["kept"]
        if case["evidence"].get("catches_change")
        for fact in case["evidence"].get("calls", [])
    ]
    assert any("getattr(configure, 'hook_opts', None) == {'last': True}" in c for c in catching)
    assert any("not hasattr(configure, 'legacy_mark')" in c for c in catching), catching


def test_a_decorator_written_another_way_claims_nothing(tmp_path: Path) -> None:
    same = PLUGIN.replace("from relay.hooks import legacy, marker\n", "from relay import hooks\n")
    same = same.replace("@legacy\n", "@hooks.legacy\n")
    _, data = sample_testgen(tmp_path, BASE, {"relay/plugin.py": same}, "same", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_decorator_lines_and_attribute_deltas() -> None:
    source = "class C:\n    @property\n    @cache(\n        1)\n    def m(self):\n        pass\n"
    assert decorator_lines(source, "C.m") == {2, 3, 4}
    assert decorator_lines(source, "C") == set()
    assert decorator_lines("def f():\n    pass\n", "f") == set()
    ours = {"type({r}).__name__": ["'function'", []], "{r}.opts": ["{'a': 1}", []]}
    theirs = {"type({r}).__name__": ["'function'", []], "{r}.mark": ["[1]", []]}
    checks, said = _own_attributes(ours, theirs)
    assert [c.assertion for c in checks] == [
        "assert getattr({r}, 'opts', None) == {'a': 1}",
        "assert not hasattr({r}, 'mark')",
    ]
    assert said == "differs in its attributes: +opts, -mark"
    assert _own_attributes(ours, ours)[0] == []
