"""testgen's ``--publish phabricator``: a revision from the raw diff, child of the original."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.hosts.phabricator.conduit import ConduitClient
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.report.testgen import render_testgen_body
from bot.report.untrusted import clean_text

if TYPE_CHECKING:
    from bot.testgen.report import TestgenResult

__all__ = ["open_revision"]

_REVISION = re.compile(r"^Differential Revision:\s*\S*?/D(\d+)\s*$", re.MULTILINE)


def open_revision(settings: PhabricatorSettings, result: TestgenResult, patch: str) -> str:
    conduit = ConduitClient(settings)
    diff = conduit.call("differential.createrawdiff", write=True, diff=patch)
    transactions = [
        {"type": "update", "value": diff["phid"]},
        {"type": "title", "value": clean_text(f"Tests for {result.change.title}")[:250]},
        {"type": "summary", "value": clean_text(render_testgen_body(result))},
        {"type": "testPlan", "value": result.test_plan()},
    ]
    original = _REVISION.search(result.change.description or "")
    if original:
        found = (
            conduit.call(
                "differential.revision.search", constraints={"ids": [int(original.group(1))]}
            ).get("data")
            or []
        )
        if found:
            transactions.append({"type": "parents.add", "value": [found[0]["phid"]]})
    created = conduit.call("differential.revision.edit", write=True, transactions=transactions)
    rev_id = created["object"]["id"]
    base = (settings.url or "").rstrip("/").removesuffix("/api")
    return f"{base}/D{rev_id}"
