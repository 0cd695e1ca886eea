"""An amplified test must be collectable wherever the project keeps its tests. Here they
live inside the package of a src layout (``src/lexer/tests/``, a package with relative
imports), in a unittest class whose base comes from another module of the tests, and the
changed behaviour is reached only by a copy of the test whose literal is a multi-line
string: the written module must still load, its test kept and claimed catching. A module
that does not load is dropped with the error that stopped it, not a guess."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.testgen.amplify import Difference, amplified_module, amplified_test
from bot.testgen.runners.python import collect_error
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

SCAN = '''
def words(stream):
    """The words of a text stream, one list per line."""
    out = []
    for line in stream.read().splitlines():
        out.append([w for w in line.split(" ") if w])
    return out
'''

# the change: what follows a "#" on a line is a comment
SCAN_NEW = SCAN.replace(
    "        out.append(",
    '        if "#" in line:\n            line = line.split("#")[0]\n        out.append(',
)

BASE = """
from io import StringIO
from unittest import TestCase


class ScanCase(TestCase):
    def stream(self, text):
        return StringIO(text)
"""

TESTS = '''
from ..scan import words
from .base import ScanCase

LINES = 2


def count(found):
    return sum(len(line) for line in found)


class TestScan(ScanCase):
    def test_lines(self):
        found = words(self.stream("""alpha beta
gamma"""))
        self.assertEqual(len(found), LINES)
        self.assertEqual(count(found), 3)
'''


@pytest.fixture(scope="module")
def lexer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("lexer"),
        {
            "pyproject.toml": '[project]\nname = "lexer"\nversion = "1.0"\n',
            "src/lexer/__init__.py": "",
            "src/lexer/scan.py": SCAN,
            "src/lexer/tests/__init__.py": "",
            "src/lexer/tests/base.py": BASE,
            "src/lexer/tests/test_scan.py": TESTS,
        },
        {"src/lexer/scan.py": SCAN_NEW},
        "what follows a # is a comment",
    )
    return data


def test_an_amplified_test_inside_a_src_package_is_collected_and_catches(
    lexer: dict[str, Any],
) -> None:
    unloaded = [c["reason"] for c in lexer["dropped"] if c["name"] == "*"]
    assert not unloaded, unloaded
    facts = amplified(lexer, "words")
    assert facts, (lexer["notes"], lexer["dropped"])
    kept = [c for c in lexer["kept"] if "test_nova_amp_" in c["path"]]
    assert kept and all(c["path"].startswith("src/lexer/tests/") for c in kept), kept
    # the variant's literal spans two lines: the note names it, the file still loads
    assert "#" in str(facts[0]["amplifies"]) and facts[0]["head"] != facts[0]["parent"]


def _difference(node: str, line: int, name: str, variant: str = "", **shown: str) -> Difference:
    """A difference of ``name``'s value at ``line`` of ``node``: head's and the parent's."""
    return Difference(
        node=node,
        line=line,
        name=name,
        index=0,
        head={"kind": "value", "value": shown["head"]},
        parent={"kind": "value", "value": shown["parent"]},
        variant=variant,
    )


def test_a_written_comment_of_several_lines_stays_a_comment() -> None:
    variant = 'TestScan.test_lines, line 15: """alpha beta\ngamma""" -> \'alpha beta\\ngamma#\''
    d = _difference(
        "src/lexer/tests/test_scan.py::TestScan::test_lines",
        15,
        "lexer.scan.words",
        variant,
        head="[['alpha', 'beta'], ['gamma']]",
        parent="[['alpha', 'beta'], ['gamma#']]\n(two lines)",
    )
    written = amplified_test(TESTS, d)
    assert not isinstance(written, str), written
    module = amplified_module(TESTS, [(["TestScan", "test_lines"], written)])
    ast.parse(module)
    assert all(line.lstrip().startswith("#") for line in module.splitlines() if "gamma#" in line), (
        module
    )


def test_the_names_the_cut_test_uses_stay_defined() -> None:
    # a Test* name the test reads (a helper class, a client) and a base defined in the
    # module that has tests of its own: both stay, the base without its tests
    source = """'Checks of compute.'
from unittest import TestCase
from helpers import TestData, TestOther

LIMIT = 3


class Common(TestCase):
    def prepared(self):
        return TestData(LIMIT)

    def test_common(self):
        assert self.prepared()


class TestOne(Common):
    def test_one(self):
        value = compute(self.prepared())
        assert value
"""
    d = _difference("tests/test_x.py::TestOne::test_one", 18, "pkg.compute", head="4", parent="3")
    written = amplified_test(source, d)
    assert not isinstance(written, str), written
    module = amplified_module(
        source, [(["TestOne", "test_one"], written)], ("Common::test_common", "TestOne::test_one")
    )
    tree = ast.parse(module)
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"Common", "TestOne"} <= defined, module
    assert "def test_common" not in module and "def prepared" in module
    assert "TestData" in module and "TestOther" not in module
    assert "LIMIT = 3" in module
    assert ast.get_docstring(tree) == "Checks of compute."  # still the module's docstring


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("from .missing import x\n\ndef test_a():\n    pass\n", "ImportError: attempted relative"),
        ("def test_a(:\n    pass\n", "SyntaxError"),
        ("import no_such_module_here\n\ndef test_a():\n    pass\n", "ModuleNotFoundError"),
        ("\ndef test_a():\n    pass\n  x = 1\n", "IndentationError"),
    ],
)
def test_a_file_that_does_not_load_names_its_error(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "test_broken.py").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "--verbosity=-1", "test_broken.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert collect_error(done.stdout).startswith(reason), done.stdout
