"""`nova testgen` with no model (issue 35) on a class named like its package, in lower case
(`from cronny.cronny import cronny`): the written test must not shadow the package with
the class (an exception named `cronny.cronny.BadCron` would fail with "type object has no
attribute") nor the class with its instance (`cronny = cronny(...)`: UnboundLocalError).
One real sample project (git in tmp, its own virtualenv, real pytest), run once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.testgen.render import _unshadowed
from tests.conftest import GitRepo
from tests.testgen.sample import caught, sample_testgen

CRONNY = """class CronnyError(ValueError):
    pass


class BadCron(CronnyError):
    pass


class NotAlpha(CronnyError):
    pass


class cronny:
    def __init__(self, expr):
        self.expr = expr

    @classmethod
    def expand(cls, expr):
        if expr.startswith("@"):
            raise NotAlpha(expr)
        return expr.split()

    def count(self, field):
        return self.expr.split().count(field)
"""
CRONNY_NEW = CRONNY.replace(
    'if expr.startswith("@"):\n            raise NotAlpha(expr)',
    'if "?" in expr:\n            raise BadCron(expr)',
).replace(
    "return self.expr.split().count(field)",
    "return self.expr.split().count(field) + (field == '?')",
)
TESTS = """from cronny.cronny import cronny


def test_expand():
    assert cronny.expand("1 2 3") == ["1", "2", "3"]


def test_count():
    cron = cronny("1 2 3")
    assert cron.count("1") == 1
"""


def test_a_module_import_the_class_would_shadow_is_named_through_sys_modules() -> None:
    plain, aliases, body = _unshadowed(
        ["import cronny.cronny", "import decimal"],
        ["    with pytest.raises(cronny.cronny.BadCron):", "        cronny.expand('?')"],
        {"cronny"},
    )
    assert plain == ["import cronny.cronny", "import decimal", "import sys"]
    assert aliases == ["_cronny_cronny = sys.modules['cronny.cronny']"]
    assert body == [
        "    with pytest.raises(_cronny_cronny.BadCron):",
        "        cronny.expand('?')",  # the class itself is untouched
    ]
    assert _unshadowed(["import other.mod"], ["other.mod.X"], {"cronny"}) == (
        ["import other.mod"],
        [],
        ["other.mod.X"],
    )


@pytest.fixture(scope="module")
def cronny(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    # the package binds its submodule's name to the class (`import cronny.cronny as m`
    # then gives the class, not the module)
    init = "from .cronny import cronny, BadCron, NotAlpha  # noqa\n"
    return sample_testgen(
        tmp_path_factory.mktemp("cronny"),
        {"cronny/__init__.py": init, "cronny/cronny.py": CRONNY, "tests/test_cronny.py": TESTS},
        {"cronny/cronny.py": CRONNY_NEW},
        "a question mark is a bad expression, and a field",
    )


def test_a_changed_exception_of_a_class_named_like_its_package_is_caught(
    cronny: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = cronny
    facts = caught(data, "cronny.expand(")
    assert facts, json.dumps([data["notes"], data["dropped"]], indent=1)[:4000]
    assert all(f["head"].startswith("raises cronny.cronny.BadCron(") for f in facts)
    written = repo.git("show", f"{data['branch']}:tests/test_nova_cronny_cronny.py")
    assert "_cronny_cronny = sys.modules['cronny.cronny']" in written
    assert "pytest.raises(_cronny_cronny.BadCron" in written


def test_an_instance_of_a_lower_case_class_does_not_shadow_it(
    cronny: tuple[GitRepo, dict[str, Any]],
) -> None:
    _repo, data = cronny
    facts = caught(data, ".count(")
    assert facts, json.dumps([data["notes"], data["dropped"]], indent=1)[:4000]
    assert all(f["call"].startswith("cronny_ = cronny(") for f in facts)
    assert not [d for d in data["dropped"] if "UnboundLocalError" in d["reason"]]
