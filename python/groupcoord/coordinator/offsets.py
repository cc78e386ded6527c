"""Committed offsets: what replaying the offset records of ``__consumer_offsets`` yields.

Kafka's ``OffsetMetadataManager`` state. The only writers are the replay methods,
:meth:`OffsetStore.replay_offset_commit` and :meth:`OffsetStore.replay_end_transaction`; they
run when a partition is loaded and, live, when an append of offset records completes, so the
offsets in memory are always what the log says. Besides, the store counts commits in flight
(appended, not yet complete) so that ``requireStable`` fetches can tell them apart.

Replay rules (offsets-log-format.md §4.6, as Kafka's loader applies them):

* a non-transactional commit replaces the committed offset of its (group, topic, partition);
* a transactional commit is pending under its producer id until that producer's COMMIT marker
  materializes it (only if it is newer in the log than the committed offset) or its ABORT
  marker drops it;
* a tombstone removes the committed offset and the pending ones of every open transaction of
  the group.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from groupcoord.coordinator.results import OffsetAndMetadata, TopicPartition
from groupcoord.format.replay_rules import Transaction


class CommittedOffset(NamedTuple):
    """An offset with the log offset of the record that committed it."""

    offset: OffsetAndMetadata
    record_offset: int


GroupOffsets = dict[TopicPartition, CommittedOffset]

class OffsetStore:
    def __init__(self) -> None:
        self._committed: dict[str, GroupOffsets] = {}
        self._pending_txn: dict[Transaction, dict[str, GroupOffsets]] = {}
        self._open_txns_by_group: defaultdict[str, set[Transaction]] = defaultdict(set)
        self._in_flight: Counter[tuple[str, TopicPartition]] = Counter()
        self._in_flight_by_group: Counter[str] = Counter()

    # --- replay -----------------------------------------------------------------------------

    def replay_offset_commit(
        self,
        record_offset: int,
        transaction: Transaction | None,
        group_id: str,
        tp: TopicPartition,
        offset: OffsetAndMetadata | None,
    ) -> None:
        """Apply one offset record; ``transaction`` is set for a record of a transaction."""
        if offset is not None:
            committed = CommittedOffset(offset, record_offset)
            if transaction is None:
                self._committed.setdefault(group_id, {})[tp] = committed
            else:
                self._pending_txn.setdefault(transaction, {}).setdefault(group_id, {})[tp] = committed
                self._open_txns_by_group[group_id].add(transaction)
            return
        group = self._committed.get(group_id)
        if group is not None:
            group.pop(tp, None)
            if not group:
                del self._committed[group_id]
        for transaction in self._open_txns_by_group.get(group_id, ()):
            self._pending_txn[transaction].get(group_id, {}).pop(tp, None)

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

    # --- commits in flight ------------------------------------------------------------------

    def begin_commit(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self._in_flight[(group_id, tp)] += 1
            self._in_flight_by_group[group_id] += 1

    def end_commit(self, group_id: str, tps: Iterable[TopicPartition]) -> None:
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

    def has_commits_in_flight(self, group_id: str) -> bool:
        return group_id in self._in_flight_by_group

    def num_offsets(self, group_id: str) -> int:
        return len(self._committed.get(group_id, {}))

    def group_ids(self) -> Iterator[str]:
        """Groups with committed offsets or open transactions."""
        return iter(set(self._committed) | set(self._open_txns_by_group))

    def open_transactions(self, group_id: str) -> set[Transaction]:
        return set(self._open_txns_by_group.get(group_id, ()))

    def expired(
        self,
        group_id: str,
        now_ms: int,
        retention_ms: int,
        base_timestamp: Callable[[OffsetAndMetadata], int],
        subscribed_topics: frozenset[str] = frozenset(),
    ) -> list[TopicPartition]:
        """Offsets due for expiry (KIP-211): an explicit expire timestamp that has passed, or
        ``retention_ms`` elapsed since ``base_timestamp``; never an offset of a subscribed topic
        or one with a commit pending."""
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
