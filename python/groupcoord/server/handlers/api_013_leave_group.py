"""LeaveGroup (key 13): members leave a group, which rebalances without them.

Version notes:

- v0-2 name one member; its error is folded into the top-level error, as Kafka's
  LeaveGroupResponse does for those versions.
- v3+: a batch of members, by member id or, from an admin client, by group instance id with
  member id "" (KIP-345); each member is answered with its own error.
- v5+: a reason per member (KIP-800), kept for the log line.
"""

from __future__ import annotations

from groupcoord.coordinator.results import LeaveGroupResult, MemberIdentity
from groupcoord.errors import Errors
from groupcoord.protocol.messages.leave_group import (
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _response(version: int, result: LeaveGroupResult) -> LeaveGroupResponse:
    if version <= 2:
        error = result.error
        if error == Errors.NONE and result.members:
            error = result.members[0].error
        return LeaveGroupResponse(error_code=error)
    return LeaveGroupResponse(
        error_code=result.error,
        members=[
            MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                           error_code=m.error)
            for m in result.members
        ],
    )


def _error_response(request: LeaveGroupRequest, version: int, error: Errors) -> LeaveGroupResponse:
    return _response(version, LeaveGroupResult(error))


@handler(LeaveGroupRequest, versions="0-5", error_response=_error_response)
def leave_group(broker: Broker, request: LeaveGroupRequest, ctx: RequestContext) -> None:
    if ctx.api_version <= 2:
        leaving = [MemberIdentity(request.member_id)]
    else:
        leaving = [MemberIdentity(m.member_id, m.group_instance_id, m.reason) for m in request.members]
    broker.coordinator.handle_leave_group(
        request.group_id, leaving, lambda result: ctx.respond(_response(ctx.api_version, result))
    )
