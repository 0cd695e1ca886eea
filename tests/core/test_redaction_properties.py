"""Property: for any configured token, no plain, base64 (standard or URL-safe, at any offset,
as in ``Authorization: basic base64(x-access-token:TOKEN)``) or URL-encoded form survives
``redact`` / ``redact_known``. The oracle decodes what is left; it does not reuse the
redaction's own logic."""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import errors
from bot.errors import redact, redact_known, register_secret

TOKEN_CHARS = string.ascii_letters + string.digits + "-_.~+/=:@%&!$"
tokens = st.text(alphabet=TOKEN_CHARS, min_size=6, max_size=48)
around = st.text(max_size=24)
plain_around = st.text(alphabet=string.ascii_letters + " .,;()", max_size=24)


@contextmanager
def only_secret(token: str) -> Iterator[None]:
    """``token`` is the one configured secret, for the length of the block."""
    saved = dict(errors._known_secrets)
    errors._known_secrets.clear()
    try:
        register_secret(token)
        yield
    finally:
        errors._known_secrets.clear()
        errors._known_secrets.update(saved)


def decoded_runs(text: str) -> Iterator[bytes]:
    """Every base64 run of ``text`` decoded from each of its first four offsets, in both
    alphabets."""
    for run in re.findall(r"[A-Za-z0-9+/_\-]{4,}=*", text):
        for start in range(4):
            body = run[start:].rstrip("=")
            body = body[: len(body) - len(body) % 4] or body
            for alt in (b"+/", b"-_"):
                try:
                    yield base64.b64decode(body + "=" * (-len(body) % 4), altchars=alt)
                except (binascii.Error, ValueError):
                    continue


def assert_hidden(token: str, out: str) -> None:
    assert token not in out
    raw = token.encode()
    assert not any(raw in chunk for chunk in decoded_runs(out))


@given(
    token=tokens,
    before=around,
    after=around,
    inner_before=around,
    inner_after=around,
    urlsafe=st.booleans(),
)
def test_no_base64_form_survives(
    token: str, before: str, after: str, inner_before: str, inner_after: str, urlsafe: bool
) -> None:
    payload = (inner_before + token + inner_after).encode()
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(payload).decode()
    with only_secret(token):
        for redactor in (redact, redact_known):
            assert_hidden(token, redactor(before + encoded + after))


@pytest.mark.slow
@given(
    token=tokens,
    before=plain_around,
    after=plain_around,
    style=st.sampled_from(["plain", "quote", "quote_safe", "plus", "lower"]),
)
def test_no_url_encoded_form_survives(token: str, before: str, after: str, style: str) -> None:
    form = {
        "plain": token,
        "quote": quote(token),
        "quote_safe": quote(token, safe=""),
        "plus": quote_plus(token),
        "lower": re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(token, safe="")),
    }[style]
    with only_secret(token):
        out = redact_known(f"{before}https://host/p?t={form}&x=1{after}")
    assert token not in out and token not in unquote(out) and token not in unquote_plus(out)


@given(token=tokens)
def test_actions_checkout_header(token: str) -> None:
    header = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    line = f"\textraheader = AUTHORIZATION: basic {header}\n"
    with only_secret(token):
        assert redact_known(line) == "\textraheader = AUTHORIZATION: basic ***\n"
    # unconfigured: the header's credentials are hidden by their shape (logs, events)
    assert redact(line) == "\textraheader = AUTHORIZATION: basic ***\n"


@pytest.mark.slow
@given(
    user=st.text(alphabet=string.ascii_letters, max_size=8),
    password=st.text(
        alphabet=string.ascii_letters + string.digits + "%-._~!$", min_size=1, max_size=20
    ),
)
def test_url_userinfo_is_hidden(user: str, password: str) -> None:
    out = redact(f"model endpoint http://{user}:{password}@svc:8000/v1 is unreachable")
    assert out == f"model endpoint http://{user}:***@svc:8000/v1 is unreachable"
