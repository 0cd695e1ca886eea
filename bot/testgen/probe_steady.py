"""Outcomes made steady inside the side-runner (copied next to ``probe.py`` as
``nova_probe_steady``; standard library only, any Python 3 the project runs): the wall
clock moved ahead, the clock pinned, and object ids named.

A call that read the clock is not pinned as it is: its value may be today's date, or a
token that expires. But most such calls only read the clock on the way (an expiry check on
a token without expiry, a log record's time stamp) and show the same whatever the time.
``moved()`` binds, in every loaded module, the names that hold ``time.time``,
``time.time_ns``, ``datetime.datetime`` or ``datetime.date`` to stand-ins whose "now" is
ahead by a chosen span, and restores them after. The side-runner calls again with the clock
three days, half a year and 30 years ahead (each to another hour, and to days of the week
that reach a weekend from any day): an outcome that stays the same at each, with every
read of the clock made through a stand-in, does not depend on the time a test runs at.

A read the stand-ins cannot move (a function bound before, ``def f(now=time.time)``, a
class kept in a container) is a read from a frame that is not a stand-in's: ``MOVED_CODES``
lets the profile hook tell the two apart, and such a call stays "non-deterministic". A
read through a stand-in outside ``moved()`` (kept by a module imported within it) is a
read of the real clock.

A call that returns the id of an argument (a registry's key, ``make_id(obj)``) returns
another number in every run. ``identity()`` names such a value by what it is the id of:
steady, so a side that returns ids can be compared with one that returns something else;
it is never pinned itself.

A module that cannot be imported alone (a circular import that resolves when the module
that imports it is imported first, as the package's tests or its pytest plugin do) is
imported by ``imported()`` the way its package does: after the modules whose import
statements the failure went through, else its top-level package or a sibling module.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import importlib.util
import itertools
import pkgutil
import sys
import time
import typing

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import ModuleType, TracebackType

# how far ahead the clock is moved: past an expiry within days, and within a working life
# of the test; each to another hour of the day, and together across noon from any hour and
# to the other side of a weekend from any day and hour of the week (+3, +5, +1 days of the
# week, one more where the hours pass midnight: 30 years of 365 days, +2, reached Monday
# from a Friday after 07:00) and to another month
SHIFTS = (
    datetime.timedelta(days=3, hours=9),
    datetime.timedelta(days=187, hours=5),
    datetime.timedelta(days=30 * 365 - 1, hours=17),
)
_SHIFT = [datetime.timedelta(0)]
_REAL: dict[str, typing.Any] = {
    "datetime": datetime.datetime,
    "date": datetime.date,
    "time": time.time,
    "time_ns": time.time_ns,
    "monotonic": time.monotonic,
    "perf_counter": time.perf_counter,
}


class _Moved(type):
    """A stand-in class is its real class to ``isinstance`` and ``issubclass``."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.__mro__[1])


class _Datetime(datetime.datetime, metaclass=_Moved):
    """``datetime.datetime`` whose now is moved; every instance it makes is a real one."""

    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        return _REAL["datetime"](*args, **kwargs)

    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> typing.Any:
        return _REAL["datetime"].now(tz) + _SHIFT[0]

    @classmethod
    def utcnow(cls) -> typing.Any:
        return _REAL["datetime"].utcnow() + _SHIFT[0]

    @classmethod
    def today(cls) -> typing.Any:  # the real today reads time.time, which is moved too
        return _REAL["datetime"].now() + _SHIFT[0]


class _Date(datetime.date, metaclass=_Moved):
    """``datetime.date`` whose today is moved; every instance it makes is a real one."""

    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        return _REAL["date"](*args, **kwargs)

    @classmethod
    def today(cls) -> typing.Any:
        return (_REAL["datetime"].now() + _SHIFT[0]).date()


def _time() -> float:
    return float(_REAL["time"]() + _SHIFT[0].total_seconds())


def _time_ns() -> int:
    return int(_REAL["time_ns"]() + int(_SHIFT[0].total_seconds()) * 10**9)


def _monotonic() -> float:  # a duration's two ends move together: it stays the same
    return float(_REAL["monotonic"]() + _SHIFT[0].total_seconds())


def _perf_counter() -> float:
    return float(_REAL["perf_counter"]() + _SHIFT[0].total_seconds())


for _cls in (_Datetime, _Date):  # a message that names the class reads as the real one's
    _cls.__name__ = _cls.__qualname__ = _cls.__mro__[1].__name__
    _cls.__module__ = "datetime"
_STAND_INS: dict[str, object] = {
    "datetime": _Datetime,
    "date": _Date,
    "time": _time,
    "time_ns": _time_ns,
    "monotonic": _monotonic,
    "perf_counter": _perf_counter,
}
# the code of every function that reads the real clock on a stand-in's behalf
MOVED_CODES = frozenset(
    [
        vars(c)[n].__func__.__code__
        for c in (_Datetime, _Date)
        for n in ("now", "utcnow", "today")
        if n in vars(c)
    ]
    + [f.__code__ for f in (_time, _time_ns, _monotonic, _perf_counter)]
)


