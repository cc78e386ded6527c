"""Frames: a request frame's bytes to (header, request), a response to a frame's bytes.

A Kafka frame is an int32 size followed by that many bytes. The server reads the size
(:func:`frame_size` checks it), then the frame, and hands the frame to :func:`decode_request`;
it answers with :func:`encode_response`, which writes the size prefix.

Failures keep what was readable: a :class:`ProtocolError` from :func:`decode_request`
carries the api key, version and correlation id when the frame had them. An ApiVersions
request at a version we do not declare raises :class:`UnsupportedVersionError`; Kafka
answers it with :func:`encode_api_versions_fallback` (kafka-python 3 first asks for v4 and
relies on exactly that answer). Like Kafka, bytes after a well-formed request are ignored.
"""

from __future__ import annotations

from struct import Struct
from typing import NamedTuple

from groupcoord.errors import Errors
from groupcoord.protocol.codec import (
    Decoder,
    Encoder,
    decode_message,
    decoder_for,
    encoder_for,
    explain_decode_failure,
    explain_encode_failure,
)
from groupcoord.protocol.errors import ProtocolError, UnknownApiKeyError, UnsupportedVersionError
from groupcoord.protocol.headers import (
    RequestHeader,
    ResponseHeader,
    request_header_version,
    response_header_version,
)
from groupcoord.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from groupcoord.protocol.primitives import INT32
from groupcoord.protocol.registry import APIS
from groupcoord.protocol.message import Request, Response

DEFAULT_MAX_REQUEST_SIZE = 104_857_600
"""Kafka's ``socket.request.max.bytes`` default (100 MiB)."""

_HEADER_START = Struct(">hhi").unpack_from
"""Reads the start of every request header: api key, api version, correlation id."""


def frame_size(prefix: bytes, max_size: int = DEFAULT_MAX_REQUEST_SIZE) -> int:
    """The size announced by a frame's 4-byte prefix.

    Raises:
        ProtocolError: a negative size or one above ``max_size``; Kafka closes the
            connection (``InvalidReceiveException``) without reading further.
    """
    if len(prefix) != 4:
        raise ProtocolError(f"a frame size is 4 bytes, not {len(prefix)}", position=0)
    (size,) = INT32.unpack(prefix)
    if size < 0:
        raise ProtocolError(f"negative frame size {size}", position=0)
    if size > max_size:
        raise ProtocolError(f"frame of {size} bytes exceeds the limit of {max_size}", position=0)
    return int(size)


class _RequestPlan(NamedTuple):
    request_cls: type[Request]
    header_decoder: Decoder
    body_decoder: Decoder
    header_version: int


class _ResponsePlan(NamedTuple):
    header_tagged: bool
    body_encoder: Encoder


_request_plans: dict[tuple[int, int], _RequestPlan] = {}
_response_plans: dict[tuple[type[Response], int], _ResponsePlan] = {}


