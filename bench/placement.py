"""Share of model comments placed on the intended line, when the model cites noisy numbers.

    python bench/placement.py [--seed 1] [--changes 300]

Random real-looking changes (difflib over generated Python-ish files); for each, comments
aimed at random commentable lines with the number cited as a model might: right, the OLD
number, off by +-1, or missing; with the line's code quoted (as the prompt asks), quoted
with rendering noise, or not quoted. Reports placed on the intended line, on an identical
twin line (same text: the cited number pointed there), on a wrong line, and unplaced.
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.diff import anchor, parse_diff  # noqa: E402
from bot.diff.anchor import build_index  # noqa: E402
from bot.models import Comment  # noqa: E402

WORDS = ["x", "y", "total", "items", "user", "cfg", "result", "i", "value", "name"]


def source(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rng.random()
        w = rng.choice(WORDS)
        if kind < 0.15:
            out.append("")
        elif kind < 0.25:
            out.append("    return " + w)
        elif kind < 0.3:
            out.append("    pass")
        else:
            out.append(f"    {w} = {rng.choice(WORDS)} + {rng.randint(0, 99)}")
    return out


def mutate(rng: random.Random, old: list[str]) -> list[str]:
    new = list(old)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(new) + 1)
        op = rng.random()
        if op < 0.4 and new:
            new[min(at, len(new) - 1)] = f"    {rng.choice(WORDS)} = {rng.randint(100, 999)}"
        elif op < 0.7:
            new[at:at] = [f"    {rng.choice(WORDS)}_{rng.randint(0, 9)} = call()"] * \
                rng.randint(1, 3)
        elif new:
            del new[at:at + rng.randint(1, 3)]
    return new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--changes", type=int, default=300)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tally: Counter[str] = Counter()
    by_case: dict[str, Counter[str]] = {}
    for _ in range(args.changes):
        old = source(rng, rng.randint(20, 120))
        new = mutate(rng, old)
        text = "diff --git a/m.py b/m.py\n" + "\n".join(
            difflib.unified_diff(old, new, "a/m.py", "b/m.py", lineterm="")) + "\n"
        files = parse_diff(text) if old != new else []
        if not files:
            continue
        fi = build_index(files)["m.py"]
        old_of = {v: k for k, v in fi.old_to_new.items()}
        for _ in range(5):
            target = rng.choice(list(fi.commentable))
            cite = rng.choice(["right", "old", "+1", "-1", "none"])
            line = {"right": target, "old": old_of.get(target, target), "+1": target + 1,
                    "-1": target - 1, "none": None}[cite]
            quote = rng.choice(["exact", "noisy", "absent"])
            code = {"exact": fi.commentable[target],
                    "noisy": f"{target} + {fi.commentable[target].strip()}",
                    "absent": None}[quote]
            (p,) = anchor([Comment("m.py", line, "b", code=code)], files)
            if p.line == target:
                outcome = "intended"
            elif not p.placed:
                outcome = "unplaced"
            elif fi.commentable[p.line] == fi.commentable[target]:
                outcome = "twin"  # an identical line the cited number pointed at
            else:
                outcome = "wrong"
            case = "quoted" if code and code.strip() else "unquoted"
            tally[outcome] += 1
            by_case.setdefault(case, Counter())[outcome] += 1
    total = sum(tally.values())
    print(f"{total} comments over {args.changes} changes (seed {args.seed})")
    for case, c in sorted(by_case.items()):
        n = sum(c.values())
        print(f"  {case:9} n={n:5}: intended {c['intended'] / n:6.1%}  identical twin "
              f"{c['twin'] / n:5.1%}  wrong {c['wrong'] / n:6.1%}  unplaced "
              f"{c['unplaced'] / n:6.1%}")


if __name__ == "__main__":
    main()
