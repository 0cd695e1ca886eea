"""Each host's publisher on its own: a ``ReviewResult`` built by hand, published through the
host's own session (``HOST.open`` -> ``source.fetch`` -> ``publisher``) against its local
server, judged by the ``PublishReport`` it returns and by what the server stored."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest

from bot.change import Change, Comment, Placement, Severity
from bot.config import load_settings
from bot.hosts import host_named
from bot.hosts.base import Publisher, ReviewHistory
from bot.review.result import PublishReport, ReviewResult
from tests.hosts.contract import EXPECTED, FINDINGS, HostChange, HostHarness


def _open(host: HostHarness, ref: str) -> tuple[Change, Publisher]:
    """A fresh session, as a new run would open it."""
    session = host_named(host.name).open(load_settings(), None)
    change = session.source.fetch(ref)
    publisher = session.publisher(force=False)
    assert publisher is not None
    return change, publisher


def _result(change: Change, since: str | None = None, *, findings: bool = True) -> ReviewResult:
    """FINDINGS as a review would place them: on their lines, the deleted one unplaced."""
    placements = []
    for path, line, _code, body, severity, where in FINDINGS if findings else ():
        comment = Comment(path, line, body, severity=severity)  # type: ignore[arg-type]
        placements.append(
            Placement(comment, path=where[0], line=where[1], how="exact")
            if where
            else Placement(comment, reason="the line was deleted")
        )
    return ReviewResult(
        change=change, summary="Reviewed by hand.", placements=placements, since=since
    )


def _publish(host: HostHarness, ref: str, **kw: object) -> PublishReport:
    change, publisher = _open(host, ref)
    result = _result(change, **kw)  # type: ignore[arg-type]
    before = copy.deepcopy(result)
    report = publisher.publish(result)
    assert result == before  # a publisher never mutates the result
    return report


def test_a_publisher_posts_every_placed_finding_and_one_summary(
    host: HostHarness, change: HostChange
) -> None:
    report = _publish(host, change.ref)
    assert report.host == host.name
    assert report.inline_posted == len(EXPECTED) and report.summary_posted
    assert report.errors == () and report.carried == ()
    assert {(c.path, c.line) for c in host.inline_comments()} == set(EXPECTED.values())
    (summary,) = host.summaries()
    assert "deleted line finding" in summary  # the unplaced one is in the summary


def test_publishing_the_same_result_again_posts_nothing_new(
    host: HostHarness, change: HostChange
) -> None:
    _publish(host, change.ref)
    stored = (host.inline_comments(), host.summaries())
    again = _publish(host, change.ref)
    assert again.inline_posted == 0 and again.errors == ()
    assert host.inline_comments() == stored[0]
    assert len(host.summaries()) == 1


def test_a_refused_position_is_counted_and_listed_instead(
    host: HostHarness, change: HostChange
) -> None:
    host.refuse(*EXPECTED["None items crash"])
    report = _publish(host, change.ref)
    inline = host.inline_comments()
    assert report.inline_posted == len(inline) < len(EXPECTED)  # what is really there
    assert not any("None items crash" in c.body for c in inline)
    assert "instead" in " ".join(report.notes + report.errors)  # the report says so
    (summary,) = host.summaries()
    assert "None items crash" in summary


def test_an_incremental_review_carries_the_earlier_findings_where_the_host_keeps_them(
    host: HostHarness, change: HostChange
) -> None:
    _publish(host, change.ref)
    # a review of nothing new since the reviewed head: earlier findings still stand
    fetched, publisher = _open(host, change.ref)
    report = publisher.publish(_result(fetched, since=change.head, findings=False))
    assert report.errors == ()
    if isinstance(publisher, ReviewHistory):
        severities: list[Severity] = [f[4] for f in FINDINGS]  # type: ignore[misc]
        assert Counter(report.carried) == Counter(severities)
    else:  # a host without incremental review carries nothing over
        assert report.carried == ()


def test_read_only_credentials_are_reported_never_a_crash(
    host: HostHarness, change: HostChange, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    host.read_only(monkeypatch, tmp_path)
    fetched, publisher = _open(host, change.ref)
    report = publisher.publish(_result(fetched))  # a refusal is a note, never an exception
    assert report.inline_posted == 0 and not report.summary_posted
    assert host.refusal in " ".join(report.notes) and report.errors == ()
    assert host.inline_comments() == [] and host.summaries() == []


def test_a_server_that_fails_every_write_is_reported_never_counted_as_posted(
    host: HostHarness, change: HostChange
) -> None:
    fetched, publisher = _open(host, change.ref)
    host.fail_writes()
    report = publisher.publish(_result(fetched))  # listed in the report, never raised
    assert report.inline_posted == 0 and not report.summary_posted
    assert report.errors and any("summary" in e for e in report.errors)
    assert host.inline_comments() == [] and host.summaries() == []
