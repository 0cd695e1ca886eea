"""A project test that warns otherwise on the parent (``amplify_warns``): a release
deprecates a class attribute the old tests still set on their own subclass (pycrdt-store
0.1.3's ``document_ttl``, which its tests set on a subclass and reach through an async
store): every value the tests observe is alike on both sides, only the warning is new.
The test is written again whole, its body under ``pytest.warns``."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from bot.testgen.amplify_warns import differing_first, warned_differences, warned_test
from bot.testgen.amplify_write import Difference, Written
from tests.testgen.sample import sample_testgen

STORE = '''
import asyncio


class Store:
    """Keeps values a while; ``ttl`` is the old name of ``expire_after``."""

    ttl = None
    expire_after = None

    def __init__(self, name):
        self.name = name
        self.items = {}

    async def open(self):
        await asyncio.sleep(0)
        if self.expire_after is None and self.ttl is not None:
            self.expire_after = self.ttl
        return self

    async def put(self, key, value):
        await asyncio.sleep(0)
        self.items[key] = (value, self.expire_after)
        return len(self.items)
'''

WARNING = """            warnings.warn(
                "`ttl` is deprecated: use `expire_after`", DeprecationWarning, stacklevel=2
            )
"""

# the change: the old name still works, and now says it is deprecated
STORE_NEW = STORE.replace("import asyncio\n", "import asyncio\nimport warnings\n").replace(
    "            self.expire_after = self.ttl\n",
    WARNING + "            self.expire_after = self.ttl\n",
)

TESTS = """
import asyncio

from vault.store import Store


class ShortStore(Store):
    ttl = 10


def test_put():
    async def main():
        store = await ShortStore("a").open()
        return await store.put("k", 1), store.items

    count, items = asyncio.run(main())
    assert count == 1
    assert items["k"] == (1, 10)
