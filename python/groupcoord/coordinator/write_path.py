"""The one write path: append a handler's records, replay them, then complete its response.

Kafka's ``CoordinatorResult`` and ``CoordinatorRuntime.scheduleWriteOperation``. A handler
validates and decides (changing only what records do not hold: a group's state, a commit's
in-flight mark) and returns a :class:`CoordinatorResult`: the records to append and the
response. :meth:`WritePath.schedule_write` appends the records to a ``__consumer_offsets``
partition; when the log reports the append complete it replays them into memory through the
shard's ``replay``, the function that loading a partition uses (so memory is what replaying the
log yields), runs the result's continuation, and completes the response, or, if the append
failed, the response the result maps the log's error to. A transaction marker is a result too,
with no records.

Group metadata records are written with ``replay_records=False``, as Kafka writes a classic
group's: the live group (mid-rebalance, with parked requests) is their source and already ahead
of them; loading a partition replays them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Generic, Literal, NamedTuple, Protocol, TypeVar

from groupcoord.coordinator.clock import Time
from groupcoord.coordinator.records import CoordinatorRecord
from groupcoord.errors import Errors, append_error_to_response_error
from groupcoord.format.replay_rules import NO_PRODUCER_ID, Transaction, is_pending, transaction_of
from groupcoord.log import NO_SEQUENCE, Append, AppendError, PartitionWriter

T = TypeVar("T")
K = TypeVar("K")


class AppendOptions(NamedTuple):
    """How the records are appended: their batch's producer, and whether it is a marker."""

    producer_id: int = NO_PRODUCER_ID
    """A producer id makes the batch transactional: its offset commits wait for the marker."""
    producer_epoch: int = -1
    base_sequence: int = NO_SEQUENCE
    """0 for offset commits, as Kafka 3.9's ``storeOffsets`` builds their batch; none for group
    metadata and tombstones, which it writes with ``MemoryRecords.withRecords``."""
    control: Literal["commit", "abort"] | None = None
    """``"commit"`` or ``"abort"``: a transaction marker of ``producer_id`` (no records)."""


PLAIN_APPEND = AppendOptions()
OFFSET_COMMIT_APPEND = AppendOptions(base_sequence=0)


@dataclass(slots=True)
class CoordinatorResult(Generic[T]):
    """What a handler decided: the records to append and the response to complete. Not
    changed once made (not frozen: a frozen dataclass takes three times as long to make, and
    every OffsetCommit makes one)."""

    records: Sequence[CoordinatorRecord]
    response: T
    """The answer once the append is complete, or at once when there is nothing to append."""
    error_response: Callable[[T, Errors], T] | None = None
    """The answer when the append fails: from ``response`` and the log's error (Kafka maps the
    error per request). Required when there is something to append."""
    on_append: Callable[[Errors], None] | None = None
    """Run once the append completed (``Errors.NONE``) or failed (the log's error), after the
    replay and before the response is completed (Kafka's ``appendFuture``)."""
    replay_records: bool = True
    append_options: AppendOptions = PLAIN_APPEND


def group_append_error(response: Errors, error: Errors) -> Errors:
    """``error_response`` of a group metadata or tombstone write: Kafka's
    ``appendGroupMetadataErrorToResponseError``."""
    return append_error_to_response_error(error)


def log_append_error(response: Errors, error: Errors) -> Errors:
    """``error_response`` that answers the log's own error (a transaction marker's)."""
    return error


class CoordinatorShard(Protocol):
    """What the write path needs of the state it writes for (Kafka's ``CoordinatorShard``)."""

    owned_partitions: set[int]

    def epoch(self, partition: int) -> int:
        """Bumped each time ``partition`` is loaded or unloaded."""
        ...

    def replay(self, record_offset: int, transaction: Transaction | None, key: object,
               value: object, loading_partition: int = -1) -> None: ...

    def replay_end_transaction(self, partition: int, producer_id: int, commit: bool) -> None: ...


class WritePath:
    """Appends results to the partitions a shard owns (Kafka's ``scheduleWriteOperation``)."""

    def __init__(self, writer: PartitionWriter, time: Time, shard: CoordinatorShard) -> None:
        self._writer = writer
        self._time = time
        self._shard = shard

    def schedule_write(
        self, partition: int, result: CoordinatorResult[T], callback: Callable[[T], None]
    ) -> None:
        """Append ``result`` to ``partition``; on success replay what was written (unless the
        partition was given up, or given up and taken again, meanwhile: its memory then no
        longer follows this write), run the continuation, then give ``callback`` the response.
        A partition not owned fails the write with NOT_LEADER_OR_FOLLOWER, at once."""
        records = result.records
        options = result.append_options
        if not records and options.control is None:
            _complete(result, callback, Errors.NONE)
            return
        shard = self._shard
        if partition not in shard.owned_partitions:
            _complete(result, callback, Errors.NOT_LEADER_OR_FOLLOWER)
            return
        epoch = shard.epoch(partition)
        producer_id = options.producer_id
        transactional = options.control is None and is_pending(producer_id)

        def completed(outcome: int | AppendError) -> None:
            if isinstance(outcome, AppendError):
                _complete(result, callback, outcome.error)
                return
            if (
                result.replay_records
                and partition in shard.owned_partitions
                and shard.epoch(partition) == epoch
            ):
                if options.control is not None:
                    shard.replay_end_transaction(partition, producer_id, options.control == "commit")
                else:
                    transaction = transaction_of(producer_id, partition) if transactional else None
                    replay = shard.replay
                    for i, record in enumerate(records):
                        replay(outcome + i, transaction, record.key, record.value)
            _complete(result, callback, Errors.NONE)

        append = Append(
            records=[record.encode() for record in records],
            timestamp=self._time.milliseconds(),
            producer_id=producer_id,
            producer_epoch=options.producer_epoch,
            base_sequence=options.base_sequence,
            transactional=transactional,
            control=options.control,
        )
        self._writer.append(partition, append, completed)

    def schedule_writes(
        self,
        writes: Sequence[tuple[int, K, CoordinatorResult[T]]],
        callback: Callable[[list[tuple[K, T]]], None],
    ) -> None:
        """Several writes, each ``(partition, key, result)``: once every one is answered,
        ``callback`` gets their keys and responses in the order they were answered (at once
        for results with nothing to append)."""
        if not writes:
            callback([])
            return
        answers: list[tuple[K, T]] = []

        def answered(key: K, response: T) -> None:
            answers.append((key, response))
            if len(answers) == len(writes):
                callback(answers)

        for partition, key, result in writes:
            self.schedule_write(partition, result, partial(answered, key))


def _complete(result: CoordinatorResult[T], callback: Callable[[T], None], error: Errors) -> None:
    if result.on_append is not None:
        result.on_append(error)
    if error is Errors.NONE:
        callback(result.response)
        return
    error_response = result.error_response
    assert error_response is not None, "a result that writes must say how a failed append answers"
    callback(error_response(result.response, error))
