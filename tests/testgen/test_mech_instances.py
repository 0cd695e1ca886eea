"""A changed ``isinstance(p, X)`` gets an instance of ``X`` in ``p``'s place
(``instances.py``): the tests pass the exceptions they needed (a timeout), never the one
the release now retries (uipath-platform's ``ConnectError``, blind set 16 G)."""

from __future__ import annotations

from pathlib import Path

from bot.testgen.inputs import Candidate
from bot.testgen.instances import class_instances
from tests.testgen.sample import caught, sample_testgen

ERRORS = '''
class TransportError(Exception):
    """Anything that went wrong on the way."""


class ConnectError(TransportError):
    """The connection was never made: nothing was sent."""


class ConnectTimeout(ConnectError):
    """The connection took too long."""


class ReadTimeout(TransportError):
    """The answer took too long."""
'''

RETRY = '''
from .errors import ConnectTimeout, ReadTimeout


def is_retryable(exception):
    """Whether a failed request may be sent again."""
    if isinstance(exception, (ConnectTimeout, ReadTimeout)):
        return True
    return False
'''

TESTS = """
from relay.errors import ConnectTimeout, ReadTimeout
from relay.retry import is_retryable


def test_timeouts_are_retried():
    assert is_retryable(ConnectTimeout("slow"))
    assert is_retryable(ReadTimeout("slow"))


def test_other_errors_are_not():
    assert not is_retryable(ValueError("bad"))
"""

BASE = {
    "relay/__init__.py": "",
    "relay/errors.py": ERRORS,
    "relay/retry.py": RETRY,
    "tests/test_retry.py": TESTS,
}


def test_the_class_a_widened_isinstance_names_is_given_and_caught(tmp_path: Path) -> None:
    widened = RETRY.replace("ConnectTimeout", "ConnectError")
    _, data = sample_testgen(tmp_path, BASE, {"relay/retry.py": widened}, "retry connects")
    found = caught(data, "ConnectError('nova')")
    assert found, data["notes"]
    assert all(f["head"].startswith("True") for f in found), found


def test_a_reordered_isinstance_claims_nothing(tmp_path: Path) -> None:
    reordered = RETRY.replace("(ConnectTimeout, ReadTimeout)", "(ReadTimeout, ConnectTimeout)")
    _, data = sample_testgen(tmp_path, BASE, {"relay/retry.py": reordered}, "reorder", (0, 1, 4))
    assert not [c for c in data["kept"] if c["evidence"].get("catches_change")], data["kept"]


def test_imports_follow_the_module_and_builtins_are_left_alone() -> None:
    source = (
        "import httpx\nfrom . import errors\nfrom ..base import Base as B\n\n"
        "class Local(Exception):\n    pass\n\n"
        "def check(x, y):\n"
        "    return isinstance(y, (httpx.ConnectError, errors.Gone, B, Local, int, str))\n"
    )
    base = Candidate(("1", "2"), (), ("import x",), "tests/test_m.py:3")
    made = class_instances([base], source, "check", [9], "pkg.sub.mod")
    imports = {c.args[1]: c.imports[-1] for c in made}
    assert imports["httpx.ConnectError('nova')"] == "import httpx"
    assert imports["errors.Gone('nova')"] == "from pkg.sub import errors"
    assert imports["B('nova')"] == "from pkg.base import Base as B"
    assert imports["Local()"] == "from pkg.sub.mod import Local"
    assert all(c.args[0] == "1" for c in made)  # only the checked parameter changes
    assert not any("int" in c.args[1] or "str(" in c.args[1] for c in made)
    # a line that is not changed steers nothing
    assert class_instances([base], source, "check", [8], "pkg.sub.mod") == []
