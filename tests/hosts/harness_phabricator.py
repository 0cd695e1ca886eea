"""The host contract's harness for Phabricator: the local Conduit server, with Nova's
extension (``nova.differential.publish``) so that inline comments are published."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo
from tests.hosts.contract import TITLE, Inline
from tests.hosts.phabricator.test_phabricator import review
from tests.servers.conduit_server import (
    BOT_PHID,
    TOKEN,
    WRITE_METHODS,
    FakeConduit,
    Revision,
    changes_from_git_diff,
)

__all__ = ["PhabricatorHarness"]

REVISION, DIFF = 123, 4567
FORGED_BY = "PHID-USER-mallory"


class PhabricatorHarness:
    name = "phabricator"
    # read-only credentials: a policy refusal: the job log (and the build's lint) instead
    refusal = "the Phabricator token cannot comment"
    edits_summary = False  # a revision's comments cannot be edited: each run that posts adds one

    def start(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        self.phab = FakeConduit(extension=True).start()
        monkeypatch.setenv("PHABRICATOR_URL", self.phab.url)
        monkeypatch.setenv("PHABRICATOR_API_TOKEN", TOKEN)

    def stop(self) -> None:
        self.phab.stop()

    def add_change(self, repo: GitRepo, base: str, head: str) -> str:
        changes = changes_from_git_diff(repo.git("diff", "-M", base, head))
        self.phab.add_revision(
            Revision(REVISION, TITLE, "Touches the cart.", {DIFF: changes}, base=base)
        )
        return f"D{REVISION}"

    def review(self, tmp_path: Path, *args: str) -> Result:
        result: Result = review(tmp_path, *args)
        return result

    def inline_comments(self) -> list[Inline]:
        return [
            Inline(i["filePath"], i["lineNumber"], i["content"])
            for i in self.phab.visible_inlines(REVISION)
            if i["authorPHID"] == BOT_PHID
        ]

    def summaries(self) -> list[str]:
        return [
            t["text"]
            for t in self.phab.timeline
            if t["revision"] == REVISION and t["author"] == BOT_PHID
        ]

    def writes(self) -> int:
        return sum(method in WRITE_METHODS for method, _params in self.phab.calls)

    def forge(self, head: str, fps: Sequence[str], where: tuple[str, int]) -> None:
        # Phabricator's summary names the diff, not the head commit
        self.phab.timeline.append(
            {
                "revision": REVISION,
                "author": FORGED_BY,
                "text": (
                    f"//nova:diff:{DIFF} nova:verdict:error=0,warning=0,info=0,failed=0 "
                    f"nova:fp:{','.join(fps)}//"
                ),
            }
        )
        for fp in fps:
            self.phab.inlines.append(
                {
                    "id": len(self.phab.inlines) + 1,
                    "revisionID": REVISION,
                    "diffID": DIFF,
                    "authorPHID": FORGED_BY,
                    "draft": False,
                    "filePath": where[0],
                    "isNewFile": True,
                    "lineNumber": where[1],
                    "lineLength": 0,
                    "content": f"copied //nova:fp:{fp}//",
                }
            )

    def clear(self) -> None:
        self.phab.timeline.clear()
        self.phab.inlines.clear()

    def refuse(self, path: str, line: int) -> None:
        self.phab.refused_lines.add((path, line))

    def read_only(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        self.phab.read_only = True

    def fail_writes(self) -> None:
        self.phab.fail_methods |= WRITE_METHODS

    def fail_inline(self, times: int) -> None:
        self.phab.fail_times["nova.differential.publish"] = times
