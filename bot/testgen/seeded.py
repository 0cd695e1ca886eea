"""Randomness made repeatable (copied next to ``probe.py`` as ``nova_seeded``; standard
library only, any Python 3 the project runs).

A call that draws from the ``random`` module's global generator (``random.shuffle``, a
``seed=None`` parameter that falls back to it) came out another way in every run and was
dropped. The side-runner now seeds the global generators to ``SEED`` right before every
call, on head and on parent alike (``reseed``): ``random``'s, and ``numpy.random``'s when
the project has imported numpy (it is never imported here). Its reads are then steady and
comparable; ``drawn()`` says which generators a call used, and the written test seeds
those the same way right before the call (``lines``). A generator the call makes and
seeds itself with a value (``random.Random(seed)``) is as repeatable.

What stays unsteady: a generator seeded from entropy (``random.seed()``,
``random.Random()``), ``SystemRandom``, one made before the call (its state is the
history of earlier calls), ``secrets``, ``uuid``, ``os.urandom`` and the clock: ``read``
names such a read as the profile hook always did, and the input is dropped.

``seed_inputs`` (Nova's side) gives a parameter whose name says it takes a seed and whose
default is None a small integer, on the first inputs of the tests.
"""

from __future__ import annotations

import ast
import random
import re
import sys
import typing
import weakref
from dataclasses import replace

if typing.TYPE_CHECKING:
    from collections.abc import Callable

    from bot.testgen.inputs import Candidate

    _Find = Callable[[ast.Module, str], ast.FunctionDef | ast.AsyncFunctionDef | None]

SEED = 0
RANDOM = "randomness (random."  # how the profile hook names a read of random.py
_STATE: list[typing.Any] = [None]  # numpy's state right after seeding (None: no numpy)
_DREW = [False]  # the current call drew from random's global generator (the profile hook saw)
_DRAWN: list[list[str]] = [[]]  # the generators the last call drew from
# generators the current call made and seeded with a value: their draws repeat
_MADE: weakref.WeakSet[random.Random] = weakref.WeakSet()
_SEEDED_HERE = [False]  # the current call seeded a generator itself


def _numpy() -> typing.Any:
    """``numpy.random`` when the project imported numpy (its global generator), else None."""
    numpy = sys.modules.get("numpy")
    try:
        return getattr(numpy, "random", None) if numpy is not None else None
    except Exception:  # a numpy that fails to load its random module: nothing to seed
        return None


def _numpy_state(generator: typing.Any) -> object:
    state = generator.get_state()
    return (state[1].tobytes(), *state[2:])


def reseed() -> None:
    """The global generators set to ``SEED`` (random's, numpy's if imported)."""
    _MADE.clear()
    _SEEDED_HERE[0] = False
    random.seed(SEED)
    generator = _numpy()
    if generator is not None and hasattr(generator, "seed"):
        generator.seed(SEED)
        _STATE[0] = _numpy_state(generator)
    else:
        _STATE[0] = None
    _DREW[0] = False  # (the seeding itself is no draw of the call's)


def note_drawn() -> None:
    """After a call: which seeded generators it drew from (random's: as the profile hook
    saw its draws, numpy's: its state moved; it calls no Python code the hook would see)."""
    drawn = ["random"] if _DREW[0] else []
    generator = _numpy() if _STATE[0] is not None else None
    if generator is not None and _numpy_state(generator) != _STATE[0]:
        drawn.append("numpy")
    _DRAWN[0] = drawn


def drawn() -> dict[str, list[str]]:
    """``{"seeded": [...]}`` for the last call's result row when it drew ({} else)."""
    return {"seeded": list(_DRAWN[0])} if _DRAWN[0] else {}


def read(frame: typing.Any, found: str) -> str:
    """What a frame of random.py (``found``: how the hook names it) reads: "" for a
    seeded generator's draw, ``found`` for any other generator's."""
    generator = frame.f_locals.get("self")
    if not isinstance(generator, random.Random) or isinstance(generator, random.SystemRandom):
        return found
    if frame.f_code.co_name == "__init__":
        return ""  # it reads nothing: the seed it calls says how it is seeded
    if frame.f_code.co_name == "seed":
        if frame.f_back is not None and frame.f_back.f_code is reseed.__code__:
            return ""  # the side-runner's own seeding
        if frame.f_locals.get("a") is None:
            return "randomness (a generator seeded from entropy)"
        _MADE.add(generator)  # seeded within the call with a value: repeatable
        _SEEDED_HERE[0] = True
        return ""
    return "" if seeded(generator) else found


