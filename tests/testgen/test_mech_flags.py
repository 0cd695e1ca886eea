"""An option the change adds, switched on in copies of the project's tests, and the
identity of a repeated call, end to end. The change adds ``self.reuse = False`` to a
store's constructor; its ``session()`` then keeps one session when it is set. The old
tests never set it (passing ``reuse=True`` would fail on the parent with a
``TypeError``: a new name). A copy of a test that builds the store sets
``store.reuse = True`` right after (a plain attribute on the parent) and calls
``store.session()`` twice: the same object on the head, two on the parent. (A dataclass
field is the same case: ``test_the_options_found_and_the_holders_that_take_them``.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify_calls import add_calls, call_plan
from bot.testgen.amplify_flags import changed_modules, marked, options, repeats
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

CORE = """
class Session:
    def __init__(self, path):
        self.path = path
        self.rows = []


class Store:
    def __init__(self, path):
        self.path = path

    def session(self):
        return Session(self.path)

    def add(self, row):
        session = self.session()
        session.rows.append(row)
        return len(session.rows)
"""

# the change: one session kept when the new option is set
CORE_NEW = CORE.replace(
    "        return Session(self.path)\n",
    "        if self.reuse:\n"
    "            if self._kept is None:\n"
    "                self._kept = Session(self.path)\n"
    "            return self._kept\n"
    "        return Session(self.path)\n",
).replace(
    "        self.path = path\n\n    def session",
    "        self.path = path\n        self.reuse = False\n        self._kept = None\n\n"
    "    def session",
)
# a change that keeps behaviour: a new option whose two branches do the same (private,
# so that the differential generator's facts of a store do not read it: a new public
# attribute is a difference of its own)
CORE_SAME = CORE.replace(
    "        return Session(self.path)\n",
    "        if self._fresh:\n"
    "            return Session(self.path)\n"
    "        return Session(self.path)\n",
).replace(
    "        self.path = path\n\n    def session",
    "        self.path = path\n        self._fresh = True\n\n    def session",
)

TESTS = """
from store.core import Store


def test_add_counts_rows():
    store = Store("db")
    assert store.add("a") == 1


def test_session_path():
    store = Store("db")
    assert store.session().path == "db"
"""

BASE = {"store/__init__.py": "", "store/core.py": CORE, "tests/test_core.py": TESTS}

CONFIG = """
from dataclasses import dataclass


@dataclass
class Settings:
    path: str
    verbose: bool = False
