"""The no-model generator beyond top-level functions (issue 28): methods on instances
built as the tests build them, a private helper reached through its public caller,
inputs from table loops, an iterator materialised with a bound, an honest suite gate
(pre-existing failures named, never blamed) and an honest report (a test of a name new
in the change is not a catch), on a real git repository with a real pytest."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen import gates, report
from bot.testgen.differential import static_side_effect
from bot.testgen.inputs import inputs_from_tests
from bot.testgen.probe_objects import materialise
from bot.testgen.reach import Entry, entries
from bot.testgen.render import Example, render_module
from bot.testgen.report import EXIT_NOTHING_GENERATED
from bot.testgen.scenarios import OBJ, scenarios_from_tests
from tests.conftest import GitRepo
from tests.testgen.test_differential import project_venv
from tests.testgen.test_testgen import nova_testgen

OLD = """class Cart:
    def __init__(self, limit=10):
        self.limit = limit
        self.items = {}

    def add(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty

    def total_items(self):
        return sum(self.items.values())

    def remove(self, name):
        self.items.pop(name, None)


def _scale(value, factor):
    return value * factor


def price(amount: int, vat: bool = False) -> int:
    return _scale(amount, 2) if vat else amount


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def label(code):
    return code.upper()
"""

NEW = (
    OLD.replace(
        "        self.items.pop(name, None)\n",
        "        return self.items.pop(name, None)\n",
    )
    .replace("    return value * factor\n", "    return value * (factor + 1)\n")
    .replace("    while n > 0:\n", "    while n >= 0:\n")
    .replace("    return code.upper()\n", "    return code.upper().replace(' ', '_')\n")
    + """

def discount(amount: int) -> int:
    return max(amount - 5, 0)
"""
)

TESTS = """from shop.cart import Cart, countdown, label, price

CODES = ["ab", "x y", "q"]


def test_cart():
    cart = Cart(limit=5)
    cart.add("apple", 2)
    cart.remove("apple")
    assert cart.total_items() == 0


def test_price():
    assert price(10) == 10


def test_labels():
    for code in CODES:
        assert label(code).isupper()


def test_countdown():
    assert list(countdown(2)) == [2, 1]
"""


@pytest.fixture
def shop(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("shop/__init__.py", "")
    repo.write("shop/cart.py", OLD)
    repo.write("tests/test_cart.py", TESTS)
    repo.commit("base")
    repo.write("shop/cart.py", NEW)
    repo.commit("remove returns the quantity; vat; countdown to zero; discount")
    (repo.path / ".git" / "info" / "exclude").write_text(".venv/\n")
    project_venv(repo.path / ".venv")
    return repo


@pytest.mark.slow
def test_methods_helpers_iterators_and_an_honest_suite_gate(shop: GitRepo, tmp_path: Path) -> None:
    result = nova_testgen(shop, tmp_path, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    kept = {c["name"]: c["evidence"] for c in data["kept"]}
    calls = {f["call"]: (name, f) for name, e in kept.items() for f in e.get("calls", [])}
    # a method on an instance built and used as test_cart does
    remove = "cart = Cart(limit=5); cart.add('apple', 2); cart.remove('apple')"
    name, fact = calls[remove]
    assert (fact["head"], fact["parent"]) == ("2", "returned None")
    assert kept[name]["catches_change"] is True
    # the private helper through its public caller, with drawn arguments
    through = [(n, f) for c, (n, f) in calls.items() if c.startswith("price(") and "vat=True" in c]
    assert through and all(f["reaches"] == ["_scale"] for _, f in through)
    assert any(kept[n]["catches_change"] for n, _ in through)
    # the generator, materialised
    name, fact = calls["list(countdown(2))"]
    assert (fact["head"], fact["parent"]) == ("[2, 1, 0]", "returned [2, 1]")
    # inputs from the table loop
    assert any(c == "label('x y')" for c in calls)
    # a name new in the change fails on the parent, and is not counted as a catch
    new = [kept[n] for c, (n, _) in calls.items() if c.startswith("discount(")]
    assert new and all(e["new_name"] and not e["catches_change"] for e in new)
    stats = data["stats"]
    assert stats["catching"] == sum(bool(e["catches_change"]) for e in kept.values())
    assert stats["new_name"] == len(new)
    # the suite: test_countdown already failed without Nova's tests; it is named, not blamed
    assert stats["suite_preexisting_failures"] == ["tests.test_cart::test_countdown"]
    assert stats["suite_blamed_failures"] == []
    notes = "\n".join(data["notes"])
    assert "already fail without Nova's tests (not caused by them)" in notes
    assert "removes files" not in notes  # Cart.remove is not os.remove
    committed = shop.git("show", f"{data['branch']}:tests/test_nova_shop_cart.py")
    assert "    cart.add('apple', 2)\n    assert cart.remove('apple') == 2\n" in committed
    assert "    from shop.cart import discount  # new in this change\n" in committed
    assert "assert list(countdown(n)) == expected" in committed or (
        "assert list(countdown(2)) == [2, 1, 0]" in committed
    )


CART_TESTS = """import pytest
from shop.cart import Cart

TABLE = [("a", 1), ("b", 2)]


def test_fill():
    cart = Cart(limit=5, log=make_log())
    cart.add("apple", 2)
    cart["pear"] = 3
    assert cart.remove("apple") == 2
    helper(cart)
    cart.remove("pear")


def test_loop():
    for name, qty in TABLE:
        assert price(name, qty) > 0
"""


def test_scenarios_replay_the_tests_steps_on_the_instance() -> None:
    found = scenarios_from_tests({"tests/test_cart.py": CART_TESTS}, "Cart", "remove")
    # the helper's value for an optional argument is left out (None); the steps are kept
    # in order; after the instance is handed to a helper, nothing more is trusted
    assert [(c.ctor, c.steps, c.args) for c in found] == [
        (
            ((), (("limit", "5"), ("log", None))),
            (f"{OBJ}.add('apple', 2)", f"{OBJ}['pear'] = 3"),
            ("'apple'",),
        )
    ]


def test_an_instance_built_in_place_comes_with_the_call() -> None:
    source = (
        "import pytest\nfrom spec import Spec\n\n\n"
        "@pytest.mark.parametrize(('s', 'v'), [('eq', 1), ('ne', 2)])\n"
        "def test_contains(s, v):\n    assert Spec(s).contains(v)\n"
    )
    found = inputs_from_tests({"tests/test_spec.py": source}, {"contains"})["contains"]
    assert [(c.receiver, c.ctor, c.args) for c in found] == [
        ("Spec", (("'eq'",), ()), ("1",)),
        ("Spec", (("'ne'",), ()), ("2",)),
    ]


def test_table_loops_and_names_bound_to_literals_give_inputs() -> None:
    found = inputs_from_tests({"tests/test_cart.py": CART_TESTS}, {"price"})
    assert [c.args for c in found["price"]] == [("'a'", "1"), ("'b'", "2")]


def test_private_helpers_are_reached_through_their_callers() -> None:
    source = """
def _norm(x):
    return x.strip()

def _clean(x):
    return _norm(x).lower()

def public(x):
    def inner(y):
        return y
    return inner(_clean(x))

class Box:
    def _size(self):
        return 1

    def volume(self):
        return self._size() ** 3

    limit = 3
"""
    assert entries(source, "_norm") == [Entry("public", "_norm")]
    assert entries(source, "public.inner") == [Entry("public", "public.inner")]
    assert entries(source, "Box._size") == [Entry("Box.volume", "Box._size")]
    assert entries(source, "Box") == [Entry("Box.__init__")]
    assert entries("def _unused():\n    return 1\n", "_unused") == []
    # dispatched by name (getattr(self, f"_compare_{op}")): through the class's methods
    dispatch = (
        "class Spec:\n    def __init__(self, s):\n        self.s = s\n"
        "    def contains(self, v):\n        return getattr(self, '_compare_' + self.s)(v)\n"
        "    def _compare_eq(self, v):\n        return v == 1\n"
    )
    assert entries(dispatch, "Spec._compare_eq") == [
        Entry("Spec.contains", "Spec._compare_eq"),
        Entry("Spec.__init__", "Spec._compare_eq"),
    ]


def test_method_calls_named_like_file_operations_are_not_side_effects() -> None:
    source = (
        "import os\n"
        "def pop(items, link):\n    items.remove(1)\n    link.unlink()\n    return items\n"
        "def wipe(p):\n    os.remove(p)\n"
    )
    assert static_side_effect(source, "pop") is None
    assert static_side_effect(source, "wipe") == "removes files (os.remove)"


def test_iterators_are_materialised_with_a_bound() -> None:
    def naturals():
        n = 0
        while True:
            yield n
            n += 1

    assert materialise(iter([1, 2])) == ([1, 2], "list")
    assert materialise(naturals()) == (list(range(20)), "islice")
    assert materialise([1, 2]) == ([1, 2], "")  # a list is a value, not an iterator


def test_a_method_test_builds_the_instance_and_names_what_is_pinned() -> None:
    example = Example(
        ["3"],
        {},
        [],
        {"kind": "value", "value": "[]", "imports": []},
        True,
        "returned None",
        kind="method",
        owner="TTLCache",
        ctor={"args": [], "kwargs": {"maxsize": "2", "ttl": "1"}},
        steps=[f"{OBJ}[1] = 1"],
        parent={"kind": "value", "value": "None"},
    )
    facts: dict[str, list[dict[str, object]]] = {}
    text = render_module(
        "cachetools", "src/cachetools/__init__.py", {"TTLCache.expire": [example]}, {}, facts
    )
    assert (
        "def test_ttl_cache_expire_returns_list_not_none():\n"
        "    # before this change: returned None\n"
        "    ttl_cache = TTLCache(maxsize=2, ttl=1)\n"
        "    ttl_cache[1] = 1\n"
        "    assert ttl_cache.expire(3) == []\n"
    ) in text
    assert "from cachetools import TTLCache\n" in text
    assert facts["test_ttl_cache_expire_returns_list_not_none"][0]["call"] == (
        "ttl_cache = TTLCache(maxsize=2, ttl=1); ttl_cache[1] = 1; ttl_cache.expire(3)"
    )


def test_an_exception_is_pinned_with_its_message() -> None:
    example = Example(
        ["'x'"],
        {},
        [],
        {"kind": "raises", "type": "ValueError", "message": "bad value: 'x' (1.0)"},
        True,
        "returned 0",
    )
    text = render_module("m", "m.py", {"parse": [example]}, {})
    assert "with pytest.raises(ValueError, match=re.escape(\"bad value: 'x' (1.0)\")):" in text
    assert "import re\n" in text
    ast.parse(text)
    plain = Example(["''"], {}, [], {"kind": "raises", "type": "ValueError", "message": "empty"})
    text = render_module("m", "m.py", {"parse": [plain]}, {})
    assert "with pytest.raises(ValueError, match='empty'):" in text
    assert "import re\n" not in text


def _result(**kw: object) -> report.TestgenResult:
    from bot.change import Change
    from bot.testgen.matrix import Target

    result = report.TestgenResult(change=Change(id="c", source="git", title="t"))
    result.matrix = [Target("m.py", "f", "modified", [1])]
    for key, value in kw.items():
        setattr(result, key, value)
    return result


def test_the_exit_code_tells_nothing_generated_from_nothing_kept_from_kept() -> None:
    assert _result().exit_code() == EXIT_NOTHING_GENERATED
    assert _result(dropped=[gates.TestCase("t.py", "test_a", reason="fails")]).exit_code() == 1
    assert _result(kept=[gates.TestCase("t.py", "test_a")]).exit_code() == 0
    assert _result(matrix=[]).exit_code() == 0  # nothing to test
    assert _result(errors=["the host failed"]).exit_code() == 3


_literals = st.one_of(
    st.integers(-1000, 1000),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=6),
    st.booleans(),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_literals, _literals), min_size=1, max_size=5, unique=True))
def test_every_row_of_a_table_loop_becomes_an_input(rows: list[tuple[object, object]]) -> None:
    source = f"TABLE = {rows!r}\n\ndef test_t():\n    for a, b in TABLE:\n        assert f(a, b)\n"
    found = inputs_from_tests({"tests/test_t.py": source}, {"f"})["f"]
    assert [tuple(ast.literal_eval(a) for a in c.args) for c in found] == list(dict.fromkeys(rows))


@pytest.mark.slow
def test_the_suite_gate_blames_only_failures_the_kept_tests_cause(repo: GitRepo) -> None:
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.suite import judge_suite
    from bot.testgen.workspace import Workspace

    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("flags.py", "FLAG = 0\n")
    repo.write("tests/test_a.py", "import flags\n\n\ndef test_a():\n    assert flags.FLAG == 0\n")
    repo.write("tests/test_pre.py", "def test_pre():\n    assert False\n")
    repo.commit("a suite with a test that already fails")
    with Workspace(repo.path, "HEAD", None) as ws:
        fw = ws.framework = detect_framework(ws.root)
        assert fw is not None
        ws.write_test("tests/test_nova_ok.py", "def test_ok():\n    assert True\n")
        fine = judge_suite(ws, fw, ["tests/test_nova_ok.py"])
        assert (fine.passed, fine.preexisting, fine.blamed) == (
            True,
            ["tests.test_pre::test_pre"],
            [],
        )
        # a test file that changes the state another test reads is blamed
        ws.write_test(
            "tests/test_nova_bad.py",
            "import flags\n\nflags.FLAG = 1\n\n\ndef test_bad():\n    pass\n",
        )
        bad = judge_suite(ws, fw, ["tests/test_nova_ok.py", "tests/test_nova_bad.py"])
        assert not bad.passed and bad.blamed == ["tests.test_a::test_a"]
        assert bad.preexisting == ["tests.test_pre::test_pre"]


def test_a_failure_on_the_parent_that_names_what_it_lacks_is_a_new_name() -> None:
    from bot.testgen.gates import names_missing

    # the test's own `pytest.raises(waiting.exceptions.NestedStopIteration)` fails on the
    # parent before the call: the parent lacks the class, which shows no behaviour
    assert names_missing(
        "AttributeError: module 'waiting.exceptions' has no attribute 'NestedStopIteration'"
    )
    assert names_missing("ImportError: cannot import name 'Empty' from 'pkg.errors'")
    assert names_missing("NameError: name 'Empty' is not defined")
    # a keyword the parent's signature does not have: a new parameter, not a behaviour
    assert names_missing(
        "TypeError: OpenIdConfig.__init__() got an unexpected keyword argument 'http_config'"
    )
    assert not names_missing("TypeError: unsupported operand type(s) for +: 'int' and 'str'")
    # a behaviour: another value, another exception
    assert not names_missing("AssertionError: assert 'a, b' == 'a,b'")
    assert not names_missing("RuntimeError: generator raised StopIteration")
    assert not names_missing("")
    # a bug fixed in the code, not a name the test names
    assert not names_missing("AttributeError: 'NoneType' object has no attribute 'group'")
    assert names_missing("AttributeError: type object 'Box' has no attribute 'EMPTY'")
