"""`nova testgen` with no model (issue 35) on a change whose difference shows only in a
parsed object built from a multi-line input: a private helper of a docstring parser now
joins a parameter spec written over two lines. The project's tests give only specs on one
line, so no input of theirs reaches the changed branch; the changed lines test for a line
break, so their multi-line inputs are also tried with a line broken inside its brackets,
and the parsed object (a tree with no ``__eq__``) is compared by the attribute that
differs. One real sample project (git in tmp, its own virtualenv, real pytest), run once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.differential import side_runner
from bot.testgen.inputs import Candidate, inputs_from_tests
from bot.testgen.linebreaks import about_line_breaks, broken_lines, placed_in_lines
from tests.conftest import GitRepo
from tests.testgen.sample import caught, sample_testgen

PARSER = """import re

_TYPED = re.compile(r"\\s*(\\w+)\\s*\\(\\s*(.*[^\\s]+)\\s*\\)")


class Param:
    def __init__(self, name, type_name, description):
        self.name = name
        self.type_name = type_name
        self.description = description


class Doc:
    def __init__(self, summary):
        self.summary = summary
        self.params = []


def _build_param(text):
    before, desc = text.split(":", 1)
    match = _TYPED.match(before)
    if match:
        return Param(match.group(1), match.group(2), desc.strip())
    return Param(before.strip(), None, desc.strip())


def _items(lines):
    items = []
    for line in lines:
        if line.startswith("    ") and items:
            items[-1] += "\\n" + line
        elif line.strip():
            items.append(line.strip())
    return items


def parse(text):
    head, _, rest = text.strip().partition("Args:")
    doc = Doc(head.strip())
    for item in _items(rest.split("\\n")):
        doc.params.append(_build_param(item))
    return doc
"""
# the release: a spec continued on the next line is joined before it is read, and a
# line that starts with "#" is a comment
PARSER_NEW = PARSER.replace(
    '    before, desc = text.split(":", 1)\n',
    '    before, desc = text.split(":", 1)\n'
    '    if "\\n" in before:\n'
    '        first, rest = before.split("\\n", 1)\n'
    '        before = first + " " + rest.strip()\n',
).replace(
    "    for line in lines:\n",
    '    for line in lines:\n        if line.strip().startswith("#"):\n            continue\n',
)
TESTS = '''from docparse.parser import parse


def test_summary():
    assert parse("Adds two numbers.").summary == "Adds two numbers."


def test_params():
    doc = parse(
        """Adds two numbers.

Args:
  a (int): The first.
  b (Optional[int], optional): The second.
"""
    )
    assert [p.name for p in doc.params] == ["a", "b"]
    assert doc.params[1].type_name == "Optional[int], optional"
'''


def test_a_change_about_line_breaks_breaks_the_tests_lines_inside_brackets() -> None:
    changed = PARSER_NEW.split("\n")
    lines = [n for n, row in enumerate(changed, 1) if "\\n" in row and row not in PARSER]
    assert about_line_breaks(PARSER_NEW, lines)
    assert not about_line_breaks(PARSER_NEW, [changed.index("class Param:") + 1])
    own = Candidate((repr("S.\n\nArgs:\n  b (Optional[int], optional): B.\n  c: the c"),))
    made = [c.args[0] for c in broken_lines([own], PARSER_NEW, lines)]
    # inside the brackets first (multi-line text), then at a line's last space
    assert made == [
        repr("S.\n\nArgs:\n  b (Optional[int],\n      optional): B.\n  c: the c"),
        repr("S.\n\nArgs:\n  b (Optional[int], optional): B.\n  c: the\n      c"),
    ]
    assert broken_lines([own], PARSER_NEW, []) == []  # a change not about line breaks
    # a changed literal goes where a line-by-line reader tests it: a line's start and end
    placed = [c.args[0] for c in placed_in_lines([own, Candidate(("'one line'",))], ["#"])]
    assert placed == [
        repr("S.#\n\nArgs:\n  b (Optional[int], optional): B.\n  c: the c"),
        repr("S.\n\nArgs:\n  b (Optional[int], optional): B.\n  #c: the c"),
        repr("S.\n\nArgs:\n  b (Optional[int], optional): B.\n  c: the c#"),
    ]
    # a reader of streams gets its text in a call: the text is edited there
    stream = Candidate(("io.StringIO('a = 1\\nb = f(x, y)')",))
    assert [c.args[0] for c in broken_lines([stream], PARSER_NEW, lines)] == [
        "io.StringIO('a = 1\\nb = f(x,\\n    y)')",
        "io.StringIO('a =\\n    1\\nb = f(x, y)')",
    ]


@pytest.fixture(scope="module")
def docparse(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("docparse"),
        {
            "docparse/__init__.py": "",
            "docparse/parser.py": PARSER,
            "tests/test_parser.py": TESTS,
        },
        {"docparse/parser.py": PARSER_NEW},
        "join a parameter spec written over two lines",
    )


def test_a_parsed_object_from_a_line_broken_input_catches_the_change(
    docparse: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = docparse
    facts = caught(data, "parse(")
    assert facts, json.dumps([data["notes"], data["dropped"]], indent=1)[:4000]
    # the input is the tests' own, with its spec continued on the next line
    assert any("Optional[int],\\n" in f["call"] for f in facts), facts
    written = repo.git("show", f"{data['branch']}:tests/test_nova_docparse_parser.py")
    assert ".params[1].name == 'b'" in written, written


def test_a_changed_literal_put_at_the_start_of_a_line_catches_the_change(
    docparse: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = docparse
    facts = caught(data, "parse(")
    assert any("\\n  #" in f["call"] for f in facts), facts


SHAPES = """class Item:
    def __init__(self, name):
        self.name = name


