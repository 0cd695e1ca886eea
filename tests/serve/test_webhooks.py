"""Each host's webhook: verified on the raw bytes, then classified into a job or ignored."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.hosts.github import webhook as github
from bot.hosts.gitlab import webhook as gitlab
from bot.hosts.phabricator import webhook as phabricator
from bot.serve.classify import Context, addresses
from bot.serve.jobs import Cancel, Ignored, JobRequest

CTX = Context(handle="nova", own_logins=("nova-bot[bot]",))


@given(st.binary(max_size=300), st.text(min_size=1, max_size=40), st.integers(0, 299))
def test_a_signature_verifies_its_body_and_no_other(body: bytes, secret: str, at: int) -> None:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert github.verify({"x-hub-signature-256": "sha256=" + digest}, body, secret)
    assert phabricator.verify({"x-phabricator-webhook-signature": digest}, body, secret)
    assert not github.verify({}, body, secret)
    assert not github.verify({"x-hub-signature-256": digest}, body, secret)  # no sha256=
    assert not phabricator.verify({"x-phabricator-webhook-signature": ""}, body, secret)
    if body:
        i = at % len(body)
        changed = body[:i] + bytes([body[i] ^ 1]) + body[i + 1 :]
        assert not github.verify({"x-hub-signature-256": "sha256=" + digest}, changed, secret)
        assert not phabricator.verify({"x-phabricator-webhook-signature": digest}, changed, secret)


@given(st.text(min_size=1, max_size=30), st.text(max_size=30))
def test_shared_tokens_and_basic_auth_match_exactly(secret: str, other: str) -> None:
    assert gitlab.verify({"x-gitlab-token": secret}, b"", secret)
    assert gitlab.verify({"x-gitlab-token": other}, b"", secret) == (other == secret)
    assert not gitlab.verify({}, b"", secret)
    encoded = base64.b64encode(secret.encode()).decode()
    assert phabricator.verify_basic({"authorization": f"Basic {encoded}"}, secret)
    wrong = base64.b64encode(other.encode()).decode()
    assert phabricator.verify_basic({"authorization": f"Basic {wrong}"}, secret) == (
        other == secret
    )
    assert not phabricator.verify_basic({"authorization": f"Bearer {encoded}"}, secret)
    assert not phabricator.verify_basic({"authorization": "Basic !!!"}, secret)


def _pr(action: str, **pull: Any) -> dict[str, Any]:
    return {
        "action": action,
        "number": 7,
        "pull_request": {"number": 7, "head": {"sha": "c" * 40}, **pull},
        "repository": {"full_name": "acme/shop", "default_branch": "main"},
        "sender": {"login": "ada", "type": "User"},
        "installation": {"id": 42},
    }


def _github(
    event: str, payload: dict[str, Any], ctx: Context = CTX
) -> JobRequest | Cancel | Ignored:
    return github.classify({"x-github-event": event}, payload, "github:d", ctx)


def test_github_pull_requests() -> None:
    for action in ("opened", "reopened", "ready_for_review", "synchronize"):
        job = _github("pull_request", _pr(action))
        assert isinstance(job, JobRequest)
        assert (job.kind, job.ref, job.head, job.installation) == (
            "review",
            "acme/shop#7",
            "c" * 40,
            42,
        )
        assert job.argv() == ["review", "acme/shop#7", "--publish", "github", "-q"]
    for action in ("labeled", "edited", "assigned", "review_requested"):
        assert isinstance(_github("pull_request", _pr(action)), Ignored)
    assert _github("pull_request", _pr("closed")) == Cancel(
        "github:acme/shop#7", "the pull request was closed"
    )
    assert _github("pull_request", _pr("opened", draft=True)) == Ignored("a draft pull request")
    bot = {**_pr("synchronize"), "sender": {"login": "dependabot[bot]", "type": "Bot"}}
    assert isinstance(_github("pull_request", bot), Ignored)
    assert isinstance(_github("workflow_run", _pr("completed")), Ignored)
    assert isinstance(_github("pull_request", {"action": "opened"}), Ignored)


def _comment(body: str, login: str = "ada", kind: str = "User") -> dict[str, Any]:
    return {
        "action": "created",
        "issue": {"number": 7, "pull_request": {}},
        "comment": {"id": 99, "body": body, "user": {"login": login, "type": kind}},
        "repository": {"full_name": "acme/shop"},
    }


def test_github_comments_addressing_nova() -> None:
    job = _github("issue_comment", _comment("Hey @Nova, explain this"))
    assert isinstance(job, JobRequest) and job.argv() == [
        "respond",
        "acme/shop#7",
        "--comment",
        "99",
    ]
    assert isinstance(_github("issue_comment", _comment("@nova-bot dismiss")), JobRequest)
    for ignored in (
        _comment("@nova again", "nova-bot[bot]", "Bot"),  # Nova's own, first
        _comment("@nova", "github-actions[bot]", "Bot"),
        _comment("mail nova@example.com or @novak"),
        _comment("<!-- nova:answer --> Ask me: `@nova explain`"),  # Nova's own text
        {**_comment("@nova"), "action": "edited"},
        {**_comment("@nova"), "issue": {"number": 7}},  # an issue, not a pull request
    ):
        assert isinstance(_github("issue_comment", ignored), Ignored), ignored
    review_comment = {**_comment("@nova why?"), "pull_request": {"number": 7}}
    del review_comment["issue"]
    assert isinstance(_github("pull_request_review_comment", review_comment), JobRequest)


@given(st.text(max_size=60))
def test_a_mention_is_a_whole_word(text: str) -> None:
    assert addresses(f"{text} @nova", CTX) == addresses("x @nova", CTX)
    assert not addresses(text.replace("@", ""), CTX)
    assert addresses(f"@nova {text}", CTX)


def test_github_push_to_the_default_branch_is_testgen_when_enabled() -> None:
    push = {
        "ref": "refs/heads/main",
        "after": "d" * 40,
        "repository": {"full_name": "acme/shop", "default_branch": "main"},
        "sender": {"login": "ada"},
    }
    assert isinstance(_github("push", push), Ignored)
    job = _github("push", push, Context(testgen_on_merge=True))
    assert isinstance(job, JobRequest) and job.kind == "testgen" and job.head == "d" * 40
    other = {**push, "ref": "refs/heads/feature"}
    assert isinstance(_github("push", other, Context(testgen_on_merge=True)), Ignored)


def _mr(action: str, **attrs: Any) -> dict[str, Any]:
    return {
        "object_kind": "merge_request",
        "user": {"username": "ada"},
        "project": {"path_with_namespace": "group/app", "default_branch": "main"},
        "object_attributes": {
            "action": action,
            "iid": 4,
            "last_commit": {"id": "e" * 40},
            "target_branch": "main",
            **attrs,
        },
    }


def test_gitlab_merge_requests_and_notes() -> None:
    def classify(payload: dict[str, Any], ctx: Context = CTX) -> JobRequest | Cancel | Ignored:
        return gitlab.classify({}, payload, "gitlab:u", ctx)

    for payload in (_mr("open"), _mr("reopen"), _mr("update", oldrev="a" * 40)):
        job = classify(payload)
        assert isinstance(job, JobRequest) and job.ref == "group/app!4" and job.kind == "review"
    for payload in (
        _mr("update"),  # a title edit: no new head
        _mr("open", draft=True),
        _mr("approved"),
        _mr("merge"),  # testgen not enabled
    ):
        assert isinstance(classify(payload), Ignored), payload
    assert classify(_mr("close")) == Cancel("gitlab:group/app!4", "the merge request was closed")
    merged = classify(_mr("merge", merge_commit_sha="f" * 40), Context(testgen_on_merge=True))
    assert isinstance(merged, JobRequest) and merged.kind == "testgen"
    note = {
        "object_kind": "note",
        "user": {"username": "ada"},
        "project": {"path_with_namespace": "group/app"},
        "merge_request": {"iid": 4},
        "object_attributes": {"id": 77, "note": "@nova explain", "noteable_type": "MergeRequest"},
    }
    job = classify(note)
    assert isinstance(job, JobRequest) and job.argv()[:2] == ["respond", "group/app!4"]
    for user in ("nova-bot", "project_12_bot_3fa2", "renovate-bot"):
        assert isinstance(classify({**note, "user": {"username": user}}), Ignored), user
    assert gitlab.delivery_id({"idempotency-key": "k1"}, b"") == "gitlab:k1"


def test_phabricator_herald_and_harbormaster() -> None:
    herald = {"object": {"type": "DREV", "phid": "PHID-DREV-1"}, "action": {"epoch": 5}}
    first = phabricator.classify_herald(herald)
    assert isinstance(first, JobRequest) and first.ref == "PHID-DREV-1"
    again = phabricator.classify_herald(herald)
    assert isinstance(again, JobRequest) and again.delivery == first.delivery
    later = phabricator.classify_herald({**herald, "action": {"epoch": 6}})
    assert isinstance(later, JobRequest) and later.delivery != first.delivery
    assert isinstance(phabricator.classify_herald({**herald, "action": {"test": True}}), Ignored)
    task = {"object": {"type": "TASK", "phid": "PHID-TASK-1"}, "action": {}}
    assert isinstance(phabricator.classify_herald(task), Ignored)
    build = phabricator.classify_build({"target": "PHID-HMBT-x1", "revision": "12", "diff": "34"})
    assert isinstance(build, JobRequest)
    assert build.argv() == [
        "review",
        "D12:34",
        "--publish",
        "phabricator",
        "-q",
        "--harbormaster-target",
        "PHID-HMBT-x1",
    ]
    assert build.delivery == "harbormaster:PHID-HMBT-x1"
    for query in (
        {"revision": "12"},
        {"target": "PHID-HMBT-x1"},
        {"target": "x; rm", "revision": "1"},
    ):
        assert isinstance(phabricator.classify_build(query), Ignored)


def test_a_checkouts_token_travels_as_a_header_only() -> None:
    from bot.serve.checkout import git_env

    job = JobRequest("github", "testgen", "c", "acme/shop", "d" * 40, "x", clone_url="u")
    env = git_env(job, {"GITHUB_TOKEN": "ghs_abc", "PATH": "/bin"})
    header = base64.b64encode(b"x-access-token:ghs_abc").decode()
    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    assert env["GIT_CONFIG_VALUE_0"] == f"Authorization: Basic {header}"
    assert env["GIT_TERMINAL_PROMPT"] == "0" and job.clone_url == "u"


_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.text(max_size=12))
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "action",
                    "number",
                    "pull_request",
                    "head",
                    "sha",
                    "repository",
                    "full_name",
                    "default_branch",
                    "sender",
                    "login",
                    "type",
                    "issue",
                    "comment",
                    "id",
                    "body",
                    "user",
                    "installation",
                    "ref",
                    "after",
                    "object_kind",
                    "project",
                    "path_with_namespace",
                    "object_attributes",
                    "iid",
                    "last_commit",
                    "oldrev",
                    "draft",
                    "note",
                    "noteable_type",
                    "merge_request",
                    "username",
                    "object",
                    "phid",
                    "epoch",
                    "test",
                    "clone_url",
                    "git_http_url",
                    "target_branch",
                    "merge_commit_sha",
                ]
            ),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=25,
)


@pytest.mark.slow
@given(
    st.dictionaries(st.sampled_from(["action", "repository", "project", "object"]), _json),
    _json,
    st.sampled_from(
        ["pull_request", "issue_comment", "pull_request_review_comment", "push", "ping"]
    ),
)
def test_any_verified_payload_is_classified_never_raises(
    top: dict[str, Any], extra: Any, event: str
) -> None:
    payload = {**top, "extra": extra}
    for found in (
        github.classify({"x-github-event": event}, payload, "github:d", CTX),
        gitlab.classify({}, payload, "gitlab:d", CTX),
        phabricator.classify_herald(payload),
    ):
        assert isinstance(found, JobRequest | Cancel | Ignored)
    for key in ("pull_request", "issue", "object_attributes", "comment", "object"):
        nested = {**payload, key: extra}
        assert isinstance(
            github.classify({"x-github-event": event}, nested, "github:d", CTX),
            JobRequest | Cancel | Ignored,
        )
        found = gitlab.classify({}, nested, "gitlab:d", CTX)
        assert isinstance(found, JobRequest | Cancel | Ignored)
        assert isinstance(phabricator.classify_herald(nested), JobRequest | Ignored)


def test_a_jobs_environment_takes_only_what_it_needs() -> None:
    from bot.serve.environment import job_environment

    server = {
        "PATH": "/bin",
        "GITHUB_TOKEN": "t",
        "GITLAB_TOKEN": "g",
        "NOVA_LLM_MODEL": "openai:x",
        "OPENAI_API_KEY": "sk",
        "NOVA_GITHUB_WEBHOOK_SECRET": "w",
        "NOVA_SERVE_MAX_JOBS": "2",
        "NOVA_HARBORMASTER_TARGET": "PHID-HMBT-server",
        "GITHUB_EVENT_PATH": "/x.json",
        "AWS_SECRET_ACCESS_KEY": "unrelated",
    }
    job = JobRequest("github", "review", "c", "a/b#1", "h", "d")
    env = job_environment(job, server, {"GITHUB_TOKEN": "minted"})
    assert env == {
        "PATH": "/bin",
        "GITHUB_TOKEN": "minted",
        "NOVA_LLM_MODEL": "openai:x",
        "OPENAI_API_KEY": "sk",
        "CI": "true",
    }
    build = JobRequest("phabricator", "review", "c", "D1", "2", "d", target="PHID-HMBT-1")
    assert job_environment(build, server, {})["NOVA_HARBORMASTER_TARGET"] == "PHID-HMBT-1"


def test_clone_urls_come_from_the_settings_never_from_the_payload() -> None:
    from bot.serve.origins import Origins, github_web_url

    assert github_web_url("https://api.github.com") == "https://github.com"
    assert github_web_url("https://ghe.example/api/v3/") == "https://ghe.example"
    assert github_web_url("http://127.0.0.1:8123") == "http://127.0.0.1:8123"
    origins = Origins({"github": "https://github.com", "gitlab": "https://gitlab.example"})

    def testgen(host: str, ref: str, url: str | None) -> JobRequest | Ignored:
        request = JobRequest(
            host, "testgen", f"{host}:{ref}@main", ref, "a" * 40, "d", clone_url=url
        )
        return origins.route(request)

    ok = testgen("gitlab", "group/sub/shop", "https://GitLab.example:443/group/sub/shop.git")
    assert (
        isinstance(ok, JobRequest) and ok.clone_url == "https://gitlab.example/group/sub/shop.git"
    )
    no_url = testgen("github", "acme/shop", None)
    assert isinstance(no_url, JobRequest) and no_url.clone_url == "https://github.com/acme/shop.git"
    for host, url in [
        ("gitlab", "http://gitlab.example/group/shop.git"),  # another scheme
        ("gitlab", "https://gitlab.example:8443/group/shop.git"),  # another port
        ("gitlab", "https://evil.example/group/shop.git"),  # another host
        ("gitlab", "https://oauth2:x@gitlab.example/group/shop.git"),  # credentials
        ("github", "git@github.com:acme/shop.git"),  # not http(s)
    ]:
        refused = testgen(host, "group/shop" if host == "gitlab" else "acme/shop", url)
        assert isinstance(refused, Ignored) and refused.reason.startswith("refused"), url
    assert isinstance(testgen("github", "acme/..", None), Ignored)
    review = JobRequest("github", "review", "github:a/b#1", "a/b#1", "h", "d", clone_url="x")
    assert origins.route(review) is review  # only a checkout sends a token to git