"""

CONFIG_NEW = CONFIG + "    reuse: bool = False\n"
READER = "def opened(settings):\n    return 'kept' if settings.reuse else 'fresh'\n"


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("kept"),
        BASE,
        {"store/core.py": CORE_NEW},
        "an option to keep one session",
    )
    return data


def test_a_copy_with_the_new_option_set_and_a_call_repeated_catches_the_change(
    kept: dict[str, Any],
) -> None:
    facts = amplified(kept, "session_twice_same")
    assert facts, kept["notes"]
    fact = facts[0]
    assert "option set: Store.reuse = True" in str(fact["amplifies"]), fact
    assert "called twice: store.session()" in str(fact["amplifies"]), fact
    assert fact["head"] == "True" and fact["parent"] == "False", fact


def test_the_written_test_sets_the_option_by_assignment_and_says_so(
    kept: dict[str, Any],
) -> None:
    patch = Path(kept["patch"]).read_text(encoding="utf-8")
    rows = [r.lstrip("+").strip() for r in patch.splitlines()]
    at = rows.index("store.reuse = True")
    assert rows[at - 1].startswith("# Nova: the option reuse this change adds to Store")
    assert rows[at - 2].startswith("store = Store(")  # right after it is built
    twice = rows.index("def session_twice_same():")
    assert rows[twice - 1].startswith("# Nova: store.session() called twice"), rows[twice - 1]
    assert "assert session_twice_same() is True" in rows or any(
        r.startswith("assert session_twice_same()") for r in rows
    ), patch[-800:]
    assert "reuse=True" not in patch  # never as a keyword: the parent has no such field


def test_an_option_whose_branches_do_the_same_gets_no_claim(tmp_path: Path) -> None:
    _repo, data = sample_testgen(
        tmp_path,
        BASE,
        {"store/core.py": CORE_SAME},
        "an option that changes nothing",
        exits=(0, 1, 4),
    )
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]
    # the copies were made (the option set, the call repeated) and observed alike
    assert any("with one call added" in n for n in data["notes"]), data["notes"]
    assert any("0 test(s) got another value" in n for n in data["notes"]), data["notes"]


def test_the_options_found_and_the_holders_that_take_them() -> None:
    modules = changed_modules({"c.py": (CONFIG_NEW, CONFIG), "r.py": (READER, "")})
    found = options(modules)
    assert [(o.holder, o.name, o.value) for o in found] == [("Settings", "reuse", "True")]
    # a frozen holder refuses a new attribute on the parent: no copy sets it
    frozen = CONFIG_NEW.replace("@dataclass", "@dataclass(frozen=True)")
    assert options(changed_modules({"c.py": (frozen, CONFIG), "r.py": (READER, "")})) == []
    # an option no changed line reads is left alone
    assert options(changed_modules({"c.py": (CONFIG_NEW, CONFIG)})) == []
    # another constant: the values the changed lines compare it with
    mode_old = "class Box:\n    def __init__(self):\n        self.size = 1\n"
    mode_new = mode_old + "        self.mode = 'plain'\n\n    def show(self):\n"
    mode_new += "        return 'x' if self.mode == 'wide' else ''\n"
    found = options(changed_modules({"b.py": (mode_new, mode_old)}))
    assert [(o.name, o.value, o.default) for o in found] == [("mode", "'wide'", "'plain'")]
    # a parent whose class has slots would refuse it: a failure there is no behaviour
    slotted = mode_old.replace("class Box:\n", "class Box:\n    __slots__ = ('size',)\n\n")
    assert options(changed_modules({"b.py": (mode_new, slotted)})) == []


def test_the_copies_and_the_comments_put_back() -> None:
    plan = call_plan(
        [(CORE_NEW, "Store.session", [15, 16, 17, 18, 19])],
        [TESTS],
        changed_modules({"store/core.py": (CORE_NEW, CORE)}),
    )
    text, made = add_calls(TESTS, "test_session_path", plan, 3)
    # the option with the repeat, the option alone; then amplify_calls' own copies
    assert [v.description for v in made[:2]] == [
        "option set: Store.reuse = True; called twice: store.session()",
        "option set: Store.reuse = True",
    ]
    assert made[2].description.startswith("added call after line"), made
    # with no option to set, the repeat alone
    bare = call_plan([(CORE_NEW, "Store.session", [15])], [TESTS])
    _text, alone = add_calls(TESTS, "test_session_path", bare, 1)
    assert [v.description for v in alone] == ["called twice: store.session()"]
    compile(text, "<copies>", "exec")
    assert text.startswith(TESTS)
    lines = ["    store.reuse = True", "    assert x"]
    assert marked(lines, f"test_session_path, {made[1].description}", text) == [
        "    # Nova: the option reuse this change adds to Store, set to True "
        "(its default is False)",
        *lines,
    ]


def test_a_holder_built_in_set_up_gets_the_option_at_the_start_of_the_copy() -> None:
    tests = (
        "import unittest\nfrom store.core import Store\n\n\n"
        "class TestStore(unittest.TestCase):\n"
        "    def setUp(self):\n"
        '        self.store = Store("db")\n\n'
        "    def test_session(self):\n"
        '        """The session opens the store\'s path."""\n'
        '        assert self.store.session().path == "db"\n'
    )
    plan = call_plan(
        [(CORE_NEW, "Store.session", [15])],
        [tests],
        changed_modules({"store/core.py": (CORE_NEW, CORE)}),
    )
    text, made = add_calls(tests, "TestStore.test_session", plan, 1)
    assert [v.description for v in made] == ["option set: Store.reuse = True"]
    copy = text[len(tests) :].splitlines()
    at = copy.index("        self.store.reuse = True")
    # after the docstring, before the test's own statements
    assert copy[at - 2].strip().startswith('"""The session'), copy
    assert copy[at + 1].strip().startswith("assert self.store.session()"), copy


def test_the_methods_called_twice() -> None:
    source = (
        "import functools\n\n\nclass A:\n"
        "    @functools.lru_cache(maxsize=None)\n    def table(self):\n        return {}\n\n"
        "    @property\n    def size(self):\n        return 1\n\n"
        "    def save(self):\n        pass\n\n"
        "    def _own(self):\n        pass\n"
    )
    # a cached method is the point; a property is read, not called; a method that may
    # write something, or a private one, is not called twice
    found = repeats([(source, f"A.{m}") for m in ("table", "size", "save", "_own")])
    assert found == {"A": ["table"]}
