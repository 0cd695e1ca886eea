"""A change in a branch that runs only under another value of the project's own
module-level setting (issue 35): ``set_mode('strict')`` sets ``config.MODE``, and a
function's changed branch runs only when ``MODE == 'strict'``; under the default every
input agrees. The changed lines read the setting; a function of the project assigns it
(``global MODE``); the literals the project compares it with (and the siblings of its
default) are the setter's arguments (``projstate.py``). The side-runner calls each input
again after the setter on both sides, with the package's module state restored after
(``ambient.project_setting``); a difference seen only there becomes a test that applies
the setter with its own copy of the same helper and restores the state. A real sample
project (a git repository in tmp, its own virtualenv, real pytest and coverage
subprocesses) whose release changes what the strict mode accepts, and rewrites another
strict-only branch without changing what it does (it claims nothing)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from bot.testgen import ambient, probe, projstate, render
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

CONFIG = '''MODE = "lenient"
MODES = ("lenient", "strict")


def set_mode(name):
    """Choose how strictly the package reads its input."""
    global MODE
    if name not in MODES:
        raise ValueError(name)
    MODE = name
'''

FLAGS = '''from modes import config


def parse_flag(text):
    """A yes/no word as a bool."""
    word = text.strip().lower()
    if config.MODE == "strict":
        if word not in ("yes", "no"):
            raise ValueError(text)
        return word == "yes"
    return word in ("yes", "y", "true", "1")
'''
FLAGS_NEW = FLAGS.replace('("yes", "no")', '("yes", "no", "true", "false")').replace(
    'return word == "yes"', 'return word in ("yes", "true")'
)
FLAGS_TESTS = """from modes.flags import parse_flag


def test_parse_flag():
    assert parse_flag("true")
    assert not parse_flag("no")
"""

SIZES = '''from modes import config


def limit(n):
    """How many items a page holds."""
    if config.MODE == "strict":
        return min(n, 10)
    return n
'''
SIZES_NEW = SIZES.replace("return min(n, 10)", "return n if n < 10 else 10")
SIZES_TESTS = """from modes.sizes import limit


def test_limit():
    assert limit(20) == 20
    assert limit(3) == 3
