"""How the review agent asks for its final answer, and how it reads it back.

Three modes, one shape (``{summary, walkthrough[{path, change}], comments[{path, line, code,
body, severity, end_line, suggestion}]}``, ``ANSWER_SCHEMA``): the walkthrough of the files
is asked for in the same answer as the findings, never in a call of its own.

- ``json_schema`` (OpenAI and OpenAI-compatible servers: vLLM, Ollama, LiteLLM): the
  provider's structured output, ``response_format={"type": "json_schema", ...}``. It is sent
  in the request body as is (``extra_body``), not through langchain-openai's ``parse`` path,
  which would demand ``strict`` schemas of every tool (MCP tools have optional arguments).
- ``tool`` (Anthropic, which has no JSON schema mode): a ``submit_review`` tool whose
  arguments are the answer, with ``tool_choice="any"`` so every turn calls a tool.
- ``text``: the answer is JSON in the message text, read by the tolerant ``parse_answer``.

A server that refuses the schema (HTTP 400 naming response_format, json_schema or
tool_choice) is asked again at once in ``text`` mode, and so is every later call of the run.
Each call emits the mode it used as an event.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from bot.agent.graph import TextAnswer
from bot.events import ErrorEvent, EventBus, TextEvent
from bot.llm.factory import provider_errors

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["ANSWER_SCHEMA", "ANSWER_TOOL", "AnswerFormat", "Mode", "repair_prompt"]

Mode = Literal["json_schema", "tool", "text"]
ANSWER_TOOL = "submit_review"
_NULLABLE_INT = {"type": ["integer", "null"]}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "walkthrough", "comments"],
    "properties": {
        "summary": {"type": "string"},
        "walkthrough": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "change"],
                "properties": {"path": {"type": "string"}, "change": {"type": "string"}},
            },
        },
        "comments": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "line", "code", "body", "severity", "end_line", "suggestion"],
                "properties": {
                    "path": {"type": "string"},
                    "line": {"type": "integer"},
                    "code": {"type": "string"},
                    "body": {"type": "string"},
                    "severity": {"type": "string", "enum": ["error", "warning", "info"]},
                    "end_line": _NULLABLE_INT,
                    "suggestion": {"type": ["string", "null"]},
                },
            },
        },
    },
}
_REFUSAL_WORDS = ("response_format", "json_schema", "tool_choice", "structured output")


class AnswerFormat(TextAnswer):
    """The answer mode of one run (shared by its batches: a refusal is learned once)."""

    def __init__(self, mode: Mode, bus: EventBus) -> None:
        super().__init__(bus)
        self.mode: Mode = mode
        self.fallback_reason: str | None = None

    @staticmethod
    def for_provider(provider: str | None) -> Mode:
        # json_schema is sent as OpenAI's request field (extra_body): only the OpenAI wire
        # takes it; every other provider's chat model has tool calling (Ollama ignores
        # tool_choice, so its answer may come as text: answer_text reads both).
        return "json_schema" if provider in (None, "openai", "azure_openai") else "tool"

    def bind(self, model: BaseChatModel, tools: Sequence[dict[str, Any]]) -> None:
        super().bind(model, tools)
        if self.mode == "json_schema":
            self._bound["json_schema"] = self._bound["text"].bind(
                extra_body={
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": "review", "strict": True, "schema": ANSWER_SCHEMA},
                    }
                }
            )
        elif self.mode == "tool":
            submit = {
                "type": "function",
                "function": {
                    "name": ANSWER_TOOL,
                    "parameters": ANSWER_SCHEMA,
                    "description": "Submit the finished review: call it once, last.",
                },
            }
            self._bound["tool"] = model.bind_tools([*tools, submit], tool_choice="any")

    def rebind(
        self, model: BaseChatModel, tools: Sequence[dict[str, Any]], provider: str | None
    ) -> None:
        """Answer with ``model`` from now on (a fallback model took over), in its
        provider's mode; a run reading text answers (a refusal) stays in text."""
        if self.mode != "text":
            self.mode = self.for_provider(provider)
        super().rebind(model, tools, provider)

    async def invoke(self, messages: list[Any]) -> Any:
        if self.mode == "text":
            return await super().invoke(messages)
        try:
            msg = await self._bound[self.mode].ainvoke(messages)
        except provider_errors() as exc:
            if not self._refused(exc):
                raise
            self._fall_back(exc)
            return await super().invoke(messages)
        self.bus.emit(TextEvent(content=f"model call answered in {self.mode} mode"))
        return msg

    @staticmethod
    def _refused(exc: BaseException) -> bool:
        text = str(getattr(exc, "message", "") or exc).lower()
        return getattr(exc, "status_code", None) == 400 and any(w in text for w in _REFUSAL_WORDS)

    def _fall_back(self, exc: BaseException) -> None:
        first_line = (str(getattr(exc, "message", "") or exc).splitlines() or [""])[0][:200]
        self.fallback_reason = (
            f"the model server refused {self.mode} structured output "
            f"({first_line}); answers were read from the text instead"
        )
        self.mode = "text"
        self.bus.emit(ErrorEvent(error=self.fallback_reason, recoverable=True))

    def submit_calls(self, msg: Any) -> list[dict[str, Any]]:
        return [c for c in getattr(msg, "tool_calls", None) or [] if c["name"] == ANSWER_TOOL]

    def answer_text(self, msg: Any) -> str:
        """The final answer as JSON text: the submit_review arguments, else the content."""
        calls = self.submit_calls(msg)
        if calls:
            return json.dumps(calls[0].get("args") or {})
        return super().answer_text(msg)


def repair_prompt(error: str, mode: str) -> str:
    """What the model is told after an unusable answer (once; then the batch fails)."""
    from bot.prompts import render_prompt

    return render_prompt("review/repair.j2", error=error, mode=mode)
