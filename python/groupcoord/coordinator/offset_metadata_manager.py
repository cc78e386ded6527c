"""Committed offsets: their state, their records and the decisions that are about offsets.

Kafka's ``OffsetMetadataManager``. Its state is what replaying the offset records of
``__consumer_offsets`` yields: the only writers are :meth:`OffsetMetadataManager.replay` and
:meth:`OffsetMetadataManager.replay_end_transaction`, run when a partition is loaded and, live,
by the write path when an append of offset records completes, so the offsets in memory are
always what the log says. Besides, it counts commits in flight (appended, not yet complete) so
that ``requireStable`` fetches can tell them apart.

Its decisions are those about offsets alone (whether a member may commit is the group's,
:meth:`ClassicGroup.validate_offset_commit`): which partitions of a commit are written
(``offset.metadata.max.bytes``) and their records (:meth:`OffsetMetadataManager.commit_offsets`),
what a fetch answers, which offsets expire, their tombstones.

Replay rules, as Kafka's ``OffsetMetadataManager.replay`` and ``replayEndTransactionMarker``
apply them:

* a non-transactional commit replaces the committed offset of its (group, topic, partition);
* a transactional commit is pending under its producer id until that producer's COMMIT marker
  materializes it (only if it is newer in the log than the committed offset) or its ABORT
  marker drops it;
* a tombstone removes the committed offset and the pending ones of every open transaction of
  the group.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple
from uuid import UUID

from groupcoord.config import Config
from groupcoord.coordinator.group import ClassicGroup, GroupState
from groupcoord.coordinator.records import (
    CoordinatorRecord,
    offset_commit_record,
    offset_commit_tombstone,
)
from groupcoord.coordinator.results import OffsetAndMetadata, PartitionOffset, TopicPartition
from groupcoord.coordinator.write_path import (
    OFFSET_COMMIT_APPEND,
    AppendOptions,
    CoordinatorResult,
)
from groupcoord.errors import Errors, offset_commit_append_error_to_response_error
from groupcoord.format import codec
from groupcoord.format.replay_rules import Transaction

log = logging.getLogger(__name__)


class CommittedOffset(NamedTuple):
    """An offset with the log offset of the record that committed it."""

    offset: OffsetAndMetadata
    record_offset: int


GroupOffsets = dict[TopicPartition, CommittedOffset]


def java_length(text: str) -> int:
    """Java's ``String.length()`` of ``text``: UTF-16 code units, so two for each character
    beyond U+FFFF (an emoji), which Kafka's metadata limit counts."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if c > "\uffff")


def offset_from_value(value: codec.OffsetCommitValue) -> OffsetAndMetadata:
    leader_epoch, expire_timestamp = value.leader_epoch, value.expire_timestamp
    return OffsetAndMetadata(
        value.offset,
        value.metadata,
        value.commit_timestamp,
        None if leader_epoch == -1 else leader_epoch,
        None if expire_timestamp == -1 else expire_timestamp,
    )


