"""A warning a library raises for the project's call is the project's behaviour (issue 35,
``bot/testgen/warned.py``; set 15 D, pysnmpcrypto). A release stops reaching a deprecated
name of a library (a module attribute that warns with the library's own category when it is
read, every time): the value is the same, only the warning tells. Nova missed it because
the inputs never reached the call: the tests set them up in ``setUp`` for Python 2 and 3
(``if sys.version_info < (3, 0): ... else: ...``, then ``self.text += pad``), so every name
was bound twice and dropped (``bot/testgen/pyversion.py``). A real sample project (a git
repository in tmp, its own virtualenv with the library installed in its site-packages, real
pytest): the deprecated read is caught with the call's value pinned, in whichever order
pytest runs the written test after the project's own (the library's warning registry
already holds the location); a warning the library gives once per process, one the call
keeps and one given when a module is imported claim nothing."""

from __future__ import annotations

import ast
import json
import subprocess
from typing import Any

import pytest

from bot.testgen.inputs import inputs_from_tests
from bot.testgen.pyversion import dead_branches, grown, runs_here
from tests.conftest import GitRepo
from tests.testgen.sample import PYPROJECT, caught
from tests.testgen.test_differential import project_venv
from tests.testgen.test_testgen import nova_testgen

# the library, installed in the project's virtualenv (not in the repository)
LIB_UTILS = '''import warnings


class LibDeprecationWarning(UserWarning):
    """The library's own category (not a DeprecationWarning: shown by default)."""


_ONCE = []


def warn_once(text):
    if not _ONCE:  # its own registry: only the first call of a process warns
        _ONCE.append(1)
        warnings.warn(text, LibDeprecationWarning, stacklevel=3)
'''
LIB_CIPHERS = """import warnings

from xorlib.utils import LibDeprecationWarning, warn_once


class Triple:
    def __init__(self, key):
        self.key = bytes(key)

    def apply(self, data):
        return bytes(b ^ self.key[i % len(self.key)] for i, b in enumerate(data))


def legacy_pad(data):
    warn_once("legacy_pad() is deprecated; use pad()")
    return pad(data)


def pad(data):
    return data + b"!" * (-len(data) % 8)


def __getattr__(name):
    if name == "OldTriple":  # a moved name: read, it warns every time
        warnings.warn(
            "OldTriple has moved to xorlib.ciphers.Triple", LibDeprecationWarning, stacklevel=2
        )
        return Triple
    raise AttributeError(name)
"""
DES = '''from xorlib import ciphers


def encrypt(plaintext, key, iv):
    """XOR ``iv + plaintext`` with the key three times over."""
    return ciphers.OldTriple(key * 3).apply(iv + plaintext)


def padded(text):
    return ciphers.legacy_pad(text)


def checksum(data):
    return ciphers.OldTriple(b"k").apply(data)[:2]
'''
DES_NEW = (
    DES.replace("ciphers.OldTriple(key * 3)", "ciphers.Triple(key * 3)")
    .replace("ciphers.legacy_pad(text)", "ciphers.pad(text)")  # a once-a-process warning
    .replace("apply(data)[:2]", "apply(data)[0:2]")  # a refactor that keeps its warning
)
# a module that read the moved name when imported: its import warned, not a call
DEFAULTS = """from xorlib import ciphers

_CIPHER = ciphers.OldTriple(b"d")


def scramble(data):
    return _CIPHER.apply(data)
"""
DEFAULTS_NEW = DEFAULTS.replace("ciphers.OldTriple(", "ciphers.Triple(")
TESTS = """import sys
import unittest

from snmpish import defaults, des


class DesCase(unittest.TestCase):
    def setUp(self):
        if sys.version_info < (3, 0):
            self.plaintext = 'quick brown fox'
            self.key = 'testkey1'
        else:
            self.plaintext = b'quick brown fox'
            self.key = b'testkey1'
        self.plaintext += b'!' * (8 - len(self.plaintext) % 8)
        self.iv = b'01234567'

    def test_encrypt(self):
        self.assertEqual(len(des.encrypt(self.plaintext, self.key, self.iv)), 24)

    def test_padded(self):
        self.assertEqual(len(des.padded(self.plaintext[:5])), 8)

    def test_checksum(self):
        self.assertEqual(len(des.checksum(self.plaintext)), 2)

    def test_scramble(self):
        self.assertEqual(len(defaults.scramble(self.key)), 8)
"""


