"""Inputs of other types for parameters the project's tests only ever give strings,
steered by what the changed lines test (issue 35): a real sample project (a git
repository in tmp, its own virtualenv, real pytest and coverage subprocesses) whose
release makes numbers work in a private helper reached only through the ``**kwargs`` of
a public function; and what the reader takes from changed conditions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.testgen.inputs import Candidate
from bot.testgen.retype import MAX_TYPED, retype
from bot.testgen.typehints import imported_paths, type_hints
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen

FILL = '''def fill(pattern, values=None, **more):
    """The pattern with each ``{name}`` replaced by the text of its value."""
    merged = dict(values or {}, **more)
    out = pattern
    for name, value in merged.items():
        out = out.replace("{" + name + "}", _text(value))
    return out


def _text(value):
    if value is None or len(value) == 0:
        return ""
    return value.strip()
'''
FILL_NEW = FILL.replace(
    """    if value is None or len(value) == 0:
        return ""
""",
    """    if value is None or (
        not isinstance(value, (int, float)) and len(value) == 0
    ):
        return ""
    if not isinstance(value, str):
        return str(value)
""",
)
FILL_TESTS = """from labels.fill import fill


def test_fill():
    assert fill("Dear {name},", name=" Ann ") == "Dear Ann,"


def test_fill_values():
    assert fill("{a}-{b}", {"a": "x"}, b="y") == "x-y"


def test_missing():
    assert fill("{a}") == "{a}"
"""


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("labels")
    repo, data = sample_testgen(
        tmp,
        {"labels/__init__.py": "", "labels/fill.py": FILL, "tests/test_fill.py": FILL_TESTS},
        {"labels/fill.py": FILL_NEW},
        "numbers are values too",
    )
    return repo, data


@pytest.mark.slow
def test_a_number_through_kwargs_catches_a_change_only_strings_never_reach(
    labels: tuple[GitRepo, dict[str, Any]],
) -> None:
    """The tests pass only strings; the changed condition tests ``isinstance(value,
    (int, float))`` in a private helper that ``fill`` reaches through ``**more`` and a
    dict's values: the tests' own calls, given numbers there, fail on the parent."""
    repo, data = labels
    caught = [
        (case, fact)
        for case in data["kept"]
        for fact in case["evidence"].get("calls", [])
        if fact["call"].startswith("fill(") and case["evidence"]["catches_change"]
    ]
    assert caught, "\n".join(data["notes"]) + json.dumps(data["dropped"], indent=1)
    for case, fact in caught:
        assert fact["reaches"] == ["_text"]
        assert fact["parent"].startswith("raised TypeError"), fact
        assert case["evidence"]["parent_failure"].startswith("TypeError"), case
    calls = " ".join(fact["call"] for _, fact in caught)
    assert "name=5" in calls or "name=1.5" in calls  # the test's keyword, given a number
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_labels_fill.py")
    assert "('Dear {name},', 5, 'Dear 5,'),  # before: raised TypeError" in committed
    assert "{'a': 5}" in committed  # the value of the tests' dict, given a number


def test_hints_from_a_condition_written_over_several_lines() -> None:
    lines = [n for n, row in enumerate(FILL_NEW.splitlines(), 1) if row not in FILL]
    hints = type_hints(FILL_NEW, lines)
    assert hints.kinds == {"value": ["none", "int", "float", "empty", "list", "str"]}


def test_what_conditions_and_calls_say_about_names() -> None:
    source = """def size(n, unit, options, **kw):
    if n >= 1024 and type(unit) is bool:
        return round(n / 1024)
    if hasattr(options, "keys") and kw.get("width") is None:
        return int(options["depth"])
    try:
        local = 3
        return local < 2
    except OverflowError:
        return None
