"""The terminal and file surface: moves a rendered review (``formats``) to stdout or a
file; in GitHub Actions, fenced off from workflow commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from bot.errors import UsageError
from bot.report.commands import fence_commands, write_fenced
from bot.report.formats import FORMATS, format_result
from bot.review.result import ReviewResult

__all__ = ["LocalPublisher", "fence_commands"]


class LocalPublisher:
    """Writes the formatted review to ``stream`` (stdout) or to ``path``."""

    def __init__(
        self,
        fmt: str = "text",
        path: Path | None = None,
        stream: IO[str] | None = None,
        *,
        fence: bool = False,
        option: str = "--output-file",
    ) -> None:
        if fmt not in FORMATS:
            raise UsageError(f"unknown output format {fmt!r}; use one of {', '.join(FORMATS)}")
        self.fmt = fmt
        self.path = path
        self.stream = stream
        self.fence = fence  # in GitHub Actions: stdout is scanned for workflow commands
        self.option = option  # named in the error when the file cannot be written

    def publish(self, result: ReviewResult) -> None:
        text = format_result(result, self.fmt)
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {self.option} {self.path}: {exc}") from exc
        else:
            stream = self.stream or sys.stdout
            if self.fence:
                write_fenced(stream, text)
            else:
                stream.write(text)
                stream.flush()
