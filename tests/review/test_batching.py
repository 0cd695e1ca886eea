"""Batches: every reviewable file in exactly one, under the budget, fuller than first-fit by
file order, directories kept together; and the request limiter's rules."""

from __future__ import annotations

import asyncio
from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.change import FileDiff, Hunk, Line
from bot.llm.factory import estimate_tokens
from bot.llm.limiter import FIRST_TURN, FOLLOW_UP, Limiter
from bot.review.agent.batching import plan_batches


def file_diff(path: str, lines: int, status: str = "modified") -> FileDiff:
    rows = tuple(Line("added", None, n, f"line {n} of {path}") for n in range(1, lines + 1))
    return FileDiff(
        old_path=path,
        new_path=path,
        status=status,  # type: ignore[arg-type]
        hunks=(Hunk(0, 0, 1, lines, "", rows),) if lines else (),
    )


paths = st.lists(
    st.tuples(st.sampled_from(["", "a/", "a/b/", "c/", "d/e/", "f/"]), st.integers(0, 999)),
    min_size=1,
    max_size=40,
    unique=True,
)
files = paths.flatmap(
    lambda ps: st.tuples(
        *[
            st.tuples(
                st.just(f"{d}m{n}.py"),
                st.integers(0, 120),
                st.sampled_from(["modified", "modified", "modified", "deleted"]),
            )
            for d, n in sorted(ps)
        ]
    )
)


@pytest.mark.slow
@given(files, st.integers(60, 1500))
def test_every_reviewable_file_is_in_exactly_one_batch_under_the_budget(spec, budget) -> None:
    diffs = [file_diff(p, n, s) for p, n, s in spec]
    plan = plan_batches(diffs, budget=budget, max_file_tokens=10**6)
    shown = [f.path for b in plan.batches for f in b.files]
    reviewable = [f.path for f in diffs if f.hunks and f.status != "deleted"]
    assert sorted(shown) == sorted(reviewable)  # exactly once each
    assert {p for p, _ in plan.skipped} == {f.path for f in diffs} - set(reviewable)
    for b in plan.batches:
        assert b.tokens >= estimate_tokens(b.text) - len(b.files)
        assert b.tokens <= budget or len(b.files) == 1  # only a lone big file goes over
        assert [f.path for f in b.files] == sorted(
            (f.path for f in b.files), key=[f.path for f in diffs].index
        )
    firsts = [diffs.index(b.files[0]) for b in plan.batches]
    assert firsts == sorted(firsts)  # "part i of n" follows the change's order


@pytest.mark.slow
@given(files, st.integers(200, 1500))
def test_batches_are_full_at_most_one_is_half_empty(spec, budget) -> None:
    diffs = [file_diff(p, n, s) for p, n, s in spec if n and s != "deleted"]
    plan = plan_batches(diffs, budget=budget, max_file_tokens=budget)
    sizes = [
        b.tokens
        for f in diffs
        for b in plan_batches([f], budget=budget, max_file_tokens=budget).batches
    ]
    assert sum(b.tokens for b in plan.batches) == sum(sizes)
    assert sum(b.tokens <= budget / 2 for b in plan.batches) <= 1
    assert len(plan.batches) >= -(-sum(sizes) // budget)


def test_a_directory_that_fits_is_never_split() -> None:
    # first-fit by order would put x/ partly in the first batch, partly in the second
    diffs = [
        file_diff("a/one.py", 60),
        file_diff("x/one.py", 30),
        file_diff("x/two.py", 30),
        file_diff("y/one.py", 40),
    ]
    sizes = {
        f.path: plan_batches([f], budget=10**6, max_file_tokens=10**6).batches[0].tokens
        for f in diffs
    }
    budget = sizes["a/one.py"] + sizes["y/one.py"] + 5
    plan = plan_batches(diffs, budget=budget, max_file_tokens=budget)
    dirs = [{str(PurePosixPath(f.path).parent) for f in b.files} for b in plan.batches]
    assert len(plan.batches) == 2
    assert sum("x" in d for d in dirs) == 1


# --- the limiter --------------------------------------------------------------------------------


def test_the_limiter_holds_the_limit_and_serves_follow_ups_first() -> None:
    async def scenario() -> list[str]:
        limiter = Limiter(2)
        order: list[str] = []
        gate = asyncio.Event()

        async def request(name: str, priority: int) -> None:
            async with limiter.slot(priority):
                order.append(name)
                assert limiter.in_flight <= 2
                await gate.wait()

        first = [asyncio.create_task(request(f"r{i}", FIRST_TURN)) for i in range(2)]
        await asyncio.sleep(0)
        later = [
            asyncio.create_task(request("new", FIRST_TURN)),
            asyncio.create_task(request("follow-up", FOLLOW_UP)),
        ]
        await asyncio.sleep(0)
        assert limiter.in_flight == 2 and limiter.waiting == 2
        gate.set()
        await asyncio.gather(*first, *later)
        assert limiter.max_in_flight == 2 and limiter.in_flight == 0
        return order

    assert asyncio.run(scenario()) == ["r0", "r1", "follow-up", "new"]


def test_a_back_off_halves_the_requests_and_starts_none_until_the_wait_is_over() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        limiter = Limiter(8)
        limiter.back_off(0.05)
        limiter.back_off(0.05)  # the same burst: halved once
        assert limiter.allowed == 4
        resume = loop.time() + 0.04
        async with limiter.slot():
            assert loop.time() >= resume  # no request started during the server's wait
        for _ in range(4):
            limiter.succeeded()
        assert limiter.allowed == 8  # grows back to the limit, never past it
        limiter.succeeded()
        assert limiter.allowed == 8

    asyncio.run(scenario())


def test_a_cancelled_waiter_gives_its_slot_back() -> None:
    async def scenario() -> None:
        limiter = Limiter(1)
        async with limiter.slot():
            waiter = asyncio.create_task(limiter.slot().__aenter__())
            await asyncio.sleep(0)
            waiter.cancel()
            await asyncio.gather(waiter, return_exceptions=True)
        assert limiter.in_flight == 0 and limiter.waiting == 0
        async with limiter.slot():
            assert limiter.in_flight == 1

    asyncio.run(scenario())
