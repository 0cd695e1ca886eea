"""Every path decodes a diff the same way, and nothing Nova decoded reaches an encoder it
cannot pass (issue 18: a Latin-1 byte on stdin became ``'\\udce9'`` and the model client died
on it with ``UnicodeEncodeError``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.change import Change, Comment, Placement
from bot.diff.parse import decode_diff, parse_diff
from bot.diff.render import render_files
from bot.errors import redact
from bot.hosts.git.source import read_diff
from bot.prompts import render_prompt
from bot.report.formats import format_result
from bot.review.result import ReviewResult
from bot.text import decode_text, without_surrogates, without_surrogates_in
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, text, tool_call

LATIN1_DIFF = (
    b"diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
    b"@@ -1 +1,2 @@\n caf\xe9\n+na\xefve r\xe9sum\xe9\n"
)


@pytest.mark.slow
def test_stdin_with_latin1_bytes_is_reviewed_in_a_real_process(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    repo.write("notes.txt", b"caf\xe9\n")
    repo.commit("base")
    llm_env.enqueue(
        text(
            json.dumps(
                {
                    "summary": "Fine.",
                    "comments": [
                        {
                            "path": "notes.txt",
                            "line": 2,
                            "code": "na\ufffdve r\ufffdsum\ufffd",
                            "body": "Latin-1 text \ufffd here.",
                        }
                    ],
                }
            )
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "review", "-", "--repo", str(repo.path), "-o", "json", "-q"],
        input=LATIN1_DIFF,
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": ""},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    data = json.loads(proc.stdout)
    assert [(c["path"], c["line"]) for c in data["comments"]] == [("notes.txt", 2)]
    prompt = llm_env.requests[0]["messages"][1]["content"]
    assert "na\ufffdve r\ufffdsum\ufffd" in prompt  # what the HEAD path gives, too


def test_every_source_decodes_alike() -> None:
    from_bytes = decode_diff(LATIN1_DIFF)
    escaped = LATIN1_DIFF.decode("utf-8", errors="surrogateescape")  # how Python reads stdin
    assert decode_diff(escaped) == from_bytes
    assert (
        read_diff(io.TextIOWrapper(io.BytesIO(LATIN1_DIFF), errors="surrogateescape")) == from_bytes
    )
    assert read_diff(io.StringIO(escaped)) == from_bytes  # a text stream with no bytes under it
    assert "\ufffd" in from_bytes and not any("\ud800" <= ch <= "\udfff" for ch in from_bytes)


def test_json_from_hosts_and_models_loses_its_lone_surrogates() -> None:
    hostile = json.loads('{"title": "fix \\ud800 bug", "body": ["\\udce9", {"\\udfff": 1}]}')
    cleaned = without_surrogates_in(hostile)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")
    assert cleaned == {"title": "fix \ufffd bug", "body": ["\ufffd", {"\ufffd": 1}]}
    assert redact("a \udce9 b") == "a \ufffd b"
    assert without_surrogates("plain é") == "plain é"


def _review_of(raw: str) -> ReviewResult:
    files = tuple(parse_diff(raw))
    change = Change(id="stdin", source="stdin", title=raw[:40], files=files, raw_diff=raw)
    placements = [
        Placement(
            Comment(path=f.path, line=ln.new_no, body=ln.text, code=ln.text),
            path=f.path,
            line=ln.new_no,
        )
        for f in files
        for h in f.hunks
        for ln in h.lines
        if ln.new_no is not None
    ]
    placements.append(Placement(Comment(path=raw[:20], line=None, body=raw[-30:]), reason=raw[:10]))
    return ReviewResult(change=change, summary=raw[:50], placements=placements)


@pytest.mark.slow
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=6), st.booleans())
def test_arbitrary_bytes_never_fail_an_encoder(lines: list[bytes], via_text: bool) -> None:
    body = b"".join(b"+" + line.replace(b"\n", b"").replace(b"\r", b"") + b"\n" for line in lines)
    data = (
        b"diff --git a/f\xe9.txt b/f\xe9.txt\nnew file mode 100644\n--- /dev/null\n"
        b"+++ b/f\xe9.txt\n@@ -0,0 +1," + str(len(lines)).encode() + b" @@\n" + body
    )
    raw = decode_text(data.decode("utf-8", errors="surrogateescape") if via_text else data)
    files = parse_diff(raw)
    diff = render_files(files)
    prompt = render_prompt(
        "review/user.j2",
        title=raw[:30],
        description=raw,
        batch_index=1,
        batch_count=1,
        diff=diff,
        findings=[],
    )
    prompt.encode("utf-8")
    json.dumps({"messages": [{"content": prompt}]}, ensure_ascii=False).encode("utf-8")
    result = _review_of(raw)
    for fmt in ("json", "sarif", "text", "markdown"):
        format_result(result, fmt).encode("utf-8")


def test_a_model_answering_lone_surrogates_cannot_break_its_next_call(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    """Its message goes back to it in the next call (the agent's history): JSON may spell a
    lone surrogate, the client's UTF-8 encoder refuses one."""
    from click.testing import CliRunner

    from bot.cli import cli

    repo.write("calc.py", "def div(a, b):\n    return a\n")
    repo.commit("base")
    repo.write("calc.py", "def div(a, b):\n    return a / b\n")
    repo.commit("divide")
    llm_env.enqueue(
        tool_call("read_file", '{"path": "calc\\ud800.py"}'),
        text(
            json.dumps(
                {
                    "summary": "ok \ud800",
                    "comments": [
                        {
                            "path": "calc.py",
                            "line": 2,
                            "code": "return a / b",
                            "body": "zero \udce9",
                        }
                    ],
                }
            )
        ),
    )
    result = CliRunner().invoke(
        cli, ["review", "--repo", str(repo.path), "-q", "-o", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [c["body"] for c in data["comments"]] == ["zero \ufffd"]
    assert len(llm_env.requests) == 2 and "calc\ufffd.py" in json.dumps(
        llm_env.requests[1]["messages"], ensure_ascii=False
    )


def test_task_manager_bodies_carry_no_lone_surrogate() -> None:
    from bot.taskmanager.http import HttpTaskManagerClient
    from tests.servers.taskmanager_server import FakeTaskManager

    tm = FakeTaskManager().start()
    client = HttpTaskManagerClient(tm.url, timeout=2, backoff=0.001)
    try:
        tm.add_execution("e1")
        result = client.create_step("e1", "review caf\udce9", "title \ud800")
        assert result["success"], result
        (step,) = tm.steps_of("e1")
        assert (step["step_name"], step["message"]) == ("review caf\ufffd", "title \ufffd")
    finally:
        client.close()
        tm.stop()
