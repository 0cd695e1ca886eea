"""The review agent: a LangGraph ``StateGraph`` of model ⇄ tools → parse.

A hand-built graph rather than ``create_agent(response_format=…)``: the final answer uses the
provider's structured output where it has one (``answer.py``: a JSON schema for OpenAI-
compatible servers, a ``submit_review`` tool for Anthropic) and falls back to JSON in the
message text when a server refuses it; and we control the repair turn: an unusable answer is
shown its error once, then the batch is reported as failed.

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
from typing import TYPE_CHECKING, Annotated, Any, TypedDict, TypeVar

from bot.analyzers.secrets import Scrubber
from bot.change import Change, Comment
from bot.errors import ModelError, redact_known
from bot.events import ErrorEvent, EventBus, ToolCallEvent, ToolResultEvent
from bot.hosts.base import TreeReader
from bot.llm.encodable import encodable
from bot.llm.factory import make_chat_model, model_error, provider_errors
from bot.llm.fallback import ModelChain
from bot.llm.limiter import FIRST_TURN, FOLLOW_UP, Limiter
from bot.llm.retry import call_with_retries
from bot.llm.settings import LLMSettings
from bot.llm.usage import Stats
from bot.prompts import render_prompt
from bot.review.agent.answer import AnswerFormat
from bot.review.agent.batching import Batch, Plan, plan_batches
from bot.review.agent.output import AnswerError, ParsedAnswer, parse_answer
from bot.review.agent.progress import Guarded, Known, Progress
from bot.review.agent.tools import ContextTool, context_tools
from bot.review.settings import ReviewSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph.state import CompiledStateGraph

__all__ = ["BatchDone", "ReviewOutcome", "build_graph", "review_change"]

T = TypeVar("T")


@dataclass
class ReviewOutcome:
    comments: list[Comment] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


BatchDone = Callable[[ParsedAnswer], None]


def _add_messages(left: list[Any], right: list[Any]) -> list[Any]:
    return left + right


class ReviewState(TypedDict):
    messages: Annotated[list[Any], _add_messages]
    repairs: int
    answer: object  # what parse_final made of the final text (None until then)
    failure: str | None


def build_graph(
    model: BaseChatModel,
    tools: Sequence[ContextTool],
    bus: EventBus,
    stats: Stats,
    parse_final: Callable[[str], Any] = parse_answer,
    scrub: Callable[[str], str] = redact_known,
    answer: AnswerFormat | None = None,
    *,
    tool_timeout: float | None = None,
    retries: LLMSettings | None = None,
    limiter: Limiter | None = None,
    chain: ModelChain | None = None,
) -> CompiledStateGraph[ReviewState, None, ReviewState, ReviewState]:
    """Compile the graph once; it is reused by every batch of a run. ``parse_final`` reads
    the model's final text and raises ``AnswerError`` to ask once more; ``scrub`` cleans
    every tool result (built-in and MCP tools alike) before the model or an event sees it.
    A tool call past ``tool_timeout`` seconds answers that it timed out. With ``retries``
    (the model's settings), model calls are retried by ``bot.llm.retry`` — build ``model``
    with ``max_retries=0`` — and each retry is an event. With ``chain``, a model that fails
    for good hands over to the next NOVA_LLM_FALLBACK model (``bot.llm.fallback``)."""
    from langchain_core.messages import HumanMessage, ToolMessage
    from langgraph.graph import END, START, StateGraph

    by_name = {t.name: t for t in tools}
    fmt = answer or AnswerFormat("text", bus)
    fmt.bind(model, [t.schema() for t in tools])
    if chain is not None:
        chain.on_switch = lambda m, s: fmt.rebind(m, [t.schema() for t in tools], s.provider)

    def on_retry(text: str) -> None:
        bus.emit(ErrorEvent(error=text, recoverable=True))

    async def call_model(state: ReviewState) -> dict[str, Any]:
        turn = FOLLOW_UP if len(state["messages"]) > 2 else FIRST_TURN

        async def ask(s: LLMSettings | None) -> Any:
            if s is not None:
                return await call_with_retries(
                    lambda: fmt.invoke(state["messages"]), s, on_retry, limiter, turn
                )
            if limiter is not None:
                async with limiter.slot():
                    return await fmt.invoke(state["messages"])
            return await fmt.invoke(state["messages"])

        if chain is not None:  # a model that fails for good hands over to the next one
            msg = await chain.call(lambda s: ask(s if retries is not None else None))
        else:
            msg = await ask(retries)
        msg = encodable(msg)  # it is sent back in the next call: no lone surrogate
        usage = getattr(msg, "usage_metadata", None) or {}
        stats.add_usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
        return {"messages": [msg]}

    async def run_tools(state: ReviewState) -> dict[str, Any]:
        msg = state["messages"][-1]
        out = []
        calls: list[tuple[Any, Any, dict[str, Any], str | None]] = [
            (c["id"], c["name"], c.get("args") or {}, None) for c in msg.tool_calls
        ]
        calls += [
            (c.get("id"), c.get("name"), {}, c.get("error") or "arguments are not JSON")
            for c in getattr(msg, "invalid_tool_calls", [])
        ]
        for call_id, name, args, problem in calls:
            bus.emit(ToolCallEvent(tool_name=str(name), tool_args=args, tool_call_id=str(call_id)))
            tool = by_name.get(str(name))
            if problem is not None:
                result, status = f"error: bad tool call: {problem}", "error"
            elif tool is None:
                result = f"error: unknown tool {name!r}; available: {', '.join(by_name)}"
                status = "error"
            else:
                try:
                    result = await tool.invoke(args, tool_timeout)
                    status = "error" if result.startswith("error:") else "success"
                except (TypeError, ValueError) as exc:
                    result, status = f"error: bad arguments for {name}: {exc}", "error"
            result = scrub(redact_known(result))
            bus.emit(ToolResultEvent(tool_call_id=str(call_id), result=result[:500], status=status))
            out.append(ToolMessage(content=result, tool_call_id=str(call_id), name=str(name)))
        return {"messages": out}

    def parse(state: ReviewState) -> dict[str, Any]:
        last = state["messages"][-1]
        try:
            return {"answer": parse_final(fmt.answer_text(last))}
        except AnswerError as exc:
            if state["repairs"] >= 1:
                return {"failure": f"the model answered unusable output twice ({exc})"}
            bus.emit(ErrorEvent(error=f"unusable model answer, asking once more: {exc}"))
            text = render_prompt("review/repair.j2", error=str(exc), mode=fmt.mode)
            calls = last.tool_calls or []  # every tool call must be answered by its id
            repair = (
                [
                    ToolMessage(content=text, tool_call_id=str(c["id"]), name=c["name"])
                    for c in calls
                ]
                if calls
                else [HumanMessage(content=text)]
            )
            return {"repairs": state["repairs"] + 1, "messages": repair}

    def after_model(state: ReviewState) -> str:
        msg = state["messages"][-1]
        if fmt.submit_calls(msg):
            return "parse"
        wants_tools = bool(msg.tool_calls or getattr(msg, "invalid_tool_calls", None))
        return "tools" if wants_tools else "parse"

    def after_parse(state: ReviewState) -> str:
        return END if state.get("answer") or state.get("failure") else "model"

    graph = StateGraph(ReviewState)
    graph.add_node("model", call_model)
    graph.add_node("tools", run_tools)
    graph.add_node("parse", parse)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", after_model, {"tools": "tools", "parse": "parse"})
    graph.add_edge("tools", "model")
    graph.add_conditional_edges("parse", after_parse, {END: END, "model": "model"})
    return graph.compile()


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

    state: ReviewState = {
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
    outcome.notes += [f"dropped malformed model comment ({why})" for why in answer.rejected]
