"""Produce (key 0): record batches appended to the data topics' logs.

Kafka's ``KafkaApis.handleProduceRequest`` and ``ReplicaManager.appendRecords`` on one node:
each partition's batch is validated and appended by
:meth:`~groupcoord.server.replica_manager.ReplicaManager.append_records`; the answer goes
once every partition's append is complete (written, and flushed as the topic's flush policy
asks). With one node the in-sync replica set is this node alone, so ``acks=-1`` waits for
exactly what ``acks=1`` does. ``acks=0`` gets no answer at all; if a partition fails the
connection is closed instead, as Kafka does, so that the client refreshes its metadata. Acks
other than -1, 0 and 1 get INVALID_REQUIRED_ACKS for every partition and nothing is written.
Produce never creates a topic: an unknown one is UNKNOWN_TOPIC_OR_PARTITION.

Version notes: v3 is Kafka 4's lowest that carries data (record batch v2, transactional_id;
librdkafka needs v0-2 advertised, which Kafka 4 then refuses: here too, with
UNSUPPORTED_VERSION); v5+ log_start_offset; v7+ zstd (below: UNSUPPORTED_COMPRESSION_TYPE); v8+
per-record errors and an error message; v13 names topics by topic id (KIP-516): an unknown id
is UNKNOWN_TOPIC_ID.
"""

from __future__ import annotations

from collections.abc import Callable

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from groupcoord.server.broker import Broker
from groupcoord.server.registry import UNEXPECTED_ERROR_MESSAGE, RequestContext, handler
from groupcoord.server.replica_manager import ProduceResult

VALID_ACKS = (-1, 0, 1)
FIRST_RECORD_BATCH_VERSION = 3
FIRST_ZSTD_VERSION = 7
FIRST_TOPIC_ID_VERSION = 13


def _partition_response(index: int, result: ProduceResult) -> PartitionProduceResponse:
    return PartitionProduceResponse(
        index=index, error_code=result.error, base_offset=result.base_offset,
        log_append_time_ms=result.log_append_time_ms, log_start_offset=result.log_start_offset,
        record_errors=[
            BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=m)
            for i, m in result.record_errors
        ],
        error_message=result.message,
    )


def _uniform(request: ProduceRequest, result: ProduceResult) -> ProduceResponse:
    return ProduceResponse(responses=[
        TopicProduceResponse(name=topic.name, topic_id=topic.topic_id, partition_responses=[
            _partition_response(p.index, result) for p in topic.partition_data
        ])
        for topic in request.topic_data
    ])


def _error_response(request: ProduceRequest, version: int, error: Errors) -> ProduceResponse | None:
    if request.acks == 0:
        return None
    return _uniform(request, ProduceResult(error, message=UNEXPECTED_ERROR_MESSAGE))


@handler(ProduceRequest, versions="3-13", error_response=_error_response)
def produce(broker: Broker, request: ProduceRequest, ctx: RequestContext) -> None:
    if request.acks not in VALID_ACKS:
        ctx.respond(_uniform(request, ProduceResult(Errors.INVALID_REQUIRED_ACKS)))
        return
    by_id = ctx.api_version >= FIRST_TOPIC_ID_VERSION
    names: list[str | None] = []
    for topic in request.topic_data:
        if by_id:
            known = broker.topics.by_id(topic.topic_id)
            names.append(known.name if known is not None else None)
        else:
            names.append(topic.name)
    entries = [
        (name, p) for name, topic in zip(names, request.topic_data) for p in topic.partition_data
    ]
    results: list[ProduceResult | None] = [None] * len(entries)
    waiting = len(entries)
    if not waiting:
        ctx.respond(None if request.acks == 0 else ProduceResponse(responses=[]))
        return

    def answer() -> None:
        if request.acks == 0:
            if any(r is not None and r.error != Errors.NONE for r in results):
                ctx.close_connection()
            else:
                ctx.respond(None)
            return
        position = 0
        responses = []
        for topic in request.topic_data:
            partitions = []
            for p in topic.partition_data:
                result = results[position]
                assert result is not None
                partitions.append(_partition_response(p.index, result))
                position += 1
            responses.append(TopicProduceResponse(
                name=topic.name, topic_id=topic.topic_id, partition_responses=partitions,
            ))
        ctx.respond(ProduceResponse(responses=responses))

    def completer(position: int) -> Callable[[ProduceResult], None]:
        def complete(result: ProduceResult) -> None:
            nonlocal waiting
            results[position] = result
            waiting -= 1
            if waiting == 0:
                answer()
        return complete

    allow_zstd = ctx.api_version >= FIRST_ZSTD_VERSION
    for position, (name, p) in enumerate(entries):
        if name is None:
            completer(position)(ProduceResult(Errors.UNKNOWN_TOPIC_ID))
            continue
        broker.replicas.append_records(
            TopicPartition(name, p.index), p.records, client_id=ctx.client_id,
            allow_zstd=allow_zstd, callback=completer(position),
        )