@pytest.fixture(scope="module")
def snmpish(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("snmpish")
    repo = GitRepo(tmp / "repo")
    base = {
        "pyproject.toml": PYPROJECT,
        "snmpish/__init__.py": "",
        "snmpish/des.py": DES,
        "snmpish/defaults.py": DEFAULTS,
        "tests/__init__.py": "",
        "tests/test_des.py": TESTS,
    }
    for path, text in base.items():
        repo.write(path, text)
    repo.commit("base")
    repo.write("snmpish/des.py", DES_NEW)
    repo.write("snmpish/defaults.py", DEFAULTS_NEW)
    repo.commit("des reads xorlib's Triple, not its deprecated OldTriple")
    (repo.path / ".git" / "info" / "exclude").write_text(".venv/\n")
    project_venv(repo.path / ".venv")
    site = next((repo.path / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "xorlib").mkdir()
    (site / "xorlib" / "__init__.py").write_text("")
    (site / "xorlib" / "utils.py").write_text(LIB_UTILS)
    (site / "xorlib" / "ciphers.py").write_text(LIB_CIPHERS)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VIRTUAL_ENV", raising=False)
        result = nova_testgen(repo, tmp, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return repo, data


@pytest.mark.slow
def test_a_library_warning_the_call_stops_is_caught_in_any_order(
    snmpish: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = snmpish
    facts = [
        f for f in caught(data, "encrypt(") if "no xorlib.utils.LibDeprecationWarning" in f["head"]
    ]
    assert facts, data["notes"]
    assert all("OldTriple has moved" in f["parent"] for f in facts), facts
    # the tests' own input (set up for Python 3, padded): a call that returns, its value pinned
    assert any("b'quick brown fox" in f["call"] and "raises" not in f["head"] for f in facts), facts
    written = "tests/test_nova_snmpish_des.py"
    committed = repo.git("show", f"{data['branch']}:{written}")
    assert "simplefilter('error', xorlib.utils.LibDeprecationWarning)" in committed, committed
    assert "import xorlib.utils" in committed, committed
    # on the parent, after the project's own test warned at the same place (pytest shows a
    # UserWarning once per location): the written test still fails, for the warning
    (repo.path / written).write_text(committed)
    repo.git("checkout", "HEAD~1", "--", "snmpish")
    try:
        ran = subprocess.run(
            [
                str(repo.path / ".venv" / "bin" / "python"),
                "-m",
                "pytest",
                "-q",
                "-rf",
                "-p",
                "no:randomly",
                "-p",
                "no:cacheprovider",
                "tests/test_des.py",
                written,
            ],
            cwd=repo.path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        repo.git("checkout", "HEAD", "--", "snmpish")
        (repo.path / written).unlink()
    assert "LibDeprecationWarning: OldTriple has moved" in ran.stdout, ran.stdout
    assert f"FAILED {written}::test_encrypt" in ran.stdout, ran.stdout
    assert "FAILED tests/test_des.py" not in ran.stdout, ran.stdout


@pytest.mark.slow
def test_once_a_process_kept_or_at_import_library_warnings_claim_nothing(
    snmpish: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = snmpish
    for call in ("padded(", "checksum(", "scramble("):
        assert not caught(data, call), (call, data["kept"])
    said = [n for n in data["notes"] if "warnings differ" in n]
    assert not [n for n in said if "::padded" in n or "::checksum" in n or "::scramble" in n]


def test_a_set_up_for_python_2_and_3_gives_the_inputs_of_this_python() -> None:
    found = inputs_from_tests({"tests/test_des.py": TESTS}, {"encrypt"})
    assert found["encrypt"][0].args == ("b'quick brown fox!'", "b'testkey1'", "b'01234567'")
    # grown in a loop, or by an object (``spec += other``): not read as one value
    looped = TESTS.replace(
        "        self.plaintext += b'!'",
        "        for _ in 'ab':\n            self.plaintext += b'!'",
    )
    found = inputs_from_tests({"tests/test_des.py": looped}, {"encrypt"})
    assert found["encrypt"][0].args[0] == "b'quick brown fox'"
    looped = TESTS.replace(
        "        self.plaintext += b'!'",
        "        async for _ in 'ab':\n            self.plaintext += b'!'",
    )
    found = inputs_from_tests({"tests/test_des.py": looped}, {"encrypt"})
    assert found["encrypt"][0].args[0] == "b'quick brown fox'"
    grown_by_object = TESTS.replace("self.plaintext += b'!'", "self.plaintext += des.Pad(b'!')")
    found = inputs_from_tests({"tests/test_des.py": grown_by_object}, {"encrypt"})
    assert found["encrypt"][0].args[0] == "b'quick brown fox'"


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("sys.version_info < (3, 0)", False),
        ("sys.version_info >= (3,)", True),
        ("sys.version_info[0] == 2", False),
        ("sys.version_info.major > 2", True),
        ("sys.version_info[:2] < (2, 6)", False),
        ("sys.platform == 'win32'", None),  # this machine's, not the version's
        ("sys.version_info < LIMIT", None),  # not a literal
        ("sys.version_info < (3, 0) < x", None),
    ],
)
def test_only_version_checks_against_literals_are_decided(test: str, expected: object) -> None:
    node = ast.parse(test, mode="eval").body
    assert runs_here(node) is expected
    tree = ast.parse(f"if {test}:\n    a = 1\nelse:\n    a = 2\n")
    dead = dead_branches(tree.body)
    if expected is None:
        assert not dead
    else:
        gone = tree.body[0].orelse if expected else tree.body[0].body  # type: ignore[attr-defined]
        assert {id(n) for n in ast.walk(gone[0])} <= dead and id(tree.body[0]) not in dead


def test_a_huge_repetition_in_an_untrusted_test_is_never_evaluated() -> None:
    def sum_of(tail: str) -> ast.BinOp:
        return ast.BinOp(ast.Constant(b"fox"), ast.Add(), ast.parse(tail, mode="eval").body)

    assert ast.unparse(grown(sum_of('b"!" * (8 - len(b"fox") % 8)'))) == "b'fox!!!!!'"
    # 4096 ** 3 bytes would fill Nova's memory: the sum stays as written, unevaluated
    huge = sum_of('b"x" * 4096 * 4096 * 4096')
    assert isinstance(grown(huge), ast.BinOp)
    long_literal = sum_of(repr(b"x" * 3000) + " * 4000")
    assert isinstance(grown(long_literal), ast.BinOp)
