"""Pieces inside a test's string inputs, and numbers of another kind: what real tests hide
their inputs in (a JSON body, a query string, markup with ``&#x41;``, a date, a version).

- **Pieces** (``piece_values``): the numbers inside a string or bytes literal — decimal
  (``3600``, ``2020-01-02``'s parts, a version's parts), with a fraction (``200.42``),
  hexadecimal after ``&#x`` or ``0x`` — each varied alone, the rest of the text kept byte
  for byte. Steered first: a number of the kind the changed lines test (``3600`` ->
  ``3600.5`` when they test for ``float``; ``200.42`` -> ``200`` for ``int``), the
  changed lines' numbers and comparison bounds (written in the piece's own base and
  width: ``&#147;`` -> ``&#55296;``, ``&#xf1;`` -> ``&#xd800;``). Then generic neighbours:
  one more, one less, zero, and the piece left out (``a=1&b=2`` -> ``a=&b=2``).
- **Kinds** (``kind_values``): a number literal as a number of the kind the changed lines
  test (``3600`` -> ``3600.5`` for ``float``, ``"3600"`` for ``str``), a numeric text as
  the number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Piece", "kind_values", "piece_values", "pieces"]

MAX_PIECES = 6  # numbers varied in one text
MAX_STEERED = 4  # steered numbers per piece

_NUMBER = re.compile(
    r"(?P<hexp>&#[xX]|\b0[xX])(?P<hex>[0-9A-Fa-f]+)"  # &#x41; 0x1F
    r"|(?P<ref>&#)?(?:(?<![\w.])|(?<=\b[vV]))(?P<dec>\d+(?:\.\d+)*)"  # 3600, 200.42, v1.2.3
    r"(?=[A-Za-z]{0,3}(?!\w))"  # a unit may follow (10px), not a word (2YotnF)
)


@dataclass(frozen=True)
class Piece:
    start: int
    end: int
    text: str
    base: int  # 10 or 16
    fraction: bool  # a decimal with one fraction part (``200.42``)
    code: bool = False  # a character reference or a hex number: a whole number


def pieces(text: str) -> list[Piece]:
    """The numbers inside ``text`` (a version's or a dotted number's parts one by one),
    at most ``MAX_PIECES``."""
    out: list[Piece] = []
    for m in _NUMBER.finditer(text):
        if m.group("hex") is not None:
            out.append(Piece(m.start("hex"), m.end("hex"), m.group("hex"), 16, False, True))
            continue
        dec, at = m.group("dec"), m.start("dec")
        parts = dec.split(".")
        if m.group("ref") is not None:  # &#65;
            out.append(Piece(at, at + len(parts[0]), parts[0], 10, False, True))
            continue
        if len(parts) == 2:
            out.append(Piece(at, at + len(dec), dec, 10, True))
            continue
        for part in parts:  # an integer, or a version's parts
            out.append(Piece(at, at + len(part), part, 10, False))
            at += len(part) + 1
    return out[:MAX_PIECES]


def _written(n: int, like: Piece) -> str | None:
    """``n`` in the piece's base, case and width (``01`` stays two digits)."""
    if n < 0:
        return None
    if like.base == 16:
        text = format(n, "X" if any(c in "ABCDEF" for c in like.text) else "x")
    else:
        text = str(n)
    if like.text.startswith("0") and len(like.text) > 1:
        text = text.zfill(len(like.text))
    return text


def _steered(piece: Piece, kinds: tuple[str, ...], numbers: tuple[int, ...]) -> list[str]:
    """The piece as a number of a tested kind, then as the steered numbers."""
    out: list[str] = []
    if not piece.code and not piece.fraction and "float" in kinds:
        out.append(piece.text + ".5")
    if piece.fraction and "int" in kinds:
        out.append(piece.text.split(".")[0])
    taken = 0
    for n in numbers:
        text = _written(n, piece)
        if text is not None and text != piece.text and taken < MAX_STEERED:
            out.append(text)
            taken += 1
    return out


def _generic(piece: Piece) -> list[str]:
    if piece.fraction:
        whole = piece.text.split(".")[0]
        return [whole, ""]
    n = int(piece.text, piece.base)
    made = [_written(n + 1, piece), _written(n - 1, piece), _written(0, piece)]
    return [t for t in made if t is not None] + [""]


def piece_values(
    text: str, kinds: tuple[str, ...], numbers: tuple[int, ...]
) -> tuple[list[str], list[str]]:
    """``text`` with one number piece varied: the values steered by the change (each
    piece's first before any piece's second), then the generic ones."""
    found = pieces(text)

    def made(values: list[list[str]]) -> list[str]:
        out: list[str] = []
        for k in range(max((len(v) for v in values), default=0)):
            for piece, vs in zip(found, values, strict=True):
                if k < len(vs):
                    out.append(text[: piece.start] + vs[k] + text[piece.end :])
        return list(dict.fromkeys(o for o in out if o != text))

    # the k-th piece starts at the k-th steered number: a few copies try several
    turned = [
        numbers[k % len(numbers) :] + numbers[: k % len(numbers)] if numbers else ()
        for k in range(len(found))
    ]
    steered = [_steered(p, kinds, n) for p, n in zip(found, turned, strict=True)]
    return made(steered), made([_generic(p) for p in found])


def kind_values(value: object, kinds: tuple[str, ...]) -> list[object]:
    """``value`` (a number, or a number's text) as a value of the kinds the changed
    lines test."""
    out: list[object] = []
    if isinstance(value, bool):
        return out
    if isinstance(value, int):
        if "float" in kinds:
            out += [value + 0.5, float(value)]
        if "str" in kinds or "numeric" in kinds:
            out.append(str(value))
    elif isinstance(value, float):
        if "int" in kinds and value == value and abs(value) < 1e18:
            out.append(int(value))
        if "str" in kinds or "numeric" in kinds:
            out.append(repr(value))
    elif isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        number = float(value) if "." in value else int(value)
        if "float" in kinds:
            out.append(float(number) + (0.5 if isinstance(number, int) else 0))
        if "int" in kinds:
            out.append(int(number))
    return out
