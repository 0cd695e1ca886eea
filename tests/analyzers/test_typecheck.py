"""The differential type check runs the real ty on real git repositories: what a change
newly breaks is found, even in files it did not touch, and nothing that was already there."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.analyzers import typecheck
from bot.analyzers.merge import combine
from bot.analyzers.typecheck import BREAKS, TypeCheck, run_typecheck
from bot.analyzers.typecheck_trees import Diagnostic, new_in_head
from bot.change import Change
from bot.diff.anchor import anchor
from bot.errors import AnalyzerError
from bot.hosts.git.source import GitSource
from tests.conftest import GitRepo

LIB = """\
class Box:
    def __init__(self) -> None:
        self.size = 1


def area(w, h):
    return w * h
"""
CALLER = """\
from pkg.lib import Box, area


def total():
    return area(2, 3)


def size():
    return Box().size
"""


def _project(repo: GitRepo, **files: str) -> str:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/lib.py", LIB)
    repo.write("pkg/use.py", CALLER)
    for name, text in files.items():
        repo.write(name, text)
    return repo.commit("base")


def _check(repo: GitRepo, ref: str = "HEAD", **kw: float) -> tuple[Change, TypeCheck]:
    change = GitSource(repo.path).fetch(ref)
    return change, run_typecheck(change, repo.path, **kw)


def _found(result: TypeCheck) -> list[tuple[str, int | None, str | None]]:
    return [(c.path, c.line, c.rule) for c in result.comments]


def test_a_changed_signature_names_the_unchanged_caller_and_goes_to_the_summary(
    repo: GitRepo,
) -> None:
    _project(repo)
    repo.write("pkg/lib.py", LIB.replace("def area(w, h):", "def area(w, h, depth):"))
    repo.commit("area takes a depth")
    change, result = _check(repo)
    assert _found(result) == [("pkg/use.py", 5, "missing-argument")]
    finding = result.comments[0]
    assert finding.body.startswith(f"{BREAKS}: ")
    assert "`depth`" in finding.body and "`area`" in finding.body
    assert "return area(2, 3)" in finding.body  # the caller's line, quoted
    assert finding.origin == "ty" and finding.severity == "error"
    # the placement path: a file outside the change goes to the summary with its reason
    to_anchor, held = combine(result.comments, [], change.files)
    assert to_anchor == [] and len(held) == 1
    assert held[0].path == "pkg/use.py" and held[0].comment.line == 5
    assert not held[0].placed and "not a file of this change" in (held[0].reason or "")


@pytest.mark.slow  # runs ty twice
def test_a_removed_attribute_used_elsewhere(repo: GitRepo) -> None:
    _project(repo)
    repo.write("pkg/lib.py", LIB.replace("self.size", "self.volume"))
    repo.commit("Box has a volume")
    _, result = _check(repo)
    assert _found(result) == [("pkg/use.py", 9, "missing-attribute")]
    assert "`size`" in result.comments[0].body


@pytest.mark.slow  # runs ty twice
def test_a_deleted_module_breaks_its_importer_even_when_the_review_left_it_out(
    repo: GitRepo,
) -> None:
    _project(repo, **{"pkg/helpers.py": "X = 1\n", "pkg/other.py": "import pkg.helpers\n"})
    repo.git("rm", "-q", "pkg/helpers.py")
    repo.commit("drop helpers")
    change = GitSource(repo.path).fetch("HEAD")
    reviewed = replace(change, files=())  # the review skips deleted files
    result = run_typecheck(reviewed, repo.path)
    assert _found(result) == [("pkg/other.py", 1, "import-not-found")]
    assert "`pkg.helpers`" in result.comments[0].body


@pytest.mark.slow  # runs ty twice
def test_an_error_on_an_added_line_is_placed_inline(repo: GitRepo) -> None:
    _project(repo)
    repo.write("pkg/use.py", CALLER + "\n\ndef more():\n    return area(1)\n")
    repo.commit("more")
    change, result = _check(repo)
    assert _found(result) == [("pkg/use.py", 13, "missing-argument")]
    finding = result.comments[0]
    assert not finding.body.startswith(BREAKS) and finding.code == "    return area(1)"
    to_anchor, held = combine(result.comments, [], change.files)
    assert held == []
    [placed] = anchor(to_anchor, change.files)
    assert placed.placed and (placed.path, placed.line) == ("pkg/use.py", 13)


NOISY = """\
import yaml_not_installed
from pkg.lib import area