"""

BASE = {"vault/__init__.py": "", "vault/store.py": STORE, "tests/test_store.py": TESTS}


def _claimed(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["kept"] if c["evidence"].get("catches_change")]


def test_a_new_deprecation_warning_is_pinned_by_the_whole_test(tmp_path: Path) -> None:
    _, data = sample_testgen(tmp_path, BASE, {"vault/store.py": STORE_NEW}, "deprecate ttl")
    claimed = _claimed(data)
    assert claimed, (data["notes"], data["dropped"])
    facts = [f for c in claimed for f in c["evidence"].get("amplified", [])]
    assert any(f["amplifies"] == "tests/test_store.py::test_put" for f in facts), facts
    assert any("DeprecationWarning" in str(f["head"]) for f in facts), facts
    assert any("warned otherwise on the parent" in n for n in data["notes"]), data["notes"]


def test_a_warning_the_release_took_back_is_made_an_error_on_the_parent(tmp_path: Path) -> None:
    # the release warns only about a ttl that cannot be one: the tests' ttl no longer warns
    guarded = "            if self.ttl < 0:\n" + "".join(
        "    " + row + "\n" for row in WARNING.splitlines()
    )
    head = STORE_NEW.replace(WARNING, guarded)
    base = {**BASE, "vault/store.py": STORE_NEW}
    _, data = sample_testgen(tmp_path, base, {"vault/store.py": head}, "warn on a bad ttl only")
    claimed = _claimed(data)
    assert claimed, (data["notes"], data["dropped"])
    facts = [f for c in claimed for f in c["evidence"].get("amplified", [])]
    assert any("DeprecationWarning" in str(f["parent"]) for f in facts), facts


def test_a_refactor_that_warns_alike_claims_nothing(tmp_path: Path) -> None:
    # the parent warns already; head says it another way in code, the same in words
    base = {**BASE, "vault/store.py": STORE_NEW}
    same = STORE_NEW.replace(
        "if self.expire_after is None and self.ttl is not None:",
        "if self.ttl is not None and self.expire_after is None:",
    )
    _, data = sample_testgen(tmp_path, base, {"vault/store.py": same}, "reorder", (0, 1, 4))
    assert not _claimed(data), data["kept"]
    assert not any("warned otherwise" in n for n in data["notes"]), data["notes"]


# -- the parts, on their own -----------------------------------------------------------


class _Obs:
    def __init__(self, tests: dict[str, dict[str, Any]]) -> None:
        self.tests = tests


def _run(warned: list[list[str]]) -> dict[str, Any]:
    return {"passed": True, "warned": warned, "params": None}


DEPRECATED = ["DeprecationWarning", "MyDeprecation", "`ttl` is deprecated"]
NODE = "tests/test_store.py::test_put"


def test_a_warning_heard_in_every_run_of_one_side_only_differs() -> None:
    heads = [_Obs({NODE: _run([DEPRECATED])}), _Obs({NODE: _run([DEPRECATED])})]
    parents = [_Obs({NODE: _run([])}), _Obs({NODE: _run([])})]
    notes: list[str] = []
    found = warned_differences([NODE], [], heads, parents, notes)
    assert len(found) == 1 and found[0][0].head["warns"] == ["DeprecationWarning", DEPRECATED[2]]
    # the other way round: the parent warned, head stopped
    gone = warned_differences([NODE], [], parents, heads, [])
    assert gone[0][0].head["unwarns"] == ["DeprecationWarning", DEPRECATED[2]]
    # heard in one run of head only, or on both sides: nothing
    flaky = [heads[0], parents[0]]
    assert warned_differences([NODE], [], flaky, parents, []) == []
    assert warned_differences([NODE], [], heads, [parents[0], heads[0]], []) == []
    # a message with an address, a category Nova does not assert: nothing
    odd = [["DeprecationWarning", "D", "<Store at 0x7f00aa11>"], ["ImportWarning", "I", "x"]]
    heads_odd = [_Obs({NODE: _run(odd)}), _Obs({NODE: _run(odd)})]
    assert warned_differences([NODE], [], heads_odd, parents, []) == []


def _written(source: str, d: Difference) -> str:
    tree = ast.parse(source)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    built = warned_test(func, d)
    assert isinstance(built, Written), built
    return "\n".join([*built.imports, *built.lines])


def test_the_whole_body_goes_under_the_warning_and_a_case_is_bound() -> None:
    source = (
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "async def test_put(n, anyio_backend):\n"
        "    '''Puts.'''\n"
        "    assert n\n"
    )
    node = "tests/test_store.py::test_put[asyncio-2]"
    head = {"kind": "warns", "warns": ["DeprecationWarning", "`ttl` (old)"], "value": "x"}
    d = Difference(node, 0, "its body", 0, head, {"kind": "warns", "value": "none"})
    d.params, d.indices = {"n": ["2", []], "anyio_backend": ["'asyncio'", []]}, {"n": 1}
    text = _written(source, d)
    # the function's own case bound; the fixture's parameter stays a parameter
    assert "async def test_put_changed(anyio_backend):" in text, text
    assert "n = 2" in text and "parametrize" not in text
    assert "with pytest.warns(DeprecationWarning, match='`ttl`\\\\ \\\\(old\\\\)'):" in text
    compile(text, "<t>", "exec")
    # the parent warned, head does not: the warning is made an error
    d.head = {"kind": "warns", "unwarns": ["UserWarning", "gone"], "value": "no UserWarning"}
    plain = _written("def test_put():\n    assert 1\n", d)
    assert "warnings.filterwarnings('error', message='gone', category=UserWarning)" in plain


def test_files_that_differ_on_the_parent_are_checked_first() -> None:
    facts = {
        "tests/test_nova_x.py": {"t": [{"changed": False}]},
        "tests/test_nova_amp_x.py": {"t": [{"changed": True, "head": "a", "parent": "b"}]},
    }
    order = ["tests/test_nova_x.py", "tests/test_nova_amp_x.py", "tests/test_nova_y.py"]
    assert differing_first(order, facts) == [
        "tests/test_nova_amp_x.py",
        "tests/test_nova_x.py",
        "tests/test_nova_y.py",
    ]
