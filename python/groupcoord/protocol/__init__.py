"""The Kafka wire protocol: declared messages, derived codecs, headers and frames.

Pure Python, no sockets. Messages are declared once as typed classes
(:mod:`~groupcoord.protocol.schema`, one module per API in ``messages/``); encoders and
decoders are derived from the declarations (:mod:`~groupcoord.protocol.codec`);
:mod:`~groupcoord.protocol.frames` turns request frames into (header, request) and responses
into frames; :data:`APIS` lists every declared API by key.
"""

from groupcoord.protocol.errors import (
    EncodeError,
    ProtocolError,
    UnknownApiKeyError,
    UnsupportedVersionError,
)
from groupcoord.protocol.frames import (
    DEFAULT_MAX_REQUEST_SIZE,
    check_api_versions_header,
    decode_request,
    decode_response,
    encode_api_versions_fallback,
    encode_response,
    frame_size,
)
from groupcoord.protocol.headers import (
    RequestHeader,
    ResponseHeader,
    request_header_version,
    response_header_version,
)
from groupcoord.protocol.registry import APIS, Api
from groupcoord.protocol.message import Message, Request, Response
from groupcoord.protocol.schema import Struct

__all__ = [
    "APIS",
    "Api",
    "DEFAULT_MAX_REQUEST_SIZE",
    "EncodeError",
    "Message",
    "ProtocolError",
    "Request",
    "RequestHeader",
    "Response",
    "ResponseHeader",
    "Struct",
    "UnknownApiKeyError",
    "UnsupportedVersionError",
    "decode_request",
    "decode_response",
    "check_api_versions_header",
    "encode_api_versions_fallback",
    "encode_response",
    "frame_size",
    "request_header_version",
    "response_header_version",
]