"""


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    base = {
        "modes/__init__.py": "",
        "modes/config.py": CONFIG,
        "modes/flags.py": FLAGS,
        "tests/test_flags.py": FLAGS_TESTS,
        "modes/sizes.py": SIZES,
        "tests/test_sizes.py": SIZES_TESTS,
    }
    return sample_testgen(
        tmp_path_factory.mktemp("modes"),
        base,
        {"modes/flags.py": FLAGS_NEW, "modes/sizes.py": SIZES_NEW},
        "strict mode accepts true and false",
    )


@pytest.mark.slow
def test_a_change_seen_only_under_the_projects_setting_is_caught_with_it_applied(
    modes: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = modes
    notes = [n for n in data["notes"] if "project's own settings" in n]
    assert notes and "modes.config.set_mode: ('strict',)" in notes[0], data["notes"]
    facts = caught(data, "parse_flag(")
    assert facts, data["notes"]
    applied = "with _project_setting('modes.config', 'set_mode', ('strict',))"
    assert all(f["changed"] and f["call"].startswith(applied) for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_modes_flags.py")
    assert "def _project_setting(" in committed, committed
    assert applied + ":" in committed


@pytest.mark.slow
def test_a_rewrite_that_keeps_the_behaviour_under_the_setting_claims_nothing(
    modes: tuple[Any, dict[str, Any]],
) -> None:
    _, data = modes
    assert not caught(data, "limit("), data["kept"]
    notes = [n for n in data["notes"] if "modes/sizes.py::limit" in n]
    assert notes and "only under" not in notes[0], data["notes"]


def test_the_settings_the_changed_lines_read_and_their_arguments() -> None:
    files = {"modes/__init__.py": "", "modes/config.py": CONFIG, "modes/flags.py": FLAGS_NEW}
    notes: list[str] = []
    keys = projstate.found_settings(files, [("modes/flags.py", FLAGS)], notes)
    # the literal compared with the setting; its default ("lenient") is not tried
    assert keys == [ambient.project_key("modes.config", "set_mode", "('strict',)")], notes
    # a call in the docs gives an argument too, before the project's comparisons
    files["README.md"] = "Call `set_mode('paranoid')` first.\n"
    keys = projstate.found_settings(files, [("modes/flags.py", FLAGS)], notes)
    assert [ambient.setting(k).said.split(" ")[0] for k in keys] == [
        "modes.config.set_mode('paranoid')",
        "modes.config.set_mode('strict')",
    ]
    # a change that reads no setting: nothing
    files["modes/flags.py"] = FLAGS.replace('"1")', '"1", "on")')
    assert projstate.found_settings(files, [("modes/flags.py", FLAGS)], []) == []


def test_a_registry_filled_by_a_setter_and_a_helper_one_level_down() -> None:
    files = {
        "reg/__init__.py": "",
        "reg/core.py": "FORMATS = {}\n\n\ndef register(name, func=str):\n"
        "    FORMATS[name] = func\n\n\ndef _lookup(name):\n    return FORMATS.get(name)\n",
        "reg/out.py": "from reg.core import _lookup\n\n\ndef show(x, kind):\n"
        "    f = _lookup(kind)\n    return f(x) if f else repr(x)\n",
        "tests/test_out.py": "from reg.core import register\n\nregister('upper')\n",
    }
    before = files["reg/out.py"].replace("_lookup(kind)", "_lookup(kind.lower())")
    keys = projstate.found_settings(files, [("reg/out.py", before)], [])
    assert keys == [ambient.project_key("reg.core", "register", "('upper',)")]


def _package() -> types.ModuleType:
    """A package ``nova_ps_pkg`` in sys.modules with a global, a dict, an object."""
    pkg = types.ModuleType("nova_ps_pkg")
    exec(
        "class Conf:\n    strict = False\n\nconf = Conf()\nconf.level = 1\nMODE = 'a'\n"
        "REG = {'x': 1}\n\n"
        "def setup(mode):\n    global MODE\n    MODE = mode\n    REG['y'] = 2\n"
        "    conf.level = 2\n    conf.extra = 3\n    Conf.strict = True\n"
        "    if mode == 'bad':\n        raise ValueError(mode)\n\n"
        "def mode_of(x):\n    return (x, MODE, sorted(REG), conf.level, Conf.strict)\n",
        pkg.__dict__,
    )
    pkg.__dict__["Conf"].__module__ = "nova_ps_pkg"
    sys.modules["nova_ps_pkg"] = pkg
    return pkg


def test_the_setter_is_applied_and_the_packages_state_restored() -> None:
    pkg = _package()
    try:
        with ambient.project_setting("nova_ps_pkg", "setup", ("b",)):
            assert pkg.mode_of(0) == (0, "b", ["x", "y"], 2, True)
        assert pkg.mode_of(0) == (0, "a", ["x"], 1, False)
        assert not hasattr(pkg.conf, "extra")
        with ambient.project_setting("nova_ps_pkg", "MODE=", ("z",)):  # users assign it
            assert pkg.mode_of(0)[1] == "z"
        assert pkg.mode_of(0)[1] == "a"
        with (
            pytest.raises(ValueError, match="bad"),
            ambient.project_setting("nova_ps_pkg", "setup", ("bad",)),
        ):
            pass
        assert pkg.mode_of(0) == (0, "a", ["x"], 1, False)
        # the probe: each input again after the setter; a setter that fails gives no row
        key, bad = (ambient.project_key("nova_ps_pkg", "setup", a) for a in ("('b',)", "('bad',)"))
        probe.AMBIENT[:] = [key, bad]
        named = Named("function", None, "mode_of", pkg.mode_of)
        case = probe._Case(None, [], ([5], {}), {}, "tests")
        rows = probe._under_settings(named, case, 1.0, {"args": [], "origin": "tests"})
        assert [(r["ambient"], r["outcome"]["value"]) for r in rows] == [
            (key, "(5, 'b', ['x', 'y'], 2, True)")
        ]
        assert pkg.mode_of(0) == (0, "a", ["x"], 1, False)
    finally:
        probe.AMBIENT[:] = []
        del sys.modules["nova_ps_pkg"]


def test_the_written_test_holds_the_same_helper() -> None:
    pkg = _package()
    try:
        key = ambient.project_key("nova_ps_pkg", "setup", "('b',)")
        made, name = ambient.helper(key)
        source = render.helper_source(made, name)
        scope: dict[str, Any] = {}
        exec(
            f"import contextlib\n{source}\ndef check():\n    with {ambient.entered(key)}:\n"
            "        return nova_ps_pkg_mode()\n",
            scope,
        )
        scope["nova_ps_pkg_mode"] = lambda: pkg.mode_of(1)
        assert scope["check"]() == (1, "b", ["x", "y"], 2, True)
        assert pkg.mode_of(1) == (1, "a", ["x"], 1, False)
        assert "->" not in source and "typing" not in source
    finally:
        del sys.modules["nova_ps_pkg"]


def test_a_flags_other_value_keyword_calls_and_a_flag_users_assign() -> None:
    files = {
        "p/__init__.py": "",
        "p/conf.py": "STRICT = False\nWIDE = False\n\n\n"
        "def configure(strict=False, level=None):\n    global STRICT\n    STRICT = strict\n",
        "p/f.py": "from p import conf\n\n\ndef f(x):\n    if conf.STRICT or conf.WIDE:\n"
        "        return x + 2\n    return x\n",
        "README.md": "p.conf.configure(level=3)\n\n    def configure(strict=False, level=None):\n",
    }
    notes: list[str] = []
    before = files["p/f.py"].replace("x + 2", "x + 1")
    keys = projstate.found_settings(files, [("p/f.py", before)], notes)
    assert [ambient.setting(k).said.split(" (")[0] for k in keys] == [
        "p.conf.configure(False, 3)",  # the docs' call, its skipped parameter at its default
        "p.conf.configure(True)",  # the flag's other value
        "p.conf.WIDE = True",  # no function sets it: users do
    ], notes
    assert ambient.entered(keys[-1]) == "_project_setting('p.conf', 'WIDE=', (True,))"


def test_a_fallback_behind_a_none_default_gets_inputs_of_its_own() -> None:
    source = (
        "class Proxy:\n    def __init__(self, url=None, conf=None, timeout=30):\n"
        "        if url is None:\n            url = read(conf)\n"
    )
    key = ambient.project_key("net", "select", "('testnet',)")
    made = projstate.unset_inputs(source, "Proxy", ["testnet3"], "net", [key])
    # each parameter that defaults to None, alone, by keyword; the others left alone
    assert [c.kwargs for c in made] == [
        (("url", "'testnet3'"),),
        (("url", "''"),),
        (("conf", "'testnet3'"),),
        (("conf", "''"),),
    ]
    assert projstate.unset_inputs(source, "Proxy.missing", ["x"], "net", [key]) == []
    # a function of another module that names neither the setter's module nor the name
    assert projstate.unset_inputs(source, "Proxy", ["x"], "other", [key]) == []
    assert projstate.unset_inputs(source.replace("read", "net.read"), "Proxy", [], "o", [key])
    # a function that needs an argument: not these
    needs = source.replace("self, url=None", "self, data, url=None")
    assert projstate.unset_inputs(needs, "Proxy", ["x"], "net", [key]) == []
