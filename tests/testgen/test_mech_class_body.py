"""Changes in a class's own body (issue 35): an enum that gains a member, a class
attribute that changes. Such lines run once, when the module is imported, so no test
"executes" them while it runs, and the changed-line gate dropped every test of them as
"does not execute any changed line". They now count as run by a test whose body reads the
class (``modstate.class_body_hits``). Also: a value that is an enum member (a ``str``
enum's too) renders as ``Cls.NAME``; its repr ``<Cls.NAME: 'x'>`` made the written module
invalid Python and stopped the whole job. Real sample projects: a git repository in tmp,
its own virtualenv, real pytest."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.matrix import Target
from bot.testgen.modstate import class_body_hits
from tests.testgen.sample import caught, sample_testgen

ENUMS = '''from enum import Enum


class Permission(str, Enum):
    READ = "READ"
    WRITE = "WRITE"
{extra}

class Limits:
    PAGE = {page}

    def pages(self, items):
        """How many pages ``items`` fill."""
        return -(-items // self.PAGE)


def strongest(names):
    """The strongest of the permissions named in ``names``."""
    found = [Permission(n) for n in names]
    return max(found, key=list(Permission).index)
'''

TEST = """from pkg.enums import Limits, Permission, strongest


def test_read():
    assert Permission("READ") is Permission.READ


def test_strongest():
    assert strongest(["READ", "WRITE"]) is Permission.WRITE


def test_pages():
    assert Limits().pages(1) == 1
"""


def _base(extra: str = "", page: int = 50) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/enums.py": ENUMS.format(extra=extra, page=page),
        "tests/test_enums.py": TEST,
    }


def test_a_member_added_to_an_enum_is_caught(tmp_path: Path) -> None:
    repo, data = sample_testgen(
        tmp_path,
        _base(),
        {"pkg/enums.py": ENUMS.format(extra='    ADMIN = "ADMIN"\n', page=50)},
        "an admin permission",
    )
    facts = caught(data, "Permission('ADMIN')") + caught(data, "'ADMIN'")
    assert facts, data["dropped"]
    assert all("is not a valid Permission" in f["parent"] for f in facts)
    kept = next(k for k in data["kept"] if k["evidence"].get("catches_change"))
    assert kept["evidence"]["changed_lines"] == {"pkg/enums.py": [7]}
    text = repo.git("show", f"{data['branch']}:{kept['path']}")
    assert "<Permission" not in text  # the member renders as Python


def test_a_class_attribute_that_changes_is_caught(tmp_path: Path) -> None:
    _, data = sample_testgen(
        tmp_path,
        _base(),
        {"pkg/enums.py": ENUMS.format(extra="", page=20)},
        "smaller pages",
    )
    kept = [k for k in data["kept"] if k["evidence"].get("catches_change")]
    assert kept, data["dropped"]
    assert any("pkg/enums.py" in k["evidence"]["changed_lines"] for k in kept)


def test_members_reordered_claim_nothing(tmp_path: Path) -> None:
    extra = '    ADMIN = "ADMIN"\n'
    base = _base(extra)
    moved = ENUMS.format(extra=extra, page=50).replace(
        '    READ = "READ"\n    WRITE = "WRITE"\n    ADMIN = "ADMIN"\n',
        '    READ = "READ"\n    WRITE = "WRITE"  # the default\n    ADMIN = "ADMIN"\n',
    )
    _, data = sample_testgen(tmp_path, base, {"pkg/enums.py": moved}, "a comment", (0, 1, 4))
    assert not [k for k in data["kept"] if k["evidence"].get("catches_change")]


def test_a_class_body_line_counts_only_for_a_test_that_reads_the_class() -> None:
    source = ENUMS.format(extra='    ADMIN = "ADMIN"\n', page=50)
    target = Target("pkg/enums.py", "Permission", "modified", [7])
    imported = {"pkg/enums.py": set(range(1, 30))}
    reads = "from pkg.enums import Permission\n\n\ndef test_x():\n    Permission('ADMIN')\n"
    other = "from pkg.enums import Limits\n\n\ndef test_x():\n    Limits().pages(3)\n"
    assert class_body_hits(target, imported, source, reads, "test_x") == [7]
    assert class_body_hits(target, imported, source, other, "test_x") == []
    assert class_body_hits(target, {}, source, reads, "test_x") == []  # the import not seen
    method = Target("pkg/enums.py", "Limits", "modified", [14])  # a method's line
    assert class_body_hits(method, imported, source, other, "test_x") == []


REGIONS = '''import enum


class Region(str, enum.Enum):
    """Generated from the API's schema: the regions a machine may run in."""

    EU = "eu-west"
    US = "us-east"
{extra}'''


def test_a_member_added_to_an_enum_no_test_names_is_caught(tmp_path: Path) -> None:
    # no test builds a Region: the changed member's own value is the input
    base = {"pkg/__init__.py": "", "pkg/regions.py": REGIONS.format(extra="")}
    base["tests/test_other.py"] = "def test_nothing():\n    assert True\n"
    _, data = sample_testgen(
        tmp_path,
        base,
        {"pkg/regions.py": REGIONS.format(extra='    ASIA = "ap-south"\n')},
        "a region in Asia",
    )
    facts = caught(data, "Region('ap-south')")
    assert facts, data["dropped"]
    assert "is not a valid Region" in facts[0]["parent"]
