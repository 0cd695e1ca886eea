"""Inputs shaped like the changed function uses its parameters (issue 35):

- ``expiry(params)`` reads ``'ttl' in params`` / ``params.get('ttl')``; the change accepts
  a float there and mends an error message. The project's tests only call ``load(text)``
  (a JSON string), so every harvested input for ``expiry`` is a string or a number and
  none reaches the change; a mapping ``{'ttl': 1.5}`` does;
- ``side(point)`` reads ``point.x`` / ``point.y``; the change sends a negative ``x`` to the
  left. The tests only build points from text (``sides('1,2;3,4')``): a
  ``types.SimpleNamespace(x=-1, y=...)`` reaches it;
- a refactor of the same module (no behaviour changed) writes nothing catching.

Then the shape reader, rule by rule, on function bodies (never run), and a property:
every shaped input is source that evaluates back to an equal value."""

from __future__ import annotations

import ast
import decimal
import fractions
import json
import math
import pathlib
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.testgen.inputs import Candidate
from bot.testgen.shapes import (
    MAX_SHAPED,
    Shape,
    _Fill,
    _instances,
    read_shapes,
    render_value,
    shaped_inputs,
)
from bot.testgen.typehints import Hints
from tests.testgen.sample import caught, sample_testgen

TOKENS = '''import json
import time

TTL = "ttl"


def expiry(params):
    """The token's time to live in seconds, and when it ends."""
    ttl = None
    if TTL in params:
        if isinstance(params.get(TTL), int):
            ttl = params.get(TTL)
        elif isinstance(params.get(TTL), str):
            try:
                ttl = int(params.get(TTL))
            except ValueError:
                raise ValueError("tll must be a number")
        elif params.get(TTL) is not None:
            raise ValueError("tll must be a number")
    ends = params.get("ends")
    if ends is None and ttl:
        ends = round(time.time()) + ttl
    return ttl, ends


def load(text):
    return expiry(json.loads(text))
'''
TOKENS_NEW = TOKENS.replace(
    "        elif isinstance(params.get(TTL), str):\n",
    "        elif isinstance(params.get(TTL), float):\n"
    "            ttl = int(params.get(TTL))\n"
    "        elif isinstance(params.get(TTL), str):\n",
).replace('"tll must be a number"', '"ttl must be a number"')
# the same behaviour for every input (``if params and TTL in params`` was not: ``expiry(None)``
# raised TypeError before and AttributeError after, which Nova found and kept)
TOKENS_REFACTOR = TOKENS.replace('ends = params.get("ends")', 'ends = params.get("ends", None)')

POINTS = '''from collections import namedtuple

Point = namedtuple("Point", "x y")


def side(point):
    """Which side of the vertical axis a point is on."""
    if point.y > 100:
        return "far"
    return "right"


def sides(text):
    points = [Point(*map(int, pair.split(","))) for pair in text.split(";")]
    return [side(p) for p in points]
'''
POINTS_NEW = POINTS.replace(
    "    if point.y > 100:\n",
    '    if point.x < 0:\n        return "left"\n    if point.y > 100:\n',
)

TESTS = """from kit.points import sides
from kit.tokens import load


def test_load():
    assert load('{"ttl": 5, "ends": 10}') == (5, 10)
    assert load('{"ends": 7}') == (None, 7)


def test_sides():
    assert sides("1,2;3,400") == ["right", "far"]
"""


def _run(
    tmp: Any, change: dict[str, str], message: str, exits: tuple[int, ...] = (0,)
) -> dict[str, Any]:
    base = {
        "kit/__init__.py": "",
        "kit/tokens.py": TOKENS,
        "kit/points.py": POINTS,
        "tests/test_kit.py": TESTS,
    }
    return sample_testgen(tmp, base, change, message, exits)[1]


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(
        tmp_path_factory.mktemp("kit"),
        {"kit/tokens.py": TOKENS_NEW, "kit/points.py": POINTS_NEW},
        "a float time to live; points left of the axis",
    )


def _caught(data: dict[str, Any], call: str) -> list[dict[str, Any]]:
    facts = caught(data, call)
    assert facts, json.dumps([data["notes"], data["kept"], data["dropped"]], indent=1)[:6000]
    return facts


