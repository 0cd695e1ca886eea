"""What one call from a test's body writes to ``sys.stderr`` and ``sys.stdout``, for test
amplification (``amplify_plugin``; the Nova side is ``amplify_streams.py``).

Only the standard library: it is copied beside the side-runner (``nova_probe_tee.py``) and
runs with the project's interpreter inside the observed test run. While the call runs,
each stream is a ``Tee``: every write goes on to the stream that was there (pytest's
capture, a test's ``capsys``), unchanged, and its first ``MAX_CHARS`` characters are also
kept. When the call ends the streams are put back (only where the call left the tee in
place: a call that redirected a stream itself keeps its own) and the text is split into
words as the side-runner's (``probe_streams._noted_words``: the same word rules), so what
a test asserts of a stream is what the differential generator would assert.
"""

from __future__ import annotations

import sys
import typing

MAX_CHARS = 65536  # as probe_streams.MAX_CHARS
STREAMS = {"err": "stderr", "out": "stdout"}


class Tee:
    """A text stream that writes through to ``real`` and keeps what it got while open."""

    def __init__(self, real: typing.Any) -> None:
        self._real = real
        self._parts: list[str] = []
        self._size = 0
        self._open = True

    def write(self, text: typing.Any) -> typing.Any:
        if self._open and isinstance(text, str) and self._size < MAX_CHARS:
            self._parts.append(text[: MAX_CHARS - self._size])
            self._size += len(self._parts[-1])
        return self._real.write(text)

    def writelines(self, lines: typing.Iterable[typing.Any]) -> None:
        for line in lines:
            self.write(line)

    def close_tee(self) -> str:
        self._open = False
        return "".join(self._parts)

    def __getattr__(self, name: str) -> typing.Any:  # flush, isatty, encoding, fileno, ...
        return getattr(self._real, name)


def start() -> dict[str, Tee] | None:
    """Both streams teed from now on (None when a stream cannot be replaced)."""
    tees: dict[str, Tee] = {}
    try:
        for key, attr in STREAMS.items():
            real = getattr(sys, attr)
            if real is None:
                continue
            tees[key] = Tee(real)
            setattr(sys, attr, tees[key])
    except Exception:  # a stream that refuses to be replaced: nothing noted
        stop(tees)
        return None
    return tees


def stop(tees: dict[str, Tee] | None) -> dict[str, list[list[str]]]:
    """The streams put back where the tee is still in place; per stream written to,
    ``[words, also]`` as the side-runner notes them."""
    if not tees:
        return {}
    out: dict[str, list[list[str]]] = {}
    for key, tee in tees.items():
        attr = STREAMS[key]
        if getattr(sys, attr) is tee:
            setattr(sys, attr, tee._real)
        text = tee.close_tee()
        if text.strip():
            out[key] = _noted(text)
    return out


def _noted(text: str) -> list[list[str]]:
    import nova_probe_streams as streams  # type: ignore[import-not-found]

    words: list[list[str]] = streams._noted_words(text)
    return words
