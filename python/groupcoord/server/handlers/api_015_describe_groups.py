"""DescribeGroups (key 15): state, protocol and members of groups.

Version notes:

- A Stable group shows its protocol and each member's metadata and assignment; in other
  states members show their assignment from the last generation but no metadata, as in
  Kafka 4 (Kafka 3 left the assignment out too).
- v3+: authorized operations when asked for. groupcoord has no authorizer, so, as Kafka
  without one, every group operation is allowed: READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS,
  ALTER_CONFIGS.
- v4+: group_instance_id of members (KIP-345).
- v6+: an unknown (or Dead) group is answered GROUP_ID_NOT_FOUND with a message
  (KIP-1043); before v6 it is answered NONE with state Dead. A consumer group (KIP-848) is
  not a classic group: it is answered as a Dead one, with its own message.
"""

from __future__ import annotations

from groupcoord.coordinator import GroupState
from groupcoord.errors import Errors
from groupcoord.protocol.messages.describe_groups import (
    AUTHORIZED_OPERATIONS_OMITTED,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from groupcoord.protocol.primitives import MAX_STRING_LENGTH
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler

ACL_READ, ACL_DELETE, ACL_DESCRIBE, ACL_DESCRIBE_CONFIGS, ACL_ALTER_CONFIGS = 3, 6, 8, 10, 11
GROUP_OPERATIONS = sum(
    1 << op for op in (ACL_READ, ACL_DELETE, ACL_DESCRIBE, ACL_DESCRIBE_CONFIGS, ACL_ALTER_CONFIGS)
)
"""Kafka's bit field of AclOperation codes allowed on a group."""


def _error_response(request: DescribeGroupsRequest, version: int, error: Errors) -> DescribeGroupsResponse:
    return DescribeGroupsResponse(groups=[
        DescribedGroup(error_code=error, error_message=UNEXPECTED_ERROR_MESSAGE, group_id=group_id)
        for group_id in request.groups
    ])


@handler(DescribeGroupsRequest, versions="0-6", error_response=_error_response)
def describe_groups(broker: Broker, request: DescribeGroupsRequest, ctx: RequestContext) -> None:
    operations = (
        GROUP_OPERATIONS if request.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    )
    described = []
    for group_id in request.groups:
        error, summary = broker.coordinator.handle_describe_group(group_id)
        if error:
            described.append(DescribedGroup(error_code=error, group_id=group_id))
        elif summary.state == GroupState.DEAD.value and ctx.api_version >= 6:
            described.append(DescribedGroup(
                error_code=Errors.GROUP_ID_NOT_FOUND,
                error_message=summary.error_message or _not_found(group_id),
                group_id=group_id, group_state=GroupState.DEAD.value,
            ))
        else:
            described.append(DescribedGroup(
                group_id=group_id,
                group_state=summary.state,
                protocol_type=summary.protocol_type,
                protocol_data=summary.protocol,
                members=[
                    DescribedGroupMember(
                        member_id=m.member_id, group_instance_id=m.group_instance_id,
                        client_id=m.client_id, client_host=m.client_host,
                        member_metadata=m.metadata, member_assignment=m.assignment,
                    )
                    for m in summary.members
                ],
                authorized_operations=operations,
            ))
    ctx.respond(DescribeGroupsResponse(groups=described))


def _not_found(group_id: str) -> str:
    """Kafka's message, naming the group unless that would not fit a STRING (a group id may
    be as long as the message's limit)."""
    message = f"Group {group_id} not found."
    return message if len(message.encode()) <= MAX_STRING_LENGTH else "Group not found."
