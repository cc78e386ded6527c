"""The Rust codec through its Python API: keys and values: reference vectors, round trips of
every version, unknown types and tagged fields, the consumer protocol."""

from __future__ import annotations

import base64
import copy
import json
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec_vectors import GROUP, OFFSET_KEY, OFFSET_VALUE

from groupcoord.format import codec
from groupcoord.format.codec import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    OpaqueKey,
    OpaqueValue,
)


def test_real_capture_decodes_and_reencodes() -> None:
    key = codec.decode_key(OFFSET_KEY)
    assert key == OffsetCommitKey(GROUP, "t01", 0)
    value = codec.decode_value(key, OFFSET_VALUE)
    assert value == OffsetCommitValue(106, "", 1672788047244, -1, -1, 3)
    assert codec.encode_key(key) == OFFSET_KEY
    assert value is not None and codec.encode_value(value) == OFFSET_VALUE
    assert codec.decode_value(key, None) is None


def test_unknown_types_pass_through_opaque() -> None:
    key = codec.decode_key(bytes.fromhex("0009000567726f7570"))  # a share-group record
    assert key == OpaqueKey(9, bytes.fromhex("000567726f7570"))
    value = codec.decode_value(key, bytes.fromhex("00000000000a00"))
    assert value == OpaqueValue(9, 0, bytes.fromhex("0000000a00"))
    assert codec.encode_key(key) == bytes.fromhex("0009000567726f7570")
    with pytest.raises(codec.UnsupportedVersionError):
        codec.encode_value(OffsetCommitValue(1, version=5))


def test_unknown_types_with_values_shorter_than_a_version_pass_through(tmp_path: Path) -> None:
    """Kafka skips a record of an unknown type unread, whatever its value holds; every reader
    here hands it on as an opaque value without a version instead of stopping."""
    key = bytes.fromhex("0009000567726f7570")
    log = codec.write_batch([(key, b""), (key, b"\x07"), (key, bytes.fromhex("0001ab"))],
                            base_offset=0, timestamp=1)
    expected = [OpaqueValue(9, None, b""), OpaqueValue(9, None, b"\x07"), OpaqueValue(9, 1, b"\xab")]
    assert [r.value for r in codec.decode_records(log)] == expected
    assert [r.value for r in codec.iter_records(log)] == expected
    for value, (_, raw) in zip(expected, [(key, b""), (key, b"\x07"), (key, bytes.fromhex("0001ab"))]):
        assert codec.decode_value(codec.decode_key(key), raw) == value
        assert codec.encode_value(value) == raw
        assert pickle.loads(pickle.dumps(value)) == value
    rows = codec.decode_arrow(log).to_pylist()
    assert [(r["value_version"], r["raw_value"], r["is_tombstone"]) for r in rows] == [
        (None, b"", False), (None, b"\x07", False), (1, b"\xab", False)]
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    values = [json.loads(line)["value"] for line in dumped.stdout.splitlines()]
    assert values == [{"record_type": 9, "version": None, "data": ""},
                      {"record_type": 9, "version": None, "data": "Bw=="},
                      {"record_type": 9, "version": 1, "data": "qw=="}]
    with pytest.raises(ValueError, match="without a version"):
        OpaqueValue(9, None, b"\x00\x01")
    with pytest.raises(ValueError, match="unknown record type"):
        OpaqueValue(1, None, b"")
    with pytest.raises(codec.CorruptRecordError):
        codec.decode_value(codec.OffsetCommitKey("g", "t", 0), b"\x00")


names = st.text(max_size=20)


int32 = st.integers(-(2**31), 2**31 - 1)


int64 = st.integers(-(2**63), 2**63 - 1)


def unknown_tags(draw: st.DrawFn, version: int, first: int = 0) -> list[tuple[int, bytes]]:
    """Tagged fields Kafka's schemas do not declare (from tag ``first`` on), which only
    version 4 can hold: strictly increasing tags, as Kafka's writers require."""
    if version < 4:
        return []
    tags = sorted(draw(st.sets(st.integers(first, 2**31 - 1), max_size=3)))
    return [(tag, draw(st.binary(max_size=8))) for tag in tags]