def seeded_here() -> bool:
    """Whether the last call seeded a generator itself: with a value it may have read
    from the clock (``random.Random(time.time())``), which a pinned clock would hide."""
    return _SEEDED_HERE[0]


def seeded(generator: object) -> bool:
    """Whether a generator's draws repeat: the global one (seeded before the call), or
    one the call seeded with a value."""
    if generator is random._inst:
        _DREW[0] = True
        return True
    return isinstance(generator, random.Random) and generator in _MADE


# what an argument's source may not call to be shown as written: its value would be
# another one when the test runs (a struct_time of now), where two runs a second apart agree
_UNSTEADY = re.compile(
    r"\b(?:time|now|today|utcnow|localtime|gmtime|monotonic|perf_counter|random|rand\w*|"
    r"uuid\d|urandom|token_\w+|getpid|getcwd|environ|getenv|gethostname)\b"
)


def unsteady_source(item: dict[str, typing.Any]) -> bool:
    """Whether a mined call's argument sources call the clock, randomness or the machine."""
    sources = [*item.get("args", []), *dict(item.get("kwargs", {})).values()]
    return any(isinstance(s, str) and _UNSTEADY.search(s) for s in sources)


# -- Nova's side: the written test, the inputs -------------------------------------------


def lines(generators: list[str]) -> tuple[list[str], list[str]]:
    """(the lines that seed ``generators`` as the side-runner did, their imports)."""
    body = [f"random.seed({SEED})"] if "random" in generators else []
    body += [f"numpy.random.seed({SEED})"] if "numpy" in generators else []
    return body, [f"import {g}" for g in generators]


SEED_WORDS = ("seed", "random_state", "rng", "random_seed", "randomstate", "prng")
SEED_VALUES = (0, 1)
MAX_SEEDED = 12  # inputs with a seed given, per function


def seed_params(source: str, qualname: str, find: _Find) -> list[tuple[str, int]]:
    """The parameters of the function a call of ``qualname`` runs (``find``: its def in
    the module's tree) that take a seed and default to None, each with its place among
    the positional arguments (-1: keyword only)."""
    try:
        node = find(ast.parse(source), qualname)
    except SyntaxError:
        return []
    if node is None:
        return []
    from bot.testgen.placed import defaulted  # (Nova's side: this part is never copied over)

    return [
        (p.arg, place)
        for p, d, place, _named in defaulted(node)
        if isinstance(d, ast.Constant) and d.value is None and _takes_seed(p.arg)
    ]


def _takes_seed(name: str) -> bool:
    low = name.lower().strip("_")
    return low in SEED_WORDS or low.endswith(("_seed", "_rng", "_random_state"))


def seed_inputs(
    candidates: list[Candidate], source: str, qualname: str, find: _Find
) -> list[Candidate]:
    """The first inputs of the tests, each with every seed parameter given a small
    integer (by keyword, or in its place when the input gives it there as None)."""
    params = seed_params(source, qualname, find)
    out: list[Candidate] = []
    for c in candidates:
        for name, index in params:
            given = dict(c.kwargs)
            if 0 <= index < len(c.args) and c.args[index] not in ("None", None):
                continue
            if given.get(name) not in ("None", None) or (name in given and given[name] is None):
                continue  # the tests give it a value (or one that is not plain)
            for value in SEED_VALUES:
                if 0 <= index < len(c.args):
                    args = (*c.args[:index], repr(value), *c.args[index + 1 :])
                    made = replace(c, args=args, origin=f"{c.origin} (seeded)")
                else:
                    kwargs = (*((k, v) for k, v in c.kwargs if k != name), (name, repr(value)))
                    made = replace(c, kwargs=kwargs, origin=f"{c.origin} (seeded)")
                if made not in out and made not in candidates:
                    out.append(made)
    return out[:MAX_SEEDED]
