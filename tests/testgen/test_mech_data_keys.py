"""Amplification's input variants query another entry of the test's own data document.

The project's only test of its config getter writes a JSON document with a boolean in it
and queries it by path through a helper of its own body that asserts the exit code
(``get("server.port")``), but never queries the boolean. The release makes the getter
print booleans (it rejected them with exit 2). A copy of the test that queries
``"server.debug"`` instead passes its call on the head and fails the helper's exit-code
check on the parent: the kept test is that copy, cut after the call, and it catches the
change. A release that makes the getter print nulls, a kind the document does not hold,
gets the same copies and claims nothing."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from bot.testgen.amplify import Observed, _differences, _steady
from bot.testgen.amplify_inputs import _find, _Inputs, add_variants, steer_from_change
from bot.testgen.amplify_keys import documents, key_plan, queries, value_kinds
from bot.testgen.data_docs import parsed
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified
from tests.testgen.test_mech_modstate import _nothing_kept

CLI = """
import argparse
import json
import re
import sys


def lookup(doc, path):
    node = doc
    for part in path.split("."):
        m = re.fullmatch(r"(\\w+)\\[(\\d+)\\]", part)
        node = node[m.group(1)][int(m.group(2))] if m else node[part]
    return node


def main(argv=None):
    parser = argparse.ArgumentParser(prog="cfgget")
    parser.add_argument("file")
    parser.add_argument("key")
    args = parser.parse_args(argv)
    with open(args.file) as f:
        doc = json.load(f)
    try:
        value = lookup(doc, args.key)
    except (KeyError, IndexError, TypeError):
        print(f"error: {args.key} not found", file=sys.stderr)
        return 1
    if isinstance(value, str):
        text = value
    elif isinstance(value, (dict, list)):
        text = json.dumps(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
    else:
        print(f"error: {args.key}: cannot print a {type(value).__name__}", file=sys.stderr)
        return 2
    print(text)
    return 0
"""

_NUMBERS = "    elif isinstance(value, (int, float)) and not isinstance(value, bool):\n"
# the release: booleans are printed as JSON writes them
CLI_BOOL = CLI.replace(
    _NUMBERS,
    '    elif isinstance(value, bool):\n        text = "true" if value else "false"\n' + _NUMBERS,
)
# another release: nulls are printed (the test's document holds none)
CLI_NULL = CLI.replace(_NUMBERS, '    elif value is None:\n        text = "null"\n' + _NUMBERS)

TESTS = """
import json

from cfgget.cli import main

DOC = {
    "name": "demo",
    "server": {"host": "example.org", "port": 8080, "debug": False, "tags": ["web", "api"]},
    "owners": [{"name": "ann"}, {"name": "bob"}],
}


def test_get(tmp_path, capsys):
    path = tmp_path / "conf.json"
    path.write_text(json.dumps(DOC))

    def get(key, code=0):
        assert main([str(path), key]) == code
        return capsys.readouterr().out.strip()

    assert get("name") == "demo"
    assert get("server.host") == "example.org"
    assert get("server.port") == "8080"
    assert get("server.tags[1]") == "api"
    assert get("owners[0].name") == "ann"
    assert get("server.missing", 1) == ""
"""

BASE = {"cfgget/__init__.py": "", "cfgget/cli.py": CLI, "tests/test_cli.py": TESTS}


@pytest.fixture(scope="module")
def booleans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("keys"),
        BASE,
        {"cfgget/cli.py": CLI_BOOL},
        "booleans are printed",
    )
    return data


def test_a_copy_querying_the_entry_of_a_kind_no_query_reached_catches_the_change(
    booleans: dict[str, Any],
) -> None:
    facts = amplified(booleans, "get(")
    assert facts, booleans["notes"]
    fact = facts[0]
    assert "'server.debug'" in fact["call"]
    assert "-> 'server.debug'" in fact["amplifies"]
    assert fact["head"] == "'false'"
    # the helper's own exit-code check is what fails on the parent
    assert "AssertionError" in fact["parent"] and "2 == 0" in fact["parent"]


def test_a_change_to_a_kind_the_document_does_not_hold_claims_nothing(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data = _nothing_kept(
        tmp_path_factory.mktemp("nulls"), BASE, {"cfgget/cli.py": CLI_NULL}, "nulls are printed"
    )
    notes = "\n".join(data["notes"])
    assert "input variant(s) of 1 test(s)" in notes, notes
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], notes


# ---- the parts, on their own ----


def _plan(
    source: str, name: str, named: tuple[str, ...] = (), kinds: tuple[str, ...] = ()
) -> list[str]:
    tree = ast.parse(source)
    found = _find(tree, name)
    assert found is not None
    func, owner = found
    inputs = _Inputs(func, owner).found(tree)
    return [
        f"{inputs[i].value} -> {value}"
        for i, value in key_plan(tree, func, owner, inputs, named, kinds)
    ]


TOML_TEST = '''
def test_get(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text("""
[person]
name = "Ann"
age = 12
happy = false
nothing = []

[[person.cars]]
model = "Golf"
""")
    assert get(p, "person.age") == 12
    assert get(p, "person.name") == "Ann"
    assert get(p, "person.cars[0].model") == "Golf"
'''


def test_the_entries_no_query_reaches_come_one_kind_at_a_time_in_the_queries_style() -> None:
    # a bool, an empty array, a table: each in place of its nearest query
    assert _plan(TOML_TEST, "test_get") == [
        "person.age -> 'person.happy'",
        "person.age -> 'person.nothing'",
        "person.age -> 'person'",
    ]


def test_an_entry_the_changed_lines_name_or_a_kind_they_test_goes_first() -> None:
    assert _plan(TOML_TEST, "test_get", named=("nothing",))[0] == "person.age -> 'person.nothing'"
    assert _plan(TOML_TEST, "test_get", kinds=("table",))[0] == "person.age -> 'person'"


def test_a_single_key_gets_a_path_only_in_the_style_of_another_query_of_its_document() -> None:
    source = """
def test_cli():
    doc = {"db": {"user": "u", "tls": None}, "debug": True, "cache": {"size": 1}}
    assert run(["get", "--key", "db"], doc) == "..."
"""
    assert _plan(source, "test_cli") == ["db -> 'debug'", "db -> 'cache'"]  # siblings only
    slashed = source + '    assert run(["get", "--key", "cache/size"], doc) == 1\n'
    assert _plan(slashed, "test_cli") == ["db -> 'debug'", "db -> 'db/tls'", "db -> 'db/user'"]


def test_documents_are_read_from_texts_of_several_formats_and_dict_literals() -> None:
    assert parsed('{"a": {"b": null}, "c": []}') == {"a": {"b": None}, "c": []}
    assert parsed("[s]\nflag = yes\nn = 3\n") == {"s": {"flag": True, "n": 3}}
    assert parsed("a:\n  b: true\n  c: ~\nlist:\n  - x: 1\n  - x: 2\n") == {
        "a": {"b": True, "c": None},
        "list": [{"x": 1}, {"x": 2}],
    }
    assert parsed("KEY=value\nOTHER=\n") == {"KEY": "value", "OTHER": ""}
    # code and prose are not documents
    assert parsed("def f():\n    return 1\n") is None
    assert parsed("hello world") is None
    module = ast.parse('CONF = {"a": 1, "b": {"c": f()}}\ndef test_x():\n    use(CONF, "b.c")\n')
    found = _find(module, "test_x")
    assert found is not None
    docs = documents(module, found[0], found[1])
    assert len(docs) == 1 and list(docs[0]) == ["a", "b"]  # type: ignore[call-overload]
    inputs = _Inputs(found[0], found[1]).found(module)
    assert [q.path for q in queries(docs, inputs)] == [("b", "c")]


def test_the_kinds_the_changed_lines_test_for() -> None:
    source = (
        "def f(v):\n    if isinstance(v, bool):\n        return 1\n"
        "    if v is None or v == []:\n        return 2\n"
    )
    assert value_kinds(source, [2]) == ["bool"]
    assert value_kinds(source, [4]) == ["none", "empty"]
    steer = steer_from_change(source, source.replace("bool", "int"), {2})
    assert steer.value_kinds == ("bool", "int")


def test_the_key_variants_are_the_first_copies_of_a_test() -> None:
    text, made = add_variants(TOML_TEST, "test_get", steer_from_change("x = 1\n", None, {1}), 6)
    assert [v.description.split(": ", 1)[1] for v in made[:3]] == [
        "\"person.age\" -> 'person.happy'",
        "\"person.age\" -> 'person.nothing'",
        "\"person.age\" -> 'person'",
    ]
    assert "get(p, 'person.happy') == 12" in text
    # at most half a test's copies
    _text, fewer = add_variants(TOML_TEST, "test_get", steer_from_change("x = 1\n", None, {1}), 2)
    assert [v.description.split(": ", 1)[1] for v in fewer][:1] == [
        "\"person.age\" -> 'person.happy'"
    ]
    assert "person.nothing" not in _text


def test_a_call_whose_argument_list_names_a_temporary_path_is_still_compared() -> None:
    def observed(value: str, code: str) -> Observed:
        filled = {"args": [0, f"['/tmp/pytest-of-root/pytest-{code}/conf.json', 'k']"]}
        row = {"line": 9, "name": "get", "index": 0, "kind": "value", "value": value}
        return Observed(
            tests={"t.py::test_a": {"passed": True, "calls": [{**row, "filled": filled}]}}
        )

    head = observed("'false'", "1")
    parent = observed("'False'", "2")
    (found,) = _differences("t.py::test_a", head, head, [parent])
    assert found.head == {"kind": "value", "value": "'false'"}


def test_a_failure_naming_each_runs_temporary_directory_is_steady_and_never_pinned() -> None:
    def raised(n: int) -> dict[str, Any]:
        message = f"assert 2 == 0 + where 2 = main(['/tmp/pytest-of-root/pytest-{n}/c.json'])"
        return {
            "line": 9,
            "name": "get",
            "index": 0,
            "kind": "raises",
            "type": "AssertionError",
        } | {"message": message}

    def observed(call: dict[str, Any]) -> Observed:
        return Observed(tests={"t.py::test_a": {"passed": True, "calls": [call]}})

    steady = _steady([{(9, "get", 0): raised(1)}, {(9, "get", 0): raised(2)}], (9, "get", 0))
    assert steady["message"] == "assert 2 == 0 + where 2 = main(['/tmp/...'])"
    value = {"line": 9, "name": "get", "index": 0, "kind": "value", "value": "'false'"}
    # the parent's failure is steady: the head's value is compared with it and written
    (found,) = _differences(
        "t.py::test_a",
        observed(value),
        observed(value),
        [observed(raised(1)), observed(raised(2))],
    )
    assert found.parent["message"].endswith("['/tmp/...'])")
    # the head's own failure naming its temporary directory is not pinned
    head = [observed(raised(1)), observed(raised(2))]
    assert _differences("t.py::test_a", *head, [observed(value), observed(value)]) == []


def test_a_temporary_path_is_masked_wherever_tmpdir_points() -> None:
    from bot.testgen.amplify import _temp_masked

    def said(where: str) -> dict[str, Any]:
        return {"kind": "raises", "message": f"assert 2 == 0: {where}/test_get0/t.toml"}

    for a, b in [
        ("/tmp/pytest-of-root/pytest-3", "/tmp/pytest-of-root/pytest-4"),
        ("/scratch/pytest-of-ci/pytest-3", "/scratch/pytest-of-ci/pytest-9"),  # TMPDIR
    ]:
        assert said(a) != said(b)
        assert _temp_masked(said(a)) == _temp_masked(said(b))
    # another file of the same folder is another outcome
    assert _temp_masked(said("/scratch/x")) != _temp_masked(said("/scratch/y"))