_FOUND: list[typing.Any] = [-1, []]  # modules scanned, and where the real clock was bound
ACTIVE = [False]  # within moved(): a read through a stand-in is a moved read


def _scan(values: dict[str, object]) -> list[tuple[dict[str, object], str, str]]:
    """(a module's names, the name, which clock) for every module-level name bound to
    one of ``values`` (which clock -> the object)."""
    wanted = {id(v): k for k, v in values.items()}
    found = []
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict) or names is globals():
            continue
        for name, value in list(names.items()):
            which = wanted.get(id(value))
            if which is not None and value is values[which]:
                found.append((names, name, which))
    return found


def _bound() -> list[tuple[dict[str, object], str, str]]:
    """Where the real clock is bound; scanned again only when modules were imported."""
    if _FOUND[0] != len(sys.modules):
        _FOUND[:] = [len(sys.modules), _scan(_REAL)]
    return typing.cast("list[tuple[dict[str, object], str, str]]", _FOUND[1])


@contextlib.contextmanager
def moved() -> Iterator[list[datetime.timedelta]]:
    """Within: every module-level name bound to the real clock is bound to its stand-in;
    set ``[0]`` of the list it gives to move the clock."""
    bound = []
    for names, name, which in _bound():
        if names.get(name) is _REAL[which]:
            bound.append((names, name, which))
            names[name] = _STAND_INS[which]
    count = len(sys.modules)
    ACTIVE[0] = True
    try:
        yield _SHIFT
    finally:
        ACTIVE[0] = False
        _SHIFT[0] = datetime.timedelta(0)
        for names, name, which in bound:
            names[name] = _REAL[which]
        if len(sys.modules) != count:  # imported within: they took the stand-ins
            for names, name, which in _scan(_STAND_INS):
                names[name] = _REAL[which]


