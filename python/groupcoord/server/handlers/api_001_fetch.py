"""Fetch (key 1): records read from the topics' logs, long-polled in the purgatory.

Kafka's ``KafkaApis.handleFetchRequest`` and ``ReplicaManager.fetchMessages`` for a consumer
on one node: each partition is read (:meth:`ReplicaManager.read`: whole stored batches from
the one holding the fetch offset, never a record decoded) in request order, each at most its
``partition_max_bytes`` and all together at most ``max_bytes`` (capped by ``fetch.max.bytes``),
except that the first batch of the first partition with data is sent whole however large
(KIP-74). The answer goes at once when ``max_wait_ms`` <= 0, nothing was asked, a partition is
in error, or ``min_bytes`` were found; otherwise the Fetch waits as a DelayedFetch
(:mod:`groupcoord.server.delayed_fetch`) until an append brings ``min_bytes`` or
``max_wait_ms`` passes, then reads again and answers. Records are never null (librdkafka
rejects a null record set).

Version notes:

- v4+: isolation_level, last_stable_offset and aborted transactions (null for
  read_uncommitted, empty for read_committed: no transaction is ever aborted here); v5+
  log_start_offset.

``__consumer_offsets`` is read as any topic, from the logs the coordinator writes, up to their
high watermark: a commit is readable once its append is acknowledged (written and fsynced as
``log.flush.interval.messages`` asks), never before. Its partitions this node does not own
answer NOT_LEADER_OR_FOLLOWER, as Kafka answers a partition led elsewhere. Its last stable
offset is its high watermark too: groupcoord writes no transactional offset commit (it serves
no TxnOffsetCommit), and the log does not track the transactions of a Kafka log copied in
(read_committed then reads them as read_uncommitted would).
- v7+: incremental fetch sessions (KIP-227, :mod:`groupcoord.server.fetch_sessions`): a
  session's later requests name only what changed, and its answers hold only the partitions
  with something new. A parked Fetch updates its session when it answers.
- v11+: preferred_read_replica, always -1.
- v13+: topics are named by topic id (from Metadata v10+) instead of by name.
- v15+: the replica id moves into the tagged replica_state; v17 replica_directory_id; v18 a
  follower's high watermark (KIP-1166), a tagged field consumers do not send.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from uuid import UUID

from groupcoord.errors import Errors
from groupcoord.log import TopicPartition
from groupcoord.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from groupcoord.protocol.primitives import ZERO_UUID
from groupcoord.server.broker import Broker
from groupcoord.server.fetch_sessions import FetchAnswer, PartitionRequest, TopicKey
from groupcoord.server.registry import RequestContext, handler
from groupcoord.server.replica_manager import ReadResult
from groupcoord.server.topics import TopicRegistry

NO_SESSION = 0
NO_OFFSET = -1
READ_COMMITTED = 1


def _failed(partition: int, error: Errors) -> PartitionData:
    return PartitionData(
        partition_index=partition, error_code=error, high_watermark=NO_OFFSET,
        last_stable_offset=NO_OFFSET, log_start_offset=NO_OFFSET, aborted_transactions=None,
        records=b"",
    )


def _error_response(request: FetchRequest, version: int, error: Errors) -> FetchResponse:
    return FetchResponse(error_code=error, session_id=NO_SESSION, responses=[
        FetchableTopicResponse(
            topic=wanted.topic, topic_id=wanted.topic_id,
            partitions=[_failed(p.partition, error) for p in wanted.partitions],
        )
        for wanted in request.topics
    ])


class _TopicNames(Mapping[UUID, str]):
    """Topic names by id, as the session cache asks for them (a view of the registry)."""

    def __init__(self, topics: TopicRegistry) -> None:
        self._topics = topics

    def __getitem__(self, topic_id: UUID) -> str:
        topic = self._topics.by_id(topic_id)
        if topic is None:
            raise KeyError(topic_id)
        return topic.name

    def __iter__(self) -> Iterator[UUID]:
        offsets = self._topics.offsets_topic
        yield from (topic.topic_id for topic in self._topics)
        if offsets is not None:
            yield offsets.topic_id

    def __len__(self) -> int:
        return len(self._topics) + (self._topics.offsets_topic is not None)


def _key(broker: Broker, name: str, topic_id: UUID, partition: int, by_id: bool) -> TopicKey:
    if not by_id:
        return TopicKey(name, ZERO_UUID, partition)
    topic = broker.topics.by_id(topic_id)
    return TopicKey(topic.name if topic is not None else None, topic_id, partition)


def _answer(answer: FetchAnswer[PartitionData]) -> FetchResponse:
    """The answer's partitions grouped by topic, in order, as Kafka groups them."""
    responses: list[FetchableTopicResponse] = []
    for key, data in answer.partitions:
        last = responses[-1] if responses else None
        if last is None or (last.topic, last.topic_id) != (key.topic or "", key.topic_id):
            last = FetchableTopicResponse(topic=key.topic or "", topic_id=key.topic_id, partitions=[])
            responses.append(last)
        last.partitions.append(data)
    return FetchResponse(error_code=answer.error, session_id=answer.session_id, responses=responses)


