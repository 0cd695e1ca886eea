"""A value a test makes with the changed module is given to a changed module function
that takes one value (``amplify_calls``: ``convert(validator)`` after
``validator = convert_to_voluptuous(schema)``, blind set 16 E). The test never calls
that function, so no input the differential generator has is such a value; the copy of
the test with the call added is observed on both sides. The tests that share the most
words with the changed lines get the copies first."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.amplify import _nearest
from tests.testgen.sample import sample_testgen

CORE = '''
class Schema:
    """Validates a mapping of field name -> kind."""

    def __init__(self, fields, refs=None):
        self.fields = dict(fields)
        self.refs = dict(refs or {})

    def __call__(self, data):
        for name in self.fields:
            if name not in data:
                raise KeyError(name)
        return data


def compile_schema(spec):
    """A validator for ``spec`` (``{"age": "int"}``; ``{"age": "$ref:Age"}`` reads refs)."""
    refs = spec.pop("$defs", {})
    return Schema(spec.items(), refs)


def describe(schema):
    """The spec a validator was compiled from."""
    out = {}
    for name, kind in schema.fields.items():
        out[name] = kind
    return out
'''

TESTS = """
from shapes.core import compile_schema, describe


def test_required_fields():
    validator = compile_schema({"age": "int"})
    assert validator({"age": 3}) == {"age": 3}


def test_refs_are_kept():
    validator = compile_schema({"age": "$ref:Age", "$defs": {"Age": "int"}})
    assert validator.refs == {"Age": "int"}
"""


def test_a_value_the_test_made_is_given_to_the_changed_function(tmp_path: Path) -> None:
    # the release resolves refs when describing: only a schema with refs shows it
    resolved = CORE.replace(
        "        out[name] = kind\n",
        "        if kind.startswith('$ref:'):\n"
        "            kind = schema.refs.get(kind[5:], kind)\n"
        "        out[name] = kind\n",
    )
    base = {"shapes/__init__.py": "", "shapes/core.py": CORE, "tests/test_core.py": TESTS}
    _, data = sample_testgen(tmp_path, base, {"shapes/core.py": resolved}, "resolve refs")
    notes = "\n".join(data["notes"])
    assert "added call" in notes and "describe(validator)" in notes, notes
    kept = [
        c
        for c in data["kept"]
        if c["evidence"].get("catches_change") and "test_nova_amp_" in c["path"]
    ]
    assert kept, notes
    patch = Path(data["patch"]).read_text(encoding="utf-8")
    assert "describe(validator)" in patch and "'age': 'int'" in patch, patch


def test_a_change_that_keeps_what_it_gives_claims_nothing(tmp_path: Path) -> None:
    same = CORE.replace("        out[name] = kind\n", "        out.update({name: kind})\n")
    base = {"shapes/__init__.py": "", "shapes/core.py": CORE, "tests/test_core.py": TESTS}
    _, data = sample_testgen(tmp_path, base, {"shapes/core.py": same}, "same", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_the_tests_nearest_the_change_come_first() -> None:
    source = (
        "def test_plain():\n    assert make({'a': 1})\n\n\n"
        "def test_refs():\n    assert make({'$ref': 'x', 'refs': 1})\n"
    )
    nodes = ["t.py::test_plain", "t.py::test_refs"]
    rows = ["    refs = schema.refs.get(kind)"]
    assert _nearest(nodes, {"t.py": source}, rows) == ["t.py::test_refs", "t.py::test_plain"]
    assert _nearest(nodes, {"t.py": source}, []) == nodes
