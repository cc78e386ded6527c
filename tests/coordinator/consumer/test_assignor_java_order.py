"""The emulation of Java's hash codes and hash-table iteration orders the assignors rely on."""

from __future__ import annotations

import uuid
from collections import OrderedDict

from assignor_support import T1, T2, T3, T4

from groupcoord.coordinator.consumer.assignors.java_order import (
    copied_capacity,
    grown_capacity,
    map_order,
    partition_set_order,
    string_hash,
    topic_set_order,
    uuid_from_kafka,
    uuid_hash,
    uuid_sort_key,
    uuid_to_kafka,
)


def test_kafka_uuid_strings_round_trip() -> None:
    assert uuid_to_kafka(T1) == "T1-A4s3VTwiI5CTbEp6POw"
    assert uuid_from_kafka(uuid_to_kafka(T4)) == T4
    assert uuid_to_kafka(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"


def test_string_hash_is_javas() -> None:
    assert string_hash("") == 0
    assert string_hash("A") == 65
    assert string_hash("hello") == 99162322
    assert string_hash("Aa") == string_hash("BB") == 2112
    # Negative Java ints come back as their unsigned 32-bit pattern; surrogates count as units.
    assert string_hash("polygenelubricants") == 0x80000000  # Integer.MIN_VALUE
    assert string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00


def test_uuid_hash_and_order_are_kafkas() -> None:
    assert uuid_hash(uuid.UUID(int=(1 << 64) | 3)) == 2  # (msb ^ lsb) folded: 1 ^ 3
    assert uuid_hash(uuid.UUID(int=(5 << 96) | (1 << 64))) == 4  # high word 5 ^ low word 1
    # compareTo is signed: a most significant bit set sorts first.
    assert sorted([uuid.UUID(int=1), uuid.UUID(int=1 << 127)], key=uuid_sort_key)[0].int == 1 << 127


def test_table_capacities() -> None:
    assert [grown_capacity(n) for n in (0, 12, 13, 24, 25)] == [16, 16, 32, 32, 64]
    assert [copied_capacity(n) for n in (0, 2, 11, 12, 13, 24, 25)] == [16, 16, 16, 32, 32, 64, 64]


def test_the_fixed_topics_iterate_in_kafkas_order() -> None:
    # Kafka's uniform assignor tests expect topic 3 before topic 1.
    assert topic_set_order({T1, T2, T3, T4}) == [T2, T4, T3, T1]
    assert map_order({T1: 0, T3: 0}, uuid_hash) == [T3, T1]
    assert map_order(OrderedDict([(T1, 0), (T3, 0)]), uuid_hash) == [T1, T3]


def test_members_in_one_bucket_keep_their_insertion_order() -> None:
    # 2112 is bucket 0 of 16 and "A" (65) bucket 1.
    assert map_order({"A": 0, "BB": 0, "Aa": 0}, string_hash) == ["BB", "Aa", "A"]
    assert map_order({"Aa": 0, "A": 0, "BB": 0}, string_hash) == ["Aa", "BB", "A"]


def test_partitions_beyond_the_table_iterate_by_bucket() -> None:
    assert partition_set_order({2, 1, 0}) == [0, 1, 2]
    assert partition_set_order({3, 17, 16}) == [16, 17, 3]
