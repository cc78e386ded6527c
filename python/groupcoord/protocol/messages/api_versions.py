"""ApiVersions (key 18), versions 0-4, flexible from 3.

Version notes: v1 adds throttle_time_ms; v3 (flexible) adds the client's software name and
version and the feature tags. The response header is always v0, and a broker answers an
unsupported version with the v0 body (see ``groupcoord.protocol.frames``).
"""

from __future__ import annotations

from groupcoord.protocol.message import Request, Response
from groupcoord.protocol.schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Array,
    Struct,
    field,
)


class ApiVersionsRequest(Request, api_key=18, versions="0-4", flexible="3+"):
    client_software_name: str = field(STRING, versions="3+")
    client_software_version: str = field(STRING, versions="3+")


class ApiVersion(Struct):
    api_key: int = field(INT16)
    min_version: int = field(INT16)
    max_version: int = field(INT16)


class SupportedFeatureKey(Struct):
    name: str = field(STRING, versions="3+")
    min_version: int = field(INT16, versions="3+")
    max_version: int = field(INT16, versions="3+")


class FinalizedFeatureKey(Struct):
    name: str = field(STRING, versions="3+")
    max_version_level: int = field(INT16, versions="3+")
    min_version_level: int = field(INT16, versions="3+")


class ApiVersionsResponse(Response, api_key=18, versions="0-4", flexible="3+"):
    error_code: int = field(INT16)
    api_keys: list[ApiVersion] = field(Array(ApiVersion))
    throttle_time_ms: int = field(INT32, versions="1+")
    supported_features: list[SupportedFeatureKey] = field(
        Array(SupportedFeatureKey), versions="3+", tag=0
    )
    finalized_features_epoch: int = field(INT64, versions="3+", tag=1, default=-1)
    finalized_features: list[FinalizedFeatureKey] = field(
        Array(FinalizedFeatureKey), versions="3+", tag=2
    )
    zk_migration_ready: bool = field(BOOL, versions="3+", tag=3, default=False)