def kafka_uuid(data: bytes) -> str:
    """Kafka's form of a uuid (``Uuid.toString``): unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@st.composite
def offset_values(draw: st.DrawFn) -> OffsetCommitValue:
    version = draw(st.integers(0, 4))
    return OffsetCommitValue(
        offset=draw(int64),
        metadata=draw(names),
        commit_timestamp=draw(int64),
        leader_epoch=draw(int32) if version >= 3 else -1,
        expire_timestamp=draw(int64) if version == 1 else -1,
        version=version,
        unknown_tagged_fields=unknown_tags(draw, version, first=1),  # tag 0: topic_id
        topic_id=draw(st.none() | st.binary(min_size=16, max_size=16).map(kafka_uuid)) if version == 4 else None,
    )


@st.composite
def group_values(draw: st.DrawFn) -> GroupMetadataValue:
    version = draw(st.integers(0, 4))
    members = []
    for _ in range(draw(st.integers(0, 4))):
        session = draw(int32)
        members.append(
            MemberMetadata(
                member_id=draw(names),
                group_instance_id=draw(st.none() | names) if version >= 3 else None,
                client_id=draw(names),
                client_host=draw(names),
                rebalance_timeout=draw(int32) if version >= 1 else session,
                session_timeout=session,
                subscription=draw(st.binary(max_size=30)),
                assignment=draw(st.binary(max_size=30)),
                unknown_tagged_fields=unknown_tags(draw, version),
            )
        )
    return GroupMetadataValue(
        protocol_type=draw(names),
        generation=draw(int32),
        protocol=draw(st.none() | names),
        leader=draw(st.none() | names),
        current_state_timestamp=draw(int64) if version >= 2 else -1,
        members=members,
        version=version,
        unknown_tagged_fields=unknown_tags(draw, version),
    )


@given(offset_values(), names, names, int32)
def test_offset_commit_round_trip_every_version(
    value: OffsetCommitValue, group: str, topic: str, partition: int
) -> None:
    key = OffsetCommitKey(group, topic, partition)
    assert codec.decode_key(codec.encode_key(key)) == key
    assert codec.decode_value(key, codec.encode_value(value)) == value


@given(group_values(), names)
def test_group_metadata_round_trip_every_version(value: GroupMetadataValue, group: str) -> None:
    key = GroupMetadataKey(group)
    assert codec.decode_value(key, codec.encode_value(value)) == value


def test_unknown_tagged_fields_are_kept_and_written_back(tmp_path: Path) -> None:
    """A later Kafka adds tagged fields to these records (KIP-915); Kafka's own classes keep
    the ones they do not know and write them back, and so does this codec."""
    commit = bytes.fromhex("0004 0000000000000064 0000000a 05 6d657461 00000000000004d2"
                           " 02 07 02 abcd ac02 00")
    key = OffsetCommitKey("g", "t", 1)
    value = codec.decode_value(key, commit)
    assert isinstance(value, OffsetCommitValue)
    assert (value.offset, value.metadata) == (100, "meta")
    assert value.unknown_tagged_fields == ((7, b"\xab\xcd"), (300, b""))
    assert codec.encode_value(value) == commit
    assert pickle.loads(pickle.dumps(value)) == value and copy.deepcopy(value) == value
    assert value != OffsetCommitValue(100, "meta", 1234, 10, -1, 4)
    assert "unknown_tagged_fields=((7, b'\\xab\\xcd'), (300, b''))" in repr(value)
    assert value.to_dict()["unknown_tagged_fields"] == [{"tag": 7, "data": b"\xab\xcd"},
                                                        {"tag": 300, "data": b""}]
    assert "unknown_tagged_fields" not in OffsetCommitValue(1, version=4).to_dict()

    member = MemberMetadata("m1", None, "c", "h", 30000, 10000, b"", b"", [(0, b"")])
    group = GroupMetadataValue("consumer", 1, "range", "m1", 5, [member], 4, [(1, b"\x01\x02\x03")])
    encoded = codec.encode_value(group)
    assert encoded.endswith(bytes.fromhex("01 01 01 00 00" "01 01 03 010203"))
    decoded = codec.decode_value(GroupMetadataKey("g"), encoded)
    assert isinstance(decoded, GroupMetadataValue)
    assert decoded == group and decoded.members[0].unknown_tagged_fields == ((0, b""),)

    log = codec.write_batch([(codec.encode_key(key), commit)], base_offset=0, timestamp=1, compression="gzip")
    (record,) = codec.decode_records(log)
    assert record.value == value
    (row,) = codec.decode_arrow(log).to_pylist()
    assert (row["committed_offset"], row["metadata"]) == (100, "meta")
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(dumped.stdout)["value"]["unknown_tagged_fields"] == [
        {"tag": 7, "data": "q80="}, {"tag": 300, "data": ""}]

    # A consumer-group value (type 3) with its two known tags and an unknown tag 9.
    cg = bytes.fromhex("0000 0000000a 03 00 08 0000000000000007 01 08 00000000000003e8 09 01 ff")
    cg_value = codec.decode_value(codec.decode_key(bytes.fromhex("0003000567726f7570")), cg)
    assert isinstance(cg_value, codec.ConsumerGroupValue)
    assert cg_value.fields == {"epoch": 10, "metadata_hash": 7, "creation_time_ms": 1000,
                               "unknown_tagged_fields": [{"tag": 9, "data": b"\xff"}]}
    assert codec.encode_value(cg_value) == cg
    assert pickle.loads(pickle.dumps(cg_value)) == cg_value
    # Unknown tags out of order, or given twice: Kafka reads them and its writers refuse them;
    # a copy is still an equal value.
    for section in ("02 09 01 61 05 01 62", "02 09 01 61 09 01 62"):
        odd = codec.decode_value(codec.decode_key(bytes.fromhex("0003000567726f7570")),
                                 bytes.fromhex("0000 0000000a" + section))
        assert pickle.loads(pickle.dumps(odd)) == odd and copy.deepcopy(odd) == odd
        with pytest.raises(ValueError, match="strictly increasing"):
            codec.encode_value(odd)
    with pytest.raises(ValueError, match="above the largest tag Kafka writes"):
        codec.encode_value(OffsetCommitValue(1, version=4, unknown_tagged_fields=[(2**31, b"")]))

    with pytest.raises(ValueError, match="strictly increasing"):
        codec.encode_value(OffsetCommitValue(1, version=4, unknown_tagged_fields=[(3, b""), (3, b"")]))
    with pytest.raises(codec.UnsupportedVersionError, match="has no tagged fields"):
        codec.encode_value(OffsetCommitValue(1, version=3, unknown_tagged_fields=[(3, b"")]))
    with pytest.raises(TypeError, match="sequence of \\(tag, bytes\\) pairs"):
        OffsetCommitValue(1, unknown_tagged_fields=[("x", b"")])  # type: ignore[list-item]


def test_an_offset_commit_carries_the_topic_id_kafka_41_declares(tmp_path: Path) -> None:
    """Kafka 4.1's OffsetCommitValue declares ``topicId``, tagged field 0 of version 4: it is
    a field of the value, in Arrow and in dump-log's JSON, not an unknown tag."""
    commit = bytes.fromhex("0004 0000000000000064 0000000a 01 00000000000004d2"
                           " 02 00 10 000102030405060708090a0b0c0d0e0f 07 02 abcd")
    key = OffsetCommitKey("g", "t", 1)
    value = codec.decode_value(key, commit)
    assert isinstance(value, OffsetCommitValue)
    topic_id = kafka_uuid(bytes(range(16)))
    assert (value.topic_id, value.unknown_tagged_fields) == (topic_id, ((7, b"\xab\xcd"),))
    assert value == OffsetCommitValue(100, "", 1234, 10, version=4, topic_id=topic_id,
                                      unknown_tagged_fields=[(7, b"\xab\xcd")])
    assert codec.encode_value(value) == commit
    assert pickle.loads(pickle.dumps(value)) == value
    assert f"topic_id='{topic_id}'" in repr(value) and value.to_dict()["topic_id"] == topic_id
    # Version 3 has no such field: like expire_timestamp outside version 1, it is left out.
    older = OffsetCommitValue(100, topic_id=topic_id, version=3)
    assert codec.decode_value(key, codec.encode_value(older)) == OffsetCommitValue(100, version=3)

    log = codec.write_batch([(codec.encode_key(key), commit), (codec.encode_key(key), codec.encode_value(older))],
                            base_offset=0, timestamp=1)
    assert [row["topic_id"] for row in codec.decode_arrow(log).to_pylist()] == [topic_id, None]
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(log)
    dumped = subprocess.run([sys.executable, "-m", "groupcoord.cli", "dump-log", str(segment)],
                            capture_output=True, text=True, timeout=60, check=True)
    first = json.loads(dumped.stdout.splitlines()[0])["value"]
    assert (first["topic_id"], first["unknown_tagged_fields"]) == (topic_id, [{"tag": 7, "data": "q80="}])

    # Kafka's default topic id is the zero uuid, which its writer leaves out (it writes
    # topicId only when it is not Uuid.ZERO_UUID) and reads an absent one as: no topic id.
    zero = OffsetCommitValue(100, version=4, topic_id=kafka_uuid(bytes(16)))
    assert zero.topic_id is None
    explicit_zero = bytes.fromhex("0004 0000000000000064 ffffffff 01 0000000000000000"
                                  " 01 00 10 00000000000000000000000000000000")
    read = codec.decode_value(key, explicit_zero)
    assert isinstance(read, OffsetCommitValue) and read.topic_id is None
    assert codec.encode_value(read) == explicit_zero[:-19] + b"\x00"

    with pytest.raises(ValueError, match="is not a topic id as Kafka writes one"):
        OffsetCommitValue(1, version=4, topic_id=topic_id + "=")
    with pytest.raises(ValueError, match="give it as topic_id"):
        OffsetCommitValue(1, version=4, unknown_tagged_fields=[(0, bytes(16))])
    with pytest.raises(codec.CorruptRecordError, match="its topic id \\(tagged field 0\\) has 15 bytes"):
        codec.decode_value(key, bytes.fromhex("0004 0000000000000064 0000000a 01 00000000000004d2"
                                              " 01 00 0f 000102030405060708090a0b0c0d0e"))


