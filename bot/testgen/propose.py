"""Propose the kept tests: a local branch + patch (default), a GitHub pull request from a
pushed branch, or a Phabricator revision from the raw diff (parent: the original one).
Test names and the model's summary are untrusted: what a platform renders is cleaned."""

from __future__ import annotations

import re
from pathlib import Path

from bot.config import Settings
from bot.errors import ConfigError, ServiceError
from bot.publishers.untrusted import clean_text
from bot.testgen.report import TestgenResult
from bot.testgen.workspace import Workspace

__all__ = ["propose"]

_REVISION = re.compile(r"^Differential Revision:\s*\S*?/D(\d+)\s*$", re.MULTILINE)


def propose(result: TestgenResult, ws: Workspace, settings: Settings, mode: str,
            patch_dir: Path) -> None:
    sha = (result.change.head_ref or "change")[:12]
    branch = f"nova/tests/{sha}"
    message = f"Add tests for {result.change.title or sha}\n\nProposed by Nova."
    _commit, patch = ws.commit(branch, message)
    result.branch = branch
    patch_path = patch_dir / f"nova-tests-{sha}.patch"
    patch_path.write_text(patch, encoding="utf-8")
    result.patch = str(patch_path)
    if mode == "github":
        result.mr_url = _github_pull(result, ws, settings, branch)
    elif mode == "phabricator":
        result.mr_url = _phabricator_revision(result, settings, ws.head_diff())


def _github_pull(result: TestgenResult, ws: Workspace, settings: Settings,
                 branch: str) -> str:
    if not settings.github_repository:
        raise ConfigError("--open-mr github needs the repository (GITHUB_REPOSITORY=owner/repo)")
    import git
    from github import GithubException

    from bot.hosts.github.source import github_client, github_error

    try:
        git.Repo(ws.root).remote("origin").push(f"{branch}:{branch}", force=True)
    except (git.GitCommandError, ValueError) as exc:
        raise ServiceError(f"pushing {branch} to origin failed: {exc}") from exc
    try:
        repo = github_client(settings).get_repo(settings.github_repository)
        pull = repo.create_pull(title=clean_text(f"Tests for {result.change.title}")[:250],
                                body=clean_text(result.body()), head=branch,
                                base=repo.default_branch)
    except GithubException as exc:
        raise github_error(exc, f"opening a pull request on {settings.github_repository}"
                           ) from exc
    return str(pull.html_url)


def _phabricator_revision(result: TestgenResult, settings: Settings, patch: str) -> str:
    from bot.hosts.phabricator.source import ConduitClient

    conduit = ConduitClient(settings)
    diff = conduit.call("differential.createrawdiff", write=True, diff=patch)
    transactions = [{"type": "update", "value": diff["phid"]},
                    {"type": "title",
                     "value": clean_text(f"Tests for {result.change.title}")[:250]},
                    {"type": "summary", "value": clean_text(result.body())},
                    {"type": "testPlan", "value": result.test_plan()}]
    original = _REVISION.search(result.change.description or "")
    if original:
        found = conduit.call("differential.revision.search",
                             constraints={"ids": [int(original.group(1))]}).get("data") or []
        if found:
            transactions.append({"type": "parents.add", "value": [found[0]["phid"]]})
    created = conduit.call("differential.revision.edit", write=True,
                           transactions=transactions)
    rev_id = created["object"]["id"]
    base = (settings.phabricator_url or "").rstrip("/").removesuffix("/api")
    return f"{base}/D{rev_id}"
