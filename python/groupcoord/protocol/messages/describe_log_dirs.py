"""DescribeLogDirs (key 35), versions 1-5 (Kafka 4 removed 0, KIP-896), flexible from 2.

Version notes: v1 is v0 (a quota may throttle); v2 is the first flexible version; v3 adds a
top-level error code; v4 the total and usable bytes of each directory's volume (KIP-827); v5
whether a directory is cordoned.
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


class DescribableLogDirTopic(Struct):
    topic: str = field(STRING)
    partitions: list[int] = field(Array(INT32))


class DescribeLogDirsRequest(Request, api_key=35, versions="1-5", flexible="2+"):
    topics: list[DescribableLogDirTopic] | None = field(Array(DescribableLogDirTopic), nullable="0+")


class DescribeLogDirsPartition(Struct):
    partition_index: int = field(INT32)
    partition_size: int = field(INT64)
    offset_lag: int = field(INT64)
    is_future_key: bool = field(BOOL)


class DescribeLogDirsTopic(Struct):
    name: str = field(STRING)
    partitions: list[DescribeLogDirsPartition] = field(Array(DescribeLogDirsPartition))


class DescribeLogDirsResult(Struct):
    error_code: int = field(INT16)
    log_dir: str = field(STRING)
    topics: list[DescribeLogDirsTopic] = field(Array(DescribeLogDirsTopic))
    total_bytes: int = field(INT64, versions="4+", default=-1)
    usable_bytes: int = field(INT64, versions="4+", default=-1)
    is_cordoned: bool = field(BOOL, versions="5+", default=False)


class DescribeLogDirsResponse(Response, api_key=35, versions="1-5", flexible="2+"):
    throttle_time_ms: int = field(INT32)
    error_code: int = field(INT16, versions="3+")
    results: list[DescribeLogDirsResult] = field(Array(DescribeLogDirsResult))
