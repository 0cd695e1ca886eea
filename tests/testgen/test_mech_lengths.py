"""A new bounds check (``if length > len(data) - 2``) shows only on a record one byte
short, and the project's tests hold only well-formed ones: with a changed length test,
their bytes and string arguments are also tried one element longer and one shorter."""

from __future__ import annotations

from typing import Any

import pytest

from bot.testgen.inputs import Candidate
from bot.testgen.nearby import containment_names, nearby_strings
from tests.testgen.sample import caught, sample_testgen

RECORD = '''
class BadRecord(ValueError):
    pass


def split_record(data):
    """(tag, body, rest) of a tag-length-value record."""
    if len(data) < 2:
        raise BadRecord("too short")
    tag, length = data[0], data[1]
    body = data[2 : 2 + length]
    return tag, body, data[2 + length :]
'''

RECORD_NEW = RECORD.replace(
    "    body = data[2 : 2 + length]\n",
    "    if length > len(data) - 2:\n"
    '        raise BadRecord("length past the end of the data")\n'
    "    body = data[2 : 2 + length]\n",
)

TESTS = """
from records.tlv import split_record


def test_split():
    assert split_record(b"\\x04\\x02abcd") == (4, b"ab", b"cd")
    assert split_record(b"\\x01\\x03xyz") == (1, b"xyz", b"")
"""


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _repo, data = sample_testgen(
        tmp_path_factory.mktemp("records"),
        {"records/__init__.py": "", "records/tlv.py": RECORD, "tests/test_tlv.py": TESTS},
        {"records/tlv.py": RECORD_NEW},
        "reject a length past the end of the data",
    )
    return data


def test_a_record_one_byte_short_catches_a_new_bounds_check(records: dict[str, Any]) -> None:
    facts = caught(records, "split_record(")
    assert facts, records["notes"]
    assert any("BadRecord" in f["head"] for f in facts), facts


def test_a_changed_length_test_varies_bytes_arguments_by_one() -> None:
    lines = [i for i, row in enumerate(RECORD_NEW.split("\n"), 1) if "len(data) - 2" in row]
    assert "length" in containment_names(RECORD_NEW, lines)
    made = nearby_strings([Candidate(("b'\\x01\\x03xyz'",))], RECORD_NEW, lines)
    assert made == [Candidate(("b'\\x01\\x03xyzz'",)), Candidate(("b'\\x01\\x03xy'",))]
    assert (
        nearby_strings([Candidate(("b'\\x01\\x03xyz'",))], RECORD, [3]) == []
    )  # far from any length test
