"""A changed property (or a method that needs no argument) that the tests never read is
read on the instances the tests build of its class: a sort key whose new part shows only
on instances built with that part (a release's build metadata)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen.differential import _on_built
from bot.testgen.inputs import Candidate
from tests.testgen.sample import caught, sample_testgen

RELEASE = """
class Release:
    def __init__(self, text):
        core, _, self.build = text.partition("+")
        self.parts = tuple(int(p) for p in core.split("."))

    def __eq__(self, other):
        return self.parts == other.parts

    @property
    def sort_key(self):
        return self.parts

    def label(self):
        return ".".join(map(str, self.parts))

    def bumped(self, by):
        return Release(".".join(map(str, self.parts[:-1] + (self.parts[-1] + by,))))
"""

RELEASE_NEW = RELEASE.replace(
    "        return self.parts\n", "        return self.parts + (self.build,)\n"
)

TESTS = """
from versions.release import Release


def test_equal():
    assert Release("1.0.0+2") == Release("1.0.0+1")


def test_parts():
    assert Release("2.1.3").parts == (2, 1, 3)
    assert Release("0.9.0+abc").build == "abc"
"""


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("versions"),
        {
            "versions/__init__.py": "",
            "versions/release.py": RELEASE,
            "tests/test_release.py": TESTS,
        },
        {"versions/release.py": RELEASE_NEW},
        "the sort key orders builds too",
    )
    return data


def test_a_property_the_tests_never_read_is_read_on_the_instances_they_build(
    versions: dict[str, Any],
) -> None:
    facts = caught(versions, "sort_key")
    assert facts, versions["notes"]
    # on an instance built as the tests build it, with its build part
    assert any("Release('1.0.0+2')" in f["call"] or "'0.9.0+abc'" in f["call"] for f in facts)


def test_only_members_that_need_no_argument_are_read_on_built_instances() -> None:
    built = [Candidate(("'1.0.0+2'",)), Candidate(("'2.1.3'",)), Candidate(("'2.1.3'",))]
    on = _on_built(RELEASE, "Release.sort_key", built)
    assert [c.ctor for c in on] == [(("'1.0.0+2'",), ()), (("'2.1.3'",), ())]
    assert all(c.args == () and c.receiver == "Release" for c in on)
    assert len(_on_built(RELEASE, "Release.label", built)) == 2
    assert _on_built(RELEASE, "Release.bumped", built) == []  # it needs an argument
