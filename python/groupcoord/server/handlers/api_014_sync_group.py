"""SyncGroup (key 14): the leader sends the assignment; every member receives its own once
the assignment is in the log.

Version notes:

- v3+: group_instance_id (KIP-345).
- v5+: the request must name protocol_type and protocol_name (checked against the group's;
  a v5 request missing either is answered INCONSISTENT_GROUP_PROTOCOL, as Kafka does), and
  the answer carries them.
"""

from __future__ import annotations

from groupcoord.coordinator.results import SyncGroupResult
from groupcoord.errors import Errors
from groupcoord.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _response(result: SyncGroupResult) -> SyncGroupResponse:
    return SyncGroupResponse(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )


def _error_response(request: SyncGroupRequest, version: int, error: Errors) -> SyncGroupResponse:
    return _response(SyncGroupResult(error))


@handler(SyncGroupRequest, versions="0-5", error_response=_error_response)
def sync_group(broker: Broker, request: SyncGroupRequest, ctx: RequestContext) -> None:
    def answer(result: SyncGroupResult) -> None:
        ctx.respond(_response(result))

    if ctx.api_version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        answer(SyncGroupResult(Errors.INCONSISTENT_GROUP_PROTOCOL))
        return
    broker.coordinator.handle_sync_group(
        request.group_id,
        request.generation_id,
        request.member_id,
        protocol_type=request.protocol_type,
        protocol_name=request.protocol_name,
        group_instance_id=request.group_instance_id,
        assignment={a.member_id: a.assignment for a in request.assignments},
        callback=answer,
    )
