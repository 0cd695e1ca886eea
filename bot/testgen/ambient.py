"""Process-wide settings a change may make a result independent of (or dependent on).

Many fixes remove a hidden dependence on ambient state: ``calendar.monthcalendar`` reads
``calendar.firstweekday()``, ``time.localtime`` and ``datetime.fromtimestamp`` read the
time zone (``TZ``), a relative path reads the working directory, ``Decimal`` arithmetic
reads the context's precision. Under the default setting head and parent agree, so the
differential's comparison sees nothing. For each setting this module holds (a) the names
whose use in the changed lines (added or removed) makes it relevant, and (b) a context
manager that applies the setting and restores it even on failure. The side-runner
(``probe.py``, which imports a copy of this module as ``nova_ambient``) calls each input
again under each relevant setting; a test written from such a call holds a copy of the
same context manager and runs its body within it (``render.py``). The project's own
settings (a module global a function of the project chooses, found by ``projstate.py``)
are keys of their own (``project_key``), applied by ``project_setting``.

Standard library only: the side-runner runs with the project's interpreter.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import itertools
import json
import re
import typing

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@contextlib.contextmanager
def _weeks_from_sunday() -> Iterator[None]:
    """Weeks start on Sunday (calendar.setfirstweekday), restored after."""
    import calendar

    before = calendar.firstweekday()
    calendar.setfirstweekday(calendar.SUNDAY)
    try:
        yield
    finally:
        calendar.setfirstweekday(before)


@contextlib.contextmanager
def _far_time_zone() -> Iterator[None]:
    """The process's time zone is UTC+14 (TZ, time.tzset), restored after."""
    import os
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = "<+14>-14"  # a POSIX rule: needs no time zone database
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


@contextlib.contextmanager
def _in_empty_folder() -> Iterator[None]:
    """The working directory is a new empty folder, the old one restored after."""
    import os
    import tempfile

    before = os.getcwd()
    with tempfile.TemporaryDirectory() as where:
        os.chdir(where)
        try:
            yield
        finally:
            os.chdir(before)


@contextlib.contextmanager
def _five_digit_decimals() -> Iterator[None]:
    """decimal's context precision is 5 digits, restored after."""
    import decimal

    with decimal.localcontext() as context:
        context.prec = 5
        yield


@contextlib.contextmanager
def _empty_environment() -> Iterator[None]:
    """The process's environment variables are all unset (os.environ), restored after."""
    import os

    before = dict(os.environ)
    os.environ.clear()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


ENVIRON = "environ"
ENV_READ = "the environment (os.environ)"  # what the side-runner's watch calls such a read


class Setting(typing.NamedTuple):
    apply: Callable[[], contextlib.AbstractContextManager[None]]
    names: str  # a pattern of the names whose use in a changed line makes it relevant
    said: str  # what it is, for notes and comments
    reads: tuple[str, ...] = ()  # what a call may read under it (the side-runner's watch)


SETTINGS: dict[str, Setting] = {
    "firstweekday": Setting(
        _weeks_from_sunday,
        r"monthcalendar|firstweekday|setfirstweekday|weekheader|prmonth|prcal|"
        r"\w*Calendar|itermonth\w*|month\w*calendar|calendar\.(?:month|calendar)",
        "weeks starting on Sunday (calendar.setfirstweekday)",
    ),
    "tz": Setting(
        _far_time_zone,
        r"localtime|mktime|ctime|asctime|gmtime|timegm|\w*fromtimestamp|timestamp|"
        r"astimezone|tzset|tzname|tzlocal|timezone|altzone|daylight|utcoffset",
        "the time zone UTC+14 (TZ, time.tzset)",
    ),
    "cwd": Setting(
        _in_empty_folder,
        r"getcwdb?|chdir|abspath|realpath|relpath|resolve|absolute|cwd|__file__|isabs|"
        r"is_absolute|resource_filename",
        "an empty working directory (os.chdir)",
        ("getcwd", "getcwdb"),  # a value that holds the folder differs between calls
    ),
    "decimal": Setting(
        _five_digit_decimals,
        r"Decimal|getcontext|setcontext|localcontext|quantize|ROUND_[A-Z_]+",
        "decimal's precision at 5 digits (decimal.localcontext)",
    ),
    # also applied to any input whose call read the environment (probe.py): such a value
    # is another on another machine, while with no variable set it is the same anywhere
    ENVIRON: Setting(
        _empty_environment,
        r"environ|getenv|putenv|unsetenv|environb|getenvb",
        "an empty environment (os.environ cleared)",
        (ENV_READ,),  # what it stands for: a read of a variable sees none
    ),
}


def changed_lines(before: str | None, after: str) -> list[str]:
    """The lines a change removed and added (a new file: all of it)."""
    old, new = (before or "").splitlines(), after.splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            out += old[i1:i2] + new[j1:j2]
    return out


def relevant(pairs: list[tuple[str | None, str]]) -> list[str]:
    """The settings whose names the changed lines of ``pairs`` (a module's text on the
    parent, None when absent, and on head) use, outside comments."""
    lines = [ln.split("#", 1)[0] for before, after in pairs for ln in changed_lines(before, after)]
    text = "\n".join(lines)
    return [k for k, s in SETTINGS.items() if re.search(rf"(?<![\w])(?:{s.names})\b", text)]


SIBLINGS = 200  # arguments of the tests' one-argument calls tried on a changed reader


