"""Heartbeat (key 12): a member shows it is alive and learns whether to rejoin.

Version notes:

- v3+: group_instance_id (KIP-345).
- While the group's partition loads the answer is NONE: the group is coming back (Kafka
  answers blindly too).
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _response(request: HeartbeatRequest, version: int, error: Errors) -> HeartbeatResponse:
    return HeartbeatResponse(error_code=error)


@handler(HeartbeatRequest, versions="0-4", error_response=_response)
def heartbeat(broker: Broker, request: HeartbeatRequest, ctx: RequestContext) -> None:
    broker.coordinator.handle_heartbeat(
        request.group_id, request.member_id, request.group_instance_id, request.generation_id,
        lambda error: ctx.respond(_response(request, ctx.api_version, error)),
    )
