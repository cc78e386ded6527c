"""`groupcoord inspect` on KIP-848 consumer groups: the new coordinator's records (types 3 to 8)
folded into groups, members, epochs, states and assignments as Kafka 4's loader derives them,
with topic ids named from partition-metadata records and from a KRaft broker's
``__cluster_metadata`` log.

The records are written here in Kafka's layouts (every value version 0, flexible) and checked
to decode as the codec's declared schemas before they are used."""

from __future__ import annotations

import io
import json
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest

from groupcoord.cli import inspect
from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.protocol.primitives import write_array_length, write_nullable_string, write_unsigned_varint

T1, T2 = uuid.UUID(int=0x11), uuid.UUID(int=0x22)
T1_ID = "AAAAAAAAAAAAAAAAAAAAEQ"
T2_ID = "AAAAAAAAAAAAAAAAAAAAIg"


def _string(value: str | None) -> bytes:
    out = bytearray()
    write_nullable_string(out, value, compact=True)
    return bytes(out)


def _array(items: list[bytes]) -> bytes:
    out = bytearray()
    write_array_length(out, len(items), compact=True)
    return bytes(out) + b"".join(items)


def _topic_partitions(topics: dict[uuid.UUID, list[int]]) -> bytes:
    return _array([
        topic.bytes + _array([struct.pack(">i", p) for p in partitions]) + b"\x00"
        for topic, partitions in topics.items()
    ])


VERSION_0 = b"\x00\x00"
NO_TAGS = b"\x00"


def group_metadata(epoch: int) -> bytes:
    return VERSION_0 + struct.pack(">i", epoch) + NO_TAGS


def partition_metadata(topics: dict[uuid.UUID, str]) -> bytes:
    return VERSION_0 + _array([
        topic.bytes + _string(name) + struct.pack(">i", 3) + _array([]) + NO_TAGS
        for topic, name in topics.items()
    ]) + NO_TAGS


def member_metadata(client_id: str, topics: list[str], instance_id: str | None = None) -> bytes:
    return (VERSION_0 + _string(instance_id) + _string(None) + _string(client_id) + _string("/127.0.0.1")
            + _array([_string(t) for t in topics]) + _string(None) + struct.pack(">i", 45000)
            + _string("uniform") + NO_TAGS)


def target_assignment_metadata(epoch: int) -> bytes:
    return VERSION_0 + struct.pack(">i", epoch) + NO_TAGS


def target_assignment_member(topics: dict[uuid.UUID, list[int]]) -> bytes:
    return VERSION_0 + _topic_partitions(topics) + NO_TAGS


def current_assignment(epoch: int, previous: int, state: int, topics: dict[uuid.UUID, list[int]]) -> bytes:
    return (VERSION_0 + struct.pack(">iib", epoch, previous, state) + _topic_partitions(topics)
            + _topic_partitions({}) + NO_TAGS)


def record(record_type: int, group: str, value: bytes | None, member: str | None = None) -> tuple[bytes, bytes | None]:
    key = codec.ConsumerGroupKey(record_type, group, member_id=member)
    if value is not None:
        assert isinstance(codec.decode_value(key, value), codec.ConsumerGroupValue)
    return codec.encode_key(key), value


def member(group: str, member_id: str, epoch: int, state: int, topics: dict[uuid.UUID, list[int]],
           target: dict[uuid.UUID, list[int]] | None = None) -> list[tuple[bytes, bytes | None]]:
    return [
        record(5, group, member_metadata(f"client-{member_id}", ["t1", "t2"]), member_id),
        record(7, group, target_assignment_member(topics if target is None else target), member_id),
        record(8, group, current_assignment(epoch, epoch - 1, state, topics), member_id),
    ]


def group(name: str, epoch: int, assignment_epoch: int) -> list[tuple[bytes, bytes | None]]:
    return [record(3, name, group_metadata(epoch)), record(6, name, target_assignment_metadata(assignment_epoch))]


def commit(group_id: str, topic: str, partition: int, offset: int) -> tuple[bytes, bytes | None]:
    return (codec.encode_key(codec.OffsetCommitKey(group_id, topic, partition)),
            codec.encode_value(codec.OffsetCommitValue(offset, "", 1000)))


def topic_record(name: str, topic_id: uuid.UUID) -> bytes:
    """A KRaft ``TopicRecord`` as ``__cluster_metadata`` stores it."""
    out = bytearray(b"\x01")  # frame version
    write_unsigned_varint(out, 2)  # api key: TopicRecord
    write_unsigned_varint(out, 0)  # its version
    return bytes(out) + _string(name) + topic_id.bytes + NO_TAGS


def write_partition(root: Path, partition: int, batches: list[list[tuple[bytes, bytes | None]]]) -> None:
    directory = root / f"__consumer_offsets-{partition}"
    directory.mkdir(parents=True)
    data, offset = b"", 0
    for records in batches:
        data += codec.write_batch(records, base_offset=offset, timestamp=1000 + offset)
        offset += len(records)
    (directory / "00000000000000000000.log").write_bytes(data)


