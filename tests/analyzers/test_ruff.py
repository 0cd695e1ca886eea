"""ruff on the change: files the checkout holds are checked in place by one process, the
others from their head content on stdin; both read the repository's own configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.analyzers.ruff import run_ruff
from bot.analyzers.running import Target, on_disk
from bot.hosts.git.source import GitSource
from tests.conftest import GitRepo

BEFORE = "def f():\n    return 1\n"
AFTER = (
    "import os\n\n\ndef f():\n    try:\n        return 1\n    except Exception:\n"
    '        raise ValueError("x")\n\n\ndef g():\n    return "{}".format(2)\n'
)


def _repo(tmp_path: Path) -> GitRepo:
    """Two configurations: the root selects F and B, ``sub/`` selects UP."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("ruff.toml", '[lint]\nselect = ["F", "B"]\n')
    repo.write("sub/ruff.toml", '[lint]\nselect = ["UP"]\n')
    for name in ("a.py", "sub/b.py", *(f"pkg/m{i}.py" for i in range(5))):
        repo.write(name, BEFORE)
    repo.commit("base")
    for name in ("a.py", "sub/b.py", *(f"pkg/m{i}.py" for i in range(5))):
        repo.write(name, AFTER)
    repo.commit("change")
    return repo


def _findings(repo: GitRepo, cwd: Path) -> list[tuple[str, int, str | None]]:
    source = GitSource(repo.path)
    change = source.fetch("HEAD")
    tree = source.tree(change)
    assert tree is not None
    return [(c.path, c.line, c.rule) for c in run_ruff(change.files, tree, cwd)]


def test_in_place_and_on_stdin_find_the_same_with_each_files_configuration(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    in_place = _findings(repo, repo.path)
    # a checkout whose files differ from the head: every file goes on stdin, same configs
    other = tmp_path / "other"
    shutil.copytree(repo.path, other)
    for path in [other / "a.py", other / "sub/b.py", *(other / "pkg").glob("*.py")]:
        path.write_text("# edited in the work tree\n" + path.read_text())
    assert not on_disk(other, Target("a.py", AFTER))
    assert on_disk(repo.path, Target("a.py", AFTER))
    piped = _findings(repo, other)
    assert in_place == piped
    assert ("a.py", 1, "F401") in in_place and ("a.py", 8, "B904") in in_place
    assert ("sub/b.py", 12, "UP032") in in_place
    assert not any(rule == "UP032" for path, _, rule in in_place if path == "a.py")
    assert len({path for path, _, _ in in_place}) == 7  # every changed file


def test_a_dirty_checkout_is_checked_from_the_change_not_the_work_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo.path / "a.py").write_text(BEFORE)  # the work tree lost the change's findings
    found = _findings(repo, repo.path)
    assert ("a.py", 1, "F401") in found and ("a.py", 8, "B904") in found
    assert (repo.path / "a.py").read_text() == BEFORE, "the work tree is never written"


def test_a_symlink_in_the_checkout_is_not_checked_in_place(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text(AFTER)
    (tmp_path / "link.py").symlink_to(target)
    assert not on_disk(tmp_path, Target("link.py", AFTER))
    assert on_disk(tmp_path, Target("real.py", AFTER))
