"""What a call writes to stderr and stdout is part of its outcome (issue 35,
``bot/testgen/streams.py``). Progress bars, command-line helpers and ``print``
diagnostics change in releases while the value stays the same (set 15 F: a progress
bar's label). The side-runner notes the words each stream got per call (steady ones:
no paths, ids, dates, machine words, and written again by a second call); where a word
is in every run of one side and in no run of the other, a test asserts it with
``capsys``. A real sample project (a git repository in tmp, its own virtualenv, real
pytest) whose release renames a progress label on stderr and a greeting on stdout; a
refactor that writes alike, output with a date, random letters, a uuid and a tmp path,
and a line written once a process claim nothing."""

from __future__ import annotations

import io
import logging
import random
import sys
import threading
from typing import Any

import pytest

from bot.testgen import probe, probe_streams, streams
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

TOOL = '''import os
import secrets
import string
import sys
import tempfile
import time
import uuid

_SEEN = []


def run_all(items, desc=""):
    """Squares of ``items``, with a progress line per item on stderr."""
    out = []
    for i, item in enumerate(items):
        took = time.perf_counter()
        sys.stderr.write("\\rSUBMITTING | %s %d/%d [%.6fs]" % (desc, i + 1, len(items), took))
        out.append(item * item)
    sys.stderr.write("\\n")
    return out


def greet(name):
    print("hello", name)
    return len(name)


def convert(x):
    print("converting", x)
    return x * 2


def pooled(x):
    sys.stderr.write("worker started\\n")
    return [x, os.getpid()]


def stamp(x):
    noise = "".join(secrets.choice(string.ascii_lowercase) for _ in range(7))
    when = time.strftime("%A %B %d %H:%M:%S %Z")
    sys.stderr.write("%s %s %s %s\\n" % (when, noise, uuid.uuid4(), tempfile.gettempdir()))
    return x + 1


def shout(text):
    return text.upper()
'''
# the release: run_all's label says QUEUEING TASKS (same value); greet says welcome;
# convert is rewritten (prints alike); stamp's noise changes (each run another anyway);
# shout writes a note once a process
TOOL_NEW = (
    TOOL.replace('"\\rSUBMITTING | ', '"\\rQUEUEING TASKS | ')
    .replace('print("hello", name)', 'print("welcome", name)')
    .replace(
        '    print("converting", x)\n    return x * 2\n',
        '    y = x + x\n    print("converting", x)\n    return y\n',
    )
    .replace("worker started", "worker ready")
    .replace("range(7)", "range(9)")
    .replace(
        "    return text.upper()\n",
        "    if not _SEEN:\n        _SEEN.append(1)\n"
        '        sys.stderr.write("shout is provisional\\n")\n'
        "    return text.upper()\n",
    )
)
TESTS = """from clikit.tool import convert, greet, pooled, run_all, shout, stamp


def test_run_all():
    assert run_all([1, 2, 3], desc="squares") == [1, 4, 9]


def test_greet():
    assert greet("ada") == 3


def test_convert():
    assert convert(4) == 8


def test_stamp():
    assert stamp(1) == 2


def test_shout():
    assert shout("hi") == "HI"


def test_pooled():
    assert pooled(2)[0] == 2
"""


@pytest.fixture(scope="module")
def clikit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("clikit"),
        {"clikit/__init__.py": "", "clikit/tool.py": TOOL, "tests/test_tool.py": TESTS},
        {"clikit/tool.py": TOOL_NEW},
        "run_all's progress label says what it does",
    )


