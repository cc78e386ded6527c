"""DescribeCluster (key 60), versions 0-2, flexible at every version (KIP-700).

Version notes: v1 adds the endpoint type (1 brokers, 2 controllers; KIP-919); v2 asks whether
to include fenced brokers and says of each broker whether it is fenced (KIP-1073).
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

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""Kafka's INT32_MIN: authorized operations were not requested."""
BROKER_ENDPOINT = 1
CONTROLLER_ENDPOINT = 2


class DescribeClusterRequest(Request, api_key=60, versions="0-2", flexible="0+"):
    include_cluster_authorized_operations: bool = field(BOOL)
    endpoint_type: int = field(INT8, versions="1+", default=BROKER_ENDPOINT)
    include_fenced_brokers: bool = field(BOOL, versions="2+")


class DescribeClusterBroker(Struct):
    broker_id: int = field(INT32)
    host: str = field(STRING)
    port: int = field(INT32)
    rack: str | None = field(STRING, nullable="0+", default=None)
    is_fenced: bool = field(BOOL, versions="2+")


class DescribeClusterResponse(Response, api_key=60, versions="0-2", flexible="0+"):
    throttle_time_ms: int = field(INT32)
    error_code: int = field(INT16)
    error_message: str | None = field(STRING, nullable="0+", default=None)
    endpoint_type: int = field(INT8, versions="1+", default=BROKER_ENDPOINT)
    cluster_id: str = field(STRING)
    controller_id: int = field(INT32, default=-1)
    brokers: list[DescribeClusterBroker] = field(Array(DescribeClusterBroker))
    cluster_authorized_operations: int = field(INT32, default=AUTHORIZED_OPERATIONS_OMITTED)
