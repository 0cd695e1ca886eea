"""`nova testgen` with no model: the differential generator on a real sample repository
(real git worktrees for the change and its parent, real pytest and coverage subprocesses,
a real virtualenv as the project's interpreter), the limits on generated test runs, and
the pieces: input discovery, value rendering, side-effect detection."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.errors import ConfigError
from bot.sandbox.run import run_sandboxed
from bot.testgen import probe
from bot.testgen.differential import static_side_effect
from bot.testgen.environment import python_environment
from bot.testgen.inputs import inputs_from_doctests, inputs_from_tests
from bot.testgen.render import Example, render_module, tidy
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text, tool_call
from tests.testgen.test_testgen import nova_testgen

OLD = '''import time


def ceil_div(a: int, b: int) -> int:
    """Divide, rounding up.

    >>> ceil_div(7, 2)
    4
    """
    return a // b


def parse_ratio(text: str) -> float:
    if not text:
        return 0.0
    top, _, bottom = text.partition("/")
    return int(top) / int(bottom or 1)


def stamp(label: str) -> str:
    return f"{label}@{time.perf_counter_ns()}"


def save(path: str, text: str) -> int:
    with open(path, "w") as out:
        return out.write(text)


def total(values: list[int]) -> int:
    _log(values)
    return sum(values)


def _log(values: list[int]) -> None:
    with open("calc.log", "a") as out:
        out.write(repr(values))
'''
NEW = (
    OLD.replace("    return a // b\n", "    return -(-a // b)\n")
    .replace("        return 0.0\n", '        raise ValueError("empty ratio")\n')
    .replace("{label}@", "{label.strip()}@")
    .replace("return out.write(text)", 'return out.write(text + "\\n")')
    .replace("    return sum(values)\n", "    return sum(v for v in values)\n")
)
TESTS = """import pytest

from calc.ops import ceil_div, parse_ratio


def test_even():
    assert ceil_div(6, 2) == 3


@pytest.mark.parametrize("text, expected", [("1/2", 0.5), ("3", 3.0)])
def test_ratio(text, expected):
    assert parse_ratio(text) == expected
