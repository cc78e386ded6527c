"""``ConsumerGroupValue(record_type, fields)``: a consumer-group value made from its fields as
``fields`` gives them, checked against the declared schema, and written as Kafka writes it."""

from __future__ import annotations

import copy
import pickle
import struct
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_record_declarations_property import encode_struct, struct_values

from groupcoord.format import codec
from groupcoord.format import records as R
from groupcoord.format.codec import ConsumerGroupKey, ConsumerGroupValue

CONSUMER_GROUP_RECORDS = [r for r in R.RECORDS if r.type.is_consumer_group]
TOPIC_ID = uuid.UUID(bytes=bytes(range(16)))


def key_of(record_type: int) -> ConsumerGroupKey:
    second = {f.name: "x" for f in R.BY_TYPE[R.RecordType(record_type)].key.fields[1:]}
    return ConsumerGroupKey(record_type, "g", **second)


def round_trip(v: ConsumerGroupValue) -> bytes:
    data = codec.encode_value(v)
    assert codec.decode_value(key_of(v.record_type), data) == v
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_drawn_fields_make_the_value_kafkas_bytes_decode_to(data: st.DataObject) -> None:
    """The declaration's own encoder (Kafka's layout, tagged fields at their default left
    out) and the constructor agree: the value made from drawn fields is the one their bytes
    decode to, and encodes to those bytes."""
    rec = data.draw(st.sampled_from(CONSUMER_GROUP_RECORDS))
    fields = data.draw(struct_values(rec.value.fields, 0, flexible=True))
    expected = struct.pack(">h", 0) + encode_struct(rec.value.fields, fields)
    made = ConsumerGroupValue(int(rec.type), fields)
    assert made == codec.decode_value(key_of(rec.type), expected)
    assert made.fields == fields and made.schema == rec.value.name
    assert codec.encode_value(made) == expected
    assert ConsumerGroupValue(made.record_type, made.fields, made.version) == made


def test_a_tagged_field_left_out_takes_kafkas_default_and_is_not_written() -> None:
    # Kafka 4.3's ConsumerGroupMetadataValue of a group without a metadata hash: the epoch
    # alone. MetadataHash defaults to 0, and creation_time_ms (Kafka's trunk only) is left
    # out unless given.
    v = ConsumerGroupValue(3, {"epoch": 10})
    assert v.fields == {"epoch": 10, "metadata_hash": 0, "creation_time_ms": None}
    assert round_trip(v) == bytes.fromhex("0000 0000000a 00")
    assert ConsumerGroupValue(3, {"epoch": 10, "metadata_hash": None}) == v
    assert ConsumerGroupValue(3, {"epoch": 10, "metadata_hash": 0, "creation_time_ms": None}) == v
    hashed = ConsumerGroupValue(3, {"epoch": 10, "metadata_hash": -2})
    assert round_trip(hashed) == bytes.fromhex("0000 0000000a 01 00 08 fffffffffffffffe")
    timed = ConsumerGroupValue(3, {"epoch": 10, "creation_time_ms": 1000})
    assert round_trip(timed) == bytes.fromhex("0000 0000000a 01 01 08 00000000000003e8")

    target = ConsumerGroupValue(6, {"assignment_epoch": 3})
    assert target.fields == {"assignment_epoch": 3, "assignment_timestamp": 0}
    assert round_trip(target) == bytes.fromhex("0000 00000003 00")


def test_uuids_sequences_and_mappings_of_any_kind() -> None:
    class Fields(Mapping[str, Any]):
        def __init__(self, **kw: Any) -> None:
            self._d = kw

        def __getitem__(self, k: str) -> Any:
            return self._d[k]

        def __iter__(self) -> Any:
            return iter(self._d)

        def __len__(self) -> int:
            return len(self._d)

    as_objects = ConsumerGroupValue(8, Fields(
        member_epoch=5, previous_member_epoch=4, state=0,
        assigned_partitions=(Fields(topic_id=TOPIC_ID, partitions=range(2), assignment_epochs=[5, 5]),),
        partitions_pending_revocation=[]))
    as_strings = ConsumerGroupValue(8, {
        "member_epoch": 5, "previous_member_epoch": 4, "state": 0,
        "assigned_partitions": [{"topic_id": "AAECAwQFBgcICQoLDA0ODw", "partitions": [0, 1],
                                 "assignment_epochs": [5, 5]}],
        "partitions_pending_revocation": []})
    assert as_objects == as_strings
    assert as_objects.fields["assigned_partitions"][0]["topic_id"] == "AAECAwQFBgcICQoLDA0ODw"
    round_trip(as_objects)


