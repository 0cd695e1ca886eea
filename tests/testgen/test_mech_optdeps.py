"""A changed module imported without an optional library (issue 35, ``optdeps``). The
release makes a third-party import optional (``try: import fancylib`` / ``except
ImportError``): the module now works without it. The side-runner's environment has the
library, so every call agrees; one real ``nova testgen`` run blocks it
(``sys.modules['fancylib'] = None``) on both sides and keeps a test that imports the module
afresh without it, which fails on the parent for a behaviour reason and leaves the
project's own tests undisturbed in one session. A change that keeps the optional import's
handling gets no claim."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.testgen.gates import names_missing
from bot.testgen.optdeps import candidates, differences
from bot.testgen.probe_optdeps import observe
from tests.testgen.sample import caught, sample_testgen

LIBRARY = """def bold(text):
    return "**" + text + "**"
"""
REQUIRED = '''import fancylib


def render(text):
    """``text`` in bold."""
    return fancylib.bold(text)
'''
OPTIONAL = '''try:
    import fancylib
except ImportError:  # the extra is not installed: plain text
    fancylib = None


def render(text):
    """``text`` in bold (plain without fancylib)."""
    if fancylib is None:
        return text
    return fancylib.bold(text)
'''
TESTS = """import shapes.render
from shapes.render import render


def test_render():
    assert render("a") == "**a**"


def test_same_module():
    assert shapes.render.render is render
"""


def _base(source: str) -> dict[str, str]:
    return {
        "fancylib/__init__.py": LIBRARY,  # a library beside the project, not its package
        "shapes/__init__.py": "",
        "shapes/render.py": source,
        "tests/test_render.py": TESTS,
    }


def _pytest(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:randomly", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_module_that_now_imports_without_the_library_is_caught(tmp_path: Path) -> None:
    repo, data = sample_testgen(
        tmp_path, _base(REQUIRED), {"shapes/render.py": OPTIONAL}, "render: fancylib optional"
    )
    facts = caught(data, "_imported_without(")
    assert facts, data["notes"]
    assert facts[0]["head"] == "imported" and facts[0]["parent"] == "needs fancylib", facts
    kept = [c for c in data["kept"] if c["path"].endswith("test_nova_optional_imports.py")]
    assert kept and not kept[0]["evidence"]["new_name"], kept
    assert "needs fancylib" in kept[0]["evidence"]["parent_failure"]
    # with the project's tests in one session, before and after it: all pass, again
    written = kept[0]["path"]
    (repo.path / written).write_text(repo.git("show", f"{data['branch']}:{written}"))
    for order in (["tests/test_render.py", written], [written, "tests/test_render.py"]):
        run = _pytest(repo.path, *order)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "3 passed" in run.stdout, run.stdout


def test_a_change_that_keeps_the_optional_import_claims_nothing(tmp_path: Path) -> None:
    reworded = OPTIONAL.replace("    fancylib = None\n", "    fancylib = None  # plain\n")
    reworded = reworded.replace("        return text\n", "        return str(text)\n")
    assert reworded != OPTIONAL
    _repo, data = sample_testgen(
        tmp_path,
        _base(OPTIONAL),
        {"shapes/render.py": reworded},
        "render: reword",
        exits=(0, 1, 4),
    )
    assert caught(data, "_imported_without(") == []
    assert not any(c["evidence"].get("catches_change") for c in data["kept"])
    assert any("optdeps: blocked fancylib" in n and "alike" in n for n in data["notes"]), data[
        "notes"
    ]


def test_candidates_optional_first_and_the_blocked_import_is_no_missing_name() -> None:
    head = "import numpy\ntry:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
    head += "import os\nfrom . import sibling\nfrom .x import y\nimport shapes.other\n"
    parent = "import numpy\nimport toml\n"
    found = candidates([(parent, head, [2, 3, 4, 5, 7, 8])], {"shapes"}, {"numpy"})
    # guarded first, then an import the change removed, then an extra; never os or shapes
    assert found == ["yaml", "toml", "numpy"]
    assert candidates([(head, head, [])], {"shapes"}, set()) == ["yaml"]
    blocked = "ModuleNotFoundError: import of progressbar halted; None in sys.modules"
    assert not names_missing(blocked)
    assert names_missing("ImportError: cannot import name 'new_thing' from 'shapes'")
    assert names_missing(f"{blocked}; ModuleNotFoundError: No module named 'shapes.new'")


def test_only_steady_outcomes_of_modules_that_import_differ() -> None:
    def run(outcome: str, plain: str = "imported") -> dict[str, dict[str, str]]:
        return {"m": {"": plain, "x": outcome}}

    needs, ok = run("needs x"), run("imported")
    assert differences(["m"], ["x"], [ok, ok], [needs, needs]) == [
        ("m", "x", "imported", "needs x")
    ]
    assert differences(["m"], ["x"], [ok, needs], [needs, needs]) == []  # head unsteady
    assert differences(["m"], ["x"], [needs, needs], [ok, ok]) == []  # now a dependency
    failing = [run("RuntimeError: install the x extra")] * 2
    assert differences(["m"], ["x"], failing, [needs, needs]) == [
        ("m", "x", "RuntimeError: install the x extra", "needs x")
    ]  # a clearer error without it is a behaviour
    assert differences(["m"], ["x"], [ok, ok], [run("", "ImportError: gone")] * 2) == []
    stamped = [run("RuntimeError: lib 1.3 needs x")] * 2, [run("RuntimeError: lib 1.2 needs x")] * 2
    assert differences(["m"], ["x"], *stamped) == []  # a version number only


def test_a_module_that_exits_without_the_library_is_an_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fancylib").mkdir()
    (tmp_path / "fancylib" / "__init__.py").write_text(LIBRARY)
    (tmp_path / "clipkg").mkdir()
    (tmp_path / "clipkg" / "__init__.py").write_text("")
    (tmp_path / "clipkg" / "cli.py").write_text(
        "import sys\ntry:\n    import fancylib\nexcept ImportError:\n"
        "    sys.stderr.write('pip install clipkg[cli]')\n    sys.exit(1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    seen = observe({"modules": ["clipkg.cli"], "packages": ["clipkg"], "blocked": ["fancylib"]})
    assert seen == {"clipkg.cli": {"": "imported", "fancylib": "SystemExit: 1"}}
    # the project's modules imported meanwhile are gone again; the library stays loaded
    assert not any(m.startswith("clipkg") for m in set(sys.modules) - before)
    assert "fancylib" in sys.modules
    del sys.modules["fancylib"]  # this test's own library, not left for the others


def test_a_package_with_no_function_is_imported_on_its_own(tmp_path: Path) -> None:
    # no function to probe: optdeps runs the side-runner itself, on both sides
    required = 'import fancylib\n\nBOLD = fancylib.bold("x")\n'
    optional = (
        "try:\n    import fancylib\nexcept ImportError:\n    fancylib = None\n\n"
        'BOLD = fancylib.bold("x") if fancylib else "x"\n'
    )
    base = {
        "fancylib/__init__.py": LIBRARY,
        "marks/__init__.py": required,
        "tests/test_marks.py": (
            'from marks import BOLD\n\n\ndef test_bold():\n    assert BOLD == "**x**"\n'
        ),
    }
    _repo, data = sample_testgen(tmp_path, base, {"marks/__init__.py": optional}, "marks: optional")
    facts = caught(data, "_imported_without(monkeypatch, 'marks'")
    assert facts, data["notes"]
    assert facts[0]["parent"] == "needs fancylib", facts
    assert any("no changed public top-level Python function" in n for n in data["notes"])
