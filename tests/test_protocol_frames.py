"""Headers and frames: which header version goes with which message version, requests framed
by kafka-python decode to the same header and body, our response frames are byte-identical to
kafka-python's, and the ApiVersions fallback is exactly what kafka-python 3 needs."""

from __future__ import annotations

from typing import Any

import pytest

from groupcoord.errors import Errors
from groupcoord.protocol import (
    APIS,
    DEFAULT_MAX_REQUEST_SIZE,
    ProtocolError,
    Request,
    RequestHeader,
    Response,
    ResponseHeader,
    UnknownApiKeyError,
    UnsupportedVersionError,
    decode_request,
    decode_response,
    encode_api_versions_fallback,
    encode_response,
    frame_size,
    request_header_version,
    response_header_version,
)
from groupcoord.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse

from protocol_kafka_python import KAFKA_PYTHON_SHARED as SHARED, kafka_python_class, to_kafka_python
from protocol_values import MESSAGE_VERSIONS, message_id, request_frame, sample_message

SHARED_REQUESTS = [(cls, v) for cls, v in SHARED if issubclass(cls, Request)]
SHARED_RESPONSES = [(cls, v) for cls, v in SHARED if issubclass(cls, Response)]


def test_header_layouts() -> None:
    header = RequestHeader(
        request_api_key=12, request_api_version=4, correlation_id=7, client_id="ab"
    )
    assert header.encode(0) == bytes.fromhex("000c 0004 00000007")
    assert header.encode(1) == bytes.fromhex("000c 0004 00000007 0002 6162")
    # v2: the client id stays a non-compact string; an empty tagged-field section follows.
    assert header.encode(2) == bytes.fromhex("000c 0004 00000007 0002 6162 00")
    null_client = RequestHeader(
        request_api_key=12, request_api_version=4, correlation_id=7, client_id=None
    )
    assert null_client.encode(2) == bytes.fromhex("000c 0004 00000007 ffff 00")
    assert ResponseHeader(correlation_id=7).encode(0) == bytes.fromhex("00000007")
    assert ResponseHeader(correlation_id=7).encode(1) == bytes.fromhex("00000007 00")


@pytest.mark.parametrize("api", APIS.values(), ids=lambda api: api.name)
def test_header_versions_follow_flexibility(api: Any) -> None:
    for version in range(api.min_version, api.max_version + 1):
        flexible = api.is_flexible(version)
        assert request_header_version(flexible) == (2 if flexible else 1)
        expected_response = 1 if flexible and api.key != 18 else 0
        assert response_header_version(api.key, flexible) == expected_response


@pytest.mark.parametrize("cls_version", MESSAGE_VERSIONS[::2], ids=message_id)
def test_decode_request_gives_header_and_body(cls_version: tuple[type[Any], int]) -> None:
    cls, version = cls_version
    if not issubclass(cls, Request):
        cls = next(api.request for api in APIS.values() if api.response is cls)
    request = sample_message(cls, version)
    header, decoded = decode_request(request_frame(request, version, 123, "client-1"))
    assert (header.request_api_key, header.request_api_version) == (cls.api_key, version)
    assert (header.correlation_id, header.client_id) == (123, "client-1")
    assert decoded == request


@pytest.mark.parametrize("cls_version", SHARED_REQUESTS, ids=message_id)
def test_requests_framed_by_kafka_python(cls_version: tuple[type[Request], int]) -> None:
    cls, version = cls_version
    request = sample_message(cls, version)
    peer = to_kafka_python(
        request, kafka_python_class(cls.__name__), version, cls.is_flexible(version)
    )
    peer.with_header(correlation_id=42, client_id="kafka-python-3.0.12")
    header, decoded = decode_request(bytes(peer.encode(version=version, header=True)))
    assert header == RequestHeader(
        request_api_key=cls.api_key,
        request_api_version=version,
        correlation_id=42,
        client_id="kafka-python-3.0.12",
    )
    assert decoded == request


@pytest.mark.parametrize("cls_version", SHARED_RESPONSES, ids=message_id)
def test_response_frames_match_kafka_python(cls_version: tuple[type[Response], int]) -> None:
    cls, version = cls_version
    response = sample_message(cls, version)
    if cls is ApiVersionsResponse:
        response.error_code = 0  # kafka-python reads failed ApiVersions answers as v0
    frame = encode_response(99, response, version)
    peer = to_kafka_python(
        response, kafka_python_class(cls.__name__), version, cls.is_flexible(version)
    )
    peer.encode(version=version)  # sets its version before a header exists
    peer.with_header(correlation_id=99)
    assert frame == bytes(peer.encode(header=True, framed=True))
    header, decoded = decode_response(frame[4:], cls, version)
    assert (header.correlation_id, decoded) == (99, response)