def identity(value: object, args: list[object], kwargs: dict[str, object]) -> str | None:
    """``value`` described by the arguments it is the id of (``id(argument 1)``, a tuple
    of them), or None when it is not made of their ids only."""
    known: dict[int, str] = {}
    named = [(f"argument {i + 1}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for name, arg in reversed(named):  # the first argument's name wins
        for attr in ("__func__", "__self__"):  # a bound method is keyed by its two parts
            part = getattr(arg, attr, None)
            if part is not None:
                known[id(part)] = f"id({name}.{attr})"
        known[id(arg)] = f"id({name})"
    parts = list(value) if type(value) is tuple else [value]
    if not parts or any(type(p) is not int or p not in known for p in parts):
        return None
    shown = [known[typing.cast("int", p)] for p in parts]
    return shown[0] if type(value) is not tuple else "(" + ", ".join(shown) + ")"


@contextlib.contextmanager
def pinned_clock(known: list[typing.Any] | None = None) -> Iterator[list[int]]:
    """The clock pinned: every read gives a fixed instant (2024-01-02 03:04:05 UTC), one
    second later than the read before, so an outcome that shows a time, a duration or a
    rate is the same in every run. Within, every module-level name bound to time.time,
    time.time_ns, time.monotonic(_ns), time.perf_counter(_ns), datetime.datetime or
    datetime.date is bound to a stand-in (a naive now() is in UTC); gives the count of
    reads. Standard library only: Nova's side-runner observed the outcome with this
    function, and a test it writes holds a copy of it. ``known`` keeps where the clock
    is bound from one use to the next (scanned again when modules were imported)."""
    import datetime as dt
    import sys
    import time

    reads = [0]
    start = 1704164645  # 2024-01-02 03:04:05 UTC
    epoch = dt.datetime(1970, 1, 1)

    def tick() -> int:
        reads[0] += 1
        return start + reads[0] - 1

    class Same(type):  # a stand-in class is its real class to isinstance and issubclass
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, cls.__mro__[1])

        def __subclasscheck__(cls, sub: type) -> bool:
            return issubclass(sub, cls.__mro__[1])

    class Datetime(dt.datetime, metaclass=Same):
        def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            return real["datetime"](*args, **kwargs)

        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> typing.Any:
            moment = epoch + dt.timedelta(seconds=tick())
            utc = dt.timezone.utc  # noqa: UP017 (datetime.UTC is new in 3.11)
            return moment if tz is None else moment.replace(tzinfo=utc).astimezone(tz)

        @classmethod
        def utcnow(cls) -> typing.Any:
            return epoch + dt.timedelta(seconds=tick())

        @classmethod
        def today(cls) -> typing.Any:
            return epoch + dt.timedelta(seconds=tick())

    class Date(dt.date, metaclass=Same):
        def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            return real["date"](*args, **kwargs)

        @classmethod
        def today(cls) -> typing.Any:
            return (epoch + dt.timedelta(seconds=tick())).date()

    for made in (Datetime, Date):  # a message that names the class reads as the real one's
        made.__name__ = made.__qualname__ = made.__mro__[1].__name__
        made.__module__ = "datetime"
    real: dict[str, typing.Any] = {
        "datetime": dt.datetime,
        "date": dt.date,
        "time": time.time,
        "time_ns": time.time_ns,
        "monotonic": time.monotonic,
        "monotonic_ns": time.monotonic_ns,
        "perf_counter": time.perf_counter,
        "perf_counter_ns": time.perf_counter_ns,
    }
    fake: dict[str, object] = {
        "datetime": Datetime,
        "date": Date,
        "time": lambda: float(tick()),
        "time_ns": lambda: tick() * 10**9,
        "monotonic": lambda: float(tick()),
        "monotonic_ns": lambda: tick() * 10**9,
        "perf_counter": lambda: float(tick()),
        "perf_counter_ns": lambda: tick() * 10**9,
    }

    def scan(old: dict[str, typing.Any]) -> list[typing.Any]:
        wanted = {id(v): k for k, v in old.items()}
        found = []
        for module in list(sys.modules.values()):
            names = getattr(module, "__dict__", None)
            if not isinstance(names, dict):
                continue
            for name, value in list(names.items()):
                which = wanted.get(id(value))
                if which is not None and value is old[which]:
                    found.append((names, name, which))
        return found

    def rebind(
        where: list[typing.Any], old: dict[str, typing.Any], new: dict[str, typing.Any]
    ) -> list[typing.Any]:
        done = []
        for names, name, which in where:
            if names.get(name) is old[which]:
                names[name] = new[which]
                done.append((names, name, which))
        return done

    count = len(sys.modules)
    known = [] if known is None else known
    if not known or known[0] != count:
        known[:] = [count, scan(real)]
    bound = rebind(known[1], real, fake)
    try:
        yield reads
    finally:
        for names, name, which in bound:
            names[name] = real[which]
        if len(sys.modules) != count:  # imported within: they took the stand-ins
            rebind(scan(fake), fake, real)


REPEATS = 5  # calls of one that read randomness (its steady parts are compared)


def repeated(
    again: Callable[[], dict[str, typing.Any]], outcome: dict[str, typing.Any], read: list[str]
) -> dict[str, typing.Any]:
    """``{"values": [outcome of each call]}`` for a call whose value read randomness and
    nothing else, called ``REPEATS`` times in all (the parts of its value every call
    shows alike do not depend on the draw); {} for any other."""
    if outcome["kind"] not in ("value", "object") or not all(
        "random" in r
        for r in read  # uuid4 reads os.urandom
    ):
        return {}
    values = [outcome] + [again() for _ in range(REPEATS - 1)]
    return {"values": values} if all(v["kind"] == outcome["kind"] for v in values) else {}


FIRST_IMPORTS = 30  # modules tried before one that cannot be imported alone
AFTER: dict[str, str] = {}  # a module that imports only after another -> that one


def imported(name: str) -> ModuleType:
    """``importlib.import_module(name)``; when that fails in a circular import, the
    module imported after another module of its package (those the failed import went
    through, innermost first, then its top-level package and the package's modules)."""
    before = set(sys.modules)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        failed = exc
    if "circular import" not in str(failed) and "partially initialized" not in str(failed):
        raise failed
    top = name.split(".")[0]
    tried = [m for m in _through(failed.__traceback__) if m != name and m.split(".")[0] == top]
    seen = {name}
    for other in itertools.islice(itertools.chain(tried, [top], _package_modules(top)), 60):
        if other in seen or len(seen) > FIRST_IMPORTS:
            continue
        seen.add(other)
        _forget(before, top)  # what the failed attempt left half made
        try:
            importlib.import_module(other)
            module = importlib.import_module(name)
        except Exception:  # noqa: S112 (the next module may resolve it)
            continue
        AFTER[name] = other
        return module
    _forget(before, top)
    raise failed


def _through(tb: TracebackType | None) -> list[str]:
    """The modules whose top-level code a traceback went through, innermost first."""
    found = []
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "<module>":
            found.append(str(frame.f_globals.get("__name__", "")))
        tb = tb.tb_next
    return found[::-1]


def _package_modules(top: str) -> Iterator[str]:
    """The package's modules (not its tests), found when asked for (finding a
    subpackage's modules imports it)."""
    spec = importlib.util.find_spec(top)
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    for info in pkgutil.walk_packages(where, top + ".", onerror=lambda _: None):
        if "test" not in info.name.rsplit(".", 1)[-1]:
            yield info.name


def _forget(before: set[str], top: str) -> None:
    for key in [k for k in sys.modules if k not in before]:
        if key == top or key.startswith(top + "."):
            del sys.modules[key]
