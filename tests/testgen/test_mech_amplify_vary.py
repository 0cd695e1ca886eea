"""Test amplification with input variants, end to end: the project's only test of the
changed method drives it through an environment variable and a helper of the test module
(nothing the differential generator replays), and its input never reaches the changed
branch. A copy of that test with one literal steered by the changed line does; the kept
test is that copy, cut after the differing call, and it catches the change."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen.amplify import _only
from tests.testgen.sample import sample_testgen
from tests.testgen.test_mech_amplify import amplified

READER = """
import os


class Reader:
    def __init__(self):
        self.parts = []

    def feed(self, text):
        self.parts.append(text)

    def words(self):
        sep = os.environ.get("READER_SEP", ",") if os.getpid() else ","  # no input of
        # the differential generator is compared: the machine is read
        out = []
        for part in self.parts:
            out += [w.strip() for w in part.split(sep)]
        return out
"""

# the change: a word that starts with "#" is a comment now
READER_NEW = READER.replace(
    "        return out\n", '        return [w for w in out if not w.startswith("#")]\n'
)

TESTS = """
from reader.core import Reader


def fed(*texts):
    r = Reader()
    for text in texts:
        r.feed(text)
    return r


def test_words_split_on_the_separator(monkeypatch):
    monkeypatch.setenv("READER_SEP", ";")
    r = fed("a;b")
    words = r.words()
    assert len(words) == 2
"""


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("reader"),
        {"reader/__init__.py": "", "reader/core.py": READER, "tests/test_core.py": TESTS},
        {"reader/core.py": READER_NEW},
        "a word starting with # is a comment",
    )
    return data


def test_a_steered_copy_of_the_projects_test_catches_what_the_test_never_reached(
    reader: dict[str, Any],
) -> None:
    facts = amplified(reader, "words")
    assert facts, reader["notes"]
    fact = facts[0]
    # the copy names the project's test it came from and the literal it changed
    origin = "tests/test_core.py::test_words_split_on_the_separator"
    assert str(fact["amplifies"]).startswith(origin)
    assert "#" in str(fact["amplifies"])
    assert "#" in str(fact["parent"]) and fact["head"] != fact["parent"]
    assert any("input variant" in n for n in reader["notes"]), reader["notes"]


def test_the_variants_copy_is_gone_and_the_kept_test_stands_alone(reader: dict[str, Any]) -> None:
    files = {case["path"] for case in reader["kept"]}
    assert not any("test_nova_vary_" in f for f in files), files
    amplified = [
        case
        for case in reader["kept"]
        if case["evidence"].get("catches_change") and "test_nova_amp_" in case["path"]
    ]
    assert amplified, reader["kept"]
    assert all("__v" in case["name"] for case in amplified)


MODULE = """import pytest

X = 1


@pytest.mark.parametrize("a", [1, 2])
def test_a(a):
    assert a


def test_b():
    assert X == 1


class TestC:
    def setup_method(self):
        self.x = 1

    def test_c(self):
        assert self.x

    def test_d(self):
        assert self.x


class TestE:
    def test_e(self):
        assert X
"""


def test_the_variants_copy_keeps_only_the_tests_it_varies() -> None:
    # a big test module's copy stays under the write limit: the other tests are cut,
    # the rest kept byte for byte, and a class left with no test still compiles
    text = _only(MODULE, ["test_b", "TestC.test_d"])
    compile(text, "<copy>", "exec")
    assert "def test_b" in text and "def test_d" in text and "def setup_method" in text
    assert "def test_a" not in text and "parametrize" not in text
    assert "def test_c" not in text and "def test_e" not in text
    assert "class TestE:\n    pass\n" in text
    assert text.startswith("import pytest\n\nX = 1\n")
    assert _only("def test_(:\n", ["test_"]) == "def test_(:\n"  # not Python: left alone
