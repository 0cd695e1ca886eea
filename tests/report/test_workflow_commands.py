"""In GitHub Actions no line Nova prints can start a workflow command, whatever the model, the
diff's paths or the files' contents say (issue 27, section 3).

``runner_commands`` reads output as the runner does (lines split at CR, LF, CRLF; a line is a
command when it starts with ``::`` after leading whitespace, or holds ``##[`` anywhere;
``::stop-commands::TOKEN`` … ``::TOKEN::`` fences). It is deliberately more suspicious than
the runner: characters a culture-sensitive compare may skip (zero-width, controls, marks,
spaces) are dropped before looking.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from bot.cli import cli
from bot.report.commands import CommandGuard, guard_text, write_command, write_fenced
from tests.conftest import GitRepo
from tests.hosts.github.support import REPO
from tests.hosts.github.test_github import review
from tests.servers.github_server import FakeGitHub, PullSpec
from tests.servers.openai_server import FakeOpenAI, text

HOSTILE = "ok\n::error title=X::pwned\r::add-mask::m\n  ##[warning]legacy\n\u200b::notice::zw"


FRAGMENTS = [
    "::",
    "\r",
    "\n",
    "\r\n",
    "#",
    "##[",
    "[",
    "]",
    " ",
    "\t",
    "\u200b",
    "::error::",
    "%0A",
]
# arbitrary text, with the pieces of commands mixed in often enough to matter
hostile_text = st.lists(
    st.one_of(st.text(max_size=8), st.sampled_from(FRAGMENTS)), max_size=12
).map("".join)


def _seen(line: str) -> str:
    return "".join(ch for ch in line if not (ch.isspace() or unicodedata.category(ch)[0] in "CZM"))


def runner_commands(output: str) -> list[str]:
    """The lines the runner would run as commands, outside stop-commands fences."""
    commands, token = [], None
    for line in re.split(r"\r\n|\r|\n", output):
        seen = _seen(line)
        if token is not None:
            if seen == f"::{token}::":
                token = None
            continue
        if seen.startswith("::stop-commands::"):
            token = seen.removeprefix("::stop-commands::")
        elif seen.startswith("::") or "##[" in seen:
            commands.append(line)
    return commands


def _actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")


# -- the guard itself: arbitrary text in arbitrary pieces ---------------------------------


@pytest.mark.slow
@given(
    pieces=st.lists(
        st.one_of(
            hostile_text,
            st.sampled_from(FRAGMENTS),
            st.tuples(st.just("command"), st.sampled_from(["::notice::ours", "::warning::x"])),
            st.tuples(st.just("fence"), hostile_text),
        ),
        max_size=30,
    )
)
def test_nothing_written_through_the_guard_is_a_command_but_novas_own(pieces: list) -> None:
    out = io.StringIO()
    guard = CommandGuard(out)
    ours = []
    for piece in pieces:
        if isinstance(piece, str):
            guard.write(piece)
        elif piece[0] == "command":
            write_command(guard, piece[1])
            ours.append(piece[1])
        else:
            write_fenced(guard, piece[1])
    guard.release()
    assert runner_commands(out.getvalue()) == ours


@given(hostile_text)
def test_plain_text_passes_unchanged_and_escaped_text_keeps_its_words(text_: str) -> None:
    guarded = guard_text(text_)
    assert runner_commands(guarded) == []
    lines, escaped = re.split(r"\r\n|\r|\n", text_), re.split(r"\r\n|\r|\n", guarded)
    assert len(lines) == len(escaped)
    for line, shown in zip(lines, escaped, strict=True):
        if not runner_commands(line):
            assert shown == line
        else:  # only backslashes were added
            assert shown.replace("\\", "") == line.replace("\\", "")


# -- the real CLI ---------------------------------------------------------------------------


def _stdin_diff(path: str, added: str) -> str:
    path = path.replace("\n", "").replace("\r", "") or "x"
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n a = 1\n"
        f"+{added}\n"
    )


@pytest.mark.slow
@given(path=hostile_text, added=hostile_text)
def test_nova_diff_in_actions_prints_no_command(path: str, added: str) -> None:
    diff = _stdin_diff(path, added)
    result = CliRunner().invoke(cli, ["diff", "-"], input=diff, env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code in (0, 2, 3), result.output
    assert runner_commands(result.stdout) == []
    assert runner_commands(result.stderr) == []


def test_nova_diff_shows_a_hostile_file_inert(monkeypatch: pytest.MonkeyPatch) -> None:
    """A carriage return in a line, a legacy command in a path: reproduced first (both ran)."""
    _actions(monkeypatch)
    diff = _stdin_diff("##[error]pwned.py", "x = 1\r::error title=CR::pwned")
    result = CliRunner().invoke(cli, ["diff", "-"], input=diff)
    assert result.exit_code == 0, result.output
    assert "pwned.py" in result.stdout and "title=CR" in result.stdout  # still shown
    assert runner_commands(result.stdout) == []


def test_errors_that_quote_a_hostile_path_are_inert(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _actions(monkeypatch)
    repo.write("a.py", "a = 1\n")
    repo.commit("one")
    (tmp_path / "file").write_text("")  # --output-file cannot be written: the error quotes it
    hostile = tmp_path / "file" / "out\n::error title=E::pwned ##[error]legacy"
    result = CliRunner().invoke(
        cli,
        [
            "review",
            "HEAD",
            "--repo",
            str(repo.path),
            "--no-llm",
            "-q",
            "--output-file",
            str(hostile),
        ],
    )
    assert result.exit_code == 2
    assert "title=E::pwned" in result.stderr and "legacy" in result.stderr
    assert runner_commands(result.stderr) == [] and runner_commands(result.stdout) == []


# -- the run: a read-only token, hostile model text and paths -------------------------


@pytest.mark.slow
def test_read_only_publish_prints_only_novas_annotations(
    pr: PullSpec, gh: FakeGitHub, llm_env: FakeOpenAI, tmp_path: Path, monkeypatch
) -> None:
    _actions(monkeypatch)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    gh.read_only = True
    answer = {
        "summary": f"Summary. {HOSTILE}",
        "comments": [
            {"path": "shop/cart.py", "line": 5, "code": "line_5 = 50", "body": HOSTILE},
            {"path": "shop/x\n::error title=P::p.py", "line": 1, "code": "x", "body": HOSTILE},
        ],
    }
    llm_env.enqueue(text(json.dumps(answer)))
    for fmt in ("text", "markdown"):
        result = review(tmp_path, f"{REPO}#1", "--publish", "github", "-o", fmt, "--force")
        assert result.exit_code == 0, result.stderr
        commands = runner_commands(result.stdout)
        # Nova's own annotations, one per finding (ruff's F401 too), their data escaped
        assert len(commands) == 3 and all(c.startswith("::warning file=") for c in commands)
        assert all("%0A" in c for c in commands if "pwned" in c)
        assert "title=X::pwned" in result.stdout  # the report still shows the text
        assert runner_commands(result.stderr) == []
        llm_env.enqueue(text(json.dumps(answer)))
    assert "pwned" in summary.read_text()  # the job summary is a file, not the log


def test_a_line_too_long_to_hold_is_let_out_without_joining_a_command() -> None:
    out = io.StringIO()
    guard = CommandGuard(out)
    guard.write("a" * 70_000 + "#")  # held no longer: let out, ended
    guard.write("#[error]joined\n")
    guard.release()
    assert runner_commands(out.getvalue()) == []
    assert out.getvalue().replace("\n", "").replace("\\", "") == "a" * 70_000 + "##[error]joined"


def test_the_nova_process_itself_is_guarded_to_its_last_byte() -> None:
    """``nova`` (``bot.cli.main``) guards the whole process, a last unended line too."""
    diff = _stdin_diff("##[error]p.py", "x = 1\r::error title=CR::pwned")
    run = subprocess.run(
        [sys.executable, "-c", "from bot.cli import main; main(['diff', '-'])"],
        input=diff,
        capture_output=True,
        text=True,
        env={**os.environ, "GITHUB_ACTIONS": "true"},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "title=CR::pwned" in run.stdout and runner_commands(run.stdout) == []
