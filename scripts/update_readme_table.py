"""Regenerate README.md's configuration table from bot.config.all_settings()."""

from pathlib import Path

from bot.config import settings_table

START, END = "<!-- settings-table:start -->\n", "<!-- settings-table:end -->"
readme = Path(__file__).resolve().parents[1] / "README.md"
text = readme.read_text(encoding="utf-8")
a, b = text.index(START) + len(START), text.index(END)
readme.write_text(text[:a] + settings_table() + text[b:], encoding="utf-8")
print(f"updated {readme}")
