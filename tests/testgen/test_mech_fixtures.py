"""Objects and inputs built by pytest fixtures are replayed (issue 35): a project whose
tests get their object only as a fixture parameter (from ``conftest.py``, from a fixture
that takes another fixture, from a fixture of the test class) gave the differential
generator zero inputs. The fixtures are now put in place, read and never run."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from bot.testgen.extremes import caught_types, towards_exceptions
from bot.testgen.fixtures import fixture_files, replay_fixtures
from bot.testgen.inputs import Candidate
from bot.testgen.scenarios import scenarios_from_tests
from tests.conftest import GitRepo
from tests.testgen.sample import sample_testgen

CONFTEST = """import pytest


@pytest.fixture
def key():
    return "s3cret"
"""

SIGNING = """import datetime
import hashlib
import hmac


class BadSignature(ValueError):
    pass


class Signer:
    def __init__(self, key, sep=":"):
        if sep.isalnum():
            raise ValueError("the separator cannot be a letter or a digit")
        self.key = key.encode()
        self.sep = sep

    def sign(self, value):
        return f"{value}{self.sep}{self._mac(value)}"

    def unsign(self, signed):
        value, found, mac = signed.rpartition(self.sep)
        if not found or not hmac.compare_digest(mac, self._mac(value)):
            raise BadSignature("signature does not match")
        return value

    def _mac(self, value):
        raw = hmac.new(self.key, value.encode(), hashlib.sha256).digest()
        return raw.hex()[:16]

    def issued(self, token):
        stamp = token.rpartition(self.sep)[2]
        try:
            when = datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc)
        except ValueError:
            return None
        return when.year
"""
# the release: shorter, URL-safe signatures; a timestamp past the platform's is no year
SIGNING_NEW = (
    SIGNING.replace("import hashlib\n", "import base64\nimport hashlib\n")
    .replace(
        "        return raw.hex()[:16]\n",
        "        return base64.urlsafe_b64encode(raw[:12]).decode()\n",
    )
    .replace("        except ValueError:\n", "        except (ValueError, OverflowError):\n")
)

TESTS = """import pytest

from vault.signing import BadSignature, Signer


@pytest.fixture
def signer(key):
    return Signer(key, sep="|")


class TestSigner:
    @pytest.fixture
    def greeting(self):
        return "hello"

    def test_round_trip(self, signer, greeting):
        signed = signer.sign(greeting)
        assert signer.unsign(signed) == greeting

    def test_issued(self, signer):
        assert signer.issued("hello|1700000000") == 2023
        assert signer.issued("hello|soon") is None

    def test_tampered(self, signer):
        signed = signer.sign("hello")
        with pytest.raises(BadSignature):
            signer.unsign(signed.replace("hello", "help"))
"""


def _calls(files: dict[str, str], owner: str, member: str) -> list[tuple[object, ...]]:
    return [(c.ctor, c.args) for c in scenarios_from_tests(files, owner, member)]


def test_a_fixture_from_conftest_through_another_fixture_builds_the_object() -> None:
    tests = {"tests/test_signing.py": TESTS}
    files = replay_fixtures(tests, {"tests/conftest.py": CONFTEST, "setup.py": ""})
    assert _calls(tests, "Signer", "unsign") == []  # as written: no instance is built
    found = _calls(files, "Signer", "unsign")
    ctor = (("'s3cret'",), (("sep", "'|'"),))
    # the value the test makes with the object itself is made the same way
    assert (ctor, ("Signer('s3cret', sep='|').sign('hello')",)) in found
    tampered = "Signer('s3cret', sep='|').sign('hello').replace('hello', 'help')"
    assert (ctor, (tampered,)) in found  # used inside `with pytest.raises(...)`
    assert fixture_files(
        ["tests/conftest.py", "tests/helpers.py", "tests/test_signing.py", "vault/x.py"],
        tests,
    ) == ["tests/conftest.py", "tests/helpers.py"]


BASE = """from functools import partial

import pytest

from shop.cart import Cart


class TestCart:
    @pytest.fixture
    def cart_factory(self):
        return partial(Cart, currency="EUR")

    @pytest.fixture
    def cart(self, cart_factory):
        return cart_factory()

    def test_total(self, cart):
        cart.add("tea", 3)
        assert cart.total() == 3
"""

DERIVED = """from functools import partial

import pytest

from shop.cart import Cart, Till
from tests.test_base import TestCart


@pytest.fixture(params=[2, pytest.param(5, id="five")])
def size(request):
    return request.param


@pytest.fixture
def till(size, tmp_path):
    log = tmp_path / "log"
    return Till(size, log)


@pytest.fixture
def make_till(size):
    def make(**options):
        return Till(size, **options)

    return make


@pytest.fixture
def patched(monkeypatch):
    monkeypatch.setenv("TILL_MODE", "test")
    return Till(1)


