"""ListGroups (key 16): the groups of the ``__consumer_offsets`` partitions this node owns.

Version notes:

- v4+: filter by state, case-insensitively (KIP-518), and each group's state is answered.
- v5+: filter by type (KIP-848); every group here is "classic".
- While a partition loads, the answer is COORDINATOR_LOAD_IN_PROGRESS together with the
  groups already loaded, as Kafka does.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.list_groups import (
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _error_response(request: ListGroupsRequest, version: int, error: Errors) -> ListGroupsResponse:
    return ListGroupsResponse(error_code=error)


@handler(ListGroupsRequest, versions="0-5", error_response=_error_response)
def list_groups(broker: Broker, request: ListGroupsRequest, ctx: RequestContext) -> None:
    error, groups = broker.coordinator.handle_list_groups(
        request.states_filter, request.types_filter
    )
    ctx.respond(ListGroupsResponse(error_code=error, groups=[
        ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state,
                    group_type=g.group_type)
        for g in groups
    ]))
