"""Linters' results files: one parser module per format, found through ``FORMATS``.

A new format is one module with a ``parse`` function and one entry in ``FORMATS``
(and, when its content is recognisable, a line in ``detect``). Parsers take the file's
bytes and return ``Report`` objects; anything they cannot read is a ``ResultsError``.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from pathlib import Path

from bot.analyzers.formats import checkstyle, eslint, rdjson, sarif
from bot.analyzers.report import Report, ResultsError

__all__ = ["FORMATS", "MAX_BYTES", "detect", "parse_results", "read_results", "split_spec"]

MAX_BYTES = 64 * 2**20  # a results file bigger than this is refused, not read


def _text(data: bytes) -> str:
    """UTF-8 (a BOM allowed) or UTF-16 with its BOM (PowerShell's ``>`` writes that)."""
    try:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ResultsError(
            f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"
        ) from exc


def _json(data: bytes) -> object:
    try:
        return json.loads(_text(data))
    except RecursionError as exc:
        raise ResultsError("JSON nested too deeply") from exc
    except ValueError as exc:
        raise ResultsError(f"not valid JSON: {exc}") from exc


def _sarif(data: bytes) -> list[Report]:
    return sarif.parse(_json(data))


def _rdjson(data: bytes) -> list[Report]:
    return rdjson.parse(_json(data))


def _rdjsonl(data: bytes) -> list[Report]:
    try:
        return rdjson.parse_lines(_text(data))
    except RecursionError as exc:
        raise ResultsError("JSON nested too deeply") from exc


def _eslint(data: bytes) -> list[Report]:
    return eslint.parse(_json(data))


def _checkstyle(data: bytes) -> list[Report]:
    return checkstyle.parse(data)


FORMATS: dict[str, Callable[[bytes], list[Report]]] = {
    "sarif": _sarif,
    "rdjson": _rdjson,
    "rdjsonl": _rdjsonl,
    "checkstyle": _checkstyle,
    "eslint": _eslint,
}
_SUFFIXES = {
    ".sarif": "sarif",
    ".rdjson": "rdjson",
    ".rdjsonl": "rdjsonl",
    ".jsonl": "rdjsonl",
    ".xml": "checkstyle",
}


def _shape(doc: object) -> str | None:
    if isinstance(doc, dict):
        if isinstance(doc.get("runs"), list):
            return "sarif"
        if isinstance(doc.get("diagnostics"), list):
            return "rdjson"
        if isinstance(doc.get("results"), list):
            return "eslint"
        if "message" in doc and "location" in doc:
            return "rdjsonl"
    if isinstance(doc, list) and all(isinstance(d, dict) and "filePath" in d for d in doc):
        return "eslint"
    return None


_UNREAD = object()
_BY_DOC: dict[str, Callable[[object], list[Report]]] = {
    "sarif": sarif.parse,
    "rdjson": rdjson.parse,
    "eslint": eslint.parse,
}


def _detect(data: bytes, name: str) -> tuple[str | None, object]:
    """(format, the parsed JSON document when that was read to tell, else ``_UNREAD``)."""
    try:
        text = _text(data[:MAX_BYTES]).lstrip()
    except ResultsError:
        text = ""
    if text.startswith("<"):
        return "checkstyle", _UNREAD
    if text.startswith(("{", "[")):
        try:
            doc = json.loads(text)
            found = _shape(doc)
            if found in _BY_DOC:
                return found, doc
        except (ValueError, RecursionError):
            first = text.splitlines()[0] if text else ""
            try:
                found = _shape(json.loads(first))
            except (ValueError, RecursionError):
                found = None
            found = "rdjsonl" if found == "rdjsonl" else None
        if found:
            return found, _UNREAD
    return _SUFFIXES.get(Path(name).suffix.lower()), _UNREAD


def detect(data: bytes, name: str = "") -> str | None:
    """The format of ``data`` by its content, else by the file name's suffix."""
    return _detect(data, name)[0]


def split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE[:FORMAT]`` → (file, format or None); a colon not followed by a known format
    is part of the file name."""
    path, sep, fmt = spec.rpartition(":")
    if sep and path and fmt.lower() in FORMATS:
        return path, fmt.lower()
    return spec, None


def parse_results(data: bytes, fmt: str | None, name: str = "") -> tuple[str, list[Report]]:
    """(format, reports) of a results file's bytes; ``ResultsError`` when unreadable."""
    if len(data) > MAX_BYTES:
        raise ResultsError(f"bigger than {MAX_BYTES // 2**20} MiB: not read")
    if not data.strip():  # a tool that found nothing may print nothing (rdjsonl)
        return fmt or "empty", []
    doc = _UNREAD
    if fmt is None:
        fmt, doc = _detect(data, name)
    if fmt is None:
        raise ResultsError(f"format not recognised (give FILE:FORMAT, one of {', '.join(FORMATS)})")
    if doc is not _UNREAD:  # detection already parsed it: once is enough for a big file
        return fmt, _BY_DOC[fmt](doc)
    return fmt, FORMATS[fmt](data)


def read_results(path: Path, fmt: str | None) -> tuple[str, list[Report]]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ResultsError(f"cannot be read: {exc.strerror or type(exc).__name__}") from exc
    return parse_results(data, fmt, path.name)
