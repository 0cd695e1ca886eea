"""Inputs with one part added (``amplify_adds``), end to end: a release starts reading a
new option nested in its config (``options.pop("header", None)`` where ``options`` is the
dict under ``formatOptions``); the parent rejects it as an unknown option, and the
project's tests never give it. A copy of a test whose config holds ``formatOptions`` with
``header`` added (a string, then a list: what the changed lines test for) reaches the new
lines. A refactor of how an option already read is taken, whose copies add that option,
claims nothing."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import pytest

from bot.testgen.amplify_adds import add_variants, added_to, read_parts
from bot.testgen.amplify_inputs import add_variants as input_variants
from bot.testgen.amplify_inputs import steer_from_change
from bot.testgen.inputs import Candidate
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_drops import ENVIRON  # reads SVC_TIMEOUT, tests strict

EXPORT = """
class ExportError(Exception):
    pass


FORMAT_OPTIONS = "formatOptions"


def _options(config):
    out = {"format": config.pop("format", "csv")}
    options = config.pop(FORMAT_OPTIONS, {})
    if options.pop("compressed", False):
        out["compress"] = True
    if "delimiter" in options:
        out["delimiter"] = options.pop("delimiter")
    if options:
        raise ExportError(f"unknown format options: {sorted(options)}")
    return out


def export(rows, **config):
    return {"rows": len(rows), "options": _options(config)}
"""

# the release: a header option, one name or a list of them
EXPORT_HEADER = EXPORT.replace(
    "    if options:\n",
    '    if header := options.pop("header", None):\n'
    "        if isinstance(header, str):\n"
    "            header = [header]\n"
    '        out["header"] = list(header)\n'
    "    if options:\n",
)

# a refactor: the delimiter taken in two steps (the tests give it in one test)
EXPORT_SAME = EXPORT.replace(
    '    if "delimiter" in options:\n        out["delimiter"] = options.pop("delimiter")\n',
    '    if "delimiter" in options:\n'
    '        delimiter = options.pop("delimiter")\n'
    '        out["delimiter"] = delimiter\n',
)

TESTS = """
from exporter.core import export


def test_export_compressed():
    result = export([1, 2, 3], format="csv", formatOptions={"compressed": True})
    assert result["rows"] == 3


def test_export_delimited():
    config = dict(format="tsv", formatOptions={"delimiter": "|"})
    result = export([1], **config)
    assert result["options"]["delimiter"] == "|"
