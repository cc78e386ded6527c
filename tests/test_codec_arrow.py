"""decode_arrow: one documented schema, one row per record, agreeing with decode_records."""

from __future__ import annotations

import pyarrow as pa
import pytest

from groupcoord import codec

from test_codec import SEGMENT


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
    assert cg["consumer_group_fields"] == '{"epoch":10,"metadata_hash":null,"creation_time_ms":null}'
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
