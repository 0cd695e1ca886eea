"""Harbormaster build targets of jobs started by ``/harbormaster``: ``work`` when the job
starts, and ``fail`` when it ended without its own verdict (killed, timed out, superseded,
crashed) — never a second verdict: the job sends pass/fail with its lint itself, once
(``bot.hosts.phabricator.build``), and ``abort`` reads the target first."""

from __future__ import annotations

from bot.hosts.phabricator.build import BuildReporter
from bot.hosts.phabricator.conduit import ConduitClient
from bot.hosts.phabricator.settings import PhabricatorSettings
from bot.serve.executors import Outcome
from bot.serve.jobs import JobRequest

__all__ = ["BuildTargets"]


class BuildTargets:
    def __init__(self, settings: PhabricatorSettings) -> None:
        self.settings = settings

    def _reporter(self, target: str) -> BuildReporter:
        return BuildReporter(ConduitClient(self.settings), target, fail_on="error")

    def started(self, request: JobRequest) -> None:
        if request.target:
            self._reporter(request.target).conduit.call(
                "harbormaster.sendmessage", write=True, receiver=request.target, type="work"
            )

    def ended(self, request: JobRequest, outcome: Outcome) -> None:
        if request.target:
            detail = outcome.detail or f"the job ended: {outcome.state}"
            self._reporter(request.target).abort(f"nova serve: {detail}")
