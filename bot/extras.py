"""Parts of Nova installed as pip extras, and the one clear line when one is missing.

The core (`pip install nova-bot`) reviews with ruff; the extras are declared in
pyproject.toml: one per model provider (``openai``, ``anthropic``, ``ollama``, ``bedrock``,
``google``, ``mistral``, ``groq``; see ``bot.llm.providers``), ``mcp``,
``testgen``, ``node``, ``all``.
"""

from __future__ import annotations

from importlib.util import find_spec

from bot.errors import ConfigError

__all__ = ["missing", "require_extra", "testgen_modules"]


def missing(*modules: str) -> list[str]:
    """The top-level modules of ``modules`` this Python cannot import (none is imported)."""
    return [m for m in modules if find_spec(m) is None]


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """Raise a one-line ``ConfigError`` (exit 2) naming the extra when a module is absent."""
    absent = missing(*modules)
    if absent:
        raise ConfigError(
            f"{feature} needs {', '.join(absent)}, not installed in this Python: "
            f'pip install "nova-bot[{extra}]"'
        )


def testgen_modules(language: str, generator: str) -> tuple[str, ...]:
    """What ``nova testgen`` imports or runs with this Python for a project in ``language``:
    pytest and coverage (the fallback when the project's interpreter lacks them), Hypothesis
    (the differential generator draws inputs with it) and black for the ghostwriter
    (Hypothesis formats its tests with it)."""
    if language != "python":
        return ()
    needs: tuple[str, ...] = ("pytest", "coverage")
    if generator in ("differential", "ghostwriter"):
        needs += ("hypothesis",)
    return needs + (("black",) if generator == "ghostwriter" else ())
