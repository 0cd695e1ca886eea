"""Log records are part of a call's outcome (issue 35, ``bot/testgen/logged.py``). Many
releases change what a library logs (a failure's traceback becomes a debug line) while the
value stays the same. When the change's lines call logging, the side-runner records the
records of each call (at DEBUG for the project's loggers, its own handlers printing as
before); where head and parent differ in steady records, a test asserts those records with
``caplog``. A real sample project (a git repository in tmp, its own virtualenv, real
pytest) whose release logs an end of stream at debug instead of an error with a traceback;
a refactor that logs alike, a message with a duration and a record given once a process
claim nothing."""

from __future__ import annotations

import contextlib
import io
import logging
from typing import Any

import pytest

from bot.testgen import logged, probe, probe_logs
from bot.testgen.probe_objects import Named
from tests.testgen.sample import caught, sample_testgen

LINK = '''import logging
import time

log = logging.getLogger(__name__)
_SEEN = []


def read_frame(data):
    """A frame's text; None at the end of the stream (empty data)."""
    try:
        if not data:
            raise EOFError("end of stream")
        return data.decode().strip()
    except EOFError:
        log.error("reading failed", exc_info=True)
        return None


def connect(host, port):
    log.info("connecting to %s:%d", host, port)
    return "%s:%d" % (host, port)


def timed(n):
    started = time.perf_counter()
    total = sum(range(n))
    log.debug("summed in %.9f s", time.perf_counter() - started)
    return total


def span(n):
    started = time.perf_counter()
    total = sum(range(n))
    log.debug("span of %d took %.9f s", n, time.perf_counter() - started)
    return total


def shout(text):
    return text.upper()
'''
# the release: read_frame logs the end of stream at debug, no traceback (same value);
# connect is rewritten (logs alike); timed's message, which shows another duration each
# run, says another thing; span is rewritten (its message alike but for the duration);
# shout starts logging once a process
LINK_NEW = (
    LINK.replace(
        '        log.error("reading failed", exc_info=True)\n',
        '        log.debug("end-of-file")\n',
    )
    .replace(
        '    log.info("connecting to %s:%d", host, port)\n    return "%s:%d" % (host, port)\n',
        '    address = f"{host}:{port}"\n    log.info("connecting to %s", address)\n'
        "    return address\n",
    )
    .replace('log.debug("summed in %.9f s"', 'log.debug("sum took %.9f s"')
    .replace("    return total\n\n\ndef shout", "    return total + 0\n\n\ndef shout")
    .replace(
        "    return text.upper()\n",
        "    if not _SEEN:\n        _SEEN.append(1)\n"
        '        log.warning("shout() is provisional")\n'
        "    return text.upper()\n",
    )
)
TESTS = """from relay.link import connect, read_frame, shout, span, timed


def test_read_frame():
    assert read_frame(b" hi ") == "hi"
    assert read_frame(b"") is None


def test_connect():
    assert connect("example.org", 80) == "example.org:80"


def test_timed():
    assert timed(4) == 6


def test_span():
    assert span(4) == 6


def test_shout():
    assert shout("hi") == "HI"
"""


@pytest.fixture(scope="module")
def relay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    return sample_testgen(
        tmp_path_factory.mktemp("relay"),
        {"relay/__init__.py": "", "relay/link.py": LINK, "tests/test_link.py": TESTS},
        {"relay/link.py": LINK_NEW},
        "read_frame logs the end of stream at debug",
    )


@pytest.mark.slow
def test_a_call_that_logs_another_record_is_caught_with_caplog(
    relay: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = relay
    facts = [f for f in caught(data, "read_frame(") if "logs relay.link DEBUG" in f["head"]]
    assert facts, data["notes"]
    assert all("'reading failed' with a traceback" in f["parent"] for f in facts), facts
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_relay_link.py")
    assert "caplog.set_level(logging.DEBUG, logger='relay.link')" in committed, committed
    assert "('relay.link', 'DEBUG', 'end-of-file', False) in logged" in committed, committed
    assert "('relay.link', 'ERROR', 'reading failed', True) not in logged" in committed


@pytest.mark.slow
def test_a_message_with_a_duration_is_matched_by_its_start(
    relay: tuple[Any, dict[str, Any]],
) -> None:
    repo, data = relay
    assert caught(data, "timed("), data["notes"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_relay_link.py")
    assert "r[2].startswith('sum took ')" in committed, committed
    assert "r[2].startswith('summed in ')" in committed, committed
    assert "took 0." not in committed, committed


@pytest.mark.slow
def test_records_alike_or_once_a_process_claim_nothing(
    relay: tuple[Any, dict[str, Any]],
) -> None:
    _repo, data = relay
    for call in ("connect(", "span(", "shout("):
        assert not caught(data, call), (call, data["kept"])
    said = [n for n in data["notes"] if "log records differ" in n]
    assert said and not [n for n in said if "::connect" in n or "::span" in n], said
    assert not [n for n in said if "::shout" in n], said


def test_only_changed_lines_that_log_turn_the_recording_on() -> None:
    assert logged.loggers([(LINK, LINK_NEW)], ["relay.link"]) == ["relay"]
    quiet = LINK.replace("return total\n", "return total + 0\n")
    assert logged.loggers([(LINK, quiet)], ["relay.link"]) == []
    rooted = LINK.replace("return total\n", 'logging.info("done")\n    return total\n')
    assert logged.loggers([(LINK, rooted)], ["relay.link"]) == ["relay", "root"]
    named = 'import logging\nLOG = logging.getLogger("relay-core")\n'
    assert logged.loggers([(named, named + "LOG.setLevel(10)\n")], ["relay.x"]) == [
        "relay",
        "relay-core",
    ]


def test_the_side_runner_records_every_level_without_changing_what_handlers_print() -> None:
    logger = logging.getLogger("relaytest.inner")
    printed = io.StringIO()
    handler = logging.StreamHandler(printed)
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        probe_logs.configure(["relaytest"])
        with contextlib.ExitStack() as stack:
            probe_logs.recording(stack)
            logger.debug("at 0x%x in /tmp/x.py", 4096)
            logger.warning("careful")
        noted = list(probe_logs._noted)
        after = logger.isEnabledFor(logging.DEBUG)
        logger.debug("not printed")  # restored: the project's level again
    finally:
        probe_logs.configure([])
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    assert noted == [
        ["relaytest.inner", "DEBUG", "at 0x... in <path>", False],
        ["relaytest.inner", "WARNING", "careful", False],
    ]
    assert printed.getvalue() == "careful\n"  # the debug record was noted, not printed
    assert not after


def chatty(x: int) -> int:
    logging.getLogger("relaytest.chatty").info("doubling %d", x)
    return x * 2


def test_a_call_that_logs_keeps_its_value_and_notes_its_records() -> None:
    named = Named("function", None, "chatty", chatty)
    case = probe._Case(None, [], ([3], {}), {}, "tests")
    probe_logs.configure(["relaytest"])
    try:
        outcome = probe.call(named, case, 1.0)
        noted = probe_logs.kept(probe._call, named, case, 1.0)
    finally:
        probe_logs.configure([])
    # the record's own read of the clock is not the value's
    assert outcome["kind"] == "value" and outcome["value"] == "6", outcome
    assert noted == {"logged": [["relaytest.chatty", "INFO", "doubling 3", False]]}
    assert probe_logs.RECORD is None  # nothing noted: every read counts again