def _request_plan(api_key: int, api_version: int, correlation_id: int) -> _RequestPlan:
    api = APIS.get(api_key)
    if api is None:
        raise UnknownApiKeyError(
            f"unknown api key {api_key}",
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    request_cls = api.request
    if not request_cls.supports(api_version):
        raise UnsupportedVersionError(
            f"{request_cls.name} is declared for versions "
            f"{request_cls.min_version}-{request_cls.max_version}, not {api_version}",
            message_name=request_cls.name,
            api_key=api_key,
            api_version=api_version,
            correlation_id=correlation_id,
        )
    header_version = request_header_version(request_cls.is_flexible(api_version))
    plan = _RequestPlan(
        request_cls,
        decoder_for(RequestHeader, header_version),
        decoder_for(request_cls, api_version),
        header_version,
    )
    _request_plans[(api_key, api_version)] = plan
    return plan


def decode_request(frame: bytes | bytearray | memoryview) -> tuple[RequestHeader, Request]:
    """Decode one request frame (the bytes after the size prefix).

    Raises:
        UnknownApiKeyError: no API with this key is declared.
        UnsupportedVersionError: the API is declared but not at this version.
        ProtocolError: anything else malformed; ``position`` counts from the frame's start.
        Each carries ``api_key``, ``api_version`` and ``correlation_id`` when they were read.
    """
    if type(frame) is not bytes:
        frame = bytes(frame)
    if len(frame) < 8:
        raise ProtocolError(
            f"a request header needs at least 8 bytes, the frame has {len(frame)}", position=0
        )
    api_key, api_version, correlation_id = _HEADER_START(frame, 0)
    plan = _request_plans.get((api_key, api_version)) or _request_plan(
        api_key, api_version, correlation_id
    )
    try:
        header, pos = plan.header_decoder(frame, 0)
        request, _ = plan.body_decoder(frame, pos)
    except Exception as exc:
        error = _explain_request(plan, frame, api_version, exc)
        error.api_key = api_key
        error.api_version = api_version
        error.correlation_id = correlation_id
        raise error from None
    return header, request


def _explain_request(
    plan: _RequestPlan, frame: bytes, api_version: int, exc: Exception
) -> ProtocolError:
    """The precise error for a frame the compiled decoders rejected (header, then body)."""
    try:
        _, pos = decode_message(RequestHeader, frame, 0, plan.header_version)
    except ProtocolError as error:
        return error
    return explain_decode_failure(plan.request_cls, api_version, frame, pos, exc)


def _response_plan(cls: type[Response], version: int) -> _ResponsePlan:
    plan = _ResponsePlan(
        response_header_version(cls.api_key, cls.is_flexible(version)) == 1,
        encoder_for(cls, version),
    )
    _response_plans[(cls, version)] = plan
    return plan


_SIZE_AND_CORRELATION_ID = Struct(">ii")
"""A response frame's size prefix and its header's correlation id (the empty tagged fields of
a flexible header follow as one zero byte)."""


def encode_response(correlation_id: int, response: Response, version: int) -> bytearray:
    """A response frame: size prefix, the response header its version calls for, the body;
    the buffer it was encoded in, not copied again (a Fetch answer's records are megabytes).

    Raises:
        EncodeError: the response cannot be encoded at ``version`` (names the field).
    """
    cls = type(response)
    header_tagged, encode = _response_plans.get((cls, version)) or _response_plan(cls, version)
    out = bytearray(b"\0\0\0\0\0\0\0\0\0" if header_tagged else b"\0\0\0\0\0\0\0\0")
    try:
        encode(response, out)
    except Exception as exc:
        raise explain_encode_failure(response, version, exc) from exc
    _SIZE_AND_CORRELATION_ID.pack_into(out, 0, len(out) - 4, correlation_id)
    return out


def check_api_versions_header(frame: bytes, api_version: int) -> None:
    """Kafka parses the header of an ApiVersions request at a version it does not support
    before answering it: as request header v2 (flexible, with tagged fields) from v3 on, v1
    below. Raises :class:`ProtocolError` when it does not parse (the connection closes)."""
    header_version = request_header_version(api_version >= 3)
    try:
        decoder_for(RequestHeader, header_version)(frame, 0)
    except Exception as exc:
        raise ProtocolError(
            f"ApiVersions v{api_version}: request header v{header_version} does not parse: {exc}"
        ) from None


def encode_api_versions_fallback(correlation_id: int, api_keys: list[ApiVersion]) -> bytearray:
    """Kafka's answer to an ApiVersions request at a version it does not support.

    The body is ApiVersionsResponse v0 (error 35 UNSUPPORTED_VERSION, then ``api_keys``:
    Kafka sends ApiVersions' own entry alone) and the header v0, whatever version was asked
    for: clients decode error answers as v0 and retry at the highest version the entry for
    key 18 allows.
    """
    response = ApiVersionsResponse(error_code=Errors.UNSUPPORTED_VERSION, api_keys=api_keys)
    return encode_response(correlation_id, response, 0)


def decode_response(
    frame: bytes | bytearray | memoryview, response_cls: type[Response], version: int
) -> tuple[ResponseHeader, Response]:
    """Decode a response frame (after the size prefix), as a client does.

    An ApiVersions answer carrying an error is read as v0, whatever version was asked for.
    """
    if not isinstance(frame, bytes):
        frame = bytes(frame)
    flexible = response_cls.is_flexible(version)
    header, pos = decode_message(
        ResponseHeader, frame, 0, response_header_version(response_cls.api_key, flexible)
    )
    if response_cls is ApiVersionsResponse and frame[pos : pos + 2] not in (b"", b"\x00\x00"):
        version = 0
    response, _ = decode_message(response_cls, frame, pos, version)
    return header, response
