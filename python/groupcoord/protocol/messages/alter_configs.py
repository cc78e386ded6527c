"""AlterConfigs (key 33), versions 0-2, flexible from 2: replace a resource's whole set of
configs (Kafka deprecates it for IncrementalAlterConfigs; kafka-python's admin client uses it).

Version notes: v1 and v2 change no field; v2 is the first flexible one.
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


class AlterableConfig(Struct):
    name: str = field(STRING)
    value: str | None = field(STRING, nullable="0+")


class AlterConfigsResource(Struct):
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)
    configs: list[AlterableConfig] = field(Array(AlterableConfig))


class AlterConfigsRequest(Request, api_key=33, versions="0-2", flexible="2+"):
    resources: list[AlterConfigsResource] = field(Array(AlterConfigsResource))
    validate_only: bool = field(BOOL)


class AlterConfigsResourceResponse(Struct):
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+")
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)


class AlterConfigsResponse(Response, api_key=33, versions="0-2", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    responses: list[AlterConfigsResourceResponse] = field(Array(AlterConfigsResourceResponse))
