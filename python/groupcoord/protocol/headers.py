"""Request and response headers, and which header version goes with which message version.

Request header v0 is (api key, api version, correlation id); v1 adds the client id, a
nullable string that stays non-compact even in v2; v2 adds tagged fields. A request uses v2
when its version is flexible, else v1 (v0 served only ControlledShutdown v0, which we do not
declare). Response header v0 is the correlation id; v1 adds tagged fields and goes with
flexible responses, except that ApiVersions responses always use v0: a client reads them
before it knows which versions the broker speaks (kafka-python and librdkafka rely on it).
"""

from __future__ import annotations

from groupcoord.protocol.message import Message
from groupcoord.protocol.schema import INT16, INT32, STRING, field

API_VERSIONS_KEY = 18


class RequestHeader(Message, versions="0-2", flexible="2+"):
    request_api_key: int = field(INT16)
    request_api_version: int = field(INT16)
    correlation_id: int = field(INT32)
    client_id: str | None = field(STRING, versions="1+", nullable="1+", flexible="none")


class ResponseHeader(Message, versions="0-1", flexible="1+"):
    correlation_id: int = field(INT32)


def request_header_version(flexible: bool) -> int:
    """The request header version for a request whose version is (not) flexible."""
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    """The response header version for a response of ``api_key`` whose version is (not)
    flexible; ApiVersions always answers with v0."""
    return 1 if flexible and api_key != API_VERSIONS_KEY else 0
