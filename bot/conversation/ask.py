"""Answers to questions, with a model: one call per question, shown the finding, the code
around its line and the thread. Everything people wrote is untrusted and fenced as data in
the prompt (``prompts/respond/``); the answer is cleaned like every model text."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.change import Change
from bot.conversation.answers import model_answer_text, safe
from bot.conversation.ledger import Decision
from bot.conversation.model import Note, fingerprint_of
from bot.errors import ModelError
from bot.events import ErrorEvent, EventBus
from bot.hosts.base import TreeReader
from bot.llm.settings import LLMSettings
from bot.prompts import render_prompt

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["ask_model", "code_around", "data", "question_prompt"]

_CONTEXT = 12  # lines either side of the finding's line
# the prompt's own delimiters (prompts/respond/user.j2), as people's text could spell them
_TAG = re.compile(r"<(\s*/?\s*(?:thread|code|finding)\b)", re.IGNORECASE)
_NOTE_LIMIT = 4_000  # characters of one earlier comment shown to the model
_THREAD_LIMIT = 20  # earlier comments shown


def data(text: str) -> str:
    """Untrusted text placed between the prompt's tags: it can neither close nor open one
    (``</thread>`` reads ``‹/thread>``, which the model still reads as what was written)."""
    return _TAG.sub("‹\\1", text)


def code_around(tree: TreeReader | None, path: str, line: int | None) -> str:
    if tree is None or not path or not line:
        return ""
    text = tree.read_text(path)
    if text is None:
        return ""
    rows = text.splitlines()
    lo, hi = max(1, line - _CONTEXT), min(len(rows), line + _CONTEXT)
    return "\n".join(f"{n}: {rows[n - 1]}" for n in range(lo, hi + 1))


def _shown(note: Note) -> dict[str, str]:
    body = note.body
    if fingerprint_of(body) is not None or note.mine:
        body = body.split("<!-- nova:", 1)[0]
    author = "Nova" if note.mine else data(note.author)
    return {"author": author, "body": data(body[:_NOTE_LIMIT])}


def question_prompt(change: Change, decision: Decision, tree: TreeReader | None) -> str:
    thread = decision.thread
    notes = list(thread.notes) if thread is not None else []
    earlier = [n for n in notes if n.seq < decision.note.seq][-_THREAD_LIMIT:]
    return render_prompt(
        "respond/user.j2",
        title=data(change.title or change.id),
        path=data(thread.path) if thread else "",
        line=thread.line if thread else None,
        finding=_shown(thread.root)["body"] if thread else "",
        code=data(code_around(tree, thread.path, thread.line)) if thread else "",
        thread=[_shown(n) for n in earlier],
        asker=data(safe(decision.note.author)),
        question=data(decision.command.text or "Explain this finding."),
    )


def ask_model(
    llm: LLMSettings, bus: EventBus, change: Change, decision: Decision, tree: TreeReader | None
) -> str:
    """One model call; the cleaned answer. Raises ``ModelError`` when every model failed."""
    from bot.llm.loop import run_coroutine

    system, user = render_prompt("respond/system.j2"), question_prompt(change, decision, tree)
    return model_answer_text(run_coroutine(_call(llm, bus, system, user)))


async def _call(llm: LLMSettings, bus: EventBus, system: str, user: str) -> str:
    from langchain_core.messages import HumanMessage, SystemMessage

    from bot.llm.fallback import ModelChain
    from bot.llm.retry import call_with_retries

    chain = ModelChain(llm, bus)

    async def ask(settings: LLMSettings) -> BaseMessage:
        model = chain.model
        return await call_with_retries(
            lambda: model.ainvoke([SystemMessage(system), HumanMessage(user)]),
            settings,
            lambda why: bus.emit(ErrorEvent(error=why, recoverable=True)),
        )

    try:
        answer = await chain.call(ask)
    finally:
        await chain.aclose()
    content = answer.content
    if isinstance(content, list):
        content = "".join(c if isinstance(c, str) else str(c.get("text", "")) for c in content)
    if not isinstance(content, str):
        raise ModelError("the model's answer was not text")
    return content
