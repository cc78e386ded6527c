"""ApiVersions (key 18): the APIs and versions this node serves, derived from the handler
registry.

Version notes:

- The answer's header is always v0 (clients read it before they know our versions).
- v1+: throttle_time_ms.
- v3+ (flexible): the client names its software; a name or version that is not Kafka's
  pattern (alphanumerics, '.', '-', starting and ending alphanumeric) gets INVALID_REQUEST.
- A version we do not serve (kafka-python 3 opens with v4, librdkafka with v3, against any
  broker) is answered by the connection with Kafka's v0 fallback: error 35 and the table,
  from which the client picks the highest ApiVersions version it can use.
"""

from __future__ import annotations

import re

from groupcoord.errors import Errors
from groupcoord.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, api_versions_table, handler

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def _error_response(request: ApiVersionsRequest, version: int, error: Errors) -> ApiVersionsResponse:
    return ApiVersionsResponse(error_code=error)


@handler(ApiVersionsRequest, versions="0-4", error_response=_error_response)
def api_versions(broker: Broker, request: ApiVersionsRequest, ctx: RequestContext) -> None:
    if ctx.api_version >= 3 and not (
        _SOFTWARE.fullmatch(request.client_software_name)
        and _SOFTWARE.fullmatch(request.client_software_version)
    ):
        ctx.respond(_error_response(request, ctx.api_version, Errors.INVALID_REQUEST))
        return
    ctx.respond(ApiVersionsResponse(api_keys=api_versions_table()))
