"""IncrementalAlterConfigs (key 44): change a topic's configs one by one (SET, DELETE, and
APPEND or SUBTRACT for list configs), as ``kafka-configs --alter`` and the admin clients do.

A TOPIC resource's new overrides are checked whole (Kafka's errors: INVALID_CONFIG for an
unknown name or a value the config does not take, INVALID_REQUEST for a duplicate key or
resource, UNKNOWN_TOPIC_OR_PARTITION), then saved durably and applied to the topic's open
partitions before the answer; validate_only only checks. ``__consumer_offsets`` and BROKER
resources cannot be changed here (INVALID_REQUEST: groupcoord changes no broker setting at
run time); other resource types get INVALID_REQUEST.

Version notes: v1 changes nothing but is the first flexible version.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.incremental_alter_configs import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.config_resources import AlterRequest, Outcome, serve_alter_configs
from groupcoord.server.registry import RequestContext, handler


def _response(request: IncrementalAlterConfigsRequest, outcomes: list[Outcome]) -> IncrementalAlterConfigsResponse:
    return IncrementalAlterConfigsResponse(responses=[
        AlterConfigsResourceResponse(error_code=error, error_message=message,
                                     resource_type=r.resource_type, resource_name=r.resource_name)
        for r, (error, message) in zip(request.resources, outcomes)
    ])


def _error_response(
    request: IncrementalAlterConfigsRequest, version: int, error: Errors
) -> IncrementalAlterConfigsResponse:
    return _response(request, [(error, None)] * len(request.resources))


@handler(IncrementalAlterConfigsRequest, versions="0-1", error_response=_error_response)
def incremental_alter_configs(broker: Broker, request: IncrementalAlterConfigsRequest, ctx: RequestContext) -> None:
    requests = [
        AlterRequest(r.resource_type, r.resource_name, [(c.name, c.config_operation, c.value) for c in r.configs])
        for r in request.resources
    ]
    serve_alter_configs(broker, ctx, requests, incremental=True, validate_only=request.validate_only,
                        response=lambda outcomes: _response(request, outcomes))
