"""The agent loop both features use: a LangGraph ``StateGraph`` of model ⇄ tools → parse.

A hand-built graph rather than ``create_agent(response_format=…)``: the review asks for its
final answer in the provider's structured output where it has one (``TextAnswer`` is the
plain way, ``bot.review.agent.answer.AnswerFormat`` the structured one) and we control the
repair turn: an unusable answer is shown its error once, then the run reports a failure.
Every tool result is scrubbed before the model or an event sees it; model calls go through
the retries, the limiter and the fallback chain of ``bot.llm``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from bot.agent.tools import ContextTool
from bot.errors import redact_known
from bot.events import ErrorEvent, EventBus, TextEvent, ToolCallEvent, ToolResultEvent
from bot.llm.encodable import encodable
from bot.llm.fallback import ModelChain
from bot.llm.limiter import FIRST_TURN, FOLLOW_UP, Limiter
from bot.llm.retry import call_with_retries
from bot.llm.settings import LLMSettings
from bot.llm.usage import Stats

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langgraph.graph.state import CompiledStateGraph

__all__ = ["AgentState", "AnswerError", "TextAnswer", "build_graph"]


class AnswerError(ValueError):
    """The answer is not usable; the message is shown to the model."""


class TextAnswer:
    """The final answer read from the model's last message text. One object per run, shared
    by its calls; ``bot.review.agent.answer.AnswerFormat`` adds structured output."""

    def __init__(self, bus: EventBus) -> None:
        self.mode: str = "text"
        self.bus = bus
        self._bound: dict[str, Any] = {}

    def bind(self, model: BaseChatModel, tools: Sequence[dict[str, Any]]) -> None:
        """Prepare the model (with the tools it may call) for each mode this run may use."""
        self._bound["text"] = model.bind_tools(list(tools)) if tools else model

    def rebind(
        self, model: BaseChatModel, tools: Sequence[dict[str, Any]], provider: str | None
    ) -> None:
        """Answer with ``model`` from now on (a fallback model took over)."""
        self._bound.clear()
        self.bind(model, tools)

    async def invoke(self, messages: list[Any]) -> Any:
        msg = await self._bound[self.mode].ainvoke(messages)
        self.bus.emit(TextEvent(content=f"model call answered in {self.mode} mode"))
        return msg

    def submit_calls(self, msg: Any) -> list[dict[str, Any]]:
        """The tool calls that carry the final answer (none: it is the text)."""
        return []

    def answer_text(self, msg: Any) -> str:
        content = msg.content
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content or [])


def _add_messages(left: list[Any], right: list[Any]) -> list[Any]:
    return left + right


class AgentState(TypedDict):
    messages: Annotated[list[Any], _add_messages]
    repairs: int
    answer: object  # what parse_final made of the final text (None until then)
    failure: str | None


def build_graph(
    model: BaseChatModel,
    tools: Sequence[ContextTool],
    bus: EventBus,
    stats: Stats,
    parse_final: Callable[[str], Any],
    scrub: Callable[[str], str] = redact_known,
    answer: TextAnswer | None = None,
    *,
    repair: Callable[[str, str], str] | None = None,
    tool_timeout: float | None = None,
    retries: LLMSettings | None = None,
    limiter: Limiter | None = None,
    chain: ModelChain | None = None,
) -> CompiledStateGraph[AgentState, None, AgentState, AgentState]:
    """Compile the graph once; it is reused by every batch of a run. ``parse_final`` reads
    the model's final text and raises ``AnswerError`` to ask once more, with the prompt
    ``repair(error, mode)`` makes (without ``repair``, the first unusable answer fails).
    ``scrub`` cleans every tool result (built-in and MCP tools alike) before the model or an
    event sees it. A tool call past ``tool_timeout`` seconds answers that it timed out. With
    ``retries``
    (the model's settings), model calls are retried by ``bot.llm.retry`` — build ``model``
    with ``max_retries=0`` — and each retry is an event. With ``chain``, a model that fails
    for good hands over to the next NOVA_LLM_FALLBACK model (``bot.llm.fallback``)."""
    from langchain_core.messages import HumanMessage, ToolMessage
    from langgraph.graph import END, START, StateGraph

    by_name = {t.name: t for t in tools}
    fmt = answer or TextAnswer(bus)
    fmt.bind(model, [t.schema() for t in tools])
    if chain is not None:
        chain.on_switch = lambda m, s: fmt.rebind(m, [t.schema() for t in tools], s.provider)

    def on_retry(text: str) -> None:
        bus.emit(ErrorEvent(error=text, recoverable=True))

    async def call_model(state: AgentState) -> dict[str, Any]:
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

    async def run_tools(state: AgentState) -> dict[str, Any]:
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

    def parse(state: AgentState) -> dict[str, Any]:
        last = state["messages"][-1]
        try:
            return {"answer": parse_final(fmt.answer_text(last))}
        except AnswerError as exc:
            if repair is None:
                return {"failure": f"the model answered unusable output ({exc})"}
            if state["repairs"] >= 1:
                return {"failure": f"the model answered unusable output twice ({exc})"}
            bus.emit(ErrorEvent(error=f"unusable model answer, asking once more: {exc}"))
            text = repair(str(exc), fmt.mode)
            calls = last.tool_calls or []  # every tool call must be answered by its id
            again = (
                [
                    ToolMessage(content=text, tool_call_id=str(c["id"]), name=c["name"])
                    for c in calls
                ]
                if calls
                else [HumanMessage(content=text)]
            )
            return {"repairs": state["repairs"] + 1, "messages": again}

    def after_model(state: AgentState) -> str:
        msg = state["messages"][-1]
        if fmt.submit_calls(msg):
            return "parse"
        wants_tools = bool(msg.tool_calls or getattr(msg, "invalid_tool_calls", None))
        return "tools" if wants_tools else "parse"

    def after_parse(state: AgentState) -> str:
        return END if state.get("answer") or state.get("failure") else "model"

    graph = StateGraph(AgentState)
    graph.add_node("model", call_model)
    graph.add_node("tools", run_tools)
    graph.add_node("parse", parse)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", after_model, {"tools": "tools", "parse": "parse"})
    graph.add_edge("tools", "model")
    graph.add_conditional_edges("parse", after_parse, {END: END, "model": "model"})
    return graph.compile()
