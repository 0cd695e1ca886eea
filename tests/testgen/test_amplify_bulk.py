"""A long test copied many times for its input variants would make a file over the
workspace's byte limit: fewer copies are written, not none (toml-cli's test module)."""

from __future__ import annotations

from bot.testgen.amplify import MAX_VARIANTS, _variants
from bot.testgen.amplify_inputs import steer_from_change
from bot.testgen.amplify_order import aims_of
from bot.testgen.frameworks import detect_framework
from bot.testgen.workspace import MAX_TEST_BYTES, Workspace
from tests.conftest import GitRepo

OLD = "def scale(x):\n    if x > 10:\n        return x * 2\n    return x\n"
NEW = "def scale(x):\n    if x >= 10:\n        return x * 2\n    return x\n"
# a test with a long literal table beside its one steerable input
TABLE = "\n".join(f"    row_{i} = {'x' * 100!r}" for i in range(200))
TEST = f"from pkg.calc import scale\n\n\ndef test_scale():\n{TABLE}\n    assert scale(3) == 3\n"


def test_a_long_test_gets_fewer_variants_under_the_byte_limit(repo: GitRepo) -> None:
    repo.write("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/calc.py", NEW)
    repo.write("tests/test_calc.py", TEST)
    repo.commit("base")
    assert MAX_TEST_BYTES < len(TEST.encode()) * MAX_VARIANTS  # all the copies would not fit
    steer = steer_from_change(NEW, OLD, {2})
    sources = {"tests/test_calc.py": TEST}
    notes: list[str] = []
    with Workspace(repo.path, "HEAD", detect_framework(repo.path)) as ws:
        out = _variants(
            ws, ["tests/test_calc.py::test_scale"], sources, (steer, aims_of([])), {}, notes
        )
        assert out, notes
        (temp, ids) = out[0]
        assert ids and temp in ws.written
        assert len(ws.written[temp].encode()) <= MAX_TEST_BYTES
    assert not [n for n in notes if "no input variants" in n], notes
    assert [n for n in notes if "byte limit" in n], notes