"""
    hints = type_hints(source, list(range(1, 11)))
    assert hints.kinds == {
        "n": ["int", "float"],
        "unit": ["bool"],
        "options": ["dict", "list"],
        "width": ["none"],
        "depth": ["numeric", "float"],
        "": ["huge"],  # an exception the change catches: values that raise it
    }
    assert hints.numbers == {"n": [1024]}
    assert "local" not in hints.kinds  # a local is no name a caller gives


def test_values_go_where_the_hinted_name_is_given() -> None:
    source = "def size(n, unit=None):\n    return _scale(n, unit)\n"
    hints = type_hints("def _scale(n, unit):\n    return n >= 1024\n", [2])
    found = retype([Candidate(("'2048'",), (("unit", "'kB'"),))], source, "size", hints)
    assert found[0].args == ("2048",)  # the test's own text, as the number it spells
    assert all(c.kwargs == (("unit", "'kB'"),) for c in found)  # only ``n`` is varied
    assert {c.args[0] for c in found} >= {"2048", "1024", "1025", "1023", "2048.0"}
    assert all(c.origin.endswith("(typed)") for c in found)
    assert found[0].to_dict()["origin"] == "typed"


def test_a_name_the_call_does_not_have_goes_where_values_are_passed_on() -> None:
    source = "def fill(pattern, values=None, **more):\n    pass\n"
    hints = type_hints("def _text(value):\n    return isinstance(value, (int, float))\n", [2])
    calls = [
        Candidate(("'{a}-{b}'", "{'a': 'x'}"), (("b", "'y'"),)),
        Candidate(("'{a}'",)),
    ]
    found = retype(calls, source, "fill", hints)
    shown = {(c.args, c.kwargs) for c in found}
    assert (("'{a}-{b}'", "{'a': 5}"), (("b", "'y'"),)) in shown  # a dict's value
    assert (("'{a}-{b}'", "{'a': 'x'}"), (("b", "5"),)) in shown  # through **more
    assert all(c.args[0] == "'{a}-{b}'" for c in found)  # the pattern is not varied
    assert len(found) <= MAX_TYPED


def test_without_a_place_to_pass_values_on_unannotated_parameters_are_varied() -> None:
    source = "def show(text, width: int = 3):\n    return _pad(text)\n"
    hints = type_hints("def _pad(value):\n    return value is None or len(value) > 2\n", [2])
    found = retype([Candidate(("'ab'",), (("width", "4"),))], source, "show", hints)
    assert found and all(c.kwargs == (("width", "4"),) for c in found)  # annotated: kept
    assert {c.args[0] for c in found} >= {"None", "''"}


def test_the_number_of_inputs_is_bounded() -> None:
    source = "def f(a, b, c, d, **kw):\n    pass\n"
    hints = type_hints(
        "def _g(x):\n    return isinstance(x, (int, float, complex, bool, bytes, list, dict))\n",
        [2],
    )
    calls = [Candidate(tuple(repr(f"v{i}{j}") for j in range(4))) for i in range(20)]
    found = retype(calls, source, "f", hints)
    assert len(found) == MAX_TYPED
    kinds = {type(eval(a)).__name__ for c in found for a in c.args}  # noqa: S307
    assert {"int", "float", "complex", "bool"} <= kinds  # several kinds, not one


def test_changed_modules_the_entry_imports() -> None:
    source = "import json\nfrom . import fields\nfrom pkg.units import scale\n"
    changed = ["pkg/fields.py", "pkg/units.py", "pkg/other.py", "pkg/render.py"]
    assert imported_paths(source, "pkg/render.py", changed) == ["pkg/fields.py", "pkg/units.py"]
    assert imported_paths("from .fields import x\n", "src/pkg/__init__.py", changed) == [
        "pkg/fields.py"
    ]


def test_values_without_a_literal_are_spelled_with_their_import() -> None:
    source = (
        "import math, os, decimal\n"
        "def f(x, p, d):\n"
        "    if math.isnan(x) or x == math.inf:\n"
        "        return p if isinstance(p, os.PathLike) else d\n"
        "    return isinstance(d, decimal.Decimal)\n"
    )
    hints = type_hints(source, [3, 4, 5])
    assert hints.kinds == {"x": ["nonfinite", "float"], "p": ["path"], "d": ["decimal", "float"]}
    found = retype([Candidate(("'1'", "'f.txt'", "'2.5'"))], source, "f", hints)
    spelled = {c.args: c.imports for c in found}
    assert spelled[("float('inf')", "'f.txt'", "'2.5'")] == ()
    assert spelled[("'1'", "pathlib.Path('f.txt')", "'2.5'")] == ("import pathlib",)
    assert spelled[("'1'", "'f.txt'", "decimal.Decimal('2.5')")] == ("import decimal",)


def test_an_attribute_the_constructor_sets_is_varied_where_the_instance_is_built() -> None:
    source = """class Badge:
    def __init__(self, label, amount=None):
        self.label = label
        self._amount = amount

    def text(self):
        if isinstance(self._amount, float):
            return f"{self._amount:.1f}"
        return str(self._amount)
"""
    hints = type_hints(source, [7])
    assert hints.kinds == {"self._amount": ["float"]}
    built = Candidate((), (), ctor=(("'cpu'",), (("amount", "'3'"),)), receiver="Badge")
    found = retype([built], source, "Badge.text", hints)
    assert [c.ctor for c in found][:2] == [
        (("'cpu'",), (("amount", "3.0"),)),  # the test's text, as the number it spells
        (("'cpu'",), (("amount", "1.5"),)),
    ]
    assert all(c.args == () and c.kwargs == () for c in found)
    # the constructor itself: ``self._amount`` is its parameter ``amount``
    found = retype([Candidate(("'cpu'", "'3'"))], source, "Badge.__init__", hints)
    assert found[0].args == ("'cpu'", "3.0")


def test_a_type_check_of_a_local_reaches_values_nested_in_what_the_call_is_given() -> None:
    """``for v in value: if isinstance(v, bool)``: ``v`` is no parameter, but bools
    flow in from somewhere: the first plain value nested in the dict the test gives."""
    helper = (
        "def _emit(key, value):\n"
        "    for v in value:\n"
        "        if isinstance(v, bool):\n"
        "            v = 'true' if v else 'false'\n"
    )
    hints = type_hints(helper, [3, 4])
    assert hints.kinds == {"": ["bool"]}
    source = "def unparse(input_dict, full_document=True):\n    pass\n"
    found = retype([Candidate(("{'a': {'b': ['1', '2']}}",))], source, "unparse", hints)
    assert [c.args for c in found] == [
        ("{'a': {'b': [True, '2']}}",),
        ("{'a': {'b': [False, '2']}}",),
    ]


def test_a_name_tested_for_truth_is_tried_empty() -> None:
    source = """def add_rows(self, rows, fill=None):
    if rows:
        self.width = len(rows[0])
    while not fill or self.strict:
        fill = fill or " "
    return [r for r in rows] if rows else []
"""
    hints = type_hints(source, [2, 4, 6])
    assert hints.kinds == {
        "rows": ["empty", "none"],
        "fill": ["empty", "none"],
        "self.strict": ["empty", "none"],  # through the constructor argument it is set from
    }
    found = retype(
        [Candidate(("[['a', 1]]",))], "def add_rows(rows, fill=None): ...", "add_rows", hints
    )
    assert "[]" in {c.args[0] for c in found}  # the test's own list, empty