def broker_log_directory(root: Path) -> None:
    """Groups in every state Kafka derives, written in several batches as the coordinator
    writes them, in one partition; and a KRaft broker's metadata log naming t2."""
    write_partition(root, 0, [
        group("stable", 3, 3) + member("stable", "m1", 3, 0, {T1: [0, 1], T2: [0]}),
        [commit("stable", "t1", 0, 42)],
        group("assigning", 2, 1) + member("assigning", "m2", 1, 0, {T1: [2]}),
        group("reconciling", 5, 5) + member("reconciling", "m3", 5, 0, {T1: [0]})
        + member("reconciling", "m4", 4, 0, {T1: [1]}, target={T1: [1, 2]}),
        group("revoking", 7, 7) + member("revoking", "m5", 7, 1, {T1: [0]}),
        group("left", 2, 2) + member("left", "m6", 2, 0, {T1: [0]}),
        [record(8, "left", None, "m6"), record(7, "left", None, "m6"), record(5, "left", None, "m6"),
         record(3, "left", group_metadata(3))],
        group("deleted", 1, 1),
        [record(6, "deleted", None), record(3, "deleted", None)],
        [record(4, "stable", partition_metadata({T1: "t1"}))],
    ])
    metadata = root / "__cluster_metadata-0"
    metadata.mkdir()
    (metadata / "00000000000000000000.log").write_bytes(
        codec.write_batch([(None, topic_record("t2", T2))], base_offset=0, timestamp=1)
    )


def inspect_json(root: Path) -> dict[str, Any]:
    out = io.StringIO()
    assert inspect.main(str(root), Config(), as_json=True, out=out) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_consumer_groups_get_kafkas_states_epochs_and_members(tmp_path: Path) -> None:
    broker_log_directory(tmp_path)
    data = inspect_json(tmp_path)
    groups = {g["group"]: g for g in data["consumer_groups"]}
    assert {name: (g["state"], g["group_epoch"], g["assignment_epoch"], len(g["members"]))
            for name, g in groups.items()} == {
        "stable": ("Stable", 3, 3, 1),
        "assigning": ("Assigning", 2, 1, 1),
        "reconciling": ("Reconciling", 5, 5, 2),
        "revoking": ("Reconciling", 7, 7, 1),
        "left": ("Empty", 3, 2, 0),
    }, "a tombstoned group is gone; a member's tombstones remove it"
    [m1] = groups["stable"]["members"]
    assert m1["member_id"] == "m1" and m1["client_id"] == "client-m1" and m1["client_host"] == "/127.0.0.1"
    assert (m1["member_epoch"], m1["previous_member_epoch"], m1["state"]) == (3, 2, "stable")
    assert m1["assignment"] == {"t1": [0, 1], "t2": [0]}, "t1 named by the group's record, t2 by the metadata log"
    assert m1["subscribed_topic_names"] == ["t1", "t2"] and m1["server_assignor"] == "uniform"
    assert groups["stable"]["assignors"] == ["uniform"]
    m4 = groups["reconciling"]["members"][1]
    assert (m4["member_epoch"], m4["assignment"], m4["target_assignment"]) == (4, {"t1": [1]}, {"t1": [1, 2]})
    assert groups["revoking"]["members"][0]["state"] == "unrevoked_partitions"
    assert all(g["partition"] == 0 for g in groups.values())


def test_a_consumer_groups_offsets_stay_and_its_offsets_only_classic_group_goes(tmp_path: Path) -> None:
    broker_log_directory(tmp_path)
    data = inspect_json(tmp_path)
    assert [(o["group"], o["topic"], o["partition"], o["offset"]) for o in data["offsets"]] == [("stable", "t1", 0, 42)]
    assert data["groups"] == [], "the group its offsets made is the KIP-848 one"


def test_tables_show_consumer_groups_and_their_members(tmp_path: Path) -> None:
    broker_log_directory(tmp_path)
    out = io.StringIO()
    assert inspect.main(str(tmp_path), Config(), as_json=False, out=out) == 0
    text = out.getvalue()
    assert "CONSUMER GROUPS, KIP-848 (5)" in text and "CONSUMER GROUP MEMBERS, KIP-848 (5)" in text
    [row] = [line.split() for line in text.splitlines() if line.startswith("stable ") and "m1" in line]
    assert row == ["stable", "m1", "client-m1", "/127.0.0.1", "3", "stable", "t1:0,1", "t2:0"]


def test_one_partition_directory_is_named_from_the_metadata_log_beside_it(tmp_path: Path) -> None:
    broker_log_directory(tmp_path)
    data = inspect_json(tmp_path / "__consumer_offsets-0")
    [m1] = next(g for g in data["consumer_groups"] if g["group"] == "stable")["members"]
    assert m1["assignment"] == {"t1": [0, 1], "t2": [0]}


def test_ids_no_record_names_stay_ids_and_a_bad_metadata_log_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broker_log_directory(tmp_path)
    (tmp_path / "__cluster_metadata-0" / "00000000000000000000.log").write_bytes(b"\x00" * 8 + b"\xff" * 80)
    data = inspect_json(tmp_path)
    [m1] = next(g for g in data["consumer_groups"] if g["group"] == "stable")["members"]
    assert m1["assignment"] == {"t1": [0, 1], T2_ID: [0]}
    assert inspect.cluster_topic_names(tmp_path) == {}


def test_topic_records_are_read_and_anything_else_in_the_metadata_log_is_not() -> None:
    assert inspect._topic_record(topic_record("orders", T1)) == ("orders", T1_ID)
    for value in (None, b"", b"\x01", b"\x01\x02\x00", topic_record("orders", T1)[:-5], b"\x01\x03\x00\x02a" + T1.bytes,
                  b"\x00\x02\x00\x02a" + T1.bytes, b"\x01\x02\x00\xff\xff\xff\xff\x0f"):
        assert inspect._topic_record(value) is None, value
