"""``render_prompt(name, **ctx)``: the one way to turn ``prompts/*.j2`` into text.

StrictUndefined: a missing variable is an error, and a test renders every template.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

from bot.text import without_surrogates

__all__ = ["prompt_dir", "render_prompt", "template_names"]


def prompt_dir() -> Path:
    here = Path(__file__).resolve().parent
    packaged = here / "_prompts"  # inside a built wheel
    return packaged if packaged.is_dir() else here.parent / "prompts"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(prompt_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_prompt(name: str, **ctx: Any) -> str:
    # a lone surrogate (from a PR title, say) would fail the model client's UTF-8 encoder
    return without_surrogates(_env().get_template(name).render(**ctx))


def template_names() -> list[str]:
    root = prompt_dir()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.j2"))
