"""What a Phabricator publish does when the server will not take it: credentials that may
read but not comment (a policy refusal) or not use Harbormaster, and a summary comment that
fails (a Conduit error, an HTTP 500). The contract the other hosts keep: no finding lost
(each one in the job log), the refusal named in one line, the exit code by the gate; a
failure is listed in ``PublishReport.errors``, never raised."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.change import Comment, Placement
from bot.config import load_settings
from bot.hosts import host_named
from bot.hosts.phabricator.session import PhabricatorSession
from bot.review.result import PublishReport, ReviewResult
from tests.conftest import GitRepo
from tests.hosts.contract import BODIES, FINDINGS, build_change, model_reply
from tests.hosts.harness_phabricator import PhabricatorHarness
from tests.hosts.phabricator.test_phabricator import review
from tests.servers.conduit_server import TOKEN, FakeConduit
from tests.servers.openai_server import FakeOpenAI, text

TARGET = "PHID-HMBT-ro1"
REFUSED = "the Phabricator token cannot comment on D123"
NO_BUILD = f"the Phabricator token cannot write to build target {TARGET}"
FLAGS = ("--publish", "phabricator", "--analyzers", "none")
# one job log line per finding: ``nova: path:line: severity: text``
JOB_LOG = re.compile(
    r"^nova: \S+: (error|warning|info): (.*?)( \(not placed on a line: .*\))?$", re.M
)


@pytest.fixture
def harness(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[PhabricatorHarness]:
    started = PhabricatorHarness()
    started.start(request, monkeypatch)  # the local Conduit, with Nova's extension
    yield started
    started.stop()


@pytest.fixture
def host(harness: PhabricatorHarness) -> FakeConduit:
    return harness.phab


@pytest.fixture
def ref(harness: PhabricatorHarness, repo: GitRepo) -> str:
    """The contract's shared change as D123."""
    return harness.add_change(repo, *build_change(repo))


def _publish(ref: str, log: IO[str] | None = None) -> PublishReport:
    """FINDINGS published through a fresh session, as a run would."""
    session = host_named("phabricator").open(load_settings(), None)
    assert isinstance(session, PhabricatorSession)
    session.log = log
    change = session.source.fetch(ref)
    placements = []
    for path, line, _code, body, severity, where in FINDINGS:
        comment = Comment(path, line, body, severity=severity)  # type: ignore[arg-type]
        placements.append(
            Placement(comment, path=where[0], line=where[1], how="exact")
            if where
            else Placement(comment, reason="the line was deleted")
        )
    result = ReviewResult(change=change, summary="By hand.", placements=placements)
    publisher = session.publisher(force=False)
    assert publisher is not None
    return publisher.publish(result)


def _review(tmp_path: Path, llm_env: FakeOpenAI, ref: str, *args: str) -> Result:
    llm_env.enqueue(text(model_reply()))
    result: Result = review(tmp_path, ref, *FLAGS, *args)
    return result


def _logged(stderr: str) -> list[str]:
    return sorted(m.group(2) for m in JOB_LOG.finditer(stderr))


# -- a summary comment that fails is listed, never raised -------------------------------


def test_a_summary_answered_with_http_500_is_an_error_in_the_report(
    host: FakeConduit, ref: str
) -> None:
    host.extension = False
    host.fail_methods = {"differential.revision.edit"}
    report = _publish(ref)
    assert not report.summary_posted and report.inline_posted == 0
    (error,) = report.errors
    assert "summary comment could not be posted" in error and "500" in error
    edits = [m for m, _ in host.calls if m == "differential.revision.edit"]
    assert len(edits) == 1  # a write that may have landed is never sent twice


