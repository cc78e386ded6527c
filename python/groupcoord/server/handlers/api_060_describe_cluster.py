"""DescribeCluster (key 60): this node as the cluster's only broker, never fenced, and its
controller (``controller_id`` is this node, as in Metadata).

Version notes:

- v0: brokers always.
- v1+: the endpoint type asked for: 1 (brokers) is answered; 2 (controllers) gets
  MISMATCHED_ENDPOINT_TYPE, as a Kafka broker answers it (controllers are described by a
  controller's own listener, which this node does not have), any other
  UNSUPPORTED_ENDPOINT_TYPE; the answer's endpoint type is always 1.
- v2+: whether fenced brokers are wanted (none is fenced) and each broker's ``is_fenced``.
- Authorized operations when asked for: without an authorizer, every operation Kafka supports
  on the cluster.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.describe_cluster import (
    AUTHORIZED_OPERATIONS_OMITTED,
    BROKER_ENDPOINT,
    CONTROLLER_ENDPOINT,
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler

CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
"""CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE:
what a Kafka 4.3.1 broker without an authorizer answers."""


def _error_response(request: DescribeClusterRequest, version: int, error: Errors) -> DescribeClusterResponse:
    message = UNEXPECTED_ERROR_MESSAGE if error == Errors.UNKNOWN_SERVER_ERROR else None
    return DescribeClusterResponse(error_code=error, error_message=message, cluster_id="")


@handler(DescribeClusterRequest, versions="0-2", error_response=_error_response)
def describe_cluster(broker: Broker, request: DescribeClusterRequest, ctx: RequestContext) -> None:
    if ctx.api_version >= 1 and request.endpoint_type != BROKER_ENDPOINT:
        if request.endpoint_type == CONTROLLER_ENDPOINT:
            error, message = (Errors.MISMATCHED_ENDPOINT_TYPE, "The request was sent to an endpoint of "
                              "type BROKER, but we wanted an endpoint of type CONTROLLER")
        else:
            error, message = (Errors.UNSUPPORTED_ENDPOINT_TYPE,
                              f"Unsupported endpoint type {request.endpoint_type}")
        ctx.respond(DescribeClusterResponse(error_code=error, error_message=message, cluster_id=""))
        return
    node = broker.node
    ctx.respond(DescribeClusterResponse(
        cluster_id=broker.cluster_id,
        controller_id=node.node_id,
        brokers=[DescribeClusterBroker(broker_id=node.node_id, host=node.host, port=node.port)],
        cluster_authorized_operations=(
            CLUSTER_OPERATIONS if request.include_cluster_authorized_operations
            else AUTHORIZED_OPERATIONS_OMITTED
        ),
    ))
