"""partitionFor vectors computed with javac/java (Kafka's ``GroupMetadataManager.partitionFor`` over Java's ``String.hashCode``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupcoord.partitioner import java_string_hash, partition_for

VECTORS = [
    ("", 0, 0),
    ("a", 97, 47),
    ("group", 98629247, 47),
    ("test-group", 627841412, 12),
    ("my-group", -1906497762, 12),
    ("console-consumer-12345", 158455506, 6),
    ("polygenelubricants", -2147483648, 0),
    ("DESIGNING WORKHOUSES", -2147483648, 0),
    ("\u00e9", 233, 33),
    ("\U0001f600", 1772899, 49),
    ("gr\u00fcppe", -1233264812, 12),
]


def java_hash_by_definition(s: str) -> int:
    """``31*h + unit`` over the UTF-16 code units, as Java's ``String.hashCode`` is specified."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) % 2**32
    return h - 2**32 if h >= 2**31 else h


@pytest.mark.parametrize(("group_id", "hash_code", "partition"), VECTORS)
def test_java_vectors(group_id: str, hash_code: int, partition: int) -> None:
    assert java_string_hash(group_id) == hash_code
    assert partition_for(group_id, 50) == partition


# Every code point, lone surrogates included (a Python string may hold them; Java hashes each
# as one unit), in strings of one, two and four bytes a character.
@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())))
def test_hash_is_javas_over_utf16_units(group_id: str) -> None:
    assert java_string_hash(group_id) == java_hash_by_definition(group_id)


@given(st.text(), st.integers(min_value=1, max_value=1000))
def test_partition_in_range(group_id: str, n: int) -> None:
    h = java_hash_by_definition(group_id)
    assert partition_for(group_id, n) == (0 if h == -(2**31) else abs(h)) % n


def test_invalid_partition_count() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        partition_for("g", 0)
