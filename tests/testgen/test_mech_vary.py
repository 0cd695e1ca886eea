"""Input variants run for real: a project whose only test never reaches the changed
branch (a value that is only a comment is now empty: no test value holds a ``#``). The
copies ``amplify_inputs`` writes of that test, with one literal steered by the changed
lines, are run with pytest on the head and on the parent: some copy's call returns
differently on the two sides, while the original test's calls return the same."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

from bot.testgen.amplify_inputs import Steer, add_variants, steer_from_change
from tests.conftest import GitRepo
from tests.testgen.sample import PYPROJECT

CONF = '''
def parse(line):
    """(key, value) of a ``key = value`` line."""
    key, _, value = line.partition("=")
    return key.strip(), value.strip()
'''

CONF_NEW = CONF.replace(
    "    return key.strip(), value.strip()\n",
    "    value = value.strip()\n"
    '    if value.startswith("#"):  # a value that is only a comment\n'
    '        value = ""\n'
    "    return key.strip(), value\n",
)

TESTS = """
from conf.lines import parse


class Lines:
    def __init__(self):
        self.seen = []

    def feed(self, text):
        self.seen.append(parse(text))
        return self


def test_parse():
    lines = Lines().feed("name=demo").feed("size = 3")
    assert lines.seen[0][0] == "name"
"""

# records what each call of conf.lines.parse returns, per test (stdlib only)
RECORDER = """
import json, os
import conf.lines

_parse, SEEN = conf.lines.parse, []

def parse(*args):
    result = _parse(*args)
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0].rpartition("::")[2]
    SEEN.append([test, repr(args), repr(result)])
    return result

conf.lines.parse = parse

def pytest_unconfigure(config):
    with open(os.environ["RECORD_TO"], "w") as out:
        json.dump(SEEN, out)
"""


def _changed_lines(old: str, new: str) -> set[int]:
    matcher = difflib.SequenceMatcher(None, old.split("\n"), new.split("\n"), autojunk=False)
    return {
        n
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
        for n in range(j1 + 1, j2 + 1)
    }


def _observe(tree: Path, module: str, record: Path) -> dict[str, list[str]]:
    """Run the tests of ``tree`` with ``module`` as its test file; what parse returned,
    per test."""
    (tree / "tests" / "test_lines.py").write_text(module, encoding="utf-8")
    (tree / "nova_recorder.py").write_text(RECORDER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "nova_recorder", "-p", "no:cacheprovider"],
        cwd=tree,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree), "RECORD_TO": str(record)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # a copy's assert may fail
    seen: dict[str, list[str]] = {}
    for test, args, result in json.loads(record.read_text()):
        seen.setdefault(test, []).append(f"parse{args} -> {result}")
    return seen


def test_a_steered_copy_of_a_test_reaches_the_changed_branch(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    for path, text in {
        "pyproject.toml": PYPROJECT,
        "conf/__init__.py": "",
        "conf/lines.py": CONF,
        "tests/test_lines.py": TESTS,
    }.items():
        repo.write(path, text)
    repo.commit("base")
    repo.write("conf/lines.py", CONF_NEW)
    repo.commit("a value that is only a comment is empty")
    parent = tmp_path / "parent"
    repo.git("worktree", "add", "-q", "--detach", str(parent), "HEAD~1")

    steer = steer_from_change(CONF_NEW, CONF, _changed_lines(CONF, CONF_NEW))
    module, variants = add_variants(TESTS, "test_parse", steer, limit=12)
    assert module.startswith(TESTS) and len(variants) >= 4
    # the same test's copies with generic values only (one character more or less, empty)
    module, generic = add_variants(module, "test_parse", Steer(), limit=12)

    head_seen = _observe(repo.path, module, tmp_path / "head.json")
    parent_seen = _observe(parent, module, tmp_path / "parent.json")
    assert head_seen["test_parse"] == parent_seen["test_parse"]  # the original: no difference
    differs = [v for v in variants if head_seen[v.name] != parent_seen[v.name]]
    assert differs, [v.description for v in variants]
    # a value with the changed lines' "#" right after the "=": a comment-only value
    first = differs[0]
    assert "#" in first.description
    assert any("'')" in call for call in head_seen[first.name])
    assert not any("'')" in call for call in parent_seen[first.name])
    assert generic and all(head_seen[v.name] == parent_seen[v.name] for v in generic)
