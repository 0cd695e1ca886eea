"""The words Nova answers with. Every untrusted text (a reason, a question, a login) is
cleaned like model output before it is posted: no mentions, no HTML comments, no forged
markers; a line that could start an Actions workflow command is indented."""

from __future__ import annotations

import json
import re

from bot.conversation.ledger import Decision
from bot.conversation.model import Thread
from bot.conversation.questions import ASK_REFUSED, CHANGE_LIMIT, PERSON_LIMIT
from bot.report.untrusted import cap, clean_text, plain_code

__all__ = [
    "ANSWER_LIMIT",
    "finding_rule",
    "fixed_text",
    "help_text",
    "ignore_snippet",
    "no_model_answer",
    "question_notice",
    "reply_text",
    "safe",
]

ANSWER_LIMIT = 20_000
DOCS = "https://github.com/nova-bot/nova#talking-to-nova"
_RULE = re.compile(
    r"\*\*(error|warning|info)\*\* \((?:\[(?P<linked>[^\]]{1,200})\]\((?P<url>https?://[^)\s]{1,500})\)"
    r"|(?P<plain>[^)\n]{1,200}))\)"
)
_COMMAND_LINE = re.compile(r"^(\s*)::", re.MULTILINE)


_REPLY_MARK = re.compile(r"nova:(?=re:|fp:)", re.IGNORECASE)


def safe(text: str) -> str:
    """Untrusted text as Nova may post it (no forged "answered" or finding marks either)."""
    text = _REPLY_MARK.sub("nova\u200b:", clean_text(text))
    return _COMMAND_LINE.sub("\\1:\u200b:", text)  # the runner trims, then looks for "::"


def finding_rule(thread: Thread) -> tuple[str | None, str | None]:
    """(rule, documentation URL) of the finding in Nova's own comment, when it has one."""
    m = _RULE.search(thread.root.body)
    if not m:
        return None, None
    rule = (m.group("linked") or m.group("plain") or "").replace("\\[", "[").replace("\\]", "]")
    return rule.replace("\u200b", "") or None, m.group("url")


def help_text(handle: str) -> str:
    h = f"@{handle}"
    return "\n".join(
        [
            f"Commands Nova answers to (reply to one of its comments, or comment on the change "
            f"for `{h} review` and `{h} help`):",
            "",
            f"- `{h} dismiss [reason]` (also `ignore`, `false positive`): take this finding out "
            "of the gate. Only people who may merge can; it is listed in the summary and never "
            "posted again.",
            f"- `{h} dismiss always [reason]`: the same, and Nova answers with an `[[ignore]]` "
            "entry for `.nova.toml` that ignores such findings once it is on the base branch.",
            f"- `{h} explain`, or any question: an answer about this finding.",
            f"- `{h} review`: review the new commits.",
            f"- `{h} help`: this list.",
            "",
            "A command in a quote, in code, in an edited comment or by a bot is not a command.",
        ]
    )


def ignore_snippet(thread: Thread, reason: str) -> str:
    """A ready-to-commit ``[[ignore]]`` entry for the finding of ``thread``."""
    rule, _url = finding_rule(thread)
    lines = ["[[ignore]]", f"path = {_toml(thread.path or '**')}"]
    if rule:
        lines.append(f"rule = {_toml(rule)}")
    else:
        lines.append(f"fingerprint = {_toml(thread.fingerprint or '')}")
    if reason:
        lines.append(f"reason = {_toml(reason)}")
    return "```toml\n" + "\n".join(lines) + "\n```"


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's), never closing the code fence."""
    return json.dumps(text.replace("`", "'"), ensure_ascii=False)


def reply_text(decision: Decision, handle: str, head: str = "", already: bool = False) -> str:
    """Nova's answer to every command but a question (``asked``)."""
    who = f"`{safe(decision.note.author)}`"
    reason = safe(decision.command.text) if decision.command.text else ""
    if decision.outcome == "dismissed":
        text = (
            f"Dismissed by {who}{': ' + reason if reason else ''}. This finding no longer "
            "counts for the gate, is listed in the summary and will not be posted again "
            "(the next review applies it)."
        )
        if decision.command.always and decision.thread is not None:
            text += (
                "\n\nTo ignore such findings from now on, commit this to `.nova.toml` on the "
                "base branch (Nova never writes to the repository):\n\n"
                + ignore_snippet(decision.thread, decision.command.text)
            )
        return text
    if decision.outcome == "refused":
        return (
            f"Only {decision.who_may} can dismiss a finding; {who} has "
            f"`{safe(decision.role)}` access here. Nothing changed: the finding still counts."
        )
    if decision.outcome == "misplaced":
        return (
            f"To dismiss a finding, reply `@{handle} dismiss [reason]` under Nova's comment on "
            "it: a dismissal is about one finding."
        )
    if decision.outcome in ("refused-ask", "limited", "limited-person"):
        return question_notice(decision)
    if decision.outcome == "review" and already:
        return f"`{head[:12]}` is reviewed already: no new commits to review."
    if decision.outcome == "review":
        return f"Reviewing the new commits{' up to `' + head[:12] + '`' if head else ''}."
    return help_text(handle)


def question_notice(decision: Decision) -> str:
    """The one short reply to a question Nova does not answer (its first words are how
    later runs tell it from an answer: ``bot.conversation.questions``)."""
    if decision.outcome == "refused-ask":
        return (
            f"{ASK_REFUSED} {decision.who_may}; `{safe(decision.note.author)}` is not one of "
            f"them, so this and later questions stay unanswered ({DOCS})."
        )
    if decision.outcome == "limited-person":
        return (
            f"{PERSON_LIMIT} questions as often as it does in an hour "
            f"({decision.who_may}); the others wait until the hour has passed."
        )
    return (
        f"{CHANGE_LIMIT} as many questions as it does in an hour ({decision.who_may}); "
        "the others wait until the hour has passed."
    )


def fixed_text(head: str) -> str:
    return (
        f"Fixed in `{head[:12]}`: Nova no longer reports this finding and its line changed. "
        "Resolving this thread."
    )


def no_model_answer(thread: Thread | None) -> str:
    """The answer to a question when no model is configured."""
    rule, url = finding_rule(thread) if thread is not None else (None, None)
    if rule and url:
        about = f"This finding comes from the rule `{safe(rule)}`; its documentation: {url}"
    elif rule:
        about = f"This finding comes from the rule `{safe(rule)}`; see that tool's documentation."
    else:
        about = "The finding's text above is all Nova has to say about it without a model."
    return (
        f"{about}\n\nNova answers questions with a model; none is configured for this "
        "repository. Set `NOVA_LLM_MODEL=provider:model` (e.g. `openai:gpt-4o-mini`, with "
        f"`NOVA_LLM_API_KEY`) in the job that runs `nova respond` ({DOCS})."
    )


def model_answer_text(answer: str) -> str:
    """A model's answer as posted: cleaned, and explaining only — no suggestion block a
    reader could commit in Nova's name."""
    text = plain_code(safe(answer.strip()))
    return cap(text or "(the model gave no answer)", ANSWER_LIMIT, where="an answer")