class OffsetMetadataManager:
    def __init__(self, config: Config) -> None:
        self.config = config
        self._committed: dict[str, GroupOffsets] = {}
        self._pending_txn: dict[Transaction, dict[str, GroupOffsets]] = {}
        self._open_txns_by_group: defaultdict[str, set[Transaction]] = defaultdict(set)
        self._in_flight: Counter[tuple[str, TopicPartition]] = Counter()
        self._in_flight_by_group: Counter[str] = Counter()
        self.offset_commits = 0
        """Offsets committed (records appended) since start, for metrics."""
        self.offsets_expired = 0

    # --- replay -----------------------------------------------------------------------------

    def replay(
        self,
        record_offset: int,
        transaction: Transaction | None,
        key: codec.OffsetCommitKey,
        value: object,
    ) -> None:
        """Apply one offset record; ``transaction`` is set for a record of a transaction."""
        tp = TopicPartition(key.topic, key.partition)
        group_id = key.group
        if type(value) is codec.OffsetCommitValue:
            committed = CommittedOffset(offset_from_value(value), record_offset)
            if transaction is None:
                self._committed.setdefault(group_id, {})[tp] = committed
            else:
                self._pending_txn.setdefault(transaction, {}).setdefault(group_id, {})[tp] = committed
                self._open_txns_by_group[group_id].add(transaction)
            return
        if value is not None:
            log.warning("Skipping offset record at %d with an undecodable value", record_offset)
            return
        group = self._committed.get(group_id)
        if group is not None:
            group.pop(tp, None)
            if not group:
                del self._committed[group_id]
        for open_transaction in self._open_txns_by_group.get(group_id, ()):
            self._pending_txn[open_transaction].get(group_id, {}).pop(tp, None)

    def replay_end_transaction(self, transaction: Transaction, commit: bool) -> None:
        """Apply a transaction marker: it ends what the producer wrote to the marker's own
        partition (the transaction's offsets in other partitions wait for their markers)."""
        pending = self._pending_txn.pop(transaction, None)
        if pending is None:
            return
        for group_id, offsets in pending.items():
            open_txns = self._open_txns_by_group.get(group_id)
            if open_txns is not None:
                open_txns.discard(transaction)
                if not open_txns:
                    del self._open_txns_by_group[group_id]
            if not commit:
                continue
            group = self._committed.setdefault(group_id, {})
            for tp, committed in offsets.items():
                existing = group.get(tp)
                if existing is None or committed.record_offset > existing.record_offset:
                    group[tp] = committed
            if not group:
                del self._committed[group_id]

    # --- OffsetCommit and TxnOffsetCommit ---------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        options: AppendOptions = OFFSET_COMMIT_APPEND,
        topic_id: Callable[[str], UUID | None] | None = None,
    ) -> CoordinatorResult[dict[TopicPartition, Errors]]:
        """The offset commits to append, for a group allowed to commit; they are applied to
        memory when the append completes (``options`` name the producer of a transactional
        commit). ``topic_id`` looks up the id each record carries (an OffsetCommit's; Kafka
        writes none for a TxnOffsetCommit).

        A partition whose metadata is longer than ``offset.metadata.max.bytes`` (counted as
        Java's ``String.length()``, see :func:`java_length`) gets OFFSET_METADATA_TOO_LARGE and
        is not written; the others are.
        """
        max_metadata = self.config.offset_metadata_max_bytes
        if _metadata_fits(offsets, max_metadata):
            valid: Mapping[TopicPartition, OffsetAndMetadata] = offsets
            statuses = dict.fromkeys(offsets, Errors.NONE)
        else:
            valid = {tp: o for tp, o in offsets.items() if java_length(o.metadata) <= max_metadata}
            statuses = {
                tp: Errors.NONE if tp in valid else Errors.OFFSET_METADATA_TOO_LARGE for tp in offsets
            }
            if not valid:
                return CoordinatorResult((), statuses)
        records = [offset_commit_record(group_id, tp, o, None if topic_id is None else topic_id(tp.topic))
                   for tp, o in valid.items()]
        tps = tuple(valid)
        # In flight, transactional or not, a commit makes a stable fetch answer
        # UNSTABLE_OFFSET_COMMIT and keeps the group alive (Kafka marks a transactional one
        # pending before its append, in prepareTxnOffsetCommit).
        self._begin_commit(group_id, tps)

        def on_append(error: Errors) -> None:
            self._end_commit(group_id, tps)
            if error is Errors.NONE:
                self.offset_commits += len(records)
            else:
                log.debug("Offset commit of group %s failed: %s", group_id, error.name)

        return CoordinatorResult(records, statuses, error_response=_commit_error_response,
                                 on_append=on_append, append_options=options)

    def _begin_commit(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self._in_flight[(group_id, tp)] += 1
            self._in_flight_by_group[group_id] += 1

    def _end_commit(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            key = (group_id, tp)
            if self._in_flight[key] <= 1:
                self._in_flight.pop(key, None)
            else:
                self._in_flight[key] -= 1
            if self._in_flight_by_group[group_id] <= 1:
                self._in_flight_by_group.pop(group_id, None)
            else:
                self._in_flight_by_group[group_id] -= 1

    # --- OffsetFetch ------------------------------------------------------------------------

    def fetch_offsets(
        self,
        group_id: str,
        require_stable: bool,
        partitions: Sequence[TopicPartition] | None,
    ) -> dict[TopicPartition, PartitionOffset]:
        """The committed offsets of ``partitions`` (all of the group's if None). Never a stale
        offset: with ``require_stable`` a partition with a commit in flight or in an open
        transaction answers UNSTABLE_OFFSET_COMMIT."""
        if partitions is None:
            partitions = list(self.offsets(group_id))
        result = {}
        for tp in partitions:
            if require_stable and self.has_pending(group_id, tp):
                result[tp] = PartitionOffset(error=Errors.UNSTABLE_OFFSET_COMMIT)
                continue
            offset = self.offset(group_id, tp)
            result[tp] = (
                PartitionOffset()
                if offset is None
                else PartitionOffset(offset.committed_offset, offset.leader_epoch, offset.metadata)
            )
        return result

    # --- expiry and deletion ----------------------------------------------------------------

    def expired_offsets(self, group: ClassicGroup, now_ms: int, retention_ms: int) -> list[TopicPartition]:
        """The offsets of ``group`` due for expiry (KIP-211, Kafka's
        ``offsetExpirationCondition``): an explicit expire timestamp that has passed, or
        ``retention_ms`` elapsed since the commit, or, for an Empty group, since it became
        empty; never an offset of a topic a Stable consumer group subscribes to, nor one with a
        commit pending."""
        group_id = group.group_id
        if group.protocol_type is not None and group.is_in(GroupState.EMPTY):
            # Counted from when the group became empty (commit time for old records).
            state_ts = group.current_state_timestamp
            return self._expired(
                group_id, now_ms, retention_ms,
                lambda o: state_ts if state_ts is not None else o.commit_timestamp_ms,
            )
        if (
            group.is_consumer_group
            and group.subscribed_topics is not None
            and group.is_in(GroupState.STABLE)
        ):
            return self._expired(
                group_id, now_ms, retention_ms, lambda o: o.commit_timestamp_ms,
                group.subscribed_topics,
            )
        if group.protocol_type is None:
            return self._expired(group_id, now_ms, retention_ms, lambda o: o.commit_timestamp_ms)
        return []

    def expired_consumer_group_offsets(
        self, group_id: str, now_ms: int, retention_ms: int, subscribed_topics: frozenset[str]
    ) -> list[TopicPartition]:
        """The offsets of a consumer group (KIP-848) due for expiry: ``retention_ms`` elapsed
        since the commit, never an offset of a topic a member subscribes to (Kafka's
        ``ConsumerGroup.offsetExpirationCondition``)."""
        return self._expired(group_id, now_ms, retention_ms, lambda o: o.commit_timestamp_ms, subscribed_topics)

    def _expired(
        self,
        group_id: str,
        now_ms: int,
        retention_ms: int,
        base_timestamp: Callable[[OffsetAndMetadata], int],
        subscribed_topics: frozenset[str] = frozenset(),
    ) -> list[TopicPartition]:
        expired = []
        for tp, committed in self._committed.get(group_id, {}).items():
            if tp.topic in subscribed_topics or self.has_pending(group_id, tp):
                continue
            offset = committed.offset
            if offset.expire_timestamp_ms is not None:
                due = now_ms >= offset.expire_timestamp_ms
            else:
                due = now_ms - base_timestamp(offset) >= retention_ms
            if due:
                expired.append(tp)
        return expired

    @staticmethod
    def tombstones(group_id: str, tps: Iterable[TopicPartition]) -> list[CoordinatorRecord]:
        """The records that delete the offsets of ``tps``; they leave memory when replayed."""
        return [offset_commit_tombstone(group_id, tp) for tp in tps]

    def is_left_without_offsets(self, group_id: str, removed: Sequence[TopicPartition]) -> bool:
        """Nothing of the group would be left once ``removed`` (committed offsets) are deleted:
        no other committed offset, no open transaction, no commit in flight."""
        return (
            self.num_offsets(group_id) == len(removed)
            and not self._open_txns_by_group.get(group_id)
            and group_id not in self._in_flight_by_group
        )

    # --- queries ----------------------------------------------------------------------------

    def offset(self, group_id: str, tp: TopicPartition) -> OffsetAndMetadata | None:
        committed = self._committed.get(group_id, {}).get(tp)
        return committed.offset if committed is not None else None

    def offsets(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: c.offset for tp, c in self._committed.get(group_id, {}).items()}

    def committed(self, group_id: str) -> GroupOffsets:
        return dict(self._committed.get(group_id, {}))

    def pending_transactional(self) -> dict[Transaction, dict[str, GroupOffsets]]:
        """Open transactions' offsets, by transaction and group (for inspection and tests)."""
        return {t: {g: dict(o) for g, o in groups.items()} for t, groups in self._pending_txn.items()}

    def has_pending(self, group_id: str, tp: TopicPartition) -> bool:
        """A commit of ``tp`` is in flight or part of an open transaction."""
        if (group_id, tp) in self._in_flight:
            return True
        return any(
            tp in self._pending_txn[transaction].get(group_id, {})
            for transaction in self._open_txns_by_group.get(group_id, ())
        )

    def has_offsets(self, group_id: str) -> bool:
        """Committed, in-flight or transactional offsets exist for the group."""
        return (
            bool(self._committed.get(group_id))
            or group_id in self._open_txns_by_group
            or group_id in self._in_flight_by_group
        )

    def num_offsets(self, group_id: str) -> int:
        return len(self._committed.get(group_id, {}))

    def group_ids(self) -> Iterator[str]:
        """Groups with committed offsets or open transactions."""
        return iter(set(self._committed) | set(self._open_txns_by_group))

    # --- unload -----------------------------------------------------------------------------

    def remove_group(self, group_id: str) -> None:
        """Forget everything about the group (its partition emigrated)."""
        self._committed.pop(group_id, None)
        for transaction in self._open_txns_by_group.pop(group_id, set()):
            groups = self._pending_txn.get(transaction, {})
            groups.pop(group_id, None)
            if not groups:
                self._pending_txn.pop(transaction, None)
        for key in [k for k in self._in_flight if k[0] == group_id]:
            del self._in_flight[key]
        self._in_flight_by_group.pop(group_id, None)


def _metadata_fits(offsets: Mapping[TopicPartition, OffsetAndMetadata], max_metadata: int) -> bool:
    for offset in offsets.values():
        if java_length(offset.metadata) > max_metadata:
            return False
    return True


def _commit_error_response(
    statuses: dict[TopicPartition, Errors], error: Errors
) -> dict[TopicPartition, Errors]:
    """The partitions written answer the failed append's error (Kafka 3's
    ``maybeConvertOffsetCommitError``); those not written keep theirs."""
    mapped = offset_commit_append_error_to_response_error(error)
    return {tp: mapped if e is Errors.NONE else e for tp, e in statuses.items()}
