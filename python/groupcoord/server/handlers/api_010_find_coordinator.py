"""FindCoordinator (key 10): which node coordinates a group.

A group belongs to partition ``abs(javaStringHashCode(group)) % offsets.topic.num.partitions``
of ``__consumer_offsets``; its coordinator is this node when it owns (or is loading) that
partition, and no node otherwise (COORDINATOR_NOT_AVAILABLE: the client asks again), as
Kafka answers when the partition has no leader: so too while this node has given the
partition up after a failure of its log and waits to load it again.

Version notes:

- v1+: key_type (0 group, 1 transaction); groupcoord coordinates no transactions, so a
  transaction key gets COORDINATOR_NOT_AVAILABLE and any other key type INVALID_REQUEST.
- v4+: keys come batched (KIP-699) and each gets its own entry in ``coordinators``.
- A key found gets Kafka's error message: ``"NONE"`` (``Errors.NONE.message()``) before v4,
  ``""`` from v4 on. A key not found gets a message saying why, where Kafka gives the
  error's generic text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from groupcoord.errors import Errors
from groupcoord.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler


class _Answer(NamedTuple):
    error: Errors
    message: str | None
    node_id: int = -1
    host: str = ""
    port: int = -1


def _find(broker: Broker, key_type: int, key: str) -> _Answer:
    if key_type == KEY_TYPE_TRANSACTION:
        return _Answer(Errors.COORDINATOR_NOT_AVAILABLE, "groupcoord coordinates no transactions")
    if key_type != KEY_TYPE_GROUP:
        return _Answer(Errors.INVALID_REQUEST, f"unknown key type {key_type}")
    partition = broker.coordinator.partition_for(key)
    if not broker.serves_partition(partition):
        return _Answer(Errors.COORDINATOR_NOT_AVAILABLE,
                       f"__consumer_offsets-{partition} is not owned by this node")
    node = broker.node
    return _Answer(Errors.NONE, "NONE", node.node_id, node.host, node.port)


def _response(
    request: FindCoordinatorRequest, version: int, find: Callable[[str], _Answer]
) -> FindCoordinatorResponse:
    if version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            found = find(key)
            coordinators.append(Coordinator(
                key=key, node_id=found.node_id, host=found.host, port=found.port,
                error_code=found.error, error_message=found.message if found.error else "",
            ))
        return FindCoordinatorResponse(coordinators=coordinators)
    found = find(request.key)
    return FindCoordinatorResponse(
        error_code=found.error, error_message=found.message, node_id=found.node_id,
        host=found.host, port=found.port,
    )


def _error_response(
    request: FindCoordinatorRequest, version: int, error: Errors
) -> FindCoordinatorResponse:
    return _response(request, version, lambda key: _Answer(error, UNEXPECTED_ERROR_MESSAGE))


@handler(FindCoordinatorRequest, versions="0-6", error_response=_error_response)
def find_coordinator(broker: Broker, request: FindCoordinatorRequest, ctx: RequestContext) -> None:
    ctx.respond(_response(
        request, ctx.api_version, lambda key: _find(broker, request.key_type, key)
    ))
