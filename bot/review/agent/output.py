"""Read the model's final answer: tolerant JSON extraction, per-comment validation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from bot.agent.graph import AnswerError
from bot.change import Comment, normalize_severity
from bot.review.result import Walk

__all__ = ["AnswerError", "ParsedAnswer", "parse_answer"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class _CommentIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    path: str
    line: int | None = None
    code: str | None = None
    body: str
    end_line: int | None = None
    severity: str = "warning"
    suggestion: str | None = None

    @field_validator("line", "end_line", mode="before")
    @classmethod
    def _int_or_none(cls, v: Any) -> Any:
        """Models write "12", "L12" or "line 12": take the first number, else None."""
        if isinstance(v, str):
            found = re.search(r"\d+", v)
            return int(found.group()) if found else None
        return v


@dataclass
class ParsedAnswer:
    summary: str
    comments: list[Comment]
    rejected: list[str] = field(default_factory=list)  # why individual comments were unusable
    walkthrough: list[Walk] = field(default_factory=list)  # one line per file or group


def _json_candidates(text: str) -> list[str]:
    out = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        out.append(text[start : end + 1])
    out.append(text)
    return out


def parse_answer(text: str, restore: Callable[[str], str] | None = None) -> ParsedAnswer:
    """Parse ``{"summary", "comments": [...]}`` from ``text`` (code fences and prose around
    it are tolerated). Raises ``AnswerError`` when no JSON object can be read. ``restore``
    turns secret placeholders in a quoted ``code`` back into the line's real text, so the
    quote still anchors (the body and suggestion keep the placeholders)."""
    data: Any = None
    last_error = "the answer was empty"
    for candidate in _json_candidates(text or ""):
        try:
            data = json.loads(candidate)
            break
        except json.JSONDecodeError as exc:
            last_error = f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if data is None:
        raise AnswerError(last_error)
    if isinstance(data, list):
        data = {"summary": "", "comments": data}
    if not isinstance(data, dict):
        raise AnswerError("the answer must be a JSON object with 'summary' and 'comments'")
    raw_comments = data.get("comments", [])
    if not isinstance(raw_comments, list):
        raise AnswerError("'comments' must be a list")
    comments: list[Comment] = []
    rejected: list[str] = []
    for i, item in enumerate(raw_comments):
        try:
            c = _CommentIn.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            rejected.append(f"comment {i + 1}: {where}: {first['msg']}")
            continue
        comments.append(
            Comment(
                path=c.path,
                line=c.line,
                body=c.body.strip(),
                end_line=c.end_line,
                severity=normalize_severity(c.severity),
                suggestion=c.suggestion,
                code=restore(c.code) if restore and c.code else c.code,
                origin="llm",
            )
        )
    summary = data.get("summary", "")
    return ParsedAnswer(
        str(summary).strip() if summary else "",
        comments,
        rejected,
        walkthrough(data.get("walkthrough")),
    )


_WALK_LINES = 200  # one per file: more is a model repeating itself
_WALK_CHARS = 300


def walkthrough(raw: Any) -> list[Walk]:
    """The answer's ``walkthrough`` (``[{"path", "change"}]``), tolerantly: a missing or
    malformed one is no walkthrough (the summary then groups the files itself), an entry
    without both texts is left out, and each text is one line of bounded length."""
    if not isinstance(raw, list):
        return []
    out: list[Walk] = []
    for item in raw[:_WALK_LINES]:
        if not isinstance(item, dict):
            continue
        label = item.get("path") or item.get("files") or ""
        text = item.get("change") or item.get("summary") or item.get("note") or ""
        if isinstance(label, str) and isinstance(text, str) and label.strip() and text.strip():
            out.append(Walk(_one_line(label, 200), _one_line(text, _WALK_CHARS)))
    return out


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
