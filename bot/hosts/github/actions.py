"""Inside GitHub Actions: workflow annotations, the job summary ($GITHUB_STEP_SUMMARY) and step
outputs ($GITHUB_OUTPUT: comments, unplaced, errors, inline_posted).

The runner executes any stdout line that starts with ``::``. Every untrusted value that goes
into a workflow command is escaped (data: ``%``, CR, LF; properties also ``:`` and ``,``).
"""

from __future__ import annotations

from pathlib import Path

from bot.hosts.github.settings import GitHubSettings
from bot.report.formats import format_result
from bot.report.untrusted import clean_text
from bot.review.result import ReviewResult

__all__ = ["ActionsOutput", "escape_data", "escape_property", "workflow_annotations"]


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_annotations(result: ReviewResult) -> list[str]:
    """``::warning file=…,line=…::`` lines: Actions shows them on the diff without a token."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    out = []
    for p in result.placements:
        where = f"file={escape_property(clean_text(p.path or p.comment.path))}"
        if p.placed:
            where += f",line={p.line}" + (f",endLine={p.end_line}" if p.end_line else "")
        text = p.comment.body if p.placed else f"{p.comment.body} (not placed: {p.reason})"
        out.append(
            f"::{level[p.comment.severity]} {where},title=Nova::{escape_data(clean_text(text))}"
        )
    return out


class ActionsOutput:
    """Writes the job summary and step outputs after the hosts have published."""

    def __init__(self, settings: GitHubSettings) -> None:
        self.settings = settings

    def publish(self, result: ReviewResult) -> None:
        if self.settings.step_summary:
            with Path(self.settings.step_summary).open("a", encoding="utf-8") as f:
                f.write(clean_text(format_result(result, "markdown")) + "\n")
        if self.settings.output:
            with Path(self.settings.output).open("a", encoding="utf-8") as f:
                f.write(
                    f"comments={len(result.placed)}\nunplaced={len(result.unplaced)}\n"
                    f"errors={len(result.errors)}\ninline_posted={result.inline_posted}\n"
                )