@handler(FetchRequest, versions="0-18", error_response=_error_response)
def fetch(broker: Broker, request: FetchRequest, ctx: RequestContext) -> None:
    by_id = ctx.api_version >= 13
    replicas = broker.replicas
    context = broker.fetch_sessions.new_context(
        request.session_id, request.session_epoch,
        [
            (_key(broker, entry.topic, entry.topic_id, p.partition, by_id), PartitionRequest(
                p.fetch_offset, p.partition_max_bytes, p.log_start_offset, p.current_leader_epoch,
                p.last_fetched_epoch,
            ))
            for entry in request.topics for p in entry.partitions
        ],
        [
            _key(broker, entry.topic, entry.topic_id, partition, by_id)
            for entry in request.forgotten_topics_data for partition in entry.partitions
        ],
        uses_topic_ids=by_id, is_follower=False,
        topic_names=_TopicNames(broker.topics) if by_id else None,
    )
    if context.error is not None:
        ctx.respond(FetchResponse(error_code=context.error, session_id=NO_SESSION))
        return
    wanted = context.partitions_to_read()
    max_bytes = min(request.max_bytes, broker.config.fetch_max_bytes)
    min_bytes = min(request.min_bytes, max_bytes)
    committed = ctx.api_version >= 4 and request.isolation_level == READ_COMMITTED
    unknown = Errors.UNKNOWN_TOPIC_ID if by_id else Errors.UNKNOWN_TOPIC_OR_PARTITION

    def read() -> tuple[dict[TopicKey, PartitionData], int, bool]:
        """Each partition's answer as of now, the bytes they carry, and whether one failed."""
        left = max_bytes
        min_one = True
        total = 0
        failed = False
        results: dict[TopicKey, PartitionData] = {}
        for key, wants in wanted:
            if key.topic is None or not broker.topics.readable(key.topic):
                failed = True
                results[key] = _failed(key.partition, unknown)
                continue
            result: ReadResult = replicas.read(
                TopicPartition(key.topic, key.partition), wants.fetch_offset,
                max(0, min(wants.max_bytes, left)), min_one=min_one,
            )
            if result.error != Errors.NONE:
                failed = True
                results[key] = _failed(key.partition, result.error)
                continue
            size = len(result.records)
            if size:
                min_one = False
                left -= size
                total += size
            results[key] = PartitionData(
                partition_index=key.partition, high_watermark=result.high_watermark,
                last_stable_offset=result.last_stable_offset, log_start_offset=result.log_start_offset,
                aborted_transactions=[] if committed else None, records=result.records,
            )
        return results, total, failed

    results, total, failed = read()
    if failed or not wanted or request.max_wait_ms <= 0 or total >= min_bytes:
        ctx.respond(_answer(context.respond(results)))
        return
    watched = [
        (TopicPartition(key.topic, key.partition), wants.fetch_offset, wants.max_bytes)
        for key, wants in wanted if key.topic is not None
    ]

    def satisfied() -> bool:
        found = 0
        for tp, offset, partition_max in watched:
            available = replicas.bytes_available(tp, offset, partition_max)
            if available is None:
                return True
            found += available
        return found >= min_bytes

    def respond() -> None:
        ctx.respond(_answer(context.respond(read()[0])))

    drop = broker.fetches.park(request.max_wait_ms, [tp for tp, _, _ in watched], satisfied, respond)
    if drop is not None:
        ctx.on_disconnect(drop)
