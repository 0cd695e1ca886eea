"""Pure diff functions: parse, render, anchor. No I/O, no settings."""

from bot.diff.anchor import anchor
from bot.diff.parse import decode_diff, parse_diff
from bot.diff.render import diff_to_dict, render_files

__all__ = ["anchor", "decode_diff", "diff_to_dict", "parse_diff", "render_files"]