topic_partitions = st.lists(st.tuples(names, st.lists(int32, max_size=5)), max_size=4)


@given(
    st.integers(0, 3), st.lists(names, max_size=4), st.none() | st.binary(max_size=10),
    topic_partitions, int32, st.none() | names,
)
def test_consumer_protocol_round_trip(
    version: int, topics: list[str], user_data: bytes | None,
    owned: list[tuple[str, list[int]]], generation: int, rack: str | None,
) -> None:
    sub = ConsumerProtocolSubscription(
        topics, user_data, owned if version >= 1 else [], generation if version >= 2 else -1,
        rack if version >= 3 else None, version,
    )
    assert codec.decode_subscription(codec.encode_subscription(sub)) == sub
    asg = ConsumerProtocolAssignment(owned, user_data, version)
    assert codec.decode_assignment(codec.encode_assignment(asg)) == asg


LONGEST = "x" * 32767


@pytest.mark.parametrize("encode", [
    lambda s: codec.encode_key(GroupMetadataKey(s)),
    lambda s: codec.encode_key(OffsetCommitKey("g", s, 0)),
    lambda s: codec.encode_value(OffsetCommitValue(1, s, 0, -1, -1, 3)),
    lambda s: codec.encode_value(OffsetCommitValue(1, s, 0, -1, -1, 4)),
    lambda s: codec.encode_value(GroupMetadataValue(
        "consumer", 1, "range", "m", 0, [MemberMetadata(s, None, "c", "h", 1, 1, b"", b"")], 3)),
    lambda s: codec.encode_subscription(ConsumerProtocolSubscription([s], None, [], -1, None, 0)),
    lambda s: codec.encode_assignment(ConsumerProtocolAssignment([(s, [0])], None, 0)),
], ids=["group", "topic", "metadata-v3", "metadata-v4", "member-id", "subscribed", "assigned"])
def test_a_string_no_length_prefix_holds_is_refused_not_written(encode: Callable[[str], bytes]) -> None:
    """Kafka's writers refuse a STRING over 32,767 bytes; written, its int16 length would wrap
    and the log would not read back."""
    assert LONGEST.encode() in encode(LONGEST)
    with pytest.raises(ValueError, match="32768 bytes is too long"):
        encode(LONGEST + "x")