"""


RELEASES = {"header": (EXPORT_HEADER, "a header option"), "same": (EXPORT_SAME, "two steps")}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """The report of `nova testgen` on the release named (made once)."""
    made: dict[str, dict[str, Any]] = {}
    base = {"exporter/__init__.py": "", "exporter/core.py": EXPORT, "tests/test_core.py": TESTS}

    def report(name: str) -> dict[str, Any]:
        if name not in made:
            new, message = RELEASES[name]
            tmp = tmp_path_factory.mktemp(name)
            change = {"exporter/core.py": new}
            made[name] = sample_testgen(tmp, base, change, message, exits=(0, 1, 4))[1]
        return made[name]

    return report


def test_a_copy_with_the_new_nested_option_added_catches_the_release(
    release: Callable[[str], dict[str, Any]],
) -> None:
    header = release("header")
    kept = [c for c in header["kept"] if c["evidence"].get("catches_change")]
    assert kept, header["notes"]
    facts = [f for c in kept for f in c["evidence"].get("amplified", c["evidence"].get("calls"))]
    told = [f"{f['call']} {f.get('amplifies', '')}" for f in facts]
    assert any("'header'" in t for t in told), told
    # the parent rejects the option the release reads: a behaviour, not a new name
    failures = [str(c["evidence"].get("parent_failure")) for c in kept]
    assert any("unknown format options: ['header']" in f for f in failures), failures
    assert not any(c["evidence"].get("new_name") for c in kept)


def test_a_refactor_whose_copies_add_an_option_it_reads_claims_nothing(
    release: Callable[[str], dict[str, Any]],
) -> None:
    claimed = [c for c in release("same")["kept"] if c["evidence"].get("catches_change")]
    assert claimed == [], claimed


def _changed(old: str, new: str) -> list[int]:
    old_rows = old.split("\n")
    return [n for n, row in enumerate(new.split("\n"), 1) if row not in old_rows]


def test_the_added_key_is_traced_to_the_nested_mapping_and_valued_by_its_tests() -> None:
    parts = read_parts(EXPORT_HEADER, EXPORT, _changed(EXPORT, EXPORT_HEADER), [])
    part = next(p for p in parts if p.key == "header")
    # ``options`` is the dict under FORMAT_OPTIONS (a module constant) of ``config``
    assert part.path == ("formatOptions",)
    assert "compressed" in part.levels[1] and "format" in part.levels[0]
    assert part.values[:2] == ("'header'", "['header']")  # isinstance(str), then list()
    # the refactor reads a key the tests give in one test and not in the other
    same = read_parts(EXPORT_SAME, EXPORT, _changed(EXPORT, EXPORT_SAME), [])
    assert [p.key for p in same][:1] == ["delimiter"]


def test_a_copy_adds_the_entry_where_the_mapping_is_or_makes_the_level() -> None:
    steer = steer_from_change(EXPORT_HEADER, EXPORT, set(_changed(EXPORT, EXPORT_HEADER)))
    text, made = input_variants(TESTS, "test_export_compressed", steer, 4)
    said = [v.description for v in made]
    assert said[0].endswith("['formatOptions']['header'] = 'header' added"), said
    assert "formatOptions={\"compressed\": True, 'header': 'header'}" in text
    tree = ast.parse(TESTS)
    func = tree.body[2]
    assert isinstance(func, ast.FunctionDef)
    put = [new for _where, new in add_variants(TESTS, func, steer.adds)]
    assert 'dict(format="tsv", formatOptions={"delimiter": "|", \'header\': \'header\'})' not in put
    assert "{\"delimiter\": \"|\", 'header': 'header'}" in put
    # a config without the level gets it whole
    bare = "def test_x():\n    export([1], format='csv')\n"
    func = ast.parse(bare).body[0]
    assert isinstance(func, ast.FunctionDef)
    put = [new for _where, new in add_variants(bare, func, steer.adds)]
    assert "export([1], format='csv', formatOptions={'header': 'header'})" in put


def test_the_differentials_inputs_get_the_entry_and_keywords_and_variables() -> None:
    lines = _changed(EXPORT, EXPORT_HEADER)
    given = "{'format': 'csv', 'formatOptions': {'compressed': True}}"
    call = Candidate(args=(given,), origin="tests")
    made = added_to([call], EXPORT_HEADER, lines)
    assert made and made[0].args == (
        "{'format': 'csv', 'formatOptions': {'compressed': True, 'header': 'header'}}",
    )
    keywords = Candidate(args=("[1]",), kwargs=(("format", "'csv'"),), origin="tests")
    made = added_to([keywords], EXPORT_HEADER, lines)
    assert made[0].kwargs[-1] == ("formatOptions", "{'header': 'header'}")
    assert all("(added)" in c.origin for c in made)
    assert added_to([call], EXPORT_HEADER, []) == []


ENV_TESTS = '''
def test_timeout(monkeypatch):
    """The default."""
    assert timeout() == 30
'''


def test_a_variable_is_set_first_and_a_tested_keyword_given() -> None:
    lines = [n for n, row in enumerate(ENVIRON.split("\n"), 1) if "raw" in row or "strict" in row]
    parts = read_parts(ENVIRON, None, lines, [])
    env = next(p for p in parts if p.env)
    assert env.key == "SVC_TIMEOUT" and env.values[0] == "'1'"  # int(raw): a number's text
    func = ast.parse(ENV_TESTS).body[0]
    assert isinstance(func, ast.FunctionDef)
    put = [new for _where, new in add_variants(ENV_TESTS, func, parts)]
    assert "monkeypatch.setenv('SVC_TIMEOUT', '1')\n    assert timeout() == 30" in put
    assert "timeout(strict=True)" in put  # the default flipped
    # a keyword the parent's function does not take: its TypeError is a new name
    older = ENVIRON.replace(", strict=False", "")
    assert [p.key for p in read_parts(ENVIRON, older, lines, []) if p.call] == []
    # a key read from ``**options``: a keyword of the function's calls, on both sides
    reader = "def connect(host, **options):\n    return host, options.get('retries')\n"
    head = reader.replace("options.get('retries')", "options.get('retries', 3)")
    parts = read_parts(head, reader, [2], [2])
    assert [(p.key, p.call) for p in parts] == [("retries", "connect")]
    call = "def test_c():\n    connect('h', timeout=1)\n"
    func = ast.parse(call).body[0]
    assert isinstance(func, ast.FunctionDef)
    put = [new for _where, new in add_variants(call, func, parts)]
    assert "connect('h', timeout=1, retries=True)" in put
