"""A project's own failure hook (a conftest that dumps the compared values to /tmp when an
assert fails) runs on the parent, where a catching test fails by design: what it writes
there is not the test's doing, so the test is kept and claimed, not dropped as an escape."""

from __future__ import annotations

from tests.testgen.sample import caught, sample_testgen

CONFTEST = """\
def pytest_assertrepr_compare(op, left, right):
    # like baron's: keep the two sides of a failed comparison for a diff tool
    with open("/tmp/left", "w") as f:
        f.write(repr(left))
    with open("/tmp/right", "w") as f:
        f.write(repr(right))
    return None
"""


def test_a_failure_hook_writing_to_tmp_on_the_parent_does_not_drop_the_catch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "def double(x):\n    return x * 2\n",
        "tests/conftest.py": CONFTEST,
        "tests/test_calc.py": (
            "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
        ),
    }
    change = {"pkg/calc.py": "def double(x):\n    return x * 2 if x >= 0 else 0\n"}
    _, data = sample_testgen(tmp_path, base, change, "double() clamps negatives")
    escaped = [d for d in data["dropped"] if "outside its workspace" in d["reason"]]
    assert not escaped, escaped
    assert caught(data, "double("), (data["kept"], data["dropped"])
