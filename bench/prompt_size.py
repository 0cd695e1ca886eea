"""Prompt characters (and estimated tokens) per reviewed diff line, for each diff style.

    python bench/prompt_size.py [--diff FILE]     (default: this repository's history)

A "reviewed diff line" is an added, removed or context line shown to the model. The cost
per line is the rendered diff plus its share of the fixed prompt (system + user template).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.diff import decode_diff, parse_diff, render_files  # noqa: E402
from bot.llm.factory import estimate_tokens  # noqa: E402
from bot.prompts import render_prompt  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--diff", type=Path, help="a unified diff file")
    args = ap.parse_args()
    if args.diff:
        raw = decode_diff(args.diff.read_bytes())
    else:
        first = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split()[0]
        raw = decode_diff(subprocess.run(["git", "diff", "-M", first, "HEAD"], cwd=ROOT,
                                         capture_output=True, check=True).stdout)
    files = parse_diff(raw)
    lines = sum(len(h.lines) for f in files for h in f.hunks)
    raw_chars = sum(len(ln.text) + 1 for f in files for h in f.hunks for ln in h.lines)
    print(f"{len(files)} files, {lines} diff lines; raw line text {raw_chars / lines:.1f} "
          "chars/line")
    for style in ("compact", "labeled"):
        diff = render_files(files, style)  # type: ignore[arg-type]
        system = render_prompt("review/system.j2", style=style, has_tools=True,
                               extra_instructions="")
        user = render_prompt("review/user.j2", title="t", description="", batch_index=1,
                             batch_count=1, diff=diff, findings=[])
        total = len(system) + len(user)
        overhead = (len(diff) - raw_chars) / lines
        print(f"{style:8} diff {len(diff) / lines:5.1f} chars/line (numbering overhead "
              f"{overhead:4.1f}), whole prompt {total / lines:5.1f} chars/line, "
              f"~{estimate_tokens(system + user) / lines:4.1f} tokens/line, fixed prompt "
              f"{len(system)} chars")


if __name__ == "__main__":
    main()
