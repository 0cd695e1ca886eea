"""Split a change into review batches under a token budget; list what is skipped and why.

Fewer, fuller calls: every model call pays a fixed latency and sends the system prompt once,
so batches are packed close to the budget. Files of one directory go together (a module and
its neighbours are reviewed by one call): whole directories are packed first-fit decreasing,
a directory bigger than the budget is cut into budget-sized runs of its files (path order),
and the small leftovers fill the gaps. Within a batch, files keep their path order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

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


@dataclass
class _Rendered:
    order: int  # position in the change
    file: FileDiff
    text: str
    tokens: int


def plan_batches(
    files: Sequence[FileDiff], *, budget: int, max_file_tokens: int, style: Style = "compact"
) -> Plan:
    """Pack the renderable files into batches whose rendered diff stays under ``budget``
    (a single file bigger than the budget, but under ``max_file_tokens``, is a batch of its
    own). What to review was chosen before (bot.review.filter); files that cannot be
    rendered are still listed, not sent."""
    skipped: list[tuple[str, str]] = []
    rendered: list[_Rendered] = []
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
        rendered.append(_Rendered(len(rendered), f, text, tokens))
    bins = _pack(_pieces(rendered, budget), budget)
    batches = []
    for members in sorted(bins, key=lambda b: min(r.order for r in b)):
        members.sort(key=lambda r: r.order)
        batches.append(
            Batch(
                files=[r.file for r in members],
                text="\n".join(r.text for r in members),
                tokens=sum(r.tokens for r in members),
            )
        )
    return Plan(batches, skipped)


def _pieces(rendered: Sequence[_Rendered], budget: int) -> list[list[_Rendered]]:
    """The units of packing: one per directory, or budget-sized runs of a big directory."""
    by_dir: dict[str, list[_Rendered]] = {}
    for r in rendered:
        by_dir.setdefault(str(PurePosixPath(r.file.path).parent), []).append(r)
    pieces: list[list[_Rendered]] = []
    for members in by_dir.values():
        run: list[_Rendered] = []
        size = 0
        for r in members:
            if run and size + r.tokens > budget:
                pieces.append(run)
                run, size = [], 0
            run.append(r)
            size += r.tokens
        pieces.append(run)
    return pieces


def _pack(pieces: list[list[_Rendered]], budget: int) -> list[list[_Rendered]]:
    """First-fit decreasing: a piece goes whole into the first batch with room; one that
    fits nowhere whole is spread file by file over the batches with room (largest file
    first), and what is left opens a new batch."""
    bins: list[list[_Rendered]] = []
    room: list[int] = []
    for piece in sorted(pieces, key=lambda p: -sum(r.tokens for r in p)):
        size = sum(r.tokens for r in piece)
        at = next((i for i, free in enumerate(room) if size <= free), None)
        if at is not None:
            bins[at] += piece
            room[at] -= size
            continue
        rest: list[_Rendered] = []
        for r in sorted(piece, key=lambda r: -r.tokens):
            at = next((i for i, free in enumerate(room) if r.tokens <= free), None)
            if at is None:
                rest.append(r)
            else:
                bins[at].append(r)
                room[at] -= r.tokens
        if rest:
            bins.append(rest)
            room.append(budget - sum(r.tokens for r in rest))
    return bins
