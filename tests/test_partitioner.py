"""partitionFor vectors computed with javac/java (kafka-internals.md §4)."""

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


@pytest.mark.parametrize(("group_id", "hash_code", "partition"), VECTORS)
def test_java_vectors(group_id: str, hash_code: int, partition: int) -> None:
    assert java_string_hash(group_id) == hash_code
    assert partition_for(group_id, 50) == partition


@given(st.text(), st.integers(min_value=1, max_value=1000))
def test_partition_in_range(group_id: str, n: int) -> None:
    assert 0 <= partition_for(group_id, n) < n


def test_invalid_partition_count() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        partition_for("g", 0)


def test_only_short_group_ids_are_cached() -> None:
    from groupcoord import partitioner

    partitioner._cached_partition_for.cache_clear()
    before = partitioner._cached_partition_for.cache_info().currsize
    long_ids = [f"{i:04d}" + "x" * 32_000 for i in range(50)]
    partitions = [partition_for(g, 50) for g in long_ids]
    assert partitioner._cached_partition_for.cache_info().currsize == before, "a client names what it likes"
    assert partitions == [abs(java_string_hash(g)) % 50 for g in long_ids]
    partition_for("x" * partitioner.CACHED_GROUP_ID_LENGTH, 50)
    assert partitioner._cached_partition_for.cache_info().currsize == before + 1
