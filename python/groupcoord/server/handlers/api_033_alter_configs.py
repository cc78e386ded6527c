"""AlterConfigs (key 33): replace a topic's whole set of config overrides (the configs not
named return to the broker's defaults). Kafka deprecates it for IncrementalAlterConfigs;
kafka-python's admin client still sends it. The same checks and answers as
IncrementalAlterConfigs (:mod:`groupcoord.server.handlers.api_044_incremental_alter_configs`).

Version notes: v1 and v2 change no field; v2 is the first flexible version.
"""

from __future__ import annotations

from groupcoord.errors import Errors
from groupcoord.protocol.messages.alter_configs import (
    AlterConfigsRequest,
    AlterConfigsResourceResponse,
    AlterConfigsResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.config_resources import AlterRequest, IncrementalOp, Outcome, serve_alter_configs
from groupcoord.server.registry import RequestContext, handler


def _response(request: AlterConfigsRequest, outcomes: list[Outcome]) -> AlterConfigsResponse:
    return AlterConfigsResponse(responses=[
        AlterConfigsResourceResponse(error_code=error, error_message=message,
                                     resource_type=r.resource_type, resource_name=r.resource_name)
        for r, (error, message) in zip(request.resources, outcomes)
    ])


def _error_response(request: AlterConfigsRequest, version: int, error: Errors) -> AlterConfigsResponse:
    return _response(request, [(error, None)] * len(request.resources))


@handler(AlterConfigsRequest, versions="0-2", error_response=_error_response)
def alter_configs(broker: Broker, request: AlterConfigsRequest, ctx: RequestContext) -> None:
    requests = [
        AlterRequest(r.resource_type, r.resource_name, [(c.name, IncrementalOp.SET, c.value) for c in r.configs])
        for r in request.resources
    ]
    serve_alter_configs(broker, ctx, requests, incremental=False, validate_only=request.validate_only,
                        response=lambda outcomes: _response(request, outcomes))
