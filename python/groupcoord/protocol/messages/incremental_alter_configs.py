"""IncrementalAlterConfigs (key 44), versions 0-1, flexible from 1: change the configs a
request names, each with an operation (SET, DELETE, APPEND or SUBTRACT for lists), leaving
the others as they are.

Version notes: v1 changes no field and is the first flexible one.
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

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


class AlterableConfig(Struct):
    name: str = field(STRING)
    config_operation: int = field(INT8)
    value: str | None = field(STRING, nullable="0+")


class AlterConfigsResource(Struct):
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)
    configs: list[AlterableConfig] = field(Array(AlterableConfig))


class IncrementalAlterConfigsRequest(Request, api_key=44, versions="0-1", flexible="1+"):
    resources: list[AlterConfigsResource] = field(Array(AlterConfigsResource))
    validate_only: bool = field(BOOL)


class AlterConfigsResourceResponse(Struct):
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+")
    resource_type: int = field(INT8)
    resource_name: str = field(STRING)


class IncrementalAlterConfigsResponse(Response, api_key=44, versions="0-1", flexible="1+"):
    throttle_time_ms: int = field(INT32)
    responses: list[AlterConfigsResourceResponse] = field(Array(AlterConfigsResourceResponse))