def legacy(x):
    x.whatever.goes()
    area(1)
    return undefined_name + len(1, 2)
"""


@pytest.mark.slow  # runs ty twice
def test_errors_that_were_already_there_are_not_reported_when_lines_move(
    repo: GitRepo,
) -> None:
    _project(repo, **{"pkg/legacy.py": NOISY})
    # lines above the old errors push them down; the file is also renamed
    repo.git("mv", "pkg/legacy.py", "pkg/old.py")
    repo.write("pkg/old.py", '"""Moved."""\n\nCONSTANT = 3\n\n' + NOISY)
    repo.write("pkg/use.py", "# a comment\n" + CALLER)
    repo.commit("move things")
    _, result = _check(repo)
    assert result.comments == []
    assert result.status.startswith("ty: 0 new type errors")


@pytest.mark.slow  # runs ty twice
def test_an_old_error_on_an_edited_line_is_not_new(repo: GitRepo) -> None:
    _project(repo, **{"pkg/legacy.py": NOISY})
    repo.write("pkg/legacy.py", NOISY.replace("    area(1)\n", "    area(1)  # why?\n"))
    repo.commit("comment")
    _, result = _check(repo)
    assert result.comments == []


@pytest.mark.slow  # runs ty twice
def test_a_noisy_untyped_project_gives_no_new_findings(repo: GitRepo) -> None:
    """Dynamic code full of what a strict checker dislikes; the change adds more of the
    same kind of code without breaking anything."""
    noisy = {
        f"app/mod{i}.py": (
            "import json, os\n\n\nclass Thing:\n    def __getattr__(self, name):\n"
            "        return name\n\n\ndef handle(req, **kw):\n"
            "    data = json.loads(req.body)\n    data.missing.more = 1\n"
            f"    return Thing().anything_{i} + os.environ.get('X', 0) + kw['k']\n"
        )
        for i in range(6)
    }
    noisy["app/__init__.py"] = ""
    noisy["app/broken.py"] = "from app.mod0 import nothing_here\nnothing_here(1, 2, 3)\n"
    _project(repo, **noisy)
    repo.write("app/mod0.py", noisy["app/mod0.py"] + "\n\ndef extra(a, b=2):\n    return a\n")
    repo.write("app/mod1.py", "from app.mod0 import extra\n" + noisy["app/mod1.py"])
    repo.write("app/mod1.py", repo.path.joinpath("app/mod1.py").read_text() + "extra(1)\n")
    repo.commit("an extra helper")
    _, result = _check(repo)
    assert result.comments == [] and result.notes == []


@pytest.mark.slow  # runs ty twice
def test_the_base_configuration_checks_both_revisions(repo: GitRepo) -> None:
    """A change cannot hide what it breaks by excluding the caller in its own config."""
    _project(repo, **{"pyproject.toml": '[project]\nname = "p"\nrequires-python = ">=3.11"\n'})
    square = LIB.replace("def area(w, h):\n    return w * h", "def area(w):\n    return w * w")
    repo.write("pkg/lib.py", square)
    repo.write(
        "pyproject.toml",
        '[project]\nname = "p"\nrequires-python = ">=3.11"\n\n'
        '[tool.ty.src]\nexclude = ["pkg/use.py"]\n',
    )
    repo.commit("area of a square")
    _, result = _check(repo)
    assert _found(result) == [("pkg/use.py", 5, "too-many-positional-arguments")]


@pytest.mark.slow  # runs ty twice
def test_the_index_is_the_head_of_a_staged_change(repo: GitRepo) -> None:
    _project(repo)
    repo.write("pkg/lib.py", LIB.replace("def area(w, h):", "def area(*, w, h):"))
    repo.git("add", "pkg/lib.py")
    repo.write("pkg/lib.py", LIB)  # the work tree went back: only the index counts
    change, result = _check(repo, ":staged")
    assert change.head_ref == ":staged"
    assert {(path, line) for path, line, _ in _found(result)} == {("pkg/use.py", 5)}
    assert {rule for _, _, rule in _found(result)} >= {"too-many-positional-arguments"}
    assert repo.git("diff", "--cached", "--name-only").strip() == "pkg/lib.py"


@pytest.mark.slow  # runs ty twice
def test_a_new_import_of_a_package_not_installed_is_a_note_not_a_finding(
    repo: GitRepo,
) -> None:
    _project(repo)
    repo.write("pkg/new.py", "import surely_not_installed_pkg\nimport pkg.gone_module\n")
    repo.commit("imports")
    _, result = _check(repo)
    assert _found(result) == [("pkg/new.py", 2, "import-not-found")]  # the project's own
    assert len(result.notes) == 1 and "surely_not_installed_pkg" in result.notes[0]


def test_a_change_without_python_does_not_run(repo: GitRepo) -> None:
    _project(repo)
    repo.write("README.md", "hello\n")
    repo.commit("docs")
    _, result = _check(repo)
    assert result.comments == [] and result.status == "ty: no Python file changed"


@pytest.mark.slow  # runs ty twice
def test_why_it_did_not_run_is_said(repo: GitRepo, tmp_path: Path) -> None:
    _project(repo)
    repo.write("pkg/lib.py", LIB + "\n")
    repo.commit("touch")
    change = GitSource(repo.path).fetch("HEAD")
    with pytest.raises(AnalyzerError, match="not in the checkout"):
        run_typecheck(replace(change, base_ref="1" * 40), repo.path)
    with pytest.raises(AnalyzerError, match="without its revisions"):
        run_typecheck(replace(change, source="stdin"), repo.path)
    with pytest.raises(AnalyzerError, match="budget"):
        run_typecheck(change, repo.path, budget=0)
    with pytest.raises(AnalyzerError, match="could not start"):
        run_typecheck(change, repo.path, binary=str(tmp_path / "no-ty"))


@pytest.mark.slow  # runs ty twice
def test_a_rule_this_ty_does_not_know_stops_the_check(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rules are renamed between ty releases: checking less without saying so is worse."""
    _project(repo)
    repo.write("pkg/lib.py", LIB + "\n")
    repo.commit("touch")
    monkeypatch.setitem(typecheck.RULES, "a-rule-renamed-away", "error")
    with pytest.raises(AnalyzerError, match="a-rule-renamed-away"):
        _check(repo)


