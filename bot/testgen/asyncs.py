"""Coroutine functions, async methods and async generators in the differential generator
(issue 35). Calling an ``async def`` gives a coroutine object: nothing of the body runs, and
its repr is another in every run, so a change in async code was never seen. The side-runner
(``probe.py``, which imports a copy of this module as ``nova_asyncs``: standard library
only, any Python 3 the project runs) runs such a call to its end instead:

- the callable is a coroutine function or an async generator function (through
  ``functools.wraps`` layers), or a call returned an awaitable or an async iterator;
- the instance is built, the tests' steps taken and the member called INSIDE one coroutine,
  in a FRESH event loop of its own (``asyncio.run``: a constructor that calls
  ``get_running_loop`` or makes an asyncio primitive works there), within the call's time
  limit (the side-runner's timer stops it; every task left is cancelled, the async
  generators shut down, the loop closed and no loop left set);
- the outcome is the awaited value or exception, or the list of an async iterator's first
  ``ITEMS`` items (``view``: ``list`` when it ended, ``islice`` when it goes on), marked
  ``awaited``; it is compared, steadied and observed (state after the call, warnings) like
  a sync call's.

The written test is a plain sync pytest test: an inner ``async def`` that builds, calls and
awaits (or collects) the same way, run with ``asyncio.run`` (no pytest-asyncio needed).
The event loop's own reads of the clock (``loop.time()`` called by asyncio itself) are not
reads of the call: ``machinery`` tells the profile hook so.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import sys
import typing

if typing.TYPE_CHECKING:  # annotations only: the project's interpreter may be older
    from collections.abc import Callable

AWAIT = "await"  # the outcome is the awaited value
ITERATE = "iterate"  # the outcome is an async iterator's first items
INSIDE = "inside"  # a plain call, made inside a running loop (its instance needs one)
CLEANUP_SECONDS = 0.5  # tasks left when the call ended get this long to end when cancelled
_ASYNCIO = os.path.dirname(asyncio.__file__) + os.sep
_OWN = {__file__.rsplit(".", 1)[0]}  # this module (its .py or its .pyc)


def mode(func: object) -> str:
    """``AWAIT`` for a coroutine function, ``ITERATE`` for an async generator function
    (a property's getter, a bound method and ``functools.partial`` looked through), else
    ""."""
    seen = 0
    while seen < 20:  # a wrapper of a wrapper...: unwrapped a step at a time, bounded
        seen += 1
        if isinstance(func, property):
            func = func.fget
        elif isinstance(func, (staticmethod, classmethod)):
            func = func.__func__
        elif isinstance(func, functools.partial):
            func = func.func
        else:
            break
    try:
        inner = inspect.unwrap(func)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # a cycle of __wrapped__
        inner = func
    for candidate in (func, inner):
        if inspect.isasyncgenfunction(candidate):
            return ITERATE
        if inspect.iscoroutinefunction(candidate):
            return AWAIT
    return ""


def pending(value: object) -> str:
    """What a call's value still needs: ``AWAIT`` for an awaitable, ``ITERATE`` for an
    async iterator (or iterable), else ""."""
    if inspect.isawaitable(value):
        return AWAIT
    if hasattr(type(value), "__anext__") or hasattr(type(value), "__aiter__"):
        return ITERATE
    return ""


def needs_loop(exc: RuntimeError) -> bool:
    """Whether ``exc`` says there is no running (or current) event loop: what raised it
    works inside one."""
    text = str(exc)
    return "no running event loop" in text or "no current event loop" in text


def discard(value: object) -> None:
    """Close a coroutine that will not be awaited (it would warn when collected)."""
    close = getattr(value, "close", None)
    if inspect.iscoroutine(value) and callable(close):
        close()


async def _settle(
    make: Callable[[], tuple[object, object]],
    items: int,
    checked: Callable[[AttributeError | None], None],
) -> tuple[object, object, str]:
    """Build and call (``make``) inside the loop; then await the value, or collect up to
    ``items + 1`` items of an async iterator. ``checked`` is told how that ended (an
    attribute error, or None): the body of a coroutine runs here, not in the call."""
    obj, value = make()
    try:
        settled = await _settled(obj, value, items)
    except AttributeError as exc:
        checked(exc)
        raise
    except Exception:
        checked(None)
        raise
    checked(None)
    return settled


async def _settled(obj: object, value: object, items: int) -> tuple[object, object, str]:
    how = pending(value)
    if how == AWAIT:
        value = await typing.cast("typing.Awaitable[object]", value)
    elif how == ITERATE:
        source = typing.cast("typing.Any", value)
        iterator = source.__aiter__() if hasattr(type(source), "__aiter__") else source
        got: list[object] = []
        while len(got) <= items:
            try:
                got.append(await iterator.__anext__())
            except StopAsyncIteration:
                break
        value = got
    return obj, value, how


def run(
    make: Callable[[], tuple[object, object]],
    items: int,
    checked: Callable[[AttributeError | None], None] = lambda exc: None,
) -> tuple[object, object, str]:
    """``make`` (build and call) and the settling of its value in a fresh event loop,
    as ``asyncio.run`` does: (the instance, the value or the items, how it was settled).
    An exception (the timer's too) comes out as it is, after the loop is cleaned up."""
    hook = sys.getprofile()
    sys.setprofile(None)  # making a loop reads the environment (asyncio's debug flag)
    try:
        loop = asyncio.new_event_loop()
    finally:
        sys.setprofile(hook)
    try:
        asyncio.set_event_loop(loop)  # as asyncio.run: get_event_loop() finds it
        task = loop.create_task(_settle(make, items, checked))
        return loop.run_until_complete(task)
    finally:
        sys.setprofile(None)
        try:
            _close(loop)
        finally:
            sys.setprofile(hook)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left, give it ``CLEANUP_SECONDS`` to end, shut the async generators
    and the default executor down, close the loop and leave none set."""
    try:
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left, timeout=CLEANUP_SECONDS))
        for task in left:
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: no "never retrieved" message when collected
        loop.run_until_complete(loop.shutdown_asyncgens())
        # the default executor's threads may never end (a blocking read, a retry loop that
        # sleeps): its queue is emptied and it is not waited for (``shutdown_default_
        # executor`` joins them: the side-runner hung past every timer)
        executor = getattr(loop, "_default_executor", None)
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
    except BaseException:  # the project's tasks may fail their cancellation: the loop closes
        pass
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def machinery(frame: typing.Any) -> bool:
    """Whether a read of the clock is the event loop's own (``BaseEventLoop.time``
    called by asyncio itself, or by this module), not the project's code."""
    if frame is None or not frame.f_code.co_filename.startswith(_ASYNCIO):
        return False
    caller = frame.f_back
    if caller is None:
        return True
    where = caller.f_code.co_filename
    return where.startswith(_ASYNCIO) or where.rsplit(".", 1)[0] in _OWN


def asyncio_reads(frame: typing.Any) -> bool:
    """Whether a read of the environment is asyncio's own (its debug flag, read when a
    loop is made): a few frames up from the read, asyncio's code asked for it."""
    for _ in range(4):
        frame = frame.f_back if frame is not None else None
        if frame is not None and frame.f_code.co_filename.startswith(_ASYNCIO):
            return True
    return False


# -- the written test (Nova's side: strings only) -------------------------------------------

RUNNER = "_scenario"  # the written test's inner coroutine


def written(
    setup: list[str], call: str, outcome: dict[str, object], var: str
) -> tuple[list[str], str, dict[str, object]]:
    """A written test's (lines before the assertion, the expression asserted, the outcome
    to assert) for an awaited outcome: an inner ``async def`` that builds the instance,
    calls and awaits (or collects the items of) the call, run with ``asyncio.run``. Where
    the instance's state after the call is asserted, it returns the instance too."""
    view = outcome.get("view")
    body = [f"    {line}" for line in setup]
    if outcome.get("awaited") == ITERATE and view == "islice":
        body += [
            "    items = []",
            f"    async for item in {call}:",
            "        items.append(item)",
            "        if len(items) == 20:",
            "            break",
            "    return items",
        ]
    elif outcome.get("awaited") == ITERATE:
        body.append(f"    return [item async for item in {call}]")
    else:
        awaited = "" if outcome.get("awaited") == INSIDE else "await "
        returned = f"{var}, " if var and (outcome.get("state") or view == "after") else ""
        body.append(f"    return {returned}{awaited}{call}")
    lines = [f"async def {RUNNER}():", *body]
    ran = f"asyncio.run({RUNNER}())"
    # collected inside the coroutine (no view), built inside it too (no "at": raising)
    plain = {k: v for k, v in outcome.items() if (k != "view" or v == "after") and k != "at"}
    if var and (outcome.get("state") or view == "after") and outcome.get("awaited") != ITERATE:
        return [*lines, f"{var}, returned = {ran}"], "returned", plain
    return lines, ran, plain


def shown(setup: list[str], call: str, outcome: dict[str, object]) -> str:
    """The call as a fact names it: the set-up, then what is awaited or collected."""
    if outcome.get("awaited") == ITERATE:
        last = f"[item async for item in {call}]"
    elif outcome.get("awaited") == INSIDE:
        last = f"{call} (in a running loop)"
    else:
        last = f"await {call}"
    return "; ".join([*setup, last])


def carried(examples: list[typing.Any], results: list[dict[str, typing.Any]]) -> None:
    """Mark as awaited every example of a function whose calls were awaited: one made from
    a part of an outcome (an object's facts, the call alone beside its warnings) has lost
    the mark on the way."""
    how = {str(r["outcome"].get("awaited")) for r in results if r["outcome"].get("awaited")}
    if len(how) != 1:
        return
    for example in examples:
        if not example.outcome.get("awaited"):
            example.outcome = {**example.outcome, "awaited": next(iter(how))}
