"""Files a call writes are part of its outcome (issue 35, ``bot/testgen/scratch.py``). The
side-runner's audit hook stops a call that writes a file, so a changed config writer or
SQLite store was never compared. A call refused for writing files is probed again with its
current directory a fresh scratch directory, where its writes are allowed (anything
outside stays refused), path-like parameters are given names there, and what the
directory holds after the call (names, texts, SQLite tables) is compared; the written test
runs in ``tmp_path``. A real sample project (a git repository in tmp, its own virtualenv,
real pytest): a release whose config writer writes another text and whose store adds an
SQLite table is caught; a writer rewritten alike and one that stamps the time claim
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.testgen import scratch
from bot.testgen.differential import side_runner
from tests.testgen.sample import caught, sample_testgen

STORE = '''import json
import sqlite3
import time


def save_settings(settings, path="settings.json"):
    """Write the settings as JSON; return how many were written."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle)
    return len(settings)


def export_rows(rows, output):
    """Write one line per row."""
    with open(output, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(",".join(str(v) for v in row) + "\\n")
    return output


def stamp(name, dest):
    with open(dest, "w", encoding="utf-8") as handle:
        handle.write("%s %f\\n" % (name, time.time()))


class Store:
    def __init__(self, db_path="store.db"):
        self.db = sqlite3.connect(db_path)
        self.db.execute("CREATE TABLE IF NOT EXISTS items (key TEXT, value TEXT)")

    def put(self, key, value):
        self.db.execute("INSERT INTO items VALUES (?, ?)", (key, value))
        self.db.commit()
        return key
'''
# the release: the settings are written indented and sorted; the store keeps a log of its
# writes in a new table; export_rows is rewritten alike; stamp's format is rewritten alike
STORE_NEW = (
    STORE.replace(
        "json.dump(settings, handle)", "json.dump(settings, handle, indent=2, sort_keys=True)"
    )
    .replace(
        """            handle.write(",".join(str(v) for v in row) + "\\n")""",
        """            line = ",".join(map(str, row))
            handle.write(line + "\\n")""",
    )
    .replace('"%s %f\\n" % (name, time.time())', '"{} {:f}\\n".format(name, time.time())')
    .replace(
        """        self.db.commit()
        return key""",
        """        self.db.execute("CREATE TABLE IF NOT EXISTS log (key TEXT)")
        self.db.execute("INSERT INTO log VALUES (?)", (key,))
        self.db.commit()
        return key""",
    )
)
TESTS = """from depot.store import Store, export_rows, save_settings, stamp


def test_save_settings(tmp_path):
    assert save_settings({"b": 1, "a": [1, 2]}, tmp_path / "s.json") == 2


def test_export_rows(tmp_path):
    export_rows([(1, "x"), (2, "y")], tmp_path / "rows.csv")


def test_stamp(tmp_path):
    stamp("build", tmp_path / "stamp.txt")


def test_store(tmp_path):
    assert Store(str(tmp_path / "s.db")).put("k", "v") == "k"
"""


@pytest.fixture(scope="module")
def depot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("depot"),
        {"depot/__init__.py": "", "depot/store.py": STORE, "tests/test_store.py": TESTS},
        {"depot/store.py": STORE_NEW},
        "settings are written indented; the store logs its writes",
    )


@pytest.mark.slow
def test_a_writer_whose_file_changes_is_caught_in_tmp_path(
    depot: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = depot
    facts = caught(data, "save_settings(")
    assert facts, data["notes"]
    assert all("leaving files ['" in f["head"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_depot_store.py")
    assert "monkeypatch.chdir(tmp_path)" in committed, committed
    assert ".read_text(encoding='utf-8') == '{\\n  " in committed, committed
    assert "/tmp/" not in committed and "nova-scratch" not in committed, committed


@pytest.mark.slow
def test_a_store_that_adds_a_table_is_caught_by_its_tables(
    depot: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = depot
    facts = caught(data, ".put(")
    assert facts, data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_depot_store.py")
    assert "sqlite3.connect(" in committed and "'log': [['key'], 1]" in committed, committed


@pytest.mark.slow
def test_writers_rewritten_alike_or_stamping_the_time_claim_nothing(
    depot: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = depot
    for call in ("export_rows(", "stamp("):
        assert not caught(data, call), (call, data["kept"])


WRITER = """import os
import sqlite3


def save(text, path):
    with open(path, "w") as handle:
        handle.write(text)
    return len(text)


def keep(rows, db="rows.db"):
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (a, b)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.commit()
    con.close()


def everywhere(name):
    with open(os.path.join(os.path.dirname(__file__), name), "w") as handle:
        handle.write("x")
"""


def _probed(tmp_path: Path, functions: list[dict[str, Any]]) -> dict[str, Any]:
    """The side-runner (its copies, as differential.py makes them) run on a module of
    ``WRITER``, from the project's directory."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "writer.py").write_text(WRITER)
    runner = tmp_path / "runner"
    runner.mkdir()
    script = side_runner(runner)
    plan = {"call_seconds": 2.0, "modules": [{"module": "writer", "functions": functions}]}
    (runner / "plan.json").write_text(json.dumps(plan))
    env = {**os.environ, "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [sys.executable, str(script), "plan.json", "out.json"], cwd=runner, env=env, check=True
    )
    data: dict[str, Any] = json.loads((runner / "out.json").read_text())
    return data["modules"]["writer"]["functions"]


def test_a_refused_writer_is_probed_again_in_a_scratch_directory(tmp_path: Path) -> None:
    inputs = [
        {"args": ["'hello'", "'notes.txt'"], "kwargs": {}, "imports": []},
        {"args": ["'hi'", None], "kwargs": {}, "imports": []},  # the tests' tmp_path / "x"
        {"args": ["'out'", repr(str(tmp_path / "outside.txt"))], "kwargs": {}, "imports": []},
    ]
    rows = {"args": ["[(1, 'x'), (2, None)]"], "kwargs": {}, "imports": []}
    found = _probed(
        tmp_path,
        [
            {"qualname": "save", "inputs": inputs},
            {"qualname": "keep", "inputs": [rows]},
            {"qualname": "everywhere", "inputs": [{"args": ["'x.txt'"], "kwargs": {}}]},
        ],
    )
    saved = {tuple(r["args"]): r["outcome"] for r in found["save"]["results"]}
    assert saved[("'hello'", "'notes.txt'")]["files"] == [["notes.txt", {"text": "hello"}]]
    assert saved[("'hi'", "'out.txt'")]["files"] == [["out.txt", {"text": "hi"}]]
    # the path outside the scratch directory: refused, dropped; a scratch name instead
    assert ("'out'", repr(str(tmp_path / "outside.txt"))) not in saved, saved
    assert saved[("'out'", "'out.txt'")]["files"] == [["out.txt", {"text": "out"}]]
    assert all(r["scratch"] for r in found["save"]["results"])
    kept = found["keep"]["results"][0]["outcome"]
    assert kept["files"] == [["rows.db", {"tables": {"t": [["a", "b"], 2]}}]], kept
    assert "writes files" in found["everywhere"]["skipped"]  # beside the module: refused
    # nothing was written outside the scratch directories
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["writer.py"]
    assert not (tmp_path / "outside.txt").exists()
    assert not [p for p in (tmp_path / "runner").iterdir() if p.suffix in (".txt", ".db")]


def test_what_a_directory_holds_is_told_without_this_runs_paths(tmp_path: Path) -> None:
    root = tmp_path / "nova-scratch-abc"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("one\r\ntwo")
    (root / "sub" / "b.bin").write_bytes(b"\x00\xff" * 3)
    (root / "where.txt").write_text(f"written in {root}")
    told = scratch.held(str(root))
    assert [name for name, _ in told] == ["a.txt", "sub", "sub/b.bin", "where.txt"]
    assert told[0][1] == {"text": "one\ntwo"}  # as read_text reads it
    assert told[1][1] == {"dir": True}
    assert told[2][1]["size"] == 6 and len(told[2][1]["sha256"]) == 64
    assert told[3][1] == {}  # it names this run's directory: by its name only


def test_the_written_test_asserts_the_files_in_tmp_path() -> None:
    outcome = {
        "kind": "value",
        "value": "2",
        "files": [["s.json", {"text": '{"a": 1}'}], ["k.db", {"tables": {"t": [["a"], 0]}}]],
    }
    body = scratch.written(["    assert save() == 2"], outcome)
    assert body[0] == "    monkeypatch.chdir(tmp_path)"
    text = "\n".join(body)
    assert "== ['s.json', 'k.db']" in text
    assert "(tmp_path / 's.json').read_text(encoding='utf-8') == '{\"a\": 1}'" in text
    assert "sqlite3.connect(tmp_path / 'k.db')" in text and "{'t': [['a'], 0]}" in text
    assert scratch.written_imports(outcome) == ["import contextlib", "import sqlite3"]
    assert scratch.path_name("db_path") == "data.db" and scratch.path_name("outdir") == "out"


def test_the_tests_paths_are_mined_as_names_in_the_scratch_directory() -> None:
    named = scratch.named_paths({"tests/test_store.py": TESTS}, STORE, "save_settings")
    text = named["tests/test_store.py"]
    assert "save_settings({'b': 1, 'a': [1, 2]}, 'out.txt')" in text, text
    assert "tmp_path / 's.db'" in text  # another name's call is left as it was
    built = scratch.named_paths({"tests/test_store.py": TESTS}, STORE, "Store.put")
    assert "Store('data.db').put('k', 'v')" in built["tests/test_store.py"]
    assert scratch.writes(STORE) and not scratch.writes("def f(path):\n    return open(path)\n")
