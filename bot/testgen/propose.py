"""Propose the kept tests: a patch and a branch ``nova/tests/<sha>`` (always), then, with
``--publish HOST``, the host's pull / merge request or revision (``bot.hosts``'
``Proposer``). Test names and the model's summary are untrusted: what a platform renders is
cleaned by the host.

The commit is made by Nova's own git in a fresh store, from the bytes the gates checked
(``Workspace.commit``); a kept file that changed during the full-suite run is dropped first.
Locally the branch is added to the user's repository as a ref only; a host's proposer
pushes it from Nova's store (``Workspace.push``)."""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings
from bot.testgen.report import TestgenResult
from bot.testgen.workspace import Workspace

__all__ = ["propose"]


def _drop_changed(result: TestgenResult, ws: Workspace) -> None:
    """Kept tests whose file changed in a run since the gates (the full suite) go."""
    for case in list(result.kept):
        why = ws.tampered.get(case.path)
        if why:
            case.reason = why
            result.kept.remove(case)
            result.dropped.append(case)
            ws.remove_test(case.path)


def propose(
    result: TestgenResult, ws: Workspace, settings: Settings, mode: str, patch_dir: Path
) -> None:
    _drop_changed(result, ws)
    if not result.kept:
        result.notes.append("no test is left to propose")
        return
    sha = (result.change.head_ref or "change")[:12]
    branch = f"nova/tests/{sha}"
    message = f"Add tests for {result.change.title or sha}\n\nProposed by Nova."
    _commit, patch = ws.commit(branch, message)
    patch_path = patch_dir / f"nova-tests-{sha}.patch"
    patch_path.write_text(patch, encoding="utf-8")
    result.patch = str(patch_path)
    if mode == "local":
        ws.keep_branch(branch)
        result.branch = branch
        return
    from bot.hosts import proposer_named

    result.branch = branch
    result.mr_url = proposer_named(mode).propose(settings, result, ws, branch)
