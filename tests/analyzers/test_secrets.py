"""Committed secrets: a finding on each line, and never a secret in a prompt or tool result.

Secrets are assembled at run time, so this file holds none a scanner would flag.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from bot.analyzers.secrets import KEY_PLACEHOLDER, Scrubber, _detector, find_secrets, scan_secrets
from bot.cli import cli
from bot.diff import parse_diff, render_files
from tests.conftest import GitRepo
from tests.servers.openai_server import FakeOpenAI, Reply, text, tool_call

BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDHlIhe7GLCeSk8",
    "RZOKdtmyKns6KdZgGw/LcxPkYvQlu1g0zV8X0DqVr2LdMumWUTNCc9sPdSlAG+He",
    "mQp2TMoWUMumMuwDtit9RT0Sb6Eh9svWgjY9ferovPJRfCWUTsA2Ug8uoh0wyEX=",
]
KEY = "\n".join(["-----BEGIN " + "PRIVATE KEY-----", *BODY, "-----END " + "PRIVATE KEY-----"])
AWS_ID = "AKIA" + "Z7QW3ERT5YUI8OPL"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "9QzW4xVb2N"
GITHUB = "ghp_" + "r8Tq2Lm9Xv4Kp7Wz1Ns6Yb3Hd5Jf0Gc8Ae2U"
GITLAB = "glpat-" + "x7Kd9Lm2Qp4Rs8Tv6Wz1"
SLACK = "xoxb-" + "123456789012-1234567890123-" + "aB3dE5fG7hI9jK1lM3nO5pQ7"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRONG = "Xk9#mQ2$vL8pR4wZ"

SECRET_LINES = {
    "AWS Access Key": f'AWS_ACCESS_KEY_ID = "{AWS_ID}"',
    "AWS secret": f'aws_secret_access_key = "{AWS_SECRET}"',
    "GitHub Token": f"token: {GITHUB}",
    "GitLab Token": f'GITLAB_TOKEN="{GITLAB}"',
    "Slack Token": f"slack = '{SLACK}'",
    "Stripe Access Key": f'stripe.api_key = "{STRIPE}"',
    "Secret Keyword": f'db_password = "{STRONG}"',
    "Private Key": "-----BEGIN " + "RSA PRIVATE KEY-----",
}


@pytest.fixture(scope="module")
def scan():
    with _detector() as scan:
        yield scan


@pytest.mark.parametrize("name", sorted(SECRET_LINES))
def test_each_kind_is_found(name: str, scan) -> None:
    assert find_secrets(SECRET_LINES[name], scan), name


@pytest.mark.parametrize(
    "line",
    [
        'password = "changeme"',
        'password = os.environ["DB_PASSWORD"]',
        'password = "${DB_PASSWORD}"',
        "When proxies are defined with user info (`https://user:pass@proxy:8080`)",
        "key = compute_key(data)",
        "x = 1",
    ],
)
def test_ordinary_lines_are_not_secrets(line: str, scan) -> None:
    assert find_secrets(line, scan) == []


def diff_of(path: str, lines: list[str]) -> str:
    body = "\n".join(f"+{ln}" for ln in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}\n"
    )


def test_findings_on_their_lines_warning_under_tests() -> None:
    gcp = [
        "{",
        '  "type": "service_account",',
        '  "private_key_id": "abc",',
        '  "private_key": "' + KEY.replace("\n", "\\n") + '\\n",',
        "}",
    ]
    files = parse_diff(
        diff_of(
            "deploy/settings.py",
            ["import os", SECRET_LINES["AWS Access Key"], SECRET_LINES["GitHub Token"]],
        )
        + diff_of("tests/certs/server.key", KEY.split("\n"))
        + diff_of("deploy/sa.json", gcp)
    )
    found = [(c.path, c.line, c.severity, c.rule) for c in scan_secrets(files)]
    assert found == [
        ("deploy/settings.py", 2, "error", "AWS Access Key"),
        ("deploy/settings.py", 3, "error", "GitHub Token"),
        ("tests/certs/server.key", 1, "warning", "Private Key"),
        ("deploy/sa.json", 4, "error", "Private Key"),
    ]
    comments = scan_secrets(files)
    assert comments[2].body.startswith(
        "a private key is committed; rotate it and remove it from history"
    )
    assert all(c.code is None and AWS_ID not in c.body for c in comments)


def test_a_key_block_keeps_its_lines_and_numbers_in_a_numbered_diff() -> None:
    rendered = render_files(parse_diff(diff_of("a.key", KEY.split("\n"))))
    scrubbed = Scrubber().scrub(rendered)
    assert not any(b in scrubbed for b in BODY)
    assert [ln.split(" ", 2)[0] for ln in scrubbed.split("\n")] == [
        ln.split(" ", 2)[0] for ln in rendered.split("\n")
    ]
    assert scrubbed.count(KEY_PLACEHOLDER) == len(BODY)


def test_search_results_keep_their_paths() -> None:
    hits = "\n".join(
        [
            "tests/certs/expired/ca/ca-private.key:1: -----BEGIN " + "PRIVATE KEY-----",
            f"tests/certs/expired/ca/ca-private.key:2: {BODY[0]}",
            "tests/certs/expired/ca/ca-private.key:28: -----END " + "PRIVATE KEY-----",
            "tests/certs/expired/server/server.py:3: x = 1",
        ]
    )
    scrubbed = Scrubber().scrub(hits)
    assert BODY[0] not in scrubbed
    assert [ln.split(":")[0] for ln in scrubbed.split("\n")] == [
        ln.split(":")[0] for ln in hits.split("\n")
    ]


def test_the_same_secret_gets_the_same_placeholder_and_restores() -> None:
    scrubber = Scrubber()
    first = scrubber.scrub(f'10 + GH = "{GITHUB}"')
    later = scrubber.scrub(f"src/a.py:3: {GITHUB}")  # bare: no rule would fire on it alone
    assert GITHUB not in first + later
    placeholder = re.search(r"\[secret 1 redacted: GitHub Token\]", first)
    assert placeholder and placeholder.group() in later
    assert scrubber.restore(first) == f'10 + GH = "{GITHUB}"'


secret_values = st.sampled_from(
    [line for name, line in SECRET_LINES.items() if name != "Private Key"]
)
filler = st.text(
    st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=30
)


@pytest.mark.slow
@given(
    before=st.lists(filler, max_size=5),
    secret=secret_values,
    after=st.lists(filler, max_size=5),
    key=st.booleans(),
)
def test_no_secret_survives_scrubbing(before, secret, after, key) -> None:
    lines = [*before, secret, *(KEY.split("\n") if key else []), *after]
    scrubbed = Scrubber().scrub("\n".join(lines))
    assert scrubbed.count("\n") == len(lines) - 1
    for value in (AWS_ID, AWS_SECRET, GITHUB, GITLAB, SLACK, STRIPE, STRONG, *BODY):
        assert value not in scrubbed


# end to end ---------------------------------------------------------------------------------


def _model(server: FakeOpenAI):
    """read_file of the key, search_code for the AWS id, then a comment that quotes the
    settings line exactly as the model saw it (with the placeholder)."""

    def respond(body: dict) -> Reply:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools:
            return tool_call("read_file", {"path": "deploy/server.key"})
        if len(tools) == 1:
            return tool_call("search_code", {"pattern": "AKIA"})
        prompt = body["messages"][1]["content"]
        quoted = next(ln for ln in prompt.split("\n") if "redacted: AWS" in ln)
        code = quoted.split(" + ", 1)[1]
        return text(
            json.dumps(
                {
                    "summary": "ok",
                    "comments": [
                        {
                            "path": "deploy/settings.py",
                            "line": 99,
                            "code": code,
                            "body": "read this from the environment",
                            "severity": "error",
                        }
                    ],
                }
            )
        )

    return respond


@pytest.mark.slow
def test_no_secret_reaches_the_model_and_each_is_a_finding(
    repo: GitRepo, llm_env: FakeOpenAI
) -> None:
    repo.write("README.md", "demo\n")
    repo.commit("base")
    repo.write("deploy/server.key", KEY + "\n")
    repo.write("deploy/settings.py", f"import os\n\n{SECRET_LINES['AWS Access Key']}\n")
    repo.commit("deploy")
    llm_env.responder = _model(llm_env)
    result = CliRunner().invoke(
        cli, ["review", "--repo", str(repo.path), "-o", "json", "-q"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    sent = json.dumps(llm_env.requests)
    assert AWS_ID not in sent and not any(b in sent for b in BODY)
    assert "skipped deploy/server.key: excluded: certificate or key" in result.stdout
    tool_results = [m["content"] for m in llm_env.requests[-1]["messages"] if m["role"] == "tool"]
    assert KEY_PLACEHOLDER in tool_results[0] and "redacted: AWS" in tool_results[1]
    data = json.loads(result.stdout)
    found = {(c["path"], c["line"], c["severity"], c["origin"]) for c in data["comments"]}
    assert ("deploy/server.key", 1, "error", "secrets") in found
    assert ("deploy/settings.py", 3, "error", "secrets") in found
    assert ("deploy/settings.py", 3, "error", "llm") in found  # the quote still anchors
    assert AWS_ID not in result.stdout


def test_the_text_output_shows_a_secret_line_without_the_secret(repo) -> None:
    from click.testing import CliRunner

    from bot.cli import cli

    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", f'x = 1\nAWS_KEY = "{AWS_ID}"\n')
    repo.commit("oops")
    result = CliRunner().invoke(
        cli, ["review", "--repo", str(repo.path), "-q"], catch_exceptions=False
    )
    assert "AWS_KEY" in result.stdout and AWS_ID not in result.stdout
