"""The declaration machinery: defaults, equality, version ranges, declaration mistakes caught
when the class is created, and encoding errors that name the field."""

from __future__ import annotations

from uuid import UUID

import pytest

from groupcoord.protocol import EncodeError, UnsupportedVersionError
from groupcoord.protocol.codec import reference_decode
from groupcoord.protocol.messages.api_versions import ApiVersionsResponse
from groupcoord.protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from groupcoord.protocol.messages.fetch import FetchRequest, FetchResponse, PartitionData
from groupcoord.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from groupcoord.protocol.messages.metadata import MetadataResponse, MetadataResponseTopic
from groupcoord.protocol.message import Request
from groupcoord.protocol.schema import (
    INT8,
    INT32,
    STRING,
    Array,
    Struct,
    field,
    parse_versions,
)


def test_parse_versions() -> None:
    assert parse_versions("3+") == (3, 0x7FFF)
    assert parse_versions("2-4") == (2, 4)
    assert parse_versions("1") == (1, 1)
    lowest, highest = parse_versions("none")
    assert lowest > highest


def test_defaults_are_kafkas() -> None:
    response = JoinGroupResponse()
    assert (response.generation_id, response.protocol_name, response.protocol_type) == (
        -1,
        "",
        None,
    )
    assert response.members == [] and response.members is not JoinGroupResponse().members
    assert FetchRequest().max_bytes == 0x7FFFFFFF
    partition = PartitionData()
    assert partition.records is None and partition.aborted_transactions == []
    assert partition.diverging_epoch.epoch == -1
    assert MetadataResponseTopic().topic_id == UUID(int=0)
    assert MetadataResponse().cluster_authorized_operations == -(2**31)
    assert ApiVersionsResponse().finalized_features_epoch == -1


def test_equality_and_repr() -> None:
    assert JoinGroupRequest(group_id="g") == JoinGroupRequest(group_id="g")
    assert JoinGroupRequest(group_id="g") != JoinGroupRequest(group_id="h")
    assert JoinGroupRequest() != JoinGroupResponse()
    assert repr(JoinGroupRequest(group_id="g")).startswith("JoinGroupRequest(group_id='g', ")
    with pytest.raises(TypeError):
        hash(JoinGroupRequest())
    with pytest.raises(TypeError):
        JoinGroupRequest("g")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        JoinGroupRequest().no_such_field = 1  # type: ignore[attr-defined]


def test_decode_accepts_any_buffer() -> None:
    body = JoinGroupRequest(group_id="g", protocols=[]).encode(7)
    for buffer in (bytearray(body), memoryview(body)):
        assert JoinGroupRequest.decode(buffer, 7) == JoinGroupRequest(group_id="g")


def test_message_class_attributes() -> None:
    assert (
        JoinGroupRequest.api_key,
        JoinGroupRequest.min_version,
        JoinGroupRequest.max_version,
    ) == (11, 0, 9)
    assert JoinGroupRequest.name == "JoinGroupRequest"
    assert not JoinGroupRequest.is_flexible(5) and JoinGroupRequest.is_flexible(6)
    assert FetchResponse.supports(18) and not FetchResponse.supports(19)


def test_tagged_fields_are_written_only_when_not_default() -> None:
    plain = ApiVersionsResponse().encode(3)
    assert plain == bytes.fromhex("0000 01 00000000 00")
    tagged = ApiVersionsResponse(finalized_features_epoch=5, zk_migration_ready=True).encode(3)
    # two tags: 1 (int64, 8 bytes) and 3 (bool, 1 byte), in tag order
    assert tagged == bytes.fromhex("0000 01 00000000 02 01 08 0000000000000005 03 01 01")
    assert ApiVersionsResponse.decode(tagged, 3).zk_migration_ready is True


def test_nullable_struct_is_preceded_by_an_int8_marker() -> None:
    # The bytes of Kafka 4.3.1's ConsumerGroupHeartbeatResponseData.write for the same values.
    null = ConsumerGroupHeartbeatResponse()
    assert null.encode(0) == bytes.fromhex("00000000 0000 00 00 00000000 00000000 ff 00")
    present = ConsumerGroupHeartbeatResponse(
        assignment=Assignment(
            topic_partitions=[TopicPartitions(topic_id=UUID(int=1), partitions=[0, 2])]
        )
    )
    encoded = present.encode(1)
    assert encoded == bytes.fromhex(
        "00000000 0000 00 00 00000000 00000000"
        "01 02 00000000000000000000000000000001 03 00000000 00000002 00 00 00"
    )
    assert ConsumerGroupHeartbeatResponse.decode(encoded, 1) == present
    # Any negative marker reads as null, as Kafka's generated read does.
    other_null = bytes.fromhex("00000000 0000 00 00 00000000 00000000 80 00")
    assert ConsumerGroupHeartbeatResponse.decode(other_null, 0) == null
    assert reference_decode(ConsumerGroupHeartbeatResponse, other_null, 0, 0) == (null, 18)


def test_declaration_mistakes_fail_at_class_creation() -> None:
    with pytest.raises(TypeError, match="annotated but not declared"):

        class Undeclared(Struct):
            name: str

    with pytest.raises(TypeError, match="never nullable"):

        class NullDefault(Struct):
            name: str = field(STRING, default=None)

    with pytest.raises(TypeError, match="does not fit"):

        class WrongDefault(Struct):
            count: int = field(INT32, default="x")

    with pytest.raises(TypeError, match="only primitive fields"):

        class ListDefault(Struct):
            items: list[int] = field(Array(INT32), default=[1])

    with pytest.raises(TypeError, match="nullable tagged structs"):

        class TaggedNullableStruct(Struct):
            inner: Assignment | None = field(Assignment, nullable="0+", tag=0, default=None)

    with pytest.raises(TypeError, match="cannot be extended"):

        class Extended(JoinGroupRequest):  # type: ignore[misc]
            extra: int = field(INT8)

    class Fine(Request, api_key=999, versions="0-1", flexible="1+"):
        count: int = field(INT8, versions="1+")

    assert Fine(count=3).encode(1) == bytes.fromhex("03 00")


def test_encode_errors_name_the_field() -> None:
    with pytest.raises(EncodeError) as caught:
        JoinGroupRequest(group_instance_id=None, reason=None, protocols=[None]).encode(5)  # type: ignore[list-item]
    assert caught.value.field == "protocols[0]"
    with pytest.raises(EncodeError, match="None in a field that is not nullable") as caught:
        JoinGroupResponse(protocol_name=None).encode(6)
    assert caught.value.field == "protocol_name"
    JoinGroupResponse(protocol_name=None).encode(7)
    with pytest.raises(EncodeError, match="out of range for int32"):
        JoinGroupRequest(session_timeout_ms=2**31).encode(0)
    with pytest.raises(EncodeError, match="exceeds 32767"):
        JoinGroupRequest(group_id="x" * 40_000).encode(0)
    with pytest.raises(EncodeError, match="not declared"):
        JoinGroupRequest().encode(10)
    with pytest.raises(UnsupportedVersionError):
        JoinGroupRequest.decode(b"", 10)
