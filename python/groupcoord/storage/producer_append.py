"""Idempotent Produce checked on the event loop, before its batches are written.

Kafka checks a batch against the producer state when it appends it, under the log's lock.
Here a Produce is checked on the loop when it arrives while a writer thread appends, and a
producer keeps up to five requests in flight: :class:`ProducerAppendValidator` checks each
append against the durable state
(:class:`~groupcoord.storage.producer_state.ProducerStateManager`) plus the batches it
accepted that are not written yet, which is what the state will be when the append is
written. The rules are Kafka's (:class:`~groupcoord.storage.producer_state.ProducerAppendInfo`).

Its caller, for one partition:

1. ``verdict = validator.validate(batches)``: an error (do not append), a duplicate (do not
   append: answer NONE with ``verdict.duplicate``'s offsets once it is done, at once for a
   batch already written, later for one still in flight), or accepted;
2. appends accepted batches in the order they were accepted; the writer thread applies each
   written batch to the manager (:meth:`ProducerStateManager.update
   <groupcoord.storage.producer_state.ProducerStateManager.update>`);
3. then, on the loop, ``validator.written(verdict.accepted, base_offset)``; or, when the
   partition's log fails, ``validator.failed(error)``: everything in flight is dropped, and
   the partition's state is rebuilt from its log when it is reopened.

No asyncio here: :class:`BatchOutcome` is a callback holder, so the module runs without a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from groupcoord.errors import Errors
from groupcoord.storage.producer_state import (
    NO_PRODUCER_ID,
    AppendOrigin,
    BatchMetadata,
    ProducerAppendInfo,
    ProducerBatch,
    ProducerStateEntry,
    ProducerStateManager,
)

__all__ = ["BatchOutcome", "PendingAppend", "ProducerAppendValidator", "Verdict"]


class BatchOutcome:
    """A batch's place in the log, known now or once it is written: what a retry of it is
    answered. Completed once, on the loop, by :class:`ProducerAppendValidator`; callbacks
    added later run at once."""

    __slots__ = ("base_offset", "last_offset", "timestamp", "error", "_callbacks")

    def __init__(self, metadata: BatchMetadata | None = None) -> None:
        self.base_offset: int | None = None
        self.last_offset: int | None = None
        self.timestamp: int | None = None
        self.error: Errors | None = None
        """Set instead of the offsets when the batch was not written."""
        self._callbacks: list[Callable[[BatchOutcome], None]] | None = []
        if metadata is not None:
            self._complete(metadata.first_offset, metadata.last_offset, metadata.timestamp)

    def done(self) -> bool:
        return self._callbacks is None

    def add_done_callback(self, callback: Callable[[BatchOutcome], None]) -> None:
        if self._callbacks is None:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _complete(self, base_offset: int, last_offset: int, timestamp: int) -> None:
        self.base_offset, self.last_offset, self.timestamp = base_offset, last_offset, timestamp
        self._run()

    def _fail(self, error: Errors) -> None:
        self.error = error
        self._run()

    def _run(self) -> None:
        callbacks, self._callbacks = self._callbacks, None
        for callback in callbacks or ():
            callback(self)


@dataclass
class _InFlight:
    producer_id: int
    key: tuple[int, int, int]
    """(epoch, first sequence, last sequence): how a retry finds it."""
    offset_delta: int
    timestamp: int
    outcome: BatchOutcome = field(default_factory=BatchOutcome)


class PendingAppend:
    """The batches of one accepted append, not yet written."""

    __slots__ = ("batches",)

    def __init__(self, batches: list[_InFlight]) -> None:
        self.batches = batches


class Verdict(NamedTuple):
    """What the validator says of an append: an error (nothing to append), a duplicate (do
    not append; answer NONE with its outcome's offsets once done), or ``accepted`` (append,
    then :meth:`~ProducerAppendValidator.written`)."""

    error: Errors = Errors.NONE
    duplicate: BatchOutcome | None = None
    accepted: PendingAppend | None = None


@dataclass
class _View:
    """A producer with batches in flight: its entry as the log will hold it once they are
    written (their offsets unknown: -1), and the outcomes of those batches."""

    entry: ProducerStateEntry
    in_flight: dict[tuple[int, int, int], _InFlight] = field(default_factory=dict)


class ProducerAppendValidator:
    """Checks a partition's Produce batches on the loop (not thread-safe: the loop's alone)
    against the durable state plus the batches accepted and not yet written."""

    def __init__(self, state: ProducerStateManager) -> None:
        self.state = state
        self._views: dict[int, _View] = {}

    def validate(self, batches: Sequence[ProducerBatch]) -> Verdict:
        """Check one append's batches, in order, as Kafka's ``analyzeAndValidateProducerState``
        does: the first batch that duplicates a retained one makes the whole append that
        duplicate; any refused batch refuses the append. Accepted batches are in flight until
        :meth:`written` or :meth:`failed`."""
        infos: dict[int, ProducerAppendInfo] = {}
        accepted: list[_InFlight] = []
        for batch in batches:
            pid = batch.producer_id
            if pid == NO_PRODUCER_ID or batch.is_control:
                continue
            info = infos.get(pid)
            if info is None:
                view = self._views.get(pid)
                current = view.entry.copy() if view is not None else self.state.last_entry(pid)
                info = infos[pid] = ProducerAppendInfo(pid, current, AppendOrigin.CLIENT)
            # As Kafka: a retry is looked for among the batches before this append.
            duplicate = self._duplicate(pid, info.current, batch)
            if duplicate is not None:
                return Verdict(duplicate=duplicate)
            error = info.check(batch.producer_epoch, batch.base_sequence)
            if error != Errors.NONE:
                return Verdict(error=error)
            info.updated.add_batch(batch.producer_epoch, batch.last_sequence, -1,
                                   batch.last_offset_delta, batch.max_timestamp)
            key = (batch.producer_epoch, batch.base_sequence, batch.last_sequence)
            accepted.append(_InFlight(pid, key, batch.last_offset_delta, batch.max_timestamp))
        for pid, info in infos.items():
            view = self._views.get(pid)
            if view is None:
                view = self._views[pid] = _View(info.updated)
            view.entry = info.updated
        for in_flight in accepted:
            self._views[in_flight.producer_id].in_flight[in_flight.key] = in_flight
        return Verdict(accepted=PendingAppend(accepted))

    def _duplicate(
        self, pid: int, entry: ProducerStateEntry, batch: ProducerBatch
    ) -> BatchOutcome | None:
        found = entry.find_duplicate_batch(batch.producer_epoch, batch.base_sequence,
                                           batch.last_sequence)
        if found is None:
            return None
        view = self._views.get(pid)
        in_flight = None if view is None else view.in_flight.get(
            (batch.producer_epoch, batch.base_sequence, batch.last_sequence))
        if in_flight is not None:
            return in_flight.outcome
        return BatchOutcome(found)

    def written(self, append: PendingAppend, base_offset: int) -> None:
        """``append``'s batches are in the log from ``base_offset`` on (offsets assigned in
        order, each batch right after the previous one) and applied to the durable state:
        their retries get their offsets, and producers with nothing left in flight are read
        from the durable state again."""
        offset = base_offset
        for in_flight in append.batches:
            last = offset + in_flight.offset_delta
            view = self._views.get(in_flight.producer_id)
            if view is not None and view.in_flight.pop(in_flight.key, None) is not None:
                self._place(view.entry, in_flight, last)
                if not view.in_flight:
                    del self._views[in_flight.producer_id]
            in_flight.outcome._complete(offset, last, in_flight.timestamp)
            offset = last + 1

    @staticmethod
    def _place(entry: ProducerStateEntry, in_flight: _InFlight, last_offset: int) -> None:
        epoch, _, last_seq = in_flight.key
        if entry.producer_epoch != epoch:
            return
        for i, batch in enumerate(entry.batches):
            if batch.last_offset < 0 and batch.last_seq == last_seq:
                entry.batches[i] = batch._replace(last_offset=last_offset)

    def failed(self, error: Errors = Errors.KAFKA_STORAGE_ERROR) -> None:
        """The partition's log failed: every batch in flight is dropped (their retries get
        ``error``); the partition is to be reopened, its state rebuilt from the log."""
        views, self._views = self._views, {}
        for view in views.values():
            for in_flight in view.in_flight.values():
                in_flight.outcome._fail(error)

    def in_flight(self) -> int:
        """Batches accepted and not yet written."""
        return sum(len(view.in_flight) for view in self._views.values())
