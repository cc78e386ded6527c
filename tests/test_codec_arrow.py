"""decode_arrow: one documented schema, one row per record, agreeing with decode_records."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from groupcoord.format import codec
from dump_log_reference import json_line as _json_line

from offsets_logs import CONSUMER_GROUP_RECORDS
from codec_vectors import SEGMENT

UUID_BASE64URL = "AAECAwQFBgcICQoLDA0ODw"  # bytes 0 to 15, as Kafka's Uuid.toString prints them


def mixed_log() -> bytes:
    sub = codec.encode_subscription(codec.ConsumerProtocolSubscription(["a", "b"], version=1))
    asg = codec.encode_assignment(codec.ConsumerProtocolAssignment([("a", [0, 1]), ("b", [2])], version=0))
    members = [
        codec.MemberMetadata("m-1", "i-1", "c1", "/h1", 300000, 45000, sub, asg),
        codec.MemberMetadata("m-2", None, "c2", "/h2", 300000, 45000, sub, b""),
    ]
    records = [
        (codec.OffsetCommitKey("g", "a", 0), codec.OffsetCommitValue(10, "meta", 5, 2)),
        (codec.GroupMetadataKey("g"), codec.GroupMetadataValue("consumer", 3, "range", "m-1", 7, members)),
        (codec.GroupMetadataKey("connect"), codec.GroupMetadataValue("connect", 1, "default", None, 8, [])),
        (codec.OffsetCommitKey("g", "a", 1), None),
    ]
    encoded = [(codec.encode_key(k), None if v is None else codec.encode_value(v)) for k, v in records]
    cg = [(bytes.fromhex("0003000567726f7570"), bytes.fromhex("00000000000a00")),
          (bytes.fromhex("0009000567726f7570"), bytes.fromhex("0000ff"))]
    return (codec.write_batch(encoded, base_offset=0, timestamp=100, compression="lz4")
            + codec.write_batch(cg, base_offset=4, timestamp=101) + SEGMENT[374:])


def test_schema_is_the_documented_one() -> None:
    schema = codec.arrow_schema()
    assert isinstance(schema, pa.Schema)
    assert schema.names[:8] == ["partition", "offset", "timestamp", "batch_position", "producer_id",
                                "producer_epoch", "is_transactional", "is_tombstone"]
    members = schema.field("members").type
    assert pa.types.is_list(members)
    assert members.value_type.field("assigned_partitions").type == pa.list_(
        pa.field("item", pa.struct([pa.field("topic", pa.string(), False),
                                    pa.field("partitions", pa.list_(pa.field("item", pa.int32(), False)), False)]), False)
    )


def test_rows_agree_with_decoded_records() -> None:
    data = mixed_log()
    batch = codec.decode_arrow(data, partition=9)
    records = codec.decode_records(data, partition=9)
    assert batch.schema == codec.arrow_schema()
    rows = batch.to_pylist()
    assert len(rows) == len(records) == 7
    for row, rec in zip(rows, records):
        assert (row["partition"], row["offset"], row["timestamp"]) == (rec.partition, rec.offset, rec.timestamp)
        assert row["control"] == rec.control
        assert row["record_type"] == (rec.key.record_type if rec.key is not None else None)
        assert row["is_tombstone"] == (rec.key is not None and rec.value is None)
    commit, group, connect, tombstone, cg, opaque, marker = rows
    assert (commit["group"], commit["topic"], commit["key_partition"]) == ("g", "a", 0)
    assert (commit["committed_offset"], commit["metadata"], commit["leader_epoch"]) == (10, "meta", 2)
    assert commit["members"] is None and group["committed_offset"] is None
    assert (group["protocol_type"], group["generation"], group["leader"]) == ("consumer", 3, "m-1")
    m1, m2 = group["members"]
    assert m1["group_instance_id"] == "i-1" and m2["group_instance_id"] is None
    assert m1["subscribed_topics"] == ["a", "b"]
    assert m1["assigned_partitions"] == [{"topic": "a", "partitions": [0, 1]}, {"topic": "b", "partitions": [2]}]
    assert m2["assigned_partitions"] is None, "an empty assignment blob does not decode"
    assert connect["members"] == [] and connect["leader"] is None
    assert tombstone["is_tombstone"] and tombstone["value_version"] is None
    assert (cg["group"], cg["epoch"]) == ("group", 10)
    # An absent metadata hash reads as Kafka's default for it, 0 (Kafka 4.3's schema).
    assert cg["consumer_group_fields"] == '{"epoch":10,"metadata_hash":0,"creation_time_ms":null}'
    assert opaque["raw_key"] == bytes.fromhex("000567726f7570") and opaque["raw_value"] == b"\xff"
    assert marker["control"] == "commit"


def test_segment_and_corruption(tmp_path: object) -> None:
    from pathlib import Path

    directory = Path(str(tmp_path)) / "__consumer_offsets-4"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(SEGMENT[:300])
    with pytest.raises(codec.CorruptRecordError) as info:
        codec.decode_segment_arrow(path)
    assert info.value.position == 241
    partial = codec.decode_segment_arrow(path, stop_at_corruption=True)
    assert partial.num_rows == 2 and partial.column("partition").to_pylist() == [4, 4]


def realistic_log(compression: str, batches: int = 40, seed: int = 3) -> bytes:
    """Coordinator-like batches (as in the benchmark): commits and consumer groups."""
    import random

    rng = random.Random(seed)
    topics = ["orders", "payments", "clicks", "audit", "ünïcode"]
    chunks = []
    offset = 0
    for b in range(batches):
        group = f"group-{rng.randrange(7)}"
        records = []
        for _ in range(rng.randint(1, 20)):
            if rng.random() < 0.8:
                key: codec.Key = codec.OffsetCommitKey(group, rng.choice(topics), rng.randrange(8))
                value: codec.Value | None = codec.OffsetCommitValue(
                    rng.randrange(10**6), rng.choice(["", "m"]), 5, rng.randrange(3), version=rng.choice([1, 3, 4]))
            else:
                members = []
                for m in range(rng.randint(0, 5)):
                    mine = sorted(rng.sample(topics, 2))
                    members.append(codec.MemberMetadata(
                        f"c-{m}-{rng.getrandbits(32):x}", rng.choice([None, f"i-{m}"]), f"c-{m}", "/10.0.0.1",
                        300_000, 45_000,
                        codec.encode_subscription(codec.ConsumerProtocolSubscription(mine, version=1)),
                        codec.encode_assignment(codec.ConsumerProtocolAssignment([(t, [m]) for t in mine], version=0))))
                key = codec.GroupMetadataKey(group)
                value = codec.GroupMetadataValue(rng.choice(["consumer", "connect"]), b, "range",
                                                 members[0].member_id if members else None, 9, members,
                                                 version=rng.choice([3, 4]))
            if rng.random() < 0.05:
                value = None
            records.append((codec.encode_key(key), None if value is None else codec.encode_value(value)))
        chunks.append(codec.write_batch(records, base_offset=offset, timestamp=1000 + b, compression=compression))
        offset += len(records)
    return b"".join(chunks)


@pytest.mark.parametrize("compression", codec.COMPRESSIONS)
def test_arrow_agrees_with_objects_on_realistic_logs(compression: str) -> None:
    """The two decode paths share only the batch and record parser; their outputs must agree
    field by field."""
    data = realistic_log(compression)
    records = codec.decode_records(data, partition=3)
    rows = codec.decode_arrow(data, partition=3).to_pylist()
    assert len(rows) == len(records) > 100
    for row, rec in zip(rows, records):
        assert (row["offset"], row["timestamp"], row["partition"]) == (rec.offset, rec.timestamp, 3)
        assert row["is_tombstone"] == (rec.value is None)
        key = rec.key
        assert row["group"] == key.group and row["record_type"] == key.record_type
        if isinstance(key, codec.OffsetCommitKey):
            assert (row["topic"], row["key_partition"]) == (key.topic, key.partition)
        value = rec.value
        if isinstance(value, codec.OffsetCommitValue):
            assert (row["committed_offset"], row["metadata"], row["leader_epoch"], row["expire_timestamp"],
                    row["value_version"]) == (value.offset, value.metadata, value.leader_epoch,
                                              value.expire_timestamp, value.version)
        elif isinstance(value, codec.GroupMetadataValue):
            assert (row["protocol_type"], row["generation"], row["leader"]) == (
                value.protocol_type, value.generation, value.leader)
            assert len(row["members"]) == len(value.members)
            consumer = value.protocol_type == "consumer"
            for m_row, m in zip(row["members"], value.members):
                assert {k: m_row[k] for k in m.to_dict()} == m.to_dict()
                if consumer:
                    assert m_row["subscribed_topics"] == codec.decode_subscription(m.subscription).topics
                    assigned = codec.decode_assignment(m.assignment).assigned_partitions
                    assert [(a["topic"], a["partitions"]) for a in m_row["assigned_partitions"]] == assigned
                else:
                    assert m_row["subscribed_topics"] is None and m_row["assigned_partitions"] is None
        else:
            assert value is None and row["committed_offset"] is None and row["members"] is None


def test_arrow_keeps_the_batches_before_a_corrupt_one() -> None:
    data = realistic_log("lz4", batches=10)
    sizes = [b.size for b in codec.read_batches(data)]
    damaged = bytearray(data)
    damaged[sum(sizes[:6]) + 70] ^= 0xFF  # inside the 7th batch: its CRC no longer matches
    kept = codec.decode_arrow(bytes(damaged), stop_at_corruption=True)
    assert kept.num_rows == sum(len(b.records) for b in codec.read_batches(data)[:6])
    assert kept.to_pylist() == codec.decode_arrow(data[: sum(sizes[:6])]).to_pylist()


def test_a_corrupt_record_drops_its_whole_batch() -> None:
    good = realistic_log("none", batches=3)
    commit = (codec.encode_key(codec.OffsetCommitKey("g", "t", 0)), codec.encode_value(codec.OffsetCommitValue(1)))
    bad = codec.write_batch([commit, commit, (b"\x00\x01\x00", None)], base_offset=10_000, timestamp=1)
    data = good + bad + good
    with pytest.raises(codec.CorruptRecordError) as info:
        codec.decode_arrow(data)
    assert info.value.position == len(good)
    kept = codec.decode_arrow(data, stop_at_corruption=True)
    assert kept.to_pylist() == codec.decode_arrow(good).to_pylist()
    assert len(codec.decode_records(data, stop_at_corruption=True)) == kept.num_rows


def test_consumer_group_rows_show_uuids_and_bytes_as_the_objects_and_dump_log_do() -> None:
    """Topic ids in Kafka's base64url form and bytes in base64, in ``topic_partitions`` and
    ``consumer_group_fields`` alike, so that Arrow rows join with dump-log's lines."""
    classic = "01" "0000afc8" "02" "0672616e6765" "04010203" "00" "00"
    member_with_classic_metadata = (
        codec.ConsumerGroupKey(5, "cg", member_id="m2"),
        "0000" "00" "00" "0263" "0268" "020274" "00" "00000fa0" "08756e69666f726d"
        "01" "00" + f"{len(classic) // 2:02x}" + classic)
    records = [(k, bytes.fromhex(v)) for k, v in [*CONSUMER_GROUP_RECORDS, member_with_classic_metadata]]
    log = codec.write_batch([(codec.encode_key(k), v) for k, v in records], base_offset=0, timestamp=1)

    rows = codec.decode_arrow(log).to_pylist()
    for row, record in zip(rows, codec.decode_records(log), strict=True):
        assert isinstance(record.value, codec.ConsumerGroupValue)
        fields = record.value.fields
        assert json.loads(row["consumer_group_fields"]) == json.loads(_json_line(fields))
        assigned = fields.get("topic_partitions") or fields.get("assigned_partitions")
        expected = None if assigned is None else [
            {"topic_id": tp["topic_id"], "partitions": tp["partitions"]} for tp in assigned]
        assert row["topic_partitions"] == expected
    assert rows[4]["topic_partitions"] == [{"topic_id": UUID_BASE64URL, "partitions": [0, 1]}]
    classic_json = json.loads(rows[-1]["consumer_group_fields"])["classic_member_metadata"]
    assert classic_json["supported_protocols"] == [{"name": "range", "metadata": "AQID"}]
