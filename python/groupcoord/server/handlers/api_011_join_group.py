"""JoinGroup (key 11): a member joins or rejoins a group; the answer waits for the rebalance.

Version notes:

- v0 has no rebalance timeout; the session timeout stands in for it, as in Kafka.
- v4+: a new member's first JoinGroup is answered MEMBER_ID_REQUIRED with its member id, and
  it joins again with that id (KIP-394). Older versions join in one step.
- v5+: group_instance_id, static membership (KIP-345).
- v7+: the answer carries protocol_type, and protocol_name is null on errors (before v7 it
  is an empty string).
- v8+: the client's reason, kept for the rebalance's log line.
- v9+: a static leader rejoining a Stable group gets the members with skip_assignment
  (KIP-814); before v9 it is told another member leads, so it does not assign again.
"""

from __future__ import annotations

from groupcoord.coordinator.results import UNKNOWN_MEMBER_ID, JoinGroupResult
from groupcoord.errors import Errors
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _response(version: int, result: JoinGroupResult) -> JoinGroupResponse:
    protocol_name = result.protocol_name
    return JoinGroupResponse(
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name if version >= 7 else protocol_name or "",
        leader=result.leader_id,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[
            JoinGroupResponseMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata,
            )
            for m in result.members
        ],
    )


def _error_response(request: JoinGroupRequest, version: int, error: Errors) -> JoinGroupResponse:
    return _response(version, JoinGroupResult(member_id=UNKNOWN_MEMBER_ID, error=error))


@handler(JoinGroupRequest, versions="0-9", error_response=_error_response)
def join_group(broker: Broker, request: JoinGroupRequest, ctx: RequestContext) -> None:
    version = ctx.api_version

    def answer(result: JoinGroupResult) -> None:
        ctx.respond(_response(version, result))

    broker.coordinator.handle_join_group(
        request.group_id,
        request.member_id,
        group_instance_id=request.group_instance_id,
        require_known_member_id=version >= 4,
        support_skipping_assignment=version >= 9,
        client_id=ctx.client_id,
        client_host=ctx.client_host,
        rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms,
        session_timeout_ms=request.session_timeout_ms,
        protocol_type=request.protocol_type,
        protocols=[(p.name, p.metadata) for p in request.protocols],
        callback=answer,
        reason=request.reason,
    )