"""


def project_venv(where: Path) -> Path:
    """A real virtualenv. Nova's own packages (pytest, coverage) are not the system's
    when Nova runs from a virtualenv, so a .pth line lends them to it."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(where)],
        check=True,
    )
    site = next((where / "lib").glob("python3*/site-packages"))
    (site / "nova_test_tools.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin" / "python"


def build_calc_sample(repo: GitRepo) -> GitRepo:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("calc/__init__.py", "")
    repo.write("calc/ops.py", OLD)
    repo.write("tests/test_ops.py", TESTS)
    repo.commit("base")
    repo.write("calc/ops.py", NEW)
    repo.commit("ceil_div rounds up; an empty ratio is an error")
    return repo


@pytest.fixture
def calc(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # the repository's .venv is chosen
    build_calc_sample(repo)
    (repo.path / ".git" / "info" / "exclude").write_text(".venv/\n")
    project_venv(repo.path / ".venv")
    return repo


@pytest.mark.slow
def test_without_a_model_the_changed_behaviour_is_pinned(calc: GitRepo, tmp_path: Path) -> None:
    result = nova_testgen(calc, tmp_path, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    venv_python = str(calc.path.resolve() / ".venv" / "bin" / "python")
    assert data["environment"] == {"python": venv_python, "why": "the repository's .venv/"}
    assert data["stats"]["llm_calls"] == 0
    kept = {c["name"].split("[")[0]: c["evidence"] for c in data["kept"]}  # one per unit
    # the output that changed, and the call that newly raises: both fail on the parent
    assert kept["test_ceil_div_changed"]["fails_on_parent"] is True
    assert kept["test_parse_ratio_now_raises_value_error"]["fails_on_parent"] is True
    assert kept["test_parse_ratio_now_raises_value_error"]["catches_change"] is True
    notes = "\n".join(data["notes"])
    (stamp,) = [n for n in data["notes"] if n.startswith("differential: calc/ops.py::stamp:")]
    # it reads the clock: compared with the clock pinned on both sides, where the
    # changed label.strip() shows (a label with spaces), and its test pins the clock too
    assert ": 0 where the parent differs" not in stamp
    assert stamp.endswith("steady with the clock pinned (compared pinned on both sides)")
    # the writers are probed in a scratch directory (scratch.py), not skipped
    assert "::save skipped" not in notes and "::total skipped" not in notes
    committed = calc.git("show", f"{data['branch']}:tests/test_nova_calc_ops.py")
    compile(committed, "test_nova_calc_ops.py", "exec")
    assert "(7, 2, 4),  # before: returned 3" in committed
    assert (
        "with pytest.raises(ValueError, match='empty ratio'):\n        parse_ratio('')" in committed
    )
    assert "# before this change: returned 0.0" in committed
    # save's file (and value) changed: its test runs in tmp_path; total's log alike
    assert "monkeypatch.chdir(tmp_path)\n    assert save(" in committed, committed
    assert kept["test_save_changed"]["catches_change"] is True
    assert not [c for c in data["kept"] if "total" in c["name"] and c["evidence"]["catches_change"]]
    assert "stamp(" in committed and "with _pinned_clock():" in committed
    assert not (calc.path / "calc.log").exists()
    assert calc.git("status", "--porcelain") == ""


LOOPS = """from calc.ops import ceil_div


def test_loops():
    while ceil_div(7, 2) == 4:
        pass


def test_eats_memory():
    block = bytearray(4 * 2**30)
    assert ceil_div(len(block), 2**30) == 4


def test_fine():
    assert ceil_div(7, 2) == 4
"""


@pytest.mark.slow
def test_a_test_that_loops_or_eats_memory_is_dropped_at_the_limits(
    repo: GitRepo, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    build_calc_sample(repo)
    llm_env.enqueue(
        tool_call("write_test_file", {"path": "tests/test_nova_limits.py", "content": LOOPS}),
        text('{"summary": "limits"}'),
    )
    result = nova_testgen(
        repo,
        tmp_path,
        "-o",
        "json",
        "--runs",
        "1",
        "--test-timeout",
        "2",
        "--test-memory-mb",
        "768",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    reasons = {c["name"]: c["reason"] for c in data["dropped"]}
    assert reasons == {
        "test_loops": "hit the time limit: still running after 2 s (the limit per test)",
        "test_eats_memory": "hit the memory limit: MemoryError under the 768 MiB limit of a "
        "test run",
    }
    assert [c["name"] for c in data["kept"]] == ["test_fine"]


@pytest.mark.slow
def test_the_interpreter_choice_and_its_reasons(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    bare_python = str(bare / "bin" / "python")
    # no pytest or coverage in it: Nova's own runs the tests, one note says how to fix it
    env = python_environment(repo, bare_python, None, None)
    assert env.python == sys.executable and env.why.startswith("Nova's own:")
    assert env.note is not None and f"{bare_python} -m pip install pytest coverage" in env.note
    # the active virtualenv comes before the repository's .venv, which beats PATH
    good = project_venv(tmp_path / "active")
    project_venv(repo / ".venv")
    assert python_environment(repo, None, str(tmp_path / "active"), bare_python).python == str(good)
    env = python_environment(repo, None, None, bare_python)
    assert (env.python, env.why) == (
        str(repo.resolve() / ".venv/bin/python"),
        "the repository's .venv/",
    )
    with pytest.raises(ConfigError, match="not an executable file"):
        python_environment(repo, str(tmp_path / "nothing"), None, None)
    assert python_environment(tmp_path / "empty", None, None, None).why.startswith("Nova's")


@pytest.mark.slow
def test_a_project_that_cannot_be_imported_gets_one_note(repo: GitRepo, tmp_path: Path) -> None:
    build_calc_sample(repo)
    repo.write(
        "calc/__init__.py",
        "import importlib.metadata\n\nVERSION = importlib.metadata.version('calc-not-installed')\n",
    )
    repo.write("calc/more.py", "def twice(x: int) -> int:\n    return 2 * x\n")
    repo.commit("a version from the installed metadata")
    result = nova_testgen(repo, tmp_path, "-o", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 4  # nothing could be generated
    assert data["kept"] == [] and data["dropped"] == []
    about = [n for n in data["notes"] if "cannot be imported" in n]
    assert len(about) == 1 and "PackageNotFoundError" in about[0]
    assert "Install the project in it" in about[0] and "-m pip install -e ." in about[0]


def test_the_help_says_what_no_model_means_for_testgen() -> None:
    from click.testing import CliRunner

    from bot.cli import cli

    out = CliRunner().invoke(cli, ["testgen", "--help"], catch_exceptions=False).output
    flat = " ".join(out.split())
    assert "Unset: the differential generator writes the tests" in flat
    assert "LLM review is off" not in flat
    for review_only in (
        "--fail-on",
        "--diff-style",
        "--token-budget",
        "--analyzers",
        "--extra-instructions",
        "--max-concurrency",
    ):
        assert review_only not in out
    for flag in ("--test-python", "--test-timeout", "--test-memory-mb", "ghostwriter"):
        assert flag in out
    review = CliRunner().invoke(cli, ["review", "--help"], catch_exceptions=False).output
    assert "--fail-on" in review and "--test-python" not in review


# -- the pieces ----------------------------------------------------------------------------


def test_inputs_follow_parametrize_rows_into_the_call() -> None:
    source = """import datetime as dt
import pytest
import shop

@pytest.mark.parametrize("args, expected", [([1, "x"], 1), pytest.param([2, "y"], 2)])
def test_star(args, expected):
    assert shop.price(*args) == expected

@pytest.mark.parametrize(("when",), [(dt.timedelta(days=1),)])
def test_named(when):
    assert shop.price(when, currency="EUR")

def test_not_plain(fixture):
    assert shop.price(fixture, [x for x in "ab"]) and shop.price(lambda: 1)
"""
    found = inputs_from_tests({"tests/test_shop.py": source}, {"price"})["price"]
    assert [(c.args, c.kwargs) for c in found] == [
        (("1", "'x'"), ()),
        (("2", "'y'"), ()),
        (("dt.timedelta(days=1)",), (("currency", "'EUR'"),)),
    ]
    assert "import datetime as dt" in found[2].imports
    doc = 'def price(x):\n    """\n    >>> import math\n    >>> price(math.pi)\n    3\n    """\n'
    (only,) = inputs_from_doctests(doc, "price", "shop.py")
    assert only.args == ("math.pi",) and only.imports == ("import math",)


def test_static_side_effects() -> None:
    source = """import subprocess, os
def reads(p):
    return open(p).read() + open(p, "rb").read().decode()
def writes(p):
    open(p, mode="w").write("x")
def runs():
    return subprocess.run(["ls"])
def removes(p):
    os.remove(p)
def pure(x):
    return x.run()
"""
    assert static_side_effect(source, "reads") is None
    assert static_side_effect(source, "pure") is None
    assert "writes files" in (static_side_effect(source, "writes") or "")
    assert "starts processes" in (static_side_effect(source, "runs") or "")
    assert "removes files" in (static_side_effect(source, "removes") or "")


_LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.floats(allow_nan=False)
)
_HASHABLE = st.recursive(
    _LEAF, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=6
)
_VALUES = st.recursive(
    _HASHABLE,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(_HASHABLE, inner, max_size=3)
        | st.sets(_HASHABLE, max_size=3)
    ),
    max_leaves=10,
)


@pytest.mark.slow
@given(_VALUES)
def test_a_rendered_value_evaluates_back_to_an_equal_one(value: object) -> None:
    rendered = probe.render(value)
    if rendered is None:  # only integers too long to be "small" are refused (the
        # strategy nests less than the 16 levels render() accepts)
        assert any(len(str(abs(n))) > 59 for n in _ints(value))
        return
    source, imports = rendered
    namespace: dict[str, object] = {}
    for line in imports:
        exec(line, namespace)
    again = eval(source, namespace)
    assert again == value and type(again) is type(value)
    assert probe.render(again) == rendered  # the same text every time (sets are sorted)


def _ints(value: object) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [n for kv in value.items() for v in kv for n in _ints(v)]
    if isinstance(value, list | tuple | set | frozenset):
        return [n for v in value for n in _ints(v)]
    return []


def test_values_that_cannot_be_asserted_are_not_rendered() -> None:
    import datetime

    assert probe.render(math.nan) is None  # nan == nan is False
    assert probe.render(object()) is None  # <object at 0x…>: an address, not a value
    assert probe.render(-math.inf) == ("-math.inf", ["import math"])
    assert probe.render(datetime.timedelta(seconds=90)) == (
        "datetime.timedelta(seconds=90)",
        ["import datetime"],
    )


def test_rendered_tests_read_like_hand_written_ones() -> None:
    changed = [
        Example(["7", "2"], {}, [], {"kind": "value", "value": "4"}, True, "returned 3"),
        Example(["9", "4"], {}, [], {"kind": "value", "value": "3"}, True, "returned 2"),
    ]
    raises = Example(
        ["''"],
        {},
        [],
        {"kind": "raises", "type": "ValueError", "imports": []},
        True,
        "returned 0.0",
    )
    same = Example(["6", "2"], {}, [], {"kind": "value", "value": "3"}, False)
    text_ = render_module(
        "calc.ops",
        "calc/ops.py",
        {"ceil_div": [*changed, same], "parse_ratio": [raises]},
        {"ceil_div": ["a", "b"], "parse_ratio": ["text"]},
    )
    tree = ast.parse(text_)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names == [
        "test_ceil_div_changed",
        "test_ceil_div_unchanged",
        "test_parse_ratio_now_raises_value_error",
    ]
    assert "    ('a', 'b', 'expected'),\n" in text_
    assert (
        "def test_ceil_div_changed(a, b, expected):\n    assert ceil_div(a, b) == expected" in text_
    )
    assert "def test_ceil_div_unchanged():\n    assert ceil_div(6, 2) == 3" in text_
    assert "from calc.ops import ceil_div, parse_ratio" in text_
    # what the gates leave after cutting tests out: no unused import, no blank runs
    cut = text_.split("\n\n\ndef test_parse_ratio")[0] + "\n\n\n\n\n"
    tidied = tidy(cut)
    assert "from calc.ops import ceil_div\n" in tidied and "\n\n\n\n" not in tidied


def test_the_sandbox_memory_limit(tmp_path: Path) -> None:
    big = run_sandboxed(
        [sys.executable, "-c", "bytearray(2 * 2**30)"], tmp_path, memory_limit=512 * 2**20
    )
    assert not big.passed and "MemoryError" in big.output
    assert run_sandboxed(
        [sys.executable, "-c", "bytearray(2**20)"], tmp_path, memory_limit=512 * 2**20
    ).passed


def test_the_memory_limit_counts_what_a_run_writes_not_the_files_it_maps(tmp_path: Path) -> None:
    # a library's code is mapped from disk, read-only (torch maps 3.2 GB of address space
    # and writes 0.8 GB): a run that maps more than the limit and writes little passes
    lib = tmp_path / "lib.so"
    with lib.open("wb") as f:
        f.truncate(768 * 2**20)  # sparse: no disk used
    maps = (
        f"import mmap; f = open({str(lib)!r}, 'rb'); "
        "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); print(len(m))"
    )
    run = run_sandboxed([sys.executable, "-c", maps], tmp_path, memory_limit=512 * 2**20)
    assert run.passed and str(768 * 2**20) in run.output, run.output


@pytest.mark.slow
def test_a_test_deaf_to_the_signal_is_killed_with_its_run_and_the_rest_run_again(
    repo: GitRepo,
) -> None:
    """Code stuck where the per-test signal cannot reach it: the run's own timeout ends it,
    the plugin's log names the test, and the tests after it run again without it."""
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.runners import PytestRunner
    from bot.testgen.workspace import Workspace

    repo.write("pyproject.toml", "[tool.pytest.ini_options]\n")
    repo.write("tests/test_x.py", "def test_x():\n    assert True\n")
    repo.commit("a test")
    fw = detect_framework(repo.path)
    assert fw is not None
    with Workspace(repo.path, "HEAD", fw) as ws:
        ws.write_test(
            "tests/test_nova_deaf.py",
            """import signal
import time


def test_deaf():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(120)


def test_after():
    assert True
""",
        )
        runner = PytestRunner(fw, test_timeout=1)
        runner.run_margin = 10  # the run ends 1 s per test + 10 s after it started
        outcomes = runner.outcomes(ws, "tests/test_nova_deaf.py", ["test_deaf", "test_after"])
    assert outcomes == {"test_deaf": False, "test_after": True}
    assert runner.limit_hits == {
        "tests/test_nova_deaf.py::test_deaf": (
            "hit the time limit: still running when its run was killed after 12 s (the limit "
            "per test is 1 s; it did not answer the signal)"
        )
    }


def test_a_slow_suite_under_coverage_stops_between_tests_and_keeps_what_ran(
    repo: GitRepo,
) -> None:
    """The existing tests measured under a run limit: pytest stops before the next test
    once it is spent, and coverage still saves the lines of the tests that ran (a kill
    from outside would lose them all)."""
    from bot.testgen.frameworks import detect_framework
    from bot.testgen.runners import PytestRunner
    from bot.testgen.workspace import Workspace

    repo.write("pyproject.toml", "[tool.pytest.ini_options]\n")
    repo.write("calc.py", "def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    repo.write(
        "tests/test_calc.py",
        "from calc import one, two\n\n\ndef test_one():\n    assert one() == 1\n\n\n"
        "def test_two():\n    assert two() == 2\n",
    )
    repo.commit("two tests")
    fw = detect_framework(repo.path)
    assert fw is not None
    with Workspace(repo.path, "HEAD", fw) as ws:
        runner = PytestRunner(fw)
        whole = runner.line_coverage(ws, ["tests/test_calc.py"])
        assert whole is not None and not runner.stopped
        # any limit is spent once the first test has run
        cut = runner.line_coverage(ws, ["tests/test_calc.py"], run_seconds=1e-6)
    assert cut is not None and runner.stopped
    assert {2, 6} <= whole[0]["calc.py"]
    assert 2 in cut[0]["calc.py"] and 6 in cut[1]["calc.py"]  # two() never ran
