"""The "cart" change the GitHub and GitLab host tests review, and the model's answer for it.

Its base has ``shop/cart.py`` (30 lines), ``shop/old_name.py`` and ``shop/gone.py``; its
head edits lines 5 and 20 and drops line 12 of the cart, renames ``old_name.py`` with an
edit, adds ``shop/total.py`` and a binary ``shop/logo.png``, and deletes ``gone.py``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitRepo

TITLE = "Cart changes"


def cart_change(repo: GitRepo) -> tuple[str, str]:
    """Commit the cart change in ``repo``: (base SHA, head SHA)."""
    repo.write("shop/cart.py", "".join(f"line_{i} = {i}\n" for i in range(1, 31)))
    repo.write("shop/old_name.py", "def helper():\n    return 1\n")
    repo.write("shop/gone.py", "bye = 1\n")
    base = repo.commit("base")
    repo.write(
        "shop/cart.py",
        "".join(f"line_{i} = {i * 10 if i in (5, 20) else i}\n" for i in range(1, 31) if i != 12),
    )
    repo.git("mv", "shop/old_name.py", "shop/new_name.py")
    repo.write("shop/new_name.py", "def helper():\n    return 2\n")
    repo.write("shop/total.py", "import os\n\n\ndef total(items):\n    return sum(items)\n")
    repo.write("shop/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    repo.git("rm", "-q", "shop/gone.py")
    head = repo.commit(f"{TITLE}\n\nTouches the cart.")
    return base, head


def cart_reply(wording: str = "", *extra: dict[str, Any]) -> str:
    """The model's answer on the cart change; ``wording`` rewords every finding (a re-run
    that words them differently), ``extra`` adds findings."""
    return json.dumps(
        {
            "summary": "Cart arithmetic changed.",
            "comments": [
                {
                    "path": "shop/cart.py",
                    "line": 5,
                    "code": "line_5 = 50",
                    "body": f"magic{wording}",
                },
                # an old number (old 21 is new 20) and an off-by-one, both quoting their line
                {
                    "path": "shop/cart.py",
                    "line": 21,
                    "code": "line_20 = 200",
                    "body": f"big{wording}",
                },
                {
                    "path": "b/shop/total.py",
                    "line": 4,
                    "code": "    return sum(items)",
                    "body": f"None items{wording}",
                    "severity": "error",
                },
                {"path": "shop/cart.py", "line": 12, "code": "line_12 = 12", "body": "deleted"},
                {
                    "path": "shop/new_name.py",
                    "line": 2,
                    "code": "    return 2",
                    "body": f"why{wording}",
                    "suggestion": "    return 3",
                },
                *extra,
            ],
        }
    )
