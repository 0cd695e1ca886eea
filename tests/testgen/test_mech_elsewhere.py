"""`nova testgen` with no model (issue 35) on a private helper of one module that only
the package's OTHER modules call (``from .convert import _to_mapping``, or
``convert._to_number``): no public name of its own module reaches it, so before this it
was "skipped: private, and no public function or method of its module calls it". Its
callers in the other modules are probed instead. One real sample project (git in tmp,
its own virtualenv, real pytest), run once; and the finder on module sources."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen.moddata import callers_elsewhere
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen

CONVERT = """def _to_mapping(pairs):
    out = {}
    for key, value in pairs:
        out[key] = value
    return out


def _to_number(text):
    return int(text)
"""

CONVERT_HEAD = """def _to_mapping(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            out[key] = [*out[key], value] if isinstance(out[key], list) else [out[key], value]
        else:
            out[key] = value
    return out


def _to_number(text):
    return int(text.replace("_", ""))
"""

API = '''from . import convert
from .convert import _to_mapping


def parse(text):
    """``a=1;b=2`` as a mapping."""
    return _to_mapping(tuple(part.split("=", 1)) for part in text.split(";") if part)


def number(text):
    return convert._to_number(text.strip())
'''

TESTS = """from cfgkit.api import number, parse


def test_parse():
    assert parse("a=1;b=2") == {"a": "1", "b": "2"}


def test_number():
    assert number(" 42 ") == 42
"""


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("elsewhere")
    base = {
        "cfgkit/__init__.py": "",
        "cfgkit/convert.py": CONVERT,
        "cfgkit/api.py": API,
        "tests/test_api.py": TESTS,
    }
    return sample_testgen(
        tmp,
        base,
        {"cfgkit/convert.py": CONVERT_HEAD},
        "convert: repeated keys collect their values; numbers may hold underscores",
    )


def test_a_private_helper_called_only_from_other_modules_is_reached_there(
    elsewhere: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = elsewhere
    notes = "\n".join(data["notes"])
    assert "skipped: private" not in notes, notes
    assert "cfgkit/api.py::parse (reaches the changed _to_mapping)" in notes, notes
    assert "cfgkit/api.py::number (reaches the changed _to_number)" in notes, notes
    # the public caller in the other module is probed with inputs steered by the changed
    # helper's own literal (an underscore), and its test catches: the differential
    # generator's, not only a copy of the project's test
    probed = [
        fact
        for case in data["kept"]
        if case["evidence"].get("catches_change") and "test_nova_amp" not in case["path"]
        for fact in case["evidence"].get("calls", [])
        if "number(" in fact["call"] and "_" in fact["call"]
    ]
    assert probed, notes


OWN = "def _to_mapping(x):\n    return x\n\n\ndef public(x):\n    return _to_mapping(x)\n"


def test_the_finder_reads_names_imported_by_name_and_through_the_module() -> None:
    files = {
        "cfgkit/__init__.py": "",
        "cfgkit/convert.py": CONVERT,
        "cfgkit/api.py": API,
        # a module's own helper of the same name is not the changed one
        "cfgkit/other.py": OWN,
    }
    found = callers_elsewhere("cfgkit/convert.py", "_to_mapping", files)
    assert [(p, e.qualname, e.via) for p, e in found] == [("cfgkit/api.py", "parse", "_to_mapping")]
    found = callers_elsewhere("cfgkit/convert.py", "_to_number", files)
    assert [(p, e.qualname) for p, e in found] == [("cfgkit/api.py", "number")]
    # a top-level module has no package whose other modules could call it
    assert callers_elsewhere("convert.py", "_to_mapping", {"api.py": API}) == []
