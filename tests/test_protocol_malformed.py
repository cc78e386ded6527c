"""Malformed input: truncated at every byte, random garbage, mutated bytes and hostile length
prefixes raise ProtocolError (naming message, field and byte position) and nothing else, and
never allocate what a length prefix claims."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol import Message, ProtocolError, Request, decode_request
from groupcoord.protocol.messages.fetch import FetchResponse
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest
from groupcoord.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from groupcoord.protocol.messages.metadata import MetadataRequest
from groupcoord.protocol.messages.offset_fetch import OffsetFetchRequest

from protocol_values import (
    MESSAGE_VERSIONS,
    message_id,
    message_strategy,
    request_frame,
    sample_message,
)

REQUEST_VERSIONS = [(cls, v) for cls, v in MESSAGE_VERSIONS if issubclass(cls, Request)]


def decode_or_protocol_error(cls: type[Message], data: bytes, version: int) -> None:
    """Decode; only ProtocolError may escape, with a position inside the input."""
    try:
        cls.decode(data, version)
    except ProtocolError as error:
        assert error.position is None or 0 <= error.position <= len(data), error
        assert error.message_name == cls.name


@pytest.mark.parametrize("cls_version", MESSAGE_VERSIONS, ids=message_id)
def test_truncated_at_every_byte(cls_version: tuple[type[Message], int]) -> None:
    cls, version = cls_version
    encoded = sample_message(cls, version).encode(version)
    for end in range(len(encoded)):
        with pytest.raises(ProtocolError) as caught:
            cls.decode(encoded[:end], version)
        error = caught.value
        assert error.message_name == cls.name and error.api_version == version
        assert error.position is not None and 0 <= error.position <= end
        assert error.field is not None


@pytest.mark.parametrize("cls_version", REQUEST_VERSIONS, ids=message_id)
def test_truncated_request_frames_keep_what_was_readable(
    cls_version: tuple[type[Request], int],
) -> None:
    cls, version = cls_version
    frame = request_frame(sample_message(cls, version), version, 31, "client")
    for end in range(len(frame)):
        with pytest.raises(ProtocolError) as caught:
            decode_request(frame[:end])
        if end >= 8:
            readable = (caught.value.api_key, caught.value.api_version, caught.value.correlation_id)
            assert readable == (cls.api_key, version, 31)


@settings(max_examples=400, deadline=None)
@given(frame=st.binary(max_size=64))
def test_garbage_frames(frame: bytes) -> None:
    try:
        decode_request(frame)
    except ProtocolError:
        pass


@settings(max_examples=300, deadline=None)
@given(cls_version=st.sampled_from(MESSAGE_VERSIONS), data=st.binary(max_size=48))
def test_garbage_bodies(cls_version: tuple[type[Message], int], data: bytes) -> None:
    cls, version = cls_version
    decode_or_protocol_error(cls, data, version)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cls_version=st.sampled_from(MESSAGE_VERSIONS),
    values=st.data(),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_mutated_messages(
    cls_version: tuple[type[Message], int], values: st.DataObject, edits: list[tuple[int, int]]
) -> None:
    cls, version = cls_version
    mutated = bytearray(values.draw(message_strategy(cls, version)).encode(version))
    if not mutated:
        return
    for where, byte in edits:
        mutated[where % len(mutated)] = byte
    decode_or_protocol_error(cls, bytes(mutated), version)


HOSTILE = [
    # (message, version, body): each announces far more than it holds.
    (HeartbeatRequest, 0, bytes.fromhex("7fff 61")),  # a 32767-byte string, 1 byte present
    (JoinGroupRequest, 0, bytes.fromhex("0001 67 00000001 0001 6d 0001 63 7fffffff")),  # array
    (
        JoinGroupRequest,
        0,
        bytes.fromhex("0001 67 00000001 0001 6d 0001 63 00000001 0001 72 7fffffff"),
    ),
    (JoinGroupRequest, 6, bytes.fromhex("02 67 00000001 ffffffff 02 6d 00 02 63 ffffffff0f")),
    (MetadataRequest, 9, bytes.fromhex("ffffffff7f")),  # a varint longer than 5 bytes
    (OffsetFetchRequest, 8, bytes.fromhex("02 02 67 ffffffff07")),  # a compact array of 2^31
    (
        FetchResponse,
        4,
        bytes.fromhex(
            "00000000 00000001 0001 74 00000001 00000000 0000 "
            "0000000000000000 0000000000000000 7fffffff"
        ),
    ),
]


@pytest.mark.parametrize(
    ("cls", "version", "body"), HOSTILE, ids=lambda p: getattr(p, "__name__", None)
)
def test_hostile_length_prefixes_allocate_nothing(
    cls: type[Message], version: int, body: bytes
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError):
            cls.decode(body, version)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_errors_name_the_field_path_and_position() -> None:
    request = JoinGroupRequest(
        group_id="g",
        protocol_type="consumer",
        protocols=[
            JoinGroupRequestProtocol(name="range", metadata=b"abc"),
            JoinGroupRequestProtocol(name="roundrobin", metadata=b"defg"),
        ],
    )
    encoded = request.encode(5)
    with pytest.raises(ProtocolError) as caught:
        JoinGroupRequest.decode(encoded[:-2], 5)
    error = caught.value
    assert error.field == "protocols[1].metadata"
    assert error.position == len(encoded) - 8  # where the int32 length of b"defg" starts
    assert str(error).startswith(
        f"JoinGroupRequest v5, field protocols[1].metadata, at byte {error.position}"
    )


def test_invalid_utf8_reads_as_replacement_characters_and_nulls_where_not_nullable() -> None:
    # Kafka reads strings with Java's String constructor, which substitutes U+FFFD.
    heartbeat = HeartbeatRequest.decode(bytes.fromhex("0004 6361 e9ff 00000001 0002 6dc3"), 0)
    assert (heartbeat.group_id, heartbeat.member_id) == ("ca\ufffd\ufffd", "m\ufffd")
    with pytest.raises(ProtocolError, match="null in a non-nullable string"):
        HeartbeatRequest.decode(bytes.fromhex("ffff 00000001 0001 6d"), 0)
    with pytest.raises(ProtocolError, match="null in a non-nullable array"):
        JoinGroupRequest.decode(bytes.fromhex("0001 67 00000001 0001 6d 0001 63 ffffffff"), 0)


def test_tagged_fields_running_past_the_end() -> None:
    body = HeartbeatRequest(group_id="g", member_id="m").encode(4)
    assert body[-1] == 0
    with pytest.raises(ProtocolError) as caught:
        HeartbeatRequest.decode(body[:-1] + bytes.fromhex("01 05 10 aabb"), 4)
    assert caught.value.field == "<tagged fields>"
    # An unknown tag within bounds is skipped, as Kafka's generated code does.
    assert HeartbeatRequest.decode(
        body[:-1] + bytes.fromhex("01 05 02 aabb"), 4
    ) == HeartbeatRequest(group_id="g", member_id="m")
