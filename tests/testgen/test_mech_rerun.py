"""When the first side-runner run found no input that reaches a changed function, the
differential generator makes no further runs: the time goes to amplification, whose run
of the project's own tests reaches the change (a busy machine used to spend the whole
job on four runs with nothing to call, and amplification was skipped)."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.differential import _any_result
from tests.testgen.sample import sample_testgen

SINK = '''
class Sink:
    """Collects what it is sent, for an app that owns it."""

    def __init__(self, app, where):
        self.app = app
        self.where = where
        self.got = []

    def flush(self, items):
        for item in items:
            self.got.append(self.app.scale(item))
        return list(self.got)
'''

TESTS = """
import pytest

from relay.core import Sink


class App:
    def scale(self, item):
        return item * 2


@pytest.fixture
def sink(tmp_path):
    return Sink(App(), tmp_path / "out")


def test_flush(sink):
    assert len(sink.flush([1, 2])) == 2
"""


def test_no_input_leaves_the_time_to_amplification_which_catches(tmp_path: Path) -> None:
    base = {"relay/__init__.py": "", "relay/core.py": SINK, "tests/test_core.py": TESTS}
    new = SINK.replace("self.app.scale(item))", "self.app.scale(item) + 1)")
    _, data = sample_testgen(tmp_path, base, {"relay/core.py": new}, "triple")
    notes = "\n".join(data["notes"])
    assert "no further runs" in notes, notes
    catching = [c for c in data["kept"] if c["evidence"].get("catches_change")]
    assert catching, notes
    # amplification's copy of the project's test, with head's value asserted
    assert any("test_nova_amp_" in c["path"] for c in catching), catching
    patch = Path(data["patch"]).read_text(encoding="utf-8")
    assert "[3, 5]" in patch, patch


def test_a_run_with_a_call_is_run_again() -> None:
    called = {"pkg.m": {"functions": {"f": {"results": [{"args": "1"}]}, "g": {"results": []}}}}
    assert _any_result(called)
    nothing = {"pkg.m": {"functions": {"f": {"results": []}, "g": {"skipped": "is async"}}}}
    assert not _any_result(nothing)
    assert not _any_result({})
