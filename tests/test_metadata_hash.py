"""KIP-1101's metadata hash (``groupcoord.format.metadata_hash``): Kafka's
``Utils.computeTopicHash`` and ``computeGroupHash``, XXH3-64 over hash4j's byte stream.

The byte stream is rebuilt here from hash4j's ``HashSink`` rules (numbers little-endian,
``putString`` = UTF-16LE units then ``putInt(length)``) and hashed by the reference XXH3
implementation, the system's libxxhash, where it is installed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from kip848_vectors import METADATA_HASHES

from groupcoord.coordinator.consumer.assignors.java_order import uuid_from_kafka
from groupcoord.format.metadata_hash import group_hash, topic_hash

TOPIC_ID = uuid.UUID("0c9b0a3e-8f6e-4f4c-9b1d-2f5e6a7b8c9d")


def _libxxhash() -> ctypes.CDLL | None:
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0"):
        if name is None:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lib
    return None


LIBXXHASH = _libxxhash()
needs_libxxhash = pytest.mark.skipif(
    LIBXXHASH is None and not os.environ.get("CI"), reason="no libxxhash to compare with")
"""Skipped on a machine without the system's libxxhash, never in CI (where its absence fails)."""


def xxh3_64_signed(data: bytes) -> int:
    assert LIBXXHASH is not None
    unsigned: int = LIBXXHASH.XXH3_64bits(data, len(data))
    return struct.unpack("<q", struct.pack("<Q", unsigned))[0]


def put_string(s: str) -> bytes:
    units = s.encode("utf-16-le")
    return units + struct.pack("<i", len(units) // 2)


def topic_stream(topic_id: uuid.UUID, name: str, racks: Sequence[Sequence[str]], partitions: int) -> bytes:
    msb, lsb = struct.unpack(">qq", topic_id.bytes)
    out = b"\x00" + struct.pack("<qq", msb, lsb) + put_string(name) + struct.pack("<i", partitions)
    for i in range(partitions):
        out += struct.pack("<i", i)
        these = racks[i] if i < len(racks) else ()
        for rack in sorted(these, key=lambda r: r.encode("utf-16-be")):  # Java's String order
            out += struct.pack("<i", len(rack.encode("utf-16-le")) // 2) + put_string(rack)
    return out


@needs_libxxhash
@pytest.mark.parametrize(("name", "partitions", "racks"), [
    ("orders", 0, []),
    ("orders", 3, []),
    ("orders", 3, [["rack-b", "rack-a"], [], ["rack-c"]]),
    ("t\u00e9", 2, [["\U0001f600", "\uff61"]]),
])
def test_topic_hash_is_xxh3_of_hash4js_stream(name: str, partitions: int, racks: list[list[str]]) -> None:
    assert topic_hash(TOPIC_ID, name, partitions, racks) == xxh3_64_signed(
        topic_stream(TOPIC_ID, name, racks, partitions))


@needs_libxxhash
def test_group_hash_is_xxh3_of_the_topic_hashes() -> None:
    hashes = [topic_hash(TOPIC_ID, "a", 1), topic_hash(uuid.uuid4(), "b", 2), -1]
    assert group_hash(hashes) == xxh3_64_signed(struct.pack("<3q", *hashes))


def test_the_hash_follows_what_kafka_watches() -> None:
    base = topic_hash(TOPIC_ID, "orders", 3, [["a"], ["b"], ["c"]])
    assert -(2**63) <= base < 2**63
    assert base == topic_hash(TOPIC_ID, "orders", 3, (("a",), ("b",), ("c",)))
    assert base != topic_hash(TOPIC_ID, "orders", 4, [["a"], ["b"], ["c"]])
    assert base != topic_hash(TOPIC_ID, "orders", 3, [["a"], ["c"], ["b"]])
    assert base != topic_hash(uuid.uuid4(), "orders", 3, [["a"], ["b"], ["c"]])
    assert topic_hash(TOPIC_ID, "t", 1, [["x", "y"]]) == topic_hash(TOPIC_ID, "t", 1, [["y", "x"]])
    assert group_hash([]) == 0
    assert group_hash([base]) != group_hash([base, base])


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="negative"):
        topic_hash(TOPIC_ID, "t", -1)
    with pytest.raises(ValueError, match="racks of 2 partitions for a topic of 1"):
        topic_hash(TOPIC_ID, "t", 1, [[], []])
    with pytest.raises(TypeError, match="each partition's racks"):
        topic_hash(TOPIC_ID, "t", 1, ["rack-a"])


def check_kafka_metadata_hash(topic_id: uuid.UUID, name: str, partitions: int, expected_hash: int,
                              racks: Sequence[Sequence[str]] = ()) -> None:
    """A group subscribed to one topic, as a Kafka broker stored its metadata hash in a
    ConsumerGroupMetadataValue: the group hash of that topic's hash."""
    assert group_hash([topic_hash(topic_id, name, partitions, racks)]) == expected_hash


@pytest.mark.parametrize("capture", METADATA_HASHES, ids=[c["group"] for c in METADATA_HASHES])
def test_the_metadata_hash_a_kafka_broker_wrote(capture: dict[str, Any]) -> None:
    """ConsumerGroupMetadataValue records a Kafka 4.3.1 broker wrote (tests/kip848_vectors.py):
    the group hash of its subscribed topics' hashes, in the order of their names."""
    topics = sorted(capture["topics"], key=lambda t: t["topic_name"])
    hashes = [topic_hash(uuid_from_kafka(t["topic_id"]), t["topic_name"], t["partitions"], t["racks"])
              for t in topics]
    assert group_hash(hashes) == capture["metadata_hash"]
    if len(topics) == 1:
        t = topics[0]
        check_kafka_metadata_hash(uuid_from_kafka(t["topic_id"]), t["topic_name"], t["partitions"],
                                  capture["metadata_hash"])
