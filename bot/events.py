"""Execution events: what stages and agents report while they run.

Every event serializes with ``to_dict()`` to JSON-ready data carrying ``event_type`` and
``timestamp``, and ``event_from_dict`` rebuilds an equal event. Sinks (terminal progress,
plain CI lines, a JSON-lines file) receive events through an ``EventBus``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import IO, Any, ClassVar

from bot.errors import one_line, redact

__all__ = [
    "DecisionEvent",
    "DoneEvent",
    "ErrorEvent",
    "EventBus",
    "ExecutionEvent",
    "FileOperationEvent",
    "JsonLinesSink",
    "PlainSink",
    "StepEvent",
    "TerminalSink",
    "TextEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "event_from_dict",
]


@dataclass(frozen=True)
class ExecutionEvent:
    event_type: ClassVar[str] = "event"
    timestamp: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["event_type"] = self.event_type
        return data


@dataclass(frozen=True)
class TextEvent(ExecutionEvent):
    event_type: ClassVar[str] = "text"
    content: str = ""
    is_final: bool = False


@dataclass(frozen=True)
class ToolCallEvent(ExecutionEvent):
    event_type: ClassVar[str] = "tool_call"
    tool_name: str = ""
    tool_args: dict[str, Any] = field(default_factory=dict)
    tool_call_id: str = ""


@dataclass(frozen=True)
class ToolResultEvent(ExecutionEvent):
    event_type: ClassVar[str] = "tool_result"
    tool_call_id: str = ""
    result: Any = None
    status: str = "success"  # success | error


@dataclass(frozen=True)
class FileOperationEvent(ExecutionEvent):
    event_type: ClassVar[str] = "file_operation"
    operation: str = "read"  # read | write | edit
    file_path: str = ""
    metrics: dict[str, int] = field(default_factory=dict)
    diff: str | None = None
    status: str = "success"


@dataclass(frozen=True)
class StepEvent(ExecutionEvent):
    event_type: ClassVar[str] = "step"
    step_name: str = ""
    status: str = "running"  # running | completed | failed | skipped
    message: str = ""


@dataclass(frozen=True)
class ErrorEvent(ExecutionEvent):
    event_type: ClassVar[str] = "error"
    error: str = ""
    recoverable: bool = True


@dataclass(frozen=True)
class DecisionEvent(ExecutionEvent):
    """A human-in-the-loop decision: ``--confirm`` on a terminal, or a command in the code
    host's conversation (``bot.conversation``): who, what, about which finding, and
    whether it was allowed."""

    event_type: ClassVar[str] = "decision"
    handler: str = ""  # terminal | github | gitlab | phabricator
    actor: str = ""
    action: str = ""  # dismiss | explain | review | help | resolve | publish
    outcome: str = ""  # dismissed | refused | misplaced | asked | review | help | fixed …
    finding: str = ""  # the finding's fingerprint, when it is about one
    allowed: bool = True
    detail: str = ""
    # 👍 / 👎 people put on Nova's comment of the finding ({"up": n, "down": m}), where the
    # host has reactions: how the team rates it, also when nobody wrote a command
    reactions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class DoneEvent(ExecutionEvent):
    event_type: ClassVar[str] = "done"
    token_usage: dict[str, int] | None = None
    cancelled: bool = False


_TYPES: dict[str, type[ExecutionEvent]] = {
    cls.event_type: cls
    for cls in (
        TextEvent,
        ToolCallEvent,
        ToolResultEvent,
        FileOperationEvent,
        StepEvent,
        ErrorEvent,
        DecisionEvent,
        DoneEvent,
    )
}


def event_from_dict(data: dict[str, Any]) -> ExecutionEvent:
    """Rebuild an event from ``to_dict()`` output; unknown types raise ``ValueError``."""
    kind = data.get("event_type")
    cls = _TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event_type {kind!r}")
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


Sink = Callable[[ExecutionEvent], None]


class EventBus:
    """Fans events out to sinks. Thread-safe: agent batches emit from worker threads."""

    def __init__(self, sinks: list[Sink] | None = None) -> None:
        self._sinks = list(sinks or [])
        self._lock = threading.Lock()
        self.history: list[ExecutionEvent] = []

    def add(self, sink: Sink) -> None:
        self._sinks.append(sink)

    def emit(self, event: ExecutionEvent) -> None:
        with self._lock:
            self.history.append(event)
            for sink in self._sinks:
                sink(event)

    def close(self) -> None:
        for sink in self._sinks:
            closer = getattr(sink, "close", None)
            if closer is not None:
                closer()


def _line(event: ExecutionEvent) -> str | None:
    """The progress line of ``event``: redacted, one line, never a runner command (its text
    may come from the model or the diff)."""
    text = _describe(event)
    if not text:
        return None
    text = one_line(redact(text))
    stripped = text.lstrip()
    return f"  : {stripped}" if stripped.startswith("::") else text


def _describe(event: ExecutionEvent) -> str | None:
    if isinstance(event, StepEvent):
        tail = f": {event.message}" if event.message else ""
        return f"[{event.step_name}] {event.status}{tail}"
    if isinstance(event, ToolCallEvent):
        args = ", ".join(f"{k}={v!r}" for k, v in list(event.tool_args.items())[:3])
        return f"  tool {event.tool_name}({args[:120]})"
    if isinstance(event, ErrorEvent):
        return f"  {'warning' if event.recoverable else 'error'}: {event.error}"
    if isinstance(event, DecisionEvent):
        about = f" on {event.finding}" if event.finding else ""
        return f"  {event.handler}: {event.actor} {event.action}{about} -> {event.outcome}"
    if isinstance(event, TextEvent) and event.content:
        return f"  {event.content[:200]}"
    if isinstance(event, DoneEvent) and event.token_usage:
        usage = event.token_usage
        return (
            f"[done] {usage.get('llm_calls', 0)} LLM calls, "
            f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens"
        )
    return None


class PlainSink:
    """One plain line per interesting event, for CI logs (stderr, never stdout)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, event: ExecutionEvent) -> None:
        text = _line(event)
        if text:
            print(text, file=self.stream, flush=True)


class TerminalSink(PlainSink):
    """A live one-line status on a terminal; finished steps stay on screen."""

    def __call__(self, event: ExecutionEvent) -> None:
        text = _line(event)
        if not text:
            return
        final = isinstance(event, StepEvent) and event.status != "running"
        final = final or isinstance(event, DoneEvent | ErrorEvent)
        width = 100
        self.stream.write("\r\x1b[2K" + (text if final else text[:width]))
        self.stream.write("\n" if final else "")
        self.stream.flush()


class JsonLinesSink:
    """``--events-file``: one JSON object per line."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def __call__(self, event: ExecutionEvent) -> None:
        line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        self._file.write(redact(line) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
