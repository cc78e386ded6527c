"""DescribeLogDirs (key 35): the one log directory, the data directory, and the partitions in
it: every open partition of every topic and of ``__consumer_offsets``, its size the bytes of
its segments, its offset lag 0 (the log end offset is the high watermark's but for appends
being written; no future logs). A topic or partition not here is left out, as Kafka leaves it
out; a null topic list asks for every partition, an empty one for none.

Version notes: v1 is v0; v2 is the first flexible version; v3 adds a top-level error code;
v4 the total and usable bytes of the directory's file system (``statvfs``: usable is what an
unprivileged process may use, as Java's ``FileStore.getUsableSpace``); v5 whether the
directory is cordoned (never here).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler


def _error_response(request: DescribeLogDirsRequest, version: int, error: Errors) -> DescribeLogDirsResponse:
    """The error at the top (v3+, Kafka's ``getErrorResponse``) and, so that v1 and v2 carry
    it too, on the one log directory's entry."""
    return DescribeLogDirsResponse(error_code=error, results=[DescribeLogDirsResult(error_code=error, log_dir="")])


def _wanted(broker: Broker, request: DescribeLogDirsRequest) -> Iterable[TopicPartition]:
    open_logs = broker.replicas.logs.open_logs()
    if request.topics is None:
        return sorted(open_logs)
    wanted = dict.fromkeys(
        TopicPartition(t.topic, p) for t in request.topics for p in t.partitions
    )
    return [tp for tp in wanted if tp in open_logs]


@handler(DescribeLogDirsRequest, versions="1-5", error_response=_error_response)
def describe_log_dirs(broker: Broker, request: DescribeLogDirsRequest, ctx: RequestContext) -> None:
    logs = broker.replicas.logs
    topics: dict[str, DescribeLogDirsTopic] = {}
    for tp in _wanted(broker, request):
        log = logs.log(tp)
        if log is None:
            continue
        topic = topics.setdefault(tp.topic, DescribeLogDirsTopic(name=tp.topic, partitions=[]))
        topic.partitions.append(DescribeLogDirsPartition(
            partition_index=tp.partition, partition_size=log.size, offset_lag=0,
        ))
    directory = logs.data_dir.resolve()
    result = DescribeLogDirsResult(log_dir=str(directory), topics=list(topics.values()))
    if ctx.api_version >= 4:
        volume = os.statvfs(directory)
        result.total_bytes = volume.f_blocks * volume.f_frsize
        result.usable_bytes = volume.f_bavail * volume.f_frsize
    ctx.respond(DescribeLogDirsResponse(results=[result]))
