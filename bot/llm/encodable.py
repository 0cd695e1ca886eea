"""A model's message made safe to send back to it.

The model's answer is decoded by its client from JSON, where ``"\\ud800"`` is legal; the
next call sends that message back (the agent's history), and the client's UTF-8 encoder
refuses a lone surrogate. Every string of the message is passed through
``bot.text.without_surrogates`` once, when it arrives, so its tool arguments and text are
encodable for the tools, the events and the next call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from bot.text import without_surrogates_in

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["encodable"]

M = TypeVar("M", bound="BaseMessage")
_FIELDS = ("content", "tool_calls", "invalid_tool_calls", "additional_kwargs")


def encodable(msg: M) -> M:
    """``msg``, or a copy with its lone surrogates replaced by U+FFFD."""
    update: dict[str, Any] = {}
    for name in _FIELDS:
        value = getattr(msg, name, None)  # only an AIMessage has tool calls
        if value is not None:
            cleaned = without_surrogates_in(value)
            if cleaned != value:
                update[name] = cleaned
    return msg.model_copy(update=update) if update else msg