@pytest.mark.slow
def test_a_label_written_to_stderr_is_caught_with_capsys(
    clikit: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = clikit
    facts = [f for f in caught(data, "run_all(") if "wrote 'QUEUEING'" in f["head"]]
    assert facts, data["notes"]
    assert any("wrote 'SUBMITTING' to stderr" in f["parent"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_clikit_tool.py")
    assert "err = set(re.findall(" in committed, committed
    assert "assert 'QUEUEING' in err" in committed, committed
    assert "assert 'SUBMITTING' not in err" in committed, committed
    assert "== [1, 4, 9]" in committed, committed  # the value is steady: asserted too


@pytest.mark.slow
def test_a_word_printed_to_stdout_is_caught(clikit: tuple[Any, dict[str, Any]]) -> None:
    repo, data = clikit
    facts = [f for f in caught(data, "greet(") if "'welcome' to stdout" in f["head"]]
    assert facts, data["notes"]


@pytest.mark.slow
def test_a_call_whose_value_reads_the_machine_is_written_alone(
    clikit: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = clikit
    facts = [f for f in caught(data, "pooled(") if "wrote 'ready' to stderr" in f["head"]]
    assert facts, data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_clikit_tool.py")
    assert "    pooled(2)\n" in committed, committed  # the call alone: its value is the pid's


@pytest.mark.slow
def test_output_alike_unsteady_or_once_a_process_claims_nothing(
    clikit: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = clikit
    for call in ("convert(", "stamp(", "shout("):
        assert not caught(data, call), (call, data["kept"])
    said = [n for n in data["notes"] if "what it writes differs" in n]
    assert said and not [n for n in said if "::convert" in n or "::stamp" in n], said
    assert not [n for n in said if "::shout" in n], said


def test_the_words_leave_out_paths_ids_dates_and_this_machine() -> None:
    text = (
        "Friday November 27 12:00:01 UTC PROCESSING | tasks 3/3 [00:01, 2.5it/s] "
        f"{sys.prefix}/lib abc123def 0x7f3a9c deadbeefcafe "
        "1b4e28ba-2fa1-11d2-883f-0016d3cca427 done"
    )
    words, also = probe_streams._noted_words(text)
    assert words == ["PROCESSING", "tasks", "done"], words
    assert {"Friday", "November", "UTC", "lib"} <= set(also), also


def chatty(x: int) -> int:
    sys.stderr.write(f"doubling {x} at {random.random()}\n")  # (seeded by the probe)
    print("result", x * 2)
    return x * 2


def test_a_call_keeps_its_value_and_notes_the_words_it_wrote_again() -> None:
    named = Named("function", None, "chatty", chatty)
    case = probe._Case(None, [], ([3], {}), {}, "tests")
    before = sys.stderr
    outcome = probe.call(named, case, 1.0)
    noted = probe_streams.kept(probe._call, named, case, 1.0)
    assert sys.stderr is before  # restored
    assert outcome["kind"] == "value" and outcome["value"] == "6", outcome
    assert noted == {
        "streams": {"err": [["doubling"], []], "out": [["result"], []]},
        "streams_call": {"kind": "value", "imports": []},
    }


def crashing(x: int) -> int:
    worker = threading.Thread(target=lambda: 1 / 0)  # its traceback: a warning under pytest
    worker.start()
    worker.join()
    alone = logging.getLogger("crashtest")
    alone.propagate = False  # no handler: logging.lastResort would print it
    alone.warning("no handler")  # (under pytest its handlers take such a record)
    return x


def test_text_pytest_would_not_show_the_test_is_not_noted() -> None:
    named = Named("function", None, "crashing", crashing)
    probe._call(named, probe._Case(None, [], ([3], {}), {}, "tests"), 1.0)
    assert probe_streams._noted == {"err": [[], []], "out": [[], []]}
    assert threading.excepthook is not probe_streams._silent


def test_words_in_every_run_of_one_side_and_none_of_the_other_are_compared() -> None:
    def run(err: list[str], also: list[str] | None = None) -> dict[str, Any]:
        return {"outcome": {"kind": "value"}, "streams": {"err": [err, also or []]}}

    ours = [run(["QUEUEING", "TASKS", "bar"]), run(["QUEUEING", "TASKS"], ["bar"])]
    theirs = [run(["SUBMITTING", "TASKS"]), run(["SUBMITTING", "TASKS", "zap"])]
    assert streams._differ(ours, theirs) == {
        "err": {"present": ["QUEUEING"], "absent": ["SUBMITTING"]}
    }
    assert not streams._differ(ours, [*theirs, run(["QUEUEING"])])  # not in every run
    # a run that wrote neither steadily (the parent's word among its others): no claim
    assert not streams._differ([*ours, run([], ["SUBMITTING"])], theirs)
    buffer = probe_streams.Bounded()
    buffer.write("x" * (probe_streams.MAX_CHARS + 10))
    assert len(buffer.getvalue()) == probe_streams.MAX_CHARS and not buffer.isatty()
    assert isinstance(buffer, io.StringIO)


def test_a_value_not_steady_leaves_the_call_alone_or_its_raising() -> None:
    entry = {"kind": "function"}
    written = {"err": {"present": ["ready"], "absent": []}}

    def row(outcome: dict[str, Any], ended: dict[str, Any] | None = None) -> dict[str, Any]:
        out = {"args": ["2"], "kwargs": {}, "imports": [], "outcome": outcome}
        return {**out, "streams_call": ended} if ended else out

    depends = {"kind": "depends", "on": "the machine (posix.getpid)"}
    returned = [row(depends, {"kind": "value", "imports": []}) for _ in range(2)]
    assert streams._example(returned[0], entry, returned, written).outcome == {"kind": "call"}
    raised = {"kind": "raises", "type": "ValueError", "imports": []}
    raising = [row(depends, raised) for _ in range(2)]
    assert streams._example(raising[0], entry, raising, written).outcome == raised
    mixed = [returned[0], raising[0]]  # the runs ended differently: nothing to write
    assert streams._example(mixed[0], entry, mixed, written) is None
    value = {"kind": "value", "value": "[2, 3]", "imports": []}
    steady = [row(value), row(value)]  # (head wrote nothing: the absent words' test)
    assert streams._example(steady[0], entry, steady, written).outcome == value