def test_a_mapping_the_body_reads_is_given_the_key_the_change_tests(
    kit: dict[str, Any],
) -> None:
    facts = _caught(kit, "expiry(")
    # each call (after the pinned clock's ``with`` where its value reads the clock)
    calls = [f["call"].split("; ")[-1] for f in facts]
    assert all(c.startswith("expiry({") and "'ttl'" in c for c in calls), calls
    assert any("tll must be a number" in f["parent"] for f in facts)
    assert any("inputs shaped from how expiry uses params" in n for n in kit["notes"])


def test_an_object_the_body_reads_is_a_simple_namespace(kit: dict[str, Any]) -> None:
    facts = _caught(kit, "side(")
    assert any("types.SimpleNamespace(x=-" in f["call"] for f in facts)
    assert all(f["parent"] != f["head"] for f in facts)


def test_a_refactor_writes_nothing_catching(tmp_path: Any) -> None:
    data = _run(tmp_path, {"kit/tokens.py": TOKENS_REFACTOR}, "a refactor", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")]


# the reader, rule by rule


def _shape(body: str, name: str = "f", lines: list[int] | None = None) -> dict[str, Shape]:
    return read_shapes(body, name, lines or [])


def test_keys_from_getters_subscripts_membership_and_constants() -> None:
    source = (
        "K = 'kind'\n"
        "def f(p, q):\n"
        "    if 'a' in p and p.get('b') and p[K]:\n"
        "        p.setdefault('c', 1)\n"
        "        return p.pop('d', None)\n"
        "    return q\n"
    )
    shapes = _shape(source)
    assert list(shapes) == ["p"]
    assert shapes["p"].kind == "mapping"
    assert set(shapes["p"].fields) == {"a", "b", "kind", "c", "d"}


def test_a_nested_get_is_a_mapping_inside_one_level_deep() -> None:
    source = "def f(cfg):\n    return cfg.get('net', {}).get('port') or cfg['paths'][0]\n"
    shape = _shape(source)["cfg"]
    net, paths = shape.fields["net"], shape.fields["paths"]
    assert net is not None and net.kind == "mapping" and list(net.fields) == ["port"]
    assert paths is not None and paths.kind == "sequence"


def test_a_local_holding_a_key_tells_its_shape_and_the_changed_test() -> None:
    source = (
        "def f(p):\n"
        "    v = p.get('n')\n"
        "    if isinstance(v, float):\n"
        "        return int(v)\n"
        "    return v\n"
    )
    shape = _shape(source, lines=[3, 4])["p"]
    assert shape.near["n"] == 1
    made = shaped_inputs([Candidate(("''",))], source, "f", [3, 4], {}).candidates
    assert made[0].args == ("{'n': 1.5}",)
    assert "(typed)" in made[0].origin


def test_a_parameter_assigned_again_has_no_shape() -> None:
    source = "def f(p):\n    p = dict(p or {})\n    return p.get('a')\n"
    assert _shape(source) == {}
    looped = "def f(p):\n    for p in range(3):\n        pass\n    return p['a']\n"
    assert _shape(looped) == {}


def test_attributes_read_only_make_an_object_and_a_method_call_does_not() -> None:
    assert _shape("def f(o):\n    return o.x + o.y\n")["o"].kind == "object"
    assert _shape("def f(o):\n    return o.x + o.size()\n") == {}
    assert _shape("def f(s):\n    return s.lower().x\n") == {}  # text is left alone


def test_items_of_a_sequence_are_shaped_from_the_loop() -> None:
    source = "def f(rows):\n    return [r['id'] for r in rows]\n"
    shape = _shape(source)["rows"]
    assert shape.kind == "sequence"
    assert shape.item is not None and list(shape.item.fields) == ["id"]
    made = shaped_inputs([], source, "f", [2], {}).candidates
    assert any(c.args == ("[{'id': 'a'}]",) for c in made)


def test_a_value_handed_to_a_function_of_the_module_takes_its_shape() -> None:
    source = (
        "def _read(opts):\n"
        "    v = opts.get('mode')\n"
        "    if isinstance(v, float):\n"
        "        return int(v)\n"
        "    return v\n"
        "def f(options, n=1):\n"
        "    return _read(options) * n\n"
    )
    shapes = _shape(source, "f", lines=[3, 4])
    assert list(shapes) == ["options"] and list(shapes["options"].fields) == ["mode"]
    made = shaped_inputs([Candidate(("5",))], source, "f", [3, 4], {}).candidates
    assert made[0].args == ("{'mode': 1.5}",)  # what the helper's changed line tests


def test_a_method_is_shaped_only_on_the_instances_the_tests_build() -> None:
    source = "class C:\n    def m(self, p):\n        return p.get('a')\n"
    assert shaped_inputs([], source, "C.m", [3], {}).candidates == []
    built = Candidate(("{'b': 1}",), ctor=((), ()), receiver="C")
    made = shaped_inputs([built], source, "C.m", [3], {}).candidates
    assert made and all(c.ctor == ((), ()) for c in made)
    # merged into the dict the tests give: their keys stay
    assert [c.args for c in made] == [
        ("{'b': 1, 'a': None}",),
        ("{'b': 1, 'a': []}",),
        ("{'b': 1, 'a': 'a'}",),
    ]  # and not the tests' own input again


def test_tests_values_for_a_key_fill_it_and_shaped_inputs_are_bounded() -> None:
    source = (
        "def f(p):\n"
        + "".join(f"    x{i} = p['k{i}']\n" for i in range(12))
        + "    if isinstance(p['k0'], int):\n        return 1\n"
    )
    tests = {"tests/test_f.py": "def test():\n    f({'k3': 'three'})\n"}
    made = shaped_inputs([Candidate(("1",))], source, "f", [14, 15], tests).candidates
    assert 0 < len(made) <= MAX_SHAPED
    values = [ast.literal_eval(c.args[0]) for c in made]
    assert isinstance(values[0]["k0"], int)
    assert all(v.get("k3", "three") == "three" for v in values)


def test_inputs_the_project_already_gives_in_shape_are_not_shaped_again() -> None:
    source = "def f(p):\n    return p.get('a')\n"
    given_ = [Candidate(("{'a': 1}",))]
    assert shaped_inputs(given_, source, "f", [2], {}).candidates == []
    member = "def f(url):\n    return 'http' in url\n"  # a mapping or text: text given
    assert read_shapes(member, "f", [2])["url"].kind == "mapping"
    assert shaped_inputs([Candidate(("'ftp://a'",))], member, "f", [2], {}).candidates == []
    built = "def f(o):\n    return o.x\n"
    assert shaped_inputs([Candidate(("Point(1, 2)",))], built, "f", [2], {}).candidates == []


# every shaped input is written as source that gives the value back

_NAMES = st.sampled_from(["a", "b", "ttl", "x", "y", "mode"])
_KINDS = st.sampled_from(
    ["int", "float", "str", "bytes", "none", "bool", "list", "tuple", "dict", "numeric", "empty"]
    + ["negative", "zero", "huge", "nonfinite", "decimal", "fraction", "path", "unhashable"]
)


def _shapes(depth: int = 0) -> st.SearchStrategy[Shape]:
    inner = st.none() if depth else st.one_of(st.none(), st.deferred(lambda: _shapes(1)))
    fields = st.dictionaries(_NAMES, inner, max_size=4)
    return st.one_of(
        st.builds(
            lambda kind, f, near: Shape(kind, f, {k: near for k in f}),
            st.sampled_from(["mapping", "object"]),
            fields,
            st.integers(0, 3),
        ),
        st.builds(lambda item: Shape("sequence", item=item), inner),
    )


def _equal(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, types.SimpleNamespace) and isinstance(b, types.SimpleNamespace):
        return _equal(vars(a), vars(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(_equal, a, b))
    return a == b


@settings(max_examples=150, deadline=None)
@given(
    _shapes(),
    st.dictionaries(_NAMES, st.lists(_KINDS, max_size=3), max_size=3),
    st.dictionaries(_NAMES, st.lists(st.integers(-5, 5) | st.floats(-9, 9), max_size=2)),
    st.dictionaries(_NAMES, st.lists(st.text(max_size=3) | st.integers(), min_size=1, max_size=2)),
)
def test_every_shaped_value_renders_to_source_that_evaluates_back(
    shape: Shape,
    kinds: dict[str, list[str]],
    numbers: dict[str, list[int | float]],
    pool: dict[str, list[object]],
) -> None:
    changed = Hints()
    for name, ks in kinds.items():
        changed.add(name, *ks)
    for name, ns in numbers.items():
        for n in ns:
            changed.number(name, n)
    scope = {"types": types, "decimal": decimal, "fractions": fractions, "pathlib": pathlib}
    for value in _instances(shape, _Fill(changed, Hints(), pool)):
        rendered = render_value(value)
        assert rendered is not None, value
        source, imports = rendered
        for line in imports:
            assert line.split()[-1] in scope
        assert _equal(eval(source, dict(scope)), value), source
