"""DeleteGroups (key 42): delete empty groups with their offsets (tombstones in the log).

Version notes: v1 and v2 change nothing a broker answers (v2 is the first flexible version).
An Empty group is deleted once its tombstones are written (NONE); a group with members gets
NON_EMPTY_GROUP; an unknown one GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Callable

from groupcoord.errors import Errors
from groupcoord.protocol.messages.delete_groups import (
    DeletableGroupResult,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _response(request: DeleteGroupsRequest, error_of: Callable[[str], Errors]) -> DeleteGroupsResponse:
    return DeleteGroupsResponse(results=[
        DeletableGroupResult(group_id=group_id, error_code=error_of(group_id))
        for group_id in dict.fromkeys(request.groups_names)
    ])


def _error_response(request: DeleteGroupsRequest, version: int, error: Errors) -> DeleteGroupsResponse:
    return _response(request, lambda group_id: error)


@handler(DeleteGroupsRequest, versions="0-2", error_response=_error_response)
def delete_groups(broker: Broker, request: DeleteGroupsRequest, ctx: RequestContext) -> None:
    def answer(results: dict[str, Errors]) -> None:
        ctx.respond(_response(request, results.__getitem__))

    broker.coordinator.handle_delete_groups(request.groups_names, answer)
