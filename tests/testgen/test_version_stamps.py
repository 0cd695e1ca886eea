"""Lines that only stamp a release (its number, commit, date) are not changed targets:
a test pinning them catches no behaviour."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.diff import parse_diff
from bot.testgen.matrix import comment_lines, version_stamps


def _diff(path: str, old: str, new: str):  # type: ignore[no-untyped-def]
    body = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
            n=1,
        )
    )
    (f,) = parse_diff(f"diff --git a/{path} b/{path}\n{body}")
    return f


VERSIONEER_OLD = """version_json = \'\'\'
{
 "date": "2018-05-15T23:33:33+0200",
 "dirty": false,
 "error": null,
 "full-revisionid": "0fcfb2b773e5431586c2621048af95dd5f8e7090",
 "version": "3.1.1"
}
\'\'\'  # END VERSION_JSON
"""


def test_a_versioneer_block_and_a_dunder_version_are_stamps() -> None:
    new = (
        VERSIONEER_OLD.replace("0fcfb2b773e5431586c2621048af95dd5f8e7090", "14f43ddd7409")
        .replace("3.1.1", "3.2.0")
        .replace("2018-05-15T23:33:33+0200", "2018-08-31T15:04:03+0200")
    )
    f = _diff("pkg/_version.py", VERSIONEER_OLD, new)
    added = {ln.new_no for h in f.hunks for ln in h.lines if ln.kind == "added"}
    assert added and version_stamps(f) == added
    old, new = 'import os\n__version__ = "1.4"\n', 'import os\n__version__ = "1.5.0rc1"\n'
    g = _diff("pkg/__init__.py", old, new)
    assert version_stamps(g) == {2}


def test_a_number_that_is_not_a_version_and_a_real_edit_beside_a_stamp_are_kept() -> None:
    # no "version" near it: a protocol's default is behaviour
    f = _diff("pkg/http.py", 'PROTOCOL = "HTTP/1.0"\nx = 1\n', 'PROTOCOL = "HTTP/1.1"\nx = 1\n')
    assert version_stamps(f) == set()
    # the version line is a stamp; the changed default below it is not
    old = '__version__ = "2.0"\nLIMIT = 10\n'
    new = '__version__ = "2.1"\nLIMIT = 20\n'
    assert version_stamps(_diff("pkg/__init__.py", old, new)) == {1}
    # code in a file named version.py is code: only token-for-token stamps count
    old = "def parse(v):\n    return v.split('.')\n"
    new = "def parse(v):\n    return v.split('.', 2)\n"
    assert version_stamps(_diff("pkg/version.py", old, new)) == set()


def test_a_version_tuple_and_a_v_numbered_docstring_line_are_stamps() -> None:
    old = '"""pkg v2.7.1 - a packer"""\nversion = (2, 7, 1)\nSIZE = (80, 24)\n'
    new = '"""pkg v2.7.2 - a packer"""\nversion = (2, 7, 2)\nSIZE = (100, 24)\n'
    # a tuple with no version word beside it (a terminal's size) is behaviour
    assert version_stamps(_diff("pkg/core.py", old, new)) == {1, 2}


_kinds = st.lists(st.sampled_from(["code", "comment", "trailing", "string", "blank"]), max_size=12)


@settings(max_examples=150, deadline=None)
@given(kinds=_kinds)
def test_comment_lines_are_the_lines_holding_only_a_comment(kinds: list[str]) -> None:
    rows: list[str] = []
    expected: set[int] = set()
    for i, kind in enumerate(kinds):
        if kind == "code":
            rows.append(f"x{i} = {i}")
        elif kind == "comment":
            rows.append(f"    # note {i}" if i % 2 else f"# note {i}")
            expected.add(len(rows))
        elif kind == "trailing":
            rows.append(f"y{i} = '#'  # why {i}")
        elif kind == "string":  # a comment-looking line inside a string is the string's
            rows += [f's{i} = """', f"# not a comment {i}", '"""']
        else:
            rows.append("")
    assert comment_lines("\n".join(rows) + "\n") == expected
    # a coding declaration changes how the file reads: not a comment to skip
    assert comment_lines("# -*- coding: latin-1 -*-\n# x\nx = 1\n") == {2}


_versions = st.lists(st.integers(0, 99), min_size=2, max_size=4).map(
    lambda xs: ".".join(map(str, xs))
)


_names = st.sampled_from(["__version__", "VERSION", "version_info_str"])


@settings(max_examples=150, deadline=None)
@given(a=_versions, b=_versions, name=_names)
def test_any_version_bump_is_a_stamp_and_any_other_edit_is_not(a: str, b: str, name: str) -> None:
    old, new = f'{name} = "{a}"\n', f'{name} = "{b}"\n'
    f = _diff("pkg/about.py", "import sys\n" + old, "import sys\n" + new)
    assert version_stamps(f) == ({2} if a != b else set())
    edited = f'{name} = "{b}" if sys.platform else None\n'
    g = _diff("pkg/about.py", "import sys\n" + old, "import sys\n" + edited)
    assert version_stamps(g) == set()


def test_a_release_that_bumps_its_version_gets_tests_of_its_change_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.testgen.sample import caught, sample_testgen

    base = {
        "pkg/__init__.py": '__version__ = "1.0.0"\n',
        "pkg/_version.py": 'def get_version():\n    return {"version": "1.0.0"}["version"]\n',
        "pkg/calc.py": "# (c) 2020 Pkg authors\ndef double(x):\n    return x * 2\n",
        "tests/test_calc.py": (
            "from pkg.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
        ),
    }
    change = {
        "pkg/__init__.py": '__version__ = "1.1.0"\n',
        "pkg/_version.py": 'def get_version():\n    return {"version": "1.1.0"}["version"]\n',
        "pkg/calc.py": (
            "# (c) 2020-2022 Pkg authors\ndef double(x):\n    return x * 2 if x >= 0 else 0\n"
        ),
    }
    _, data = sample_testgen(tmp_path, base, change, "release 1.1.0: double() clamps negatives")
    targets = [t["target"] for t in data["matrix"]]
    assert targets == ["pkg/calc.py::double"], targets
    stamped = [n for n in data["notes"] if "only stamp the release's version" in n]
    assert stamped and "pkg/_version.py" in stamped[0]
    assert caught(data, "double(")
