"""A project whose tests live inside its package and are named ``*_test.py``, with no
pytest configuration (``pkg/tests/export_test.py``, unittest style), and whose change sits
below a class nested in another (``Export.image.to_drive``). Before, Nova found no test
framework at all (it looked only for ``test*.py``) and, once it did, wrote
``from pkg.batch import image`` for the nested class, a test that cannot be collected.
A real sample project: a git repository in tmp, its own virtualenv, real pytest."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.frameworks import detect_framework
from tests.conftest import GitRepo
from tests.testgen.sample import caught, sample_testgen

BATCH = '''def _options(options):
    out = dict(options)
    {line}
    return out


class Export:
    class image:
        def __init__(self):
            raise RuntimeError("a namespace, not a task")

        @staticmethod
        def to_drive(name, options=None):
            """The request that exports an image named ``name`` to Drive."""
            return {{"name": name, "options": _options(options or {{}})}}
'''

OLD = 'out.pop("scale", None)'
NEW = 'out["scale"] = float(out.get("scale", 1))'

TEST = """import unittest

from pkg.batch import Export


class ExportTest(unittest.TestCase):
    def test_to_drive(self):
        request = Export.image.to_drive("elevation", {"crs": "EPSG:4326"})
        self.assertEqual(request["name"], "elevation")


if __name__ == "__main__":
    unittest.main()
"""


def _base(batch: str) -> dict[str, str]:
    return {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n',  # no pytest settings
        "pkg/__init__.py": "",
        "pkg/batch.py": batch,
        "pkg/tests/__init__.py": "",
        "pkg/tests/export_test.py": TEST,
    }


def test_tests_inside_the_package_named_like_x_test_are_found(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    for path, text in _base(BATCH.format(line=OLD)).items():
        repo.write(path, text)
    repo.write("docs/conf.py", "project = 'pkg'\n")  # not a test file
    repo.write("build/lib/pkg/tests/old_test.py", TEST)  # a build's copy: not the project's
    repo.commit("base")
    fw = detect_framework(repo.path)
    assert fw is not None
    assert fw.name == "unittest"
    assert fw.test_dirs == ("pkg/tests",)
    assert "*_test.py" in fw.name_patterns


def test_a_change_below_a_nested_class_is_caught_in_that_layout(tmp_path: Path) -> None:
    repo, data = sample_testgen(
        tmp_path,
        _base(BATCH.format(line=OLD)),
        {"pkg/batch.py": BATCH.format(line=NEW)},
        "keep the scale of an export as a number",
    )
    assert data["framework"]["test_dirs"] == ["pkg/tests"]
    facts = caught(data, "Export.image.to_drive(")
    assert facts, data["dropped"]
    kept = [k for k in data["kept"] if k["evidence"].get("catches_change")]
    assert all(k["path"].startswith("pkg/tests/") for k in kept)
    text = repo.git("show", f"{data['branch']}:{kept[0]['path']}")
    assert "from pkg.batch import Export" in text
    assert "import image" not in text


def test_a_refactor_below_the_nested_class_claims_nothing(tmp_path: Path) -> None:
    _, data = sample_testgen(
        tmp_path,
        _base(BATCH.format(line=OLD)),
        {"pkg/batch.py": BATCH.format(line='out.pop("scale", None)  # not sent')},
        "a comment",
        exits=(0, 1, 4),
    )
    assert not [k for k in data["kept"] if k["evidence"].get("catches_change")]
