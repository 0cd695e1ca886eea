"""Inside GitHub Actions: the job summary ($GITHUB_STEP_SUMMARY) and step outputs
($GITHUB_OUTPUT: comments, unplaced, errors, inline_posted)."""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings
from bot.models import ReviewResult
from bot.publishers.local import format_result

__all__ = ["ActionsPublisher"]


class ActionsPublisher:
    def __init__(self, settings: Settings, inline_posted: object = None) -> None:
        self.settings = settings
        self.inline_posted = inline_posted  # a GitHubPublisher (its .posted), if any

    def publish(self, result: ReviewResult) -> None:
        if self.settings.github_step_summary:
            with Path(self.settings.github_step_summary).open("a", encoding="utf-8") as f:
                f.write(format_result(result, "markdown") + "\n")
        if self.settings.github_output:
            posted = getattr(self.inline_posted, "posted", 0)
            with Path(self.settings.github_output).open("a", encoding="utf-8") as f:
                f.write(f"comments={len(result.placed)}\nunplaced={len(result.unplaced)}\n"
                        f"errors={len(result.errors)}\ninline_posted={posted}\n")