def test_a_summary_refused_with_a_conduit_error_keeps_the_earlier_failure_too(
    host: FakeConduit, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOVA_HARBORMASTER_TARGET", host.add_target(TARGET))
    host.crash_methods = {
        "nova.differential.publish": "inline boom",
        "differential.revision.edit": "summary boom",
    }
    report = _publish(ref)
    assert not report.summary_posted and report.inline_posted == 0
    assert len(report.errors) == 2
    assert (
        "inline comments were not posted" in report.errors[0] and "inline boom" in report.errors[0]
    )
    assert "summary comment could not be posted" in report.errors[1]
    assert "summary boom" in report.errors[1]
    (message,) = host.build_messages[TARGET]  # the build hears of both, once
    assert message["type"] == "fail" and message["unit"][0]["result"] == "broken"
    assert "summary boom" in message["unit"][0]["details"]
    assert len(message["lint"]) == len([f for f in FINDINGS if f[5]])  # the findings still


@pytest.mark.slow
def test_a_failed_summary_exits_3_and_lists_every_finding_in_the_job_log(
    host: FakeConduit, ref: str, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    host.fail_methods = {"differential.revision.edit", "nova.differential.publish"}
    result = _review(tmp_path, llm_env, ref)
    assert result.exit_code == 3
    assert "Traceback" not in result.stderr
    assert "summary comment could not be posted" in result.stderr
    assert _logged(result.stderr) == sorted(BODIES)


def test_a_summary_that_timed_out_but_landed_counts_as_posted_and_is_not_sent_again(
    host: FakeConduit, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    host.extension = False
    host.delay, host.slow_methods = 3, {"differential.revision.edit"}
    monkeypatch.setenv("NOVA_PHABRICATOR_TIMEOUT", "0.5")
    report = _publish(ref)
    assert report.summary_posted and report.errors == ()
    assert len(host.comments(123)) == 1
    assert [m for m, _ in host.calls].count("differential.revision.edit") == 1


FAULTS = {"crash": "crash_methods", "500": "fail_methods"}


@pytest.mark.slow
@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    extension=st.booleans(),
    read_only=st.booleans(),
    harbormaster_denied=st.booleans(),
    target=st.booleans(),
    faults=st.dictionaries(
        st.sampled_from(
            ["nova.differential.publish", "differential.revision.edit", "harbormaster.sendmessage"]
        ),
        st.sampled_from(sorted(FAULTS)),
    ),
)
def test_whatever_the_server_refuses_or_fails_no_finding_is_lost_and_nothing_raises(
    host: FakeConduit,
    ref: str,
    monkeypatch: pytest.MonkeyPatch,
    extension: bool,
    read_only: bool,
    harbormaster_denied: bool,
    target: bool,
    faults: dict[str, str],
) -> None:
    host.timeline.clear()
    host.inlines.clear()
    host.build_messages.clear()
    host.calls.clear()
    host.extension, host.read_only = extension, read_only
    host.harbormaster_denied = harbormaster_denied
    host.crash_methods = {m: "boom" for m, kind in faults.items() if kind == "crash"}
    host.fail_methods = {m for m, kind in faults.items() if kind == "500"}
    host.targets = {TARGET: "target/waiting"}
    if target:
        monkeypatch.setenv("NOVA_HARBORMASTER_TARGET", TARGET)
    else:
        monkeypatch.delenv("NOVA_HARBORMASTER_TARGET", raising=False)
    log = io.StringIO()
    report = _publish(ref, log)  # never raises
    stored = " ".join(host.comments(123))
    assert report.summary_posted == bool(stored)
    logged = _logged(log.getvalue())
    inline = " ".join(i["content"] for i in host.visible_inlines(123))
    for body in BODIES:  # on the revision (inline or in the summary), or in the job log
        assert body in stored or body in inline or body in logged, body
    # errors exactly when a write that was tried failed for another reason than a refusal
    tried = {m for m, _ in host.calls}
    assert ("harbormaster.sendmessage" in tried) == target
    assert bool(report.errors) == bool(tried & faults.keys()), (report.errors, tried)
    refusals = [n for n in report.notes if n.startswith("the Phabricator token cannot")]
    for note in refusals:  # each refusal named once, in the report and in the job log
        assert log.getvalue().count(note) == 1
    assert len(refusals) == len(set(refusals)) <= 2


# -- read-only credentials: the job log instead, the exit code by the gate -----------------


@pytest.mark.slow
@pytest.mark.parametrize(("fail_on", "code"), [("never", 0), ("error", 1)])
def test_a_read_only_token_logs_every_finding_and_exits_by_the_gate(
    host: FakeConduit, ref: str, llm_env: FakeOpenAI, tmp_path: Path, fail_on: str, code: int
) -> None:
    host.read_only = True
    result = _review(tmp_path, llm_env, ref, "--fail-on", fail_on)
    assert result.exit_code == code, result.stderr
    assert _logged(result.stderr) == sorted(BODIES)  # each finding, once
    refusals = [ln for ln in result.stderr.splitlines() if REFUSED in ln]
    assert len(refusals) == 1 and "permission to interact" in refusals[0]
    assert "Traceback" not in result.stderr and TOKEN not in result.stdout + result.stderr
    assert "nova: error" not in result.stderr  # a note, not an error
    assert host.comments(123) == [] and host.visible_inlines(123) == []


@pytest.mark.slow
def test_a_read_only_token_still_gives_the_build_its_lint_and_verdict(
    host: FakeConduit, ref: str, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    host.read_only = True
    host.add_target(TARGET)
    result = _review(tmp_path, llm_env, ref, "--harbormaster-target", TARGET, "--fail-on", "error")
    assert result.exit_code == 1, result.stderr  # "None items crash" is an error
    (message,) = host.build_messages[TARGET]
    assert message["type"] == "fail" and message["unit"][0]["result"] == "fail"  # not broken
    assert {row["description"] for row in message["lint"]} == {
        b for b in BODIES if "deleted" not in b
    }
    assert REFUSED in message["unit"][0]["details"]
    (note,) = [ln for ln in result.stderr.splitlines() if REFUSED in ln]
    assert "lint messages on the build" in note
    assert _logged(result.stderr) == sorted(BODIES)


@pytest.mark.slow
def test_a_build_target_the_token_cannot_write_is_named_the_same_way(
    host: FakeConduit, ref: str, llm_env: FakeOpenAI, tmp_path: Path
) -> None:
    host.read_only = True
    host.harbormaster_denied = True
    host.add_target(TARGET)
    result = _review(tmp_path, llm_env, ref, "--harbormaster-target", TARGET)
    assert result.exit_code == 0, result.stderr
    assert TARGET not in host.build_messages
    lines = result.stderr.splitlines()
    assert len([ln for ln in lines if NO_BUILD in ln]) == 1
    assert len([ln for ln in lines if REFUSED in ln]) == 1
    assert _logged(result.stderr) == sorted(BODIES)
    assert "Traceback" not in result.stderr


def test_a_build_target_refused_while_comments_work_is_a_note_and_the_summary_stands(
    host: FakeConduit, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    host.harbormaster_denied = True
    monkeypatch.setenv("NOVA_HARBORMASTER_TARGET", host.add_target(TARGET))
    report = _publish(ref)
    assert report.errors == () and report.summary_posted
    assert any(NO_BUILD in n for n in report.notes)
    assert len(host.comments(123)) == 1 and TARGET not in host.build_messages
