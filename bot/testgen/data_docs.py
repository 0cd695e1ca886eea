"""Data documents written in a test's literals, read without running it (for
``amplify_keys``): a text as JSON, TOML (``tomllib``), INI (``configparser``), a YAML-like
text read by indentation (``key: value``, ``key:`` with a block under it, ``- item`` and
``- key: value`` items) or ``key=value`` lines; a dict literal by its constants (an
expression is an ``Expr``). A document is a mapping of at least two entries."""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib

__all__ = ["Expr", "from_node", "parsed"]

MAX_TEXT = 50_000  # characters of a text tried as a document


class Expr:
    """A dict literal's value that is an expression, not a literal (a call, a name)."""


_PAIR = re.compile(r"""([\w.-]+|"[^"\n]*"|'[^'\n]*')\s*:(?:\s+(.*?))?\s*""")
_LINE = re.compile(r"\s*([\w.-]+)\s*[=:]\s*(.*?)\s*")
_SECTION = re.compile(r"^\s*\[[^\]\n]+\]\s*$", re.M)
_NUMBER = re.compile(r"[+-]?\d+")
_FRACTION = re.compile(r"[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?")


def _scalar(text: str) -> object:
    """A value written as text in a light document (YAML-like, INI, ``key=value``)."""
    text = re.sub(r"\s+#.*$", "", text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    low = text.lower()
    if low in ("true", "false", "yes", "no", "on", "off"):
        return low in ("true", "yes", "on")
    if low in ("null", "~", "none"):
        return None
    if _NUMBER.fullmatch(text):
        return int(text)
    if _FRACTION.fullmatch(text):
        return float(text)
    if text and text[0] in "[{":
        try:
            loaded: object = json.loads(text)
        except ValueError:
            loaded = [_scalar(t) for t in text[1:-1].split(",") if t.strip()]
            return loaded if text[0] == "[" else {}
        return loaded
    return text


def _light(text: str) -> dict[str, object] | None:
    """A YAML-like text read by indentation: ``key: value``, ``key:`` with a block
    under it, ``- item`` and ``- key: value`` items; None when a line is none of these."""
    root: dict[str, object] = {}
    frames: list[tuple[int, dict[str, object] | list[object]]] = [(0, root)]
    pending: tuple[int, dict[str, object], str] | None = None  # a key awaiting its block
    count = 0
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body.startswith("#") or body == "---":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if raw[:indent] != raw[: len(raw) - len(raw.lstrip())]:
            return None  # a tab in the indentation
        item = body == "-" or body.startswith("- ")
        if pending is not None:
            at, owner, key = pending
            pending = None
            if indent > at or (item and indent == at):
                block: dict[str, object] | list[object] = [] if item else {}
                owner[key] = block
                frames.append((indent, block))
        while len(frames) > 1 and (
            frames[-1][0] > indent
            or (frames[-1][0] == indent and isinstance(frames[-1][1], list) and not item)
        ):
            frames.pop()
        at, top = frames[-1]
        if indent != at:
            return None
        if item:
            if not isinstance(top, list):
                return None
            rest = body[1:].strip()
            if _PAIR.fullmatch(rest) is None or rest[:1] in "[{":
                top.append(_scalar(rest))
                count += 1
                continue
            mapping: dict[str, object] = {}
            top.append(mapping)
            indent += len(body) - len(rest)
            frames.append((indent, mapping))
            top, body = mapping, rest
        pair = _PAIR.fullmatch(body)
        if pair is None or not isinstance(top, dict):
            return None
        key = pair[1].strip("'\"")
        if pair[2]:
            top[key] = _scalar(pair[2])
        else:
            top[key] = None
            pending = (indent, top, key)
        count += 1
    return root if count >= 2 else None


def _ini(text: str) -> dict[str, object] | None:
    if not _SECTION.search(text):
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    out: dict[str, object] = {}
    for name in parser.sections():
        out[name] = {k: _scalar(v) for k, v in parser.items(name, raw=True)}
    return out if any(out.values()) else None


def _lines(text: str) -> dict[str, object] | None:
    out: dict[str, object] = {}
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith(("#", ";")):
            continue
        found = _LINE.fullmatch(raw)
        if found is None:
            return None
        out[found[1]] = _scalar(found[2])
    return out if len(out) >= 2 else None


def parsed(text: str) -> object:
    """The data a text holds (a mapping of at least two entries), else None: JSON,
    TOML, INI, a YAML-like text, ``key=value`` lines, tried in that order."""
    stripped = text.strip()
    if len(stripped) < 3 or len(stripped) > MAX_TEXT:
        return None
    if stripped[0] in "{[":
        try:
            loaded: object = json.loads(stripped)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict) and _size(loaded) >= 2:
            return loaded
    if "\n" not in stripped and not re.search(r"[=:]\s", stripped):
        return None
    for read in (_toml, _ini, _light, _lines):
        doc = read(text)
        if doc is not None and _size(doc) >= 2:
            return doc
    return None


def _toml(text: str) -> dict[str, object] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None


def from_node(node: ast.expr) -> object:
    """A dict literal's data: constants as they are, containers item by item."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {
            k.value: from_node(v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
    if isinstance(node, ast.List | ast.Tuple):
        return [from_node(e) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = from_node(node.operand)
        if isinstance(inner, int | float) and not isinstance(inner, bool):
            return -inner
    return Expr()


def _size(doc: object, most: int = 2) -> int:
    """How many entries ``doc`` holds at any depth, counted up to ``most``."""
    count = 0
    stack = [doc]
    while stack and count < most:
        node = stack.pop()
        items: list[object] = []
        if isinstance(node, dict):
            items = list(node.values())
        elif isinstance(node, list):
            items = node
        count += len(items)
        stack += items
    return count