@pytest.fixture
def drawer(patched):
    return Till(3)


@pytest.fixture
def frozen():
    with open("x") as handle:
        yield handle


class TestTaxedCart(TestCart):
    @pytest.fixture
    def cart_factory(self):
        return partial(Cart, currency="USD", tax=7)


def test_patched(patched, drawer):
    drawer.open()
    patched.open()


def test_sizes(make_till, frozen):
    till = make_till(drawer=True)
    till.open()


@pytest.mark.parametrize("size", [9])
def test_given(make_till):
    till = make_till()
    till.open()
"""


def test_fixtures_of_classes_bases_params_and_factories() -> None:
    files = replay_fixtures(
        {"tests/test_base.py": BASE, "tests/test_derived.py": DERIVED}, {"tests/conftest.py": ""}
    )
    # the base class's own test, and the copy it gives the subclass with the override
    assert _calls(files, "Cart", "total") == [
        (((), (("currency", "'EUR'"),)), ()),
        (((), (("currency", "'USD'"), ("tax", "7"))), ()),
    ]
    assert [c.steps for c in scenarios_from_tests(files, "Cart", "total")] == [
        ("_nova_obj.add('tea', 3)",)
    ] * 2
    # one copy of the test per value of `params`; a factory fixture applied
    found = _calls(files, "Till", "open")
    assert found == [
        ((("2",), (("drawer", "True"),)), ()),
        ((("5",), (("drawer", "True"),)), ()),
        ((("9",), ()), ()),  # parametrize overrides the fixture
    ]
    derived = ast.parse(files["tests/test_derived.py"])
    names = [n.name for n in ast.walk(derived) if isinstance(n, ast.FunctionDef)]
    assert "test_sizes_nova_fixture_1" in names and "test_total" in names
    text = files["tests/test_derived.py"]
    assert "tmp_path" in text and "tmp_path =" not in text  # pytest's own: never made
    assert "frozen =" not in text  # a value made inside a `with`
    # a fixture that patches, and one that needs it: the objects may depend on the patch
    assert "patched =" not in text and "drawer =" not in text


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("vault")
    repo, data = sample_testgen(
        tmp,
        {
            "vault/__init__.py": "",
            "vault/signing.py": SIGNING,
            "tests/conftest.py": CONFTEST,
            "tests/test_signing.py": TESTS,
        },
        {"vault/signing.py": SIGNING_NEW},
        "shorter, URL-safe signatures; no year for a timestamp out of range",
    )
    return repo, data


@pytest.mark.slow
def test_nova_testgen_replays_the_fixtures_and_catches_the_change(
    vault: tuple[GitRepo, dict[str, Any]],
) -> None:
    repo, data = vault
    facts = [
        {**case, "fact": fact}
        for case in data["kept"]
        for fact in case["evidence"].get("calls", [])
    ]
    built = "signer = Signer('s3cret', sep='|')"
    caught = [c for c in facts if c["evidence"]["catches_change"]]
    assert caught, json.dumps(data, indent=1)
    assert all(c["fact"]["call"].startswith(built) for c in caught)
    # the value the test signed with the object, replayed: the parent rejects it
    unsign = [c for c in caught if "signer.unsign('hello|" in c["fact"]["call"]]
    assert unsign, [c["fact"] for c in caught]
    assert "BadSignature(" in unsign[0]["fact"]["parent"]
    committed = repo.git("show", f"{data['branch']}:tests/test_nova_vault_signing.py")
    assert "Signer('s3cret', sep='|')" in committed


@pytest.mark.slow
def test_an_input_is_steered_towards_the_exception_a_changed_except_clause_adds(
    vault: tuple[GitRepo, dict[str, Any]],
) -> None:
    """`except ValueError` became `except (ValueError, OverflowError)`: no test input
    overflows; the digits of the tests' own token made twenty nines do."""
    _repo, data = vault
    caught = [
        fact
        for case in data["kept"]
        for fact in case["evidence"].get("calls", [])
        if ".issued(" in fact["call"] and fact["changed"]
    ]
    assert caught, json.dumps(data["notes"], indent=1)
    calls = [f["call"] for f in caught]
    assert all("9" * 20 in call for call in calls), calls  # only an overflowing input differs
    assert any("hello|" + "9" * 20 in call for call in calls), calls  # the tests' own token
    assert caught[0]["parent"].startswith("raised OverflowError(")
    assert caught[0]["head"].split(",")[0] == "None"  # and the instance after it


