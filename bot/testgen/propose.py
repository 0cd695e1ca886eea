"""Propose the kept tests: a local branch + patch (always), then, with ``--publish HOST``, the
host's pull / merge request or revision (``bot.hosts``' ``Proposer``). Test names and the
model's summary are untrusted: what a platform renders is cleaned by the host."""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings
from bot.testgen.report import TestgenResult
from bot.testgen.workspace import Workspace

__all__ = ["propose"]


def propose(
    result: TestgenResult, ws: Workspace, settings: Settings, mode: str, patch_dir: Path
) -> None:
    sha = (result.change.head_ref or "change")[:12]
    branch = f"nova/tests/{sha}"
    message = f"Add tests for {result.change.title or sha}\n\nProposed by Nova."
    _commit, patch = ws.commit(branch, message)
    result.branch = branch
    patch_path = patch_dir / f"nova-tests-{sha}.patch"
    patch_path.write_text(patch, encoding="utf-8")
    result.patch = str(patch_path)
    if mode != "local":
        from bot.hosts import proposer_named

        result.mr_url = proposer_named(mode).propose(settings, result, ws, branch)