class Box:
    def __init__(self, label=None):
        self.label = label
        self.items = []

    def add(self, item):
        self.items.append(item)

    def names(self, sep=", "):
        if sep is None:
            return [i.name for i in self.items]
        return sep.join(i.name for i in self.items)
"""


def _probe(tmp: Path, functions: list[dict[str, Any]]) -> dict[str, Any]:
    """The side-runner, as Nova runs it (its own copy, a plan file, a subprocess)."""
    (tmp / "shapes.py").write_text(SHAPES)
    side_runner(tmp)
    plan = {"call_seconds": 1, "modules": [{"module": "shapes", "functions": functions}]}
    (tmp / "plan.json").write_text(json.dumps(plan))
    subprocess.run([sys.executable, "nova_probe.py", "plan.json", "out.json"], cwd=tmp, check=True)
    out: dict[str, Any] = json.loads((tmp / "out.json").read_text())
    return out["modules"]["shapes"]["functions"]


def test_a_none_the_tests_pass_is_a_value_and_steps_keep_the_imports_they_need(
    tmp_path: Path,
) -> None:
    imports = ["import os", "from shapes import Box, Item"]
    steps = ["_nova_obj.add(Item('a'))", "_nova_obj.add(Item('b'))"]
    ctor = {"args": [], "kwargs": {"label": "None"}}
    inputs = [
        {"args": [], "kwargs": {"sep": "None"}, "imports": imports, "ctor": ctor, "steps": steps},
        # a value that was not plain data (no source) still keeps the default
        {"args": [], "kwargs": {"sep": None}, "imports": imports, "ctor": ctor, "steps": steps},
    ]
    found = _probe(tmp_path, [{"qualname": "Box.names", "inputs": inputs, "draw": 0}])
    results = found["Box.names"]["results"]
    by_sep = {json.dumps(r["kwargs"]): r for r in results}
    assert by_sep['{"sep": "None"}']["outcome"]["value"] == "['a', 'b']"
    assert by_sep["{}"]["outcome"]["value"] == "'a, b'"
    assert all(r["ctor"]["kwargs"] == {"label": "None"} for r in results)
    # a later run gets only what this one rendered: the steps' own import, narrowed
    assert all(r["imports"] == ["from shapes import Item"] for r in results)
    again = [{k: r[k] for k in ("args", "kwargs", "imports", "ctor", "steps")} for r in results]
    second = _probe(tmp_path, [{"qualname": "Box.names", "inputs": again, "draw": 0}])
    assert [r["outcome"] for r in second["Box.names"]["results"]] == [r["outcome"] for r in results]


def test_a_parametrize_row_is_put_inside_an_argument_such_as_a_stream() -> None:
    tests = """import io

import pytest

from confparse import parse_stream


@pytest.mark.parametrize(("text", "expected"), [("a=b", 1), ("a=b\\nc=d", 2)])
def test_parse_stream(text, expected):
    assert len(list(parse_stream(io.StringIO(text), strict=text))) == expected
"""
    found = inputs_from_tests({"tests/test_conf.py": tests}, {"parse_stream"})["parse_stream"]
    assert [(c.args, c.kwargs) for c in found] == [
        (("io.StringIO('a=b')",), (("strict", "'a=b'"),)),
        (("io.StringIO('a=b\\nc=d')",), (("strict", "'a=b\\nc=d'"),)),
    ]
