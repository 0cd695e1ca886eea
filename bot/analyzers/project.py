"""What the project's own linters share: finding the project's install of a linter (in
its ``node_modules`` or its virtualenv), only when the checkout also configures it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["has_section", "installed"]


def installed(root: Path | None, program: str, configured: Callable[[Path], bool]) -> str | None:
    """``root / program`` (``node_modules/.bin/eslint``) when it is a file and
    ``configured(root)`` says the checkout configures the linter, else None."""
    if root is None:
        return None
    path = root / program
    return str(path) if path.is_file() and configured(root) else None


def has_section(path: Path, section: str) -> bool:
    """Whether the INI-style file ``path`` has a ``[section]`` header."""
    try:
        lines = path.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip().lower() == f"[{section}]" for line in lines)
