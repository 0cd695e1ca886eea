"""Split a change into review batches under a token budget; list what is skipped and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.change import FileDiff
from bot.diff.render import Style, render_file
from bot.llm.factory import estimate_tokens

__all__ = ["Batch", "Plan", "plan_batches"]


@dataclass
class Batch:
    files: list[FileDiff] = field(default_factory=list)
    text: str = ""
    tokens: int = 0


@dataclass
class Plan:
    batches: list[Batch]
    skipped: list[tuple[str, str]]  # (path, reason)


def plan_batches(files: Sequence[FileDiff], *, budget: int, max_file_tokens: int,
                 style: Style = "compact") -> Plan:
    """Greedy first-fit by file order: each batch's rendered diff stays under ``budget``.
    What to review was chosen before (bot.review_filter); files that cannot be rendered are
    still listed, not sent."""
    skipped: list[tuple[str, str]] = []
    rendered: list[tuple[FileDiff, str, int]] = []
    for f in files:
        if f.is_binary:
            skipped.append((f.path, "binary"))
            continue
        if f.status == "deleted":
            skipped.append((f.path, "deleted"))
            continue
        if not f.hunks:
            skipped.append((f.path, f"{f.status}, no content change"))
            continue
        text = "\n".join(render_file(f, style)) + "\n"
        tokens = estimate_tokens(text)
        if tokens > max_file_tokens:
            skipped.append((f.path, f"diff too large (~{tokens} tokens > {max_file_tokens})"))
            continue
        rendered.append((f, text, tokens))
    batches: list[Batch] = []
    for f, text, tokens in rendered:
        target = next((b for b in batches if b.tokens + tokens <= budget), None)
        if target is None:
            target = Batch()
            batches.append(target)
        target.files.append(f)
        target.text += ("\n" if target.text else "") + text
        target.tokens += tokens
    return Plan(batches, skipped)
