"""DeleteRecords (key 21, versions 0-2): move partitions' log start offsets forward.

Kafka's ``ReplicaManager.deleteRecords`` on one node (see
:meth:`~groupcoord.server.replica_manager.ReplicaManager.delete_records`): each partition's
log start offset moves to the offset asked for (-1: the high watermark) at once, so reads
below it get OFFSET_OUT_OF_RANGE; the answer carries the new low watermark (the log start
offset). The segments wholly below it are deleted in the background.

The answer waits until every moved log start offset is checkpointed (durable), at most
``timeout_ms``: a partition not checkpointed by then gets REQUEST_TIMED_OUT (its log start
offset has moved all the same, as in Kafka where a timed-out deletion may still happen). With
``timeout_ms`` <= 0 the answer does not wait, as Kafka's does not.

Version notes: v1 is v0 (answered before throttling); v2 is flexible.
"""

from __future__ import annotations

import asyncio

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.delete_records import (
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopicResult,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext, handler

NO_WATERMARK = -1
_answering: set[asyncio.Future[None]] = set()
"""Answers waiting for checkpoints (a reference keeps each task alive until it answers)."""


def _error_response(request: DeleteRecordsRequest, version: int, error: Errors) -> DeleteRecordsResponse:
    return DeleteRecordsResponse(topics=[
        DeleteRecordsTopicResult(name=topic.name, partitions=[
            DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=NO_WATERMARK, error_code=error,
            )
            for p in topic.partitions
        ])
        for topic in request.topics
    ])


@handler(DeleteRecordsRequest, versions="0-2", error_response=_error_response)
def delete_records(broker: Broker, request: DeleteRecordsRequest, ctx: RequestContext) -> None:
    results: list[tuple[str, list[tuple[int, Errors, int, asyncio.Future[None] | None]]]] = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            error, low, written = broker.replicas.delete_records(
                TopicPartition(topic.name, p.partition_index), p.offset
            )
            partitions.append((p.partition_index, error, low, written))
        results.append((topic.name, partitions))

    def answer() -> None:
        ctx.respond(DeleteRecordsResponse(topics=[
            DeleteRecordsTopicResult(name=name, partitions=[
                DeleteRecordsPartitionResult(
                    partition_index=index,
                    low_watermark=low if error == Errors.NONE else NO_WATERMARK,
                    error_code=error,
                )
                for index, error, low, _ in partitions
            ])
            for name, partitions in results
        ]))

    pending = {w for _, partitions in results for _, _, _, w in partitions if w is not None}
    if not pending or request.timeout_ms <= 0:
        answer()
        return

    async def wait_and_answer() -> None:
        await asyncio.wait(pending, timeout=request.timeout_ms / 1000)
        for _, partitions in results:
            for i, (index, error, low, written) in enumerate(partitions):
                if written is None:
                    continue
                if not written.done():
                    partitions[i] = (index, Errors.REQUEST_TIMED_OUT, low, written)
                elif written.cancelled() or written.exception() is not None:
                    partitions[i] = (index, Errors.KAFKA_STORAGE_ERROR, low, written)
        answer()

    task = asyncio.ensure_future(wait_and_answer())
    _answering.add(task)
    task.add_done_callback(_answering.discard)
