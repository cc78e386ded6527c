"""DescribeConfigs (key 32), versions 1-4, flexible from 4.

Version notes: Kafka 4 serves v1 and up (v0's is_default is gone). v1 adds config_source and
synonyms (when include_synonyms); v3 adds config_type and documentation (when
include_documentation); v4 is the first flexible one.
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    Array,
    Struct,
    field,
)


class DescribeConfigsResource(Struct):
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)
    configuration_keys: list[str] | None = field(Array(STRING), nullable="0+")


class DescribeConfigsRequest(Request, api_key=32, versions="1-4", flexible="4+"):
    resources: list[DescribeConfigsResource] = field(Array(DescribeConfigsResource))
    include_synonyms: bool = field(BOOL, versions="1+")
    include_documentation: bool = field(BOOL, versions="3+")


class DescribeConfigsSynonym(Struct):
    name: str = field(STRING, versions="1+")
    value: str | None = field(STRING, versions="1+", nullable="0+")
    source: int = field(INT8, versions="1+")


class DescribeConfigsResourceResult(Struct):
    name: str = field(STRING)
    value: str | None = field(STRING, nullable="0+")
    read_only: bool = field(BOOL)
    config_source: int = field(INT8, versions="1+", default=-1)
    is_default: bool = field(BOOL, versions="0")
    is_sensitive: bool = field(BOOL)
    synonyms: list[DescribeConfigsSynonym] = field(Array(DescribeConfigsSynonym), versions="1+")
    config_type: int = field(INT8, versions="3+", default=0)
    documentation: str | None = field(STRING, versions="3+", nullable="0+")


class DescribeConfigsResult(Struct):
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+")
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)
    configs: list[DescribeConfigsResourceResult] = field(Array(DescribeConfigsResourceResult))


class DescribeConfigsResponse(Response, api_key=32, versions="1-4", flexible="4+"):
    throttle_time_ms: int = field(INT32)
    results: list[DescribeConfigsResult] = field(Array(DescribeConfigsResult))