def test_consumer_group_records_decode_fully() -> None:
    key = codec.decode_key(bytes.fromhex("0003000567726f7570"))
    assert key == codec.ConsumerGroupKey(3, "group")
    value = codec.decode_value(key, bytes.fromhex("00000000000a00"))
    assert isinstance(value, codec.ConsumerGroupValue)
    assert value.schema == "ConsumerGroupMetadataValue"
    # An absent metadata hash reads as Kafka's default for it, 0 (Kafka 4.3's schema).
    assert value.fields == {"epoch": 10, "metadata_hash": 0, "creation_time_ms": None}
    assert codec.encode_value(value) == bytes.fromhex("00000000000a00")
    uuid = bytes(range(16))
    body = (
        "0000" + "00000005" + "00000004" + "02"
        + "02" + uuid.hex() + "03" + "00000000" + "00000001" + "01" + "00" + "09" + "03" + "00000005" * 2
        + "01" + "00"
    )
    member = codec.ConsumerGroupKey(8, "group", member_id="m1")
    assert codec.decode_key(codec.encode_key(member)) == member
    assignment = codec.decode_value(member, bytes.fromhex(body))
    assert isinstance(assignment, codec.ConsumerGroupValue)
    fields = assignment.fields
    assert fields["member_epoch"] == 5 and fields["state"] == 2
    [tp] = fields["assigned_partitions"]
    assert tp == {"topic_id": "AAECAwQFBgcICQoLDA0ODw", "partitions": [0, 1], "assignment_epochs": [5, 5]}
    assert fields["partitions_pending_revocation"] == []
    # A consumer-protocol member as Kafka writes it: classic member metadata null, as tag 0 of
    # one byte, 0.
    metadata = bytes.fromhex("0000" "0000" "0263" "0268" "020274" "00" "00000fa0" "08756e69666f726d" "01000100")
    member_metadata = codec.decode_value(codec.ConsumerGroupKey(5, "group", member_id="m1"), metadata)
    assert isinstance(member_metadata, codec.ConsumerGroupValue)
    assert member_metadata.fields["server_assignor"] == "uniform"
    assert member_metadata.fields["classic_member_metadata"] is None
    assert codec.encode_value(member_metadata) == metadata
    with pytest.raises(ValueError, match="member_id"):
        codec.ConsumerGroupKey(5, "group")