def test_the_types_a_changed_except_clause_names_steer_the_inputs() -> None:
    source = SIGNING_NEW
    line = source.splitlines().index("        except (ValueError, OverflowError):") + 1
    assert caught_types(source, [line]) == ["ValueError", "OverflowError"]
    assert caught_types(source, [line + 1]) == []
    found = Candidate(("'hello|1700000000'",), (), ("import x",), "tests/t.py:3")
    made = towards_exceptions([found], source, [line])
    values = [c.args[0] for c in made]
    assert values[:3] == [
        "'99999|1700000000'",
        "'999999|1700000000'",
        "'" + "9" * 20 + "|1700000000'",
    ]
    assert "'hello|" + "9" * 20 + "'" in values
    assert "''" in values and "'hello|17'" in values  # ValueError: empty, cut in half
    assert all(c.imports == ("import x",) and "(towards " in c.origin for c in made)
    number = Candidate(("3",), (("limit", "True"),))
    assert [
        c.args
        for c in towards_exceptions(
            [number], "try:\n    f()\nexcept OverflowError:\n    pass\n", [3]
        )
    ] == [
        ("18446744073709551616",),
        ("-18446744073709551616",),
        (repr(2**1024),),
    ]


def test_a_yield_fixture_its_steps_and_a_conftest_further_up() -> None:
    conftest = (
        "import pytest\nfrom shop.cart import Cart\n\nRATE = 7\n\n\n"
        "@pytest.fixture\ndef cart():\n"
        "    '''A cart with tea in it.'''\n"
        "    c = Cart(tax=RATE)\n    c.add('tea', 3)\n    yield c\n    c.close()\n"
    )
    test = "def test_total(cart):\n    assert cart.total() == 3\n"
    files = replay_fixtures({"tests/unit/test_cart.py": test}, {"tests/conftest.py": conftest})
    (found,) = scenarios_from_tests(files, "Cart", "total")
    assert found.ctor == ((), (("tax", "7"),))  # the conftest's constant came with it
    assert found.steps == ("_nova_obj.add('tea', 3)",)  # its steps; not the teardown
    assert found.imports == ("from shop.cart import Cart",)


def test_autouse_fixtures_of_a_class_set_it_up_and_plugins_hold_fixtures() -> None:
    test = (
        "import pytest\nfrom shop.cart import Cart\n\n\n"
        "class TestCart:\n"
        "    @pytest.fixture(autouse=True)\n"
        "    def setup(self, request, currency):\n"
        "        self.cart = Cart(currency)\n"
        "        request.cls.other = Cart('GBP')\n"
        "        yield\n"
        "        self.cart.close()\n\n"
        "    def test_total(self):\n"
        "        self.cart.add('tea', 3)\n"
        "        assert self.cart.total() == 3\n\n"
        "    def test_other(self):\n"
        "        assert self.other.total() == 0\n"
    )
    plugin = "import pytest\n\n\n@pytest.fixture\ndef currency():\n    return 'EUR'\n"
    conftest = "pytest_plugins = ['tests.plugins.money']\n"
    support = {"tests/conftest.py": conftest, "tests/plugins/money.py": plugin}
    assert fixture_files([*support, "tests/test_cart.py"], {"tests/test_cart.py": test}) == [
        *support
    ]
    files = replay_fixtures({"tests/test_cart.py": test}, support)
    found = scenarios_from_tests(files, "Cart", "total")
    assert [(c.ctor, c.steps) for c in found] == [
        ((("'EUR'",), ()), ("_nova_obj.add('tea', 3)",)),
        ((("'GBP'",), ()), ()),
    ]


def test_a_fixture_gives_a_plain_function_its_input() -> None:
    from bot.testgen.inputs import inputs_from_tests

    test = (
        "import pytest\nfrom shop.text import slug\n\n\n"
        "@pytest.fixture(params=['Tea Time', 'Ça va'])\ndef title(request):\n"
        "    return request.param.strip()\n\n\n"
        "def test_slug(title):\n    assert slug(title)\n"
    )
    tests = {"tests/test_text.py": test}
    assert inputs_from_tests(tests, {"slug"}) == {"slug": []}
    found = inputs_from_tests(replay_fixtures(tests, {}), {"slug"})
    assert [c.args for c in found["slug"]] == [("'Tea Time'.strip()",), ("'Ça va'.strip()",)]


def test_indirect_parametrization_goes_through_the_fixture() -> None:
    test = (
        "import pytest\nfrom shop.cart import Cart\n\n\n"
        "@pytest.fixture\ndef cart(request):\n    return Cart(currency=request.param)\n\n\n"
        "@pytest.mark.parametrize('cart', ['EUR', 'USD'], indirect=True)\n"
        "@pytest.mark.parametrize('item', ['tea'])\n"
        "def test_add(cart, item):\n    cart.add(item)\n"
    )
    files = replay_fixtures({"tests/test_cart.py": test}, {})
    found = scenarios_from_tests(files, "Cart", "add")
    assert [(c.ctor, c.args) for c in found] == [
        (((), (("currency", "'EUR'"),)), ("'tea'",)),
        (((), (("currency", "'USD'"),)), ("'tea'",)),
    ]