def test_api_versions_response_header_is_v0_even_when_flexible() -> None:
    response = ApiVersionsResponse(api_keys=[ApiVersion(api_key=18, min_version=0, max_version=4)])
    frame = encode_response(5, response, 4)
    assert frame[4:8] == bytes.fromhex("00000005")
    assert frame[8:] == response.encode(4)
    heartbeat = encode_response(5, HeartbeatResponse(error_code=27), 4)
    assert heartbeat == bytes.fromhex("0000000c 00000005 00 00000000 001b 00")


def test_api_versions_fallback_bytes() -> None:
    table = [
        ApiVersion(api_key=18, min_version=0, max_version=4),
        ApiVersion(api_key=12, min_version=0, max_version=4),
    ]
    frame = encode_api_versions_fallback(7, table)
    assert frame == bytes.fromhex(
        "00000016"  # size: 22 bytes follow
        "00000007"  # response header v0: the correlation id, no tagged fields
        "0023"  # error 35 UNSUPPORTED_VERSION
        "00000002"  # a non-compact array of two entries
        "0012 0000 0004"
        "000c 0000 0004"
    )
    # kafka-python 3 asks for v4 first and must read this answer, or it fails to connect.
    peer = kafka_python_class("ApiVersionsResponse").decode(frame[4:], version=4, header=True)
    assert peer.error_code == Errors.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in peer.api_keys] == [
        (18, 0, 4),
        (12, 0, 4),
    ]
    header, ours = decode_response(frame[4:], ApiVersionsResponse, 4)
    assert header.correlation_id == 7
    assert ours == ApiVersionsResponse(error_code=35, api_keys=table)


def test_api_versions_request_at_an_unknown_version() -> None:
    # A client newer than our declarations asks for ApiVersions v5 with a v2 header.
    header = RequestHeader(
        request_api_key=18, request_api_version=5, correlation_id=11, client_id="new"
    )
    frame = header.encode(2) + bytes.fromhex("03 6e6577 02 31 00")
    with pytest.raises(UnsupportedVersionError) as caught:
        decode_request(frame)
    assert (caught.value.api_key, caught.value.api_version, caught.value.correlation_id) == (
        18,
        5,
        11,
    )


def test_kafka_python_first_request_is_understood() -> None:
    peer = kafka_python_class("ApiVersionsRequest")(
        client_software_name="kafka-python", client_software_version="3.0.12"
    )
    peer.with_header(correlation_id=1, client_id="kafka-python-3.0.12")
    header, request = decode_request(bytes(peer.encode(version=4, header=True)))
    assert header.request_api_version == 4
    assert request == ApiVersionsRequest(
        client_software_name="kafka-python", client_software_version="3.0.12"
    )


@pytest.mark.parametrize(
    ("frame", "error", "readable"),
    [
        (bytes.fromhex("2710 0000 00000003 ffff"), UnknownApiKeyError, (10000, 0, 3)),
        (bytes.fromhex("000c 0005 00000004 ffff"), UnsupportedVersionError, (12, 5, 4)),
        (bytes.fromhex("000c ffff 00000004 ffff"), UnsupportedVersionError, (12, -1, 4)),
        (bytes.fromhex("0001 0013 00000005 ffff"), UnsupportedVersionError, (1, 19, 5)),
    ],
)
def test_unknown_keys_and_versions_keep_the_header(
    frame: bytes, error: type[ProtocolError], readable: tuple[int, int, int]
) -> None:
    with pytest.raises(error) as caught:
        decode_request(frame)
    assert (caught.value.api_key, caught.value.api_version, caught.value.correlation_id) == readable


def test_a_malformed_body_keeps_the_header() -> None:
    frame = request_frame(HeartbeatRequest(group_id="group"), 4, 77, "c")[:-3]
    with pytest.raises(ProtocolError) as caught:
        decode_request(frame)
    error = caught.value
    assert (error.api_key, error.api_version, error.correlation_id) == (12, 4, 77)
    assert error.message_name == "HeartbeatRequest"
    assert error.field == "member_id"
    assert "HeartbeatRequest v4, field member_id, at byte" in str(error)


def test_trailing_bytes_after_a_request_are_ignored_as_kafka_does() -> None:
    frame = request_frame(HeartbeatRequest(group_id="g"), 3, 1, None) + b"\x00\x01"
    _, request = decode_request(frame)
    assert request == HeartbeatRequest(group_id="g")
    with pytest.raises(ProtocolError, match="left over"):
        HeartbeatRequest.decode(frame[10:], 3)


def test_frame_size_limits() -> None:
    assert frame_size(bytes.fromhex("00000010")) == 16
    assert frame_size(bytes.fromhex("00000000")) == 0
    assert frame_size((DEFAULT_MAX_REQUEST_SIZE).to_bytes(4, "big")) == DEFAULT_MAX_REQUEST_SIZE
    for prefix, limit in [
        (b"\xff\xff\xff\xff", 100),
        (b"\x7f\xff\xff\xff", 1 << 20),
        (b"\x00\x00\x01\x01", 256),
    ]:
        with pytest.raises(ProtocolError):
            frame_size(prefix, limit)
    with pytest.raises(ProtocolError):
        frame_size(b"\x00\x00")