def sibling_arguments(tests: dict[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    """The argument of every one-argument call in the tests (``is_holiday_name(
    datetime.date(2024, 1, 8))``) that builds a value from literals, with the import lines
    its names need: what the tests give the package's functions of one parameter, taken
    from each test file in turn (the first of every file, then the second...). A changed
    function of one parameter that reads a setting is called on them too: its own calls
    in the tests may never reach the lines that read it."""
    import ast

    files: list[list[tuple[str, tuple[str, ...]]]] = []
    for text in tests.values():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        imports = {}
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    imports[(alias.asname or alias.name).split(".")[0]] = ast.unparse(node)
        found = []
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
                continue
            arg = call.args[0]
            names = {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)}
            if _built_from_literals(arg) and names <= set(imports):
                found.append((ast.unparse(arg), tuple(sorted({imports[n] for n in names}))))
        files.append(found)
    out: dict[str, tuple[str, ...]] = {}
    for row in itertools.zip_longest(*files):
        for item in row:
            if item is not None:
                out.setdefault(*item)
    return list(out.items())[:SIBLINGS]


def _built_from_literals(node: typing.Any) -> bool:
    """A call (``datetime.date(2024, 1, 8)``) whose arguments are all literals."""
    import ast

    if not isinstance(node, ast.Call) or not node.args or node.keywords:
        return False
    plain = all(isinstance(a, ast.Constant) for a in node.args)
    return plain and isinstance(node.func, ast.Attribute | ast.Name)


# -- the project's own settings (projstate.py finds them) --------------------------------

PROJECT = "project:"  # the key of a project's own setting: PROJECT + [module, setter, args]


def project_key(module: str, setter: str, args: str) -> str:
    """The key of ``module.setter(*args)`` (``args``: the source of a tuple of literals)."""
    return PROJECT + json.dumps([module, setter, args])


def known(key: str) -> bool:
    if key in SETTINGS:
        return True
    try:
        module, setter, args = json.loads(key.removeprefix(PROJECT))
        return key.startswith(PROJECT) and isinstance(ast.literal_eval(args), tuple)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def setting(key: str, guard: typing.Any = None) -> Setting:
    """The setting of ``key``: one of SETTINGS, or a project's setter (applied within
    ``guard``, the side-runner's watch over a call, when given)."""
    if key in SETTINGS:
        return SETTINGS[key]
    module, setter, args = json.loads(key.removeprefix(PROJECT))
    values = ast.literal_eval(args)
    shown = ", ".join(repr(v) for v in values)
    apply = functools.partial(project_setting, module, setter, values, guard)
    said = (
        f"{module}.{setter[:-1]} = {shown}"
        if setter.endswith("=")
        else f"{module}.{setter}({shown})"
    )
    return Setting(apply, "", f"{said} (the project's own setting)")


PROJECT_HELPER = "_project_setting"  # the written test's copy of project_setting


def helper(key: str) -> tuple[Callable[..., typing.Any], str]:
    """The function a written test holds a copy of for ``key``, and the copy's name."""
    if key in SETTINGS:
        return SETTINGS[key].apply, SETTINGS[key].apply.__name__
    return project_setting, PROJECT_HELPER


def entered(key: str) -> str:
    """The expression a written test's ``with`` applies ``key`` by."""
    if key in SETTINGS:
        return f"{SETTINGS[key].apply.__name__}()"
    module, setter, args = json.loads(key.removeprefix(PROJECT))
    return f"{PROJECT_HELPER}({module!r}, {setter!r}, {args})"


@contextlib.contextmanager
def project_setting(
    module: str, setter: str, args: tuple[object, ...], guard: typing.Any = None
) -> Iterator[None]:
    """``module.setter(*args)`` applied (``module.NAME = arg`` for a setter ``NAME=``),
    and the state of the project's package restored after, even when the setter or the
    body fails: every module global of its modules, the items of their module-level
    dicts, lists and sets, and the attributes of their module-level objects and classes
    of the package."""
    import importlib
    import sys

    top = module.split(".")[0]

    def ours(value: object) -> bool:
        kind = value if isinstance(value, type) else type(value)
        return str(getattr(kind, "__module__", "")).split(".")[0] == top

    def held(value: object) -> object:
        if type(value) in (dict, list, set):
            return type(value)(value)  # type: ignore[call-arg]
        if ours(value) and hasattr(value, "__dict__") and not callable(value):
            return dict(vars(value))
        if isinstance(value, type) and ours(value):
            return dict(vars(value))
        return None

    def restore(value: object, kept: object) -> None:
        if isinstance(value, list) and isinstance(kept, list):
            value[:] = kept
        elif type(value) in (dict, set) and type(kept) is type(value):
            value.clear()  # type: ignore[attr-defined]
            value.update(kept)  # type: ignore[attr-defined]
        elif isinstance(kept, dict):
            now = dict(vars(value))
            for name in now:
                if name not in kept and not name.startswith("__"):
                    delattr(value, name)
            for name, was in kept.items():
                if now.get(name, restore) is not was and not name.startswith("__"):
                    setattr(value, name, was)

    target: typing.Any = importlib.import_module(module)  # first: its globals are saved too
    saved = []
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name == top or name.startswith(top + ".")):
            values = dict(vars(mod))
            saved.append((mod, values, {k: held(v) for k, v in values.items()}))
    try:
        *path, last = setter.split(".")
        for part in path:
            target = getattr(target, part)
        with guard() if guard else contextlib.nullcontext():
            if last.endswith("="):  # a name users assign themselves: ``NAME=``
                setattr(target, last[:-1], *args)
            else:
                getattr(target, last)(*args)
        yield
    finally:
        for mod, values, inner in saved:
            now = vars(mod)
            for name in [n for n in now if n not in values]:
                if not isinstance(now[name], type(sys)):  # a submodule imported meanwhile
                    del now[name]
            for name, was in values.items():
                if now.get(name, restore) is not was:
                    now[name] = was
                if inner[name] is not None:
                    with contextlib.suppress(Exception):
                        restore(was, inner[name])
