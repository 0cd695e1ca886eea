"""The review agent: the shared agent loop (``bot.agent.graph``) run over the change's batches.

The final answer uses the provider's structured output where it has one (``answer.py``: a
JSON schema for OpenAI-compatible servers, a ``submit_review`` tool for Anthropic) and falls
back to JSON in the message text when a server refuses it; an unusable answer is shown its
error once (``prompts/review/repair.j2``), then the batch is reported as failed.

Batches all start at once; one ``Limiter`` caps the model requests in flight (and backs off
together on a rate limit). Each finished batch is handed to ``on_batch`` at once (the
pipeline anchors it), so a run cut short still has what was found; the progress line says
how many batches are done, how many requests are in flight and queued, and the tokens so far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from bot.agent.graph import AgentState, build_graph
from bot.agent.tools import ContextTool, context_tools
from bot.analyzers.secrets import Scrubber
from bot.change import Change, Comment
from bot.errors import ModelError, redact_known
from bot.events import ErrorEvent, EventBus
from bot.hosts.base import TreeReader
from bot.llm.factory import make_chat_model, model_error, provider_errors
from bot.llm.fallback import ModelChain
from bot.llm.limiter import Limiter
from bot.llm.settings import LLMSettings
from bot.llm.usage import Stats
from bot.prompts import render_prompt
from bot.review.agent.answer import AnswerFormat, repair_prompt
from bot.review.agent.batching import Batch, Plan, plan_batches
from bot.review.agent.output import ParsedAnswer, parse_answer
from bot.review.agent.progress import Guarded, Known, Progress
from bot.review.result import Walk
from bot.review.settings import ReviewSettings

if TYPE_CHECKING:
    pass

__all__ = ["BatchDone", "ReviewOutcome", "review_change"]

T = TypeVar("T")


@dataclass
class ReviewOutcome:
    comments: list[Comment] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    walkthrough: list[Walk] = field(default_factory=list)


BatchDone = Callable[[ParsedAnswer], None]


def _user_prompt(
    batch: Batch,
    index: int,
    count: int,
    change: Change,
    findings: Sequence[Comment],
    scrub: Callable[[str], str],
) -> str:
    paths = {f.path for f in batch.files}
    user = render_prompt(
        "review/user.j2",
        title=change.title,
        description=change.description,
        batch_index=index + 1,
        batch_count=count,
        diff=batch.text,
        findings=[f for f in findings if f.path in paths],
    )
    return scrub(redact_known(user))  # configured tokens and committed secrets stay out


async def _review_batch(graph: Any, system: str, user: str, llm: LLMSettings) -> ParsedAnswer:
    from langchain_core.messages import HumanMessage, SystemMessage
    from langgraph.errors import GraphRecursionError

    state: AgentState = {
        "messages": [SystemMessage(content=system), HumanMessage(content=user)],
        "repairs": 0,
        "answer": None,
        "failure": None,
    }
    try:
        final = await graph.ainvoke(state, config={"recursion_limit": llm.recursion_limit})
    except GraphRecursionError as exc:
        raise ModelError(
            f"the review agent did not finish within {llm.recursion_limit} steps "
            "(NOVA_RECURSION_LIMIT); its partial work was discarded"
        ) from exc
    except provider_errors() as exc:
        raise model_error(exc, llm) from exc
    if final.get("failure"):
        raise ModelError(final["failure"])
    answer: ParsedAnswer = final["answer"]  # after_parse ends only with one or a failure
    return answer


async def review_change(
    change: Change,
    tree: TreeReader | None,
    findings: Sequence[Comment],
    llm: LLMSettings,
    review: ReviewSettings,
    bus: EventBus,
    stats: Stats,
    later: Future[list[Comment]] | None = None,
    on_batch: BatchDone | None = None,
) -> ReviewOutcome:
    """Review ``change`` in concurrent batches; failures are collected, never raised.
    ``findings`` are shown to the model as known; ``later`` (the analyzers, still running)
    are shown to the batches that start after they are known (a one-batch change waits for
    them: they take far less than a model call). ``on_batch`` gets each answer as its batch
    finishes."""
    outcome = ReviewOutcome()
    plan = plan_batches(
        change.files,
        budget=review.token_budget,
        max_file_tokens=review.max_file_tokens,
        style=review.diff_style,
    )
    outcome.notes += [f"skipped {path}: {why}" for path, why in plan.skipped]
    if not plan.batches:
        return outcome
    async with AsyncExitStack() as stack:
        tools = context_tools(tree) if tree is not None else []
        if review.mcp_config:
            from bot.mcp.extra import load_mcp_config, open_extra_tools

            extra, notes = await open_extra_tools(
                load_mcp_config(review.mcp_config), stack, {t.name for t in tools}
            )
            tools += extra
            outcome.notes += notes
            for note in notes:
                bus.emit(ErrorEvent(error=note, recoverable=True))
        if later is not None and len(plan.batches) == 1:
            await asyncio.wait([asyncio.wrap_future(later)])
        known = Known(findings, later)
        await _run_batches(change, plan, tools, known, llm, review, bus, stats, outcome, on_batch)
    return outcome


async def _within(seconds: float, coros: Sequence[Coroutine[Any, Any, T]]) -> list[T | None]:
    """Run ``coros`` concurrently for at most ``seconds``; the unfinished are cancelled (their
    HTTP requests closed) and give None. One that raises (a crash, not a failed batch: those
    are returned) cancels the rest and is raised."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        # a crash (FIRST_EXCEPTION) stops all
        done, _ = await asyncio.wait(tasks, timeout=seconds, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()  # no-op on the finished ones
        await asyncio.gather(*tasks, return_exceptions=True)
    return [task.result() if task in done else None for task in tasks]


async def _run_batches(
    change: Change,
    plan: Plan,
    tools: list[ContextTool],
    known: Known,
    llm: LLMSettings,
    review: ReviewSettings,
    bus: EventBus,
    stats: Stats,
    outcome: ReviewOutcome,
    on_batch: BatchDone | None,
) -> None:
    # every model of the chain is retried (and each retry shown) here, not by its SDK
    chain = ModelChain(llm, bus, build=lambda s: make_chat_model(replace(s, max_retries=0)))
    scrubber = Guarded(Scrubber())  # one thread prepares the prompts, the loop scrubs tools
    fmt = AnswerFormat(AnswerFormat.for_provider(llm.provider), bus)
    limiter = Limiter(llm.max_concurrency)
    graph = build_graph(
        chain.model,
        tools,
        bus,
        stats,
        scrub=scrubber.scrub,
        answer=fmt,
        parse_final=lambda text: parse_answer(text, restore=scrubber.restore),
        repair=repair_prompt,
        tool_timeout=review.tool_timeout,
        retries=llm,
        limiter=limiter,
        chain=chain,
    )
    system = render_prompt(
        "review/system.j2",
        style=review.diff_style,
        has_tools=bool(tools),
        extra_instructions=review.extra_instructions,
        mode=fmt.mode,
    )
    starting = asyncio.Semaphore(limiter.limit)  # batches in flight: the rest are queued
    count = len(plan.batches)
    progress = Progress(count, stats, bus)
    loop = asyncio.get_running_loop()
    # Scrubbing a prompt is CPU work (~0.1-0.3 s a batch): one thread does it, in batch
    # order, ahead of the requests, so the loop keeps sending and receiving meanwhile.
    preparing = ThreadPoolExecutor(1, thread_name_prefix="nova-prompts")

    async def one(i: int, batch: Batch) -> ParsedAnswer | ModelError:
        user = await loop.run_in_executor(  # the hint: what is known when it is prepared
            preparing, lambda: _user_prompt(batch, i, count, change, known.now(), scrubber.scrub)
        )
        async with starting:
            progress.started()
            try:
                answer = await _review_batch(graph, system, user, llm)
            except ModelError as exc:
                progress.finished(f"batch {i + 1}/{count}: {exc}", failed=True)
                return exc
            if on_batch is not None:
                on_batch(answer)
            progress.finished(f"batch {i + 1}/{count}: {len(answer.comments)} comments")
            return answer

    try:
        finished = await _within(review.deadline, [one(i, b) for i, b in enumerate(plan.batches)])
    finally:
        preparing.shutdown(wait=False, cancel_futures=True)
        await chain.aclose()
    if None in finished:
        bus.emit(
            ErrorEvent(
                error=f"the review deadline of {review.deadline:g}s "
                f"passed: {finished.count(None)} of {count} batch(es) unfinished; "
                "publishing what was found",
                recoverable=False,
            )
        )
    late = ModelError(
        f"not reviewed: the review deadline of {review.deadline:g}s "
        "(NOVA_REVIEW_DEADLINE) passed first"
    )
    if fmt.fallback_reason:
        outcome.notes.append(fmt.fallback_reason)
    outcome.notes += chain.notes
    for i, res in enumerate(finished):  # in batch order, whatever order they finished in
        if isinstance(res, ParsedAnswer):
            _collect(outcome, res)
        else:
            files = ", ".join(f.path for f in plan.batches[i].files)
            label = f"batch {i + 1}/{count} ({files})" if count > 1 else "LLM review"
            outcome.errors.append(f"{label}: {late if res is None else res}")


def _collect(outcome: ReviewOutcome, answer: ParsedAnswer) -> None:
    outcome.comments += answer.comments
    if answer.summary:
        outcome.summaries.append(answer.summary)
    outcome.walkthrough += answer.walkthrough
    outcome.notes += [f"dropped malformed model comment ({why})" for why in answer.rejected]