def test_nulls_kafka_writes_as_markers() -> None:
    member = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h",
              "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
              "rebalance_timeout_ms": 4000, "server_assignor": "uniform"}
    # What Kafka writes for a consumer-protocol member: classic member metadata null, as
    # tag 0 of one byte, 0. Left out, it is Kafka's default, an empty struct, not written.
    consumer = ConsumerGroupValue(5, {**member, "classic_member_metadata": None})
    assert round_trip(consumer).endswith(bytes.fromhex("01 00 01 00"))
    left_out = ConsumerGroupValue(5, member)
    assert left_out.fields["classic_member_metadata"] == {"session_timeout_ms": 0, "supported_protocols": []}
    assert round_trip(left_out).endswith(bytes.fromhex("756e69666f726d 00"))
    classic = ConsumerGroupValue(5, {**member, "classic_member_metadata": {
        "session_timeout_ms": 45000, "supported_protocols": [{"name": "range", "metadata": b"\x01"}]}})
    round_trip(classic)

    # AssignmentEpochs: Kafka's default is an empty array ("default": null in its JSON is no
    # default to its generator), left out; null is written as its marker.
    tp = {"topic_id": TOPIC_ID, "partitions": [0]}
    for epochs, tagged in [([], "00"), (None, "01 00 01 00"), ([3], "01 00 05 02 00000003")]:
        v = ConsumerGroupValue(8, {"member_epoch": 1, "previous_member_epoch": 0, "state": 0,
                                   "assigned_partitions": [{**tp, "assignment_epochs": epochs}],
                                   "partitions_pending_revocation": []})
        assert round_trip(v) == bytes.fromhex(
            f"0000 00000001 00000000 00 02 {TOPIC_ID.bytes.hex()} 02 00000000 {tagged} 01 00")


def test_a_decoded_value_is_made_again_from_its_fields() -> None:
    """Unknown tagged fields included, at every level, in the order read."""
    data = bytes.fromhex("0000 0000000a 03 00 08 0000000000000007 01 08 00000000000003e8 09 01 ff")
    decoded = codec.decode_value(key_of(3), data)
    assert isinstance(decoded, ConsumerGroupValue)
    made = ConsumerGroupValue(3, decoded.fields)
    assert made == decoded and codec.encode_value(made) == data
    assert pickle.loads(pickle.dumps(made)) == made and copy.copy(made) == made


@pytest.mark.parametrize(("record_type", "fields", "error", "match"), [
    (3, {}, ValueError, "field epoch: missing"),
    (3, {"epoch": 1, "epoc": 1}, ValueError, "field epoc: no such field in ConsumerGroupMetadataValue"),
    (3, {"epoch": 2**31}, ValueError, "field epoch: 2147483648 is out of range for an int32"),
    (3, {"epoch": 10**30}, ValueError, "field epoch: 10{30} is out of range"),
    (3, {"epoch": 1, "metadata_hash": 2**63}, ValueError, "field metadata_hash: .* out of range for an int64"),
    (3, {"epoch": "1"}, TypeError, "field epoch: an int32, not str"),
    (3, {"epoch": True}, TypeError, "field epoch: an int32, not a bool"),
    (3, {"epoch": 1.0}, TypeError, "field epoch: an int32, not a float"),
    (3, {"epoch": None}, TypeError, "field epoch: None, but the field is not nullable"),
    (3, [("epoch", 1)], TypeError, "the fields of ConsumerGroupMetadataValue: a mapping"),
    (3, {1: 1}, TypeError, "field names are str"),
    (8, {"member_epoch": 1, "previous_member_epoch": 0, "state": 128,
         "assigned_partitions": [], "partitions_pending_revocation": []}, ValueError,
     "field state: 128 is out of range for an int8"),
    (7, {"topic_partitions": [{"topic_id": "nope", "partitions": []}]}, ValueError,
     r'field topic_partitions\[0\].topic_id: "nope" is not a uuid'),
    (7, {"topic_partitions": [{"topic_id": TOPIC_ID}]}, ValueError,
     r"field topic_partitions\[0\].partitions: missing"),
    (7, {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": ["0"]}]}, TypeError,
     r"field topic_partitions\[0\].partitions\[0\]: an int32"),
    (7, {"topic_partitions": "ab"}, TypeError, "field topic_partitions: a sequence, not str"),
    (16, {"topics": [], "version": 1, "timestamp": 2, "unknown_tagged_fields": [{"tag": -1, "data": b""}]},
     ValueError, r"unknown_tagged_fields\[0\]: tag -1 is out of range"),
    (2, {}, ValueError, "record type 2 is not a consumer-group record"),
])
def test_errors_name_the_field(record_type: int, fields: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ConsumerGroupValue(record_type, fields)


def test_only_version_0_and_no_endless_nesting() -> None:
    with pytest.raises(codec.UnsupportedVersionError, match="version 1"):
        ConsumerGroupValue(3, {"epoch": 1}, version=1)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="nested more than"):
        ConsumerGroupValue(16, {"topics": loop, "version": 1, "timestamp": 2})