@pytest.mark.slow  # runs ty twice
def test_a_change_that_breaks_many_callers_lists_the_first_and_says_how_many(
    repo: GitRepo,
) -> None:
    calls = "".join(f"area({i}, 2)\n" for i in range(typecheck.MAX_FINDINGS + 10))
    _project(repo, **{"pkg/many.py": "from pkg.lib import area\n" + calls})
    repo.write("pkg/lib.py", LIB.replace("def area(w, h):", "def area(w, h, d):"))
    repo.commit("3d")
    _, result = _check(repo)
    assert len(result.comments) == typecheck.MAX_FINDINGS
    assert result.comments[0].line == 2  # in file and line order
    [note] = result.notes
    assert note == "ty: the change breaks 61 places; the first 50 are listed"


def test_matching_uses_each_old_error_once_and_never_the_line_number() -> None:
    old = [Diagnostic("a.py", 3, "missing-argument", "m", "f()")] * 2
    moved = [Diagnostic("b.py", 30, "missing-argument", "m", "f()")] * 3
    assert new_in_head(old, moved, {"a.py": "b.py"}) == moved[:1]
    edited = [Diagnostic("a.py", 3, "missing-argument", "m", "f()  # edited")]
    assert new_in_head(old, edited, {}) == []
    other = [Diagnostic("a.py", 3, "missing-argument", "another message", "f()")]
    assert new_in_head(old, other, {}) == other


def test_nova_review_names_the_broken_caller_with_no_model(repo: GitRepo) -> None:
    """The whole review, no model: a signature changed without its unchanged caller gives a
    finding in the summary that names the caller's path and line."""
    from tests.analyzers.test_builtin import review

    _project(repo)
    repo.write("pkg/lib.py", LIB.replace("def area(w, h):", "def area(w, h, depth):"))
    repo.commit("area takes a depth")
    data = review(repo)
    assert data["comments"] == []
    [held] = [u for u in data["unplaced"] if u["path"] == "pkg/use.py"]
    assert held["line"] == 5 and held["body"].startswith(BREAKS)
    assert "not a file of this change" in held["reason"]
    assert data["verdict"]["origins"] == {"typecheck": 1}
