"""The compacted view of a ``__consumer_offsets`` log: what the coordinator holds after
replaying it.

Input: rows of :func:`groupcoord.format.codec.decode_arrow` (the history, one row per record),
each log partition's rows in offset order, in as many record batches as convenient.
Output: the rows that are still the truth, in the same schema, one per live key, ordered by
(partition, offset). The rules are the coordinator's replay, stated in
:mod:`groupcoord.format.replay_rules` (pending transactional commits, markers, tombstones, logical
keys), whose Arrow forms this module uses.

Replaying those rules in order gives the same state as this order-free formulation, which is
how :class:`Compactor` computes it with Arrow kernels and no per-row Python work: per key,
among the *visible* events (records with a value, transactional ones only once committed, and
tombstones), the one with the highest offset wins; the key is live when that one has a value.
Transaction markers are the only thing carried between chunks: pending commits wait in the
state until a later chunk's marker resolves them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from groupcoord.format import columns as C
from groupcoord.format.records import OFFSET_COMMIT_TYPES, RecordType
from groupcoord.format.replay_rules import (
    ARROW_KEY_COLUMNS,
    ARROW_TRANSACTION_COLUMNS,
    KEY_KIND,
    logical_key_columns,
    pending_mask,
)

__all__ = ["Compactor", "CompactedState", "compact", "compacted_state"]

_ORDER = "_order"


def _resolve(pending: Any, markers: Any) -> tuple[Any, Any]:
    """Split ``pending`` rows into (committed, still pending) by the first marker of their
    transaction (``ARROW_TRANSACTION_COLUMNS``) at a later offset in ``markers``; aborted rows
    are dropped."""
    if pending.num_rows == 0 or markers.num_rows == 0:
        return pending.slice(0, 0), pending
    columns = ARROW_TRANSACTION_COLUMNS
    n, m = pending.num_rows, markers.num_rows
    probe = pa.table({
        **{c: pending.column(c) for c in columns},
        C.OFFSET: pending.column(C.OFFSET),
        "row": pa.array(range(n), pa.int64()),
        **{f"marker_{c}": pa.nulls(n, pending.schema.field(c).type) for c in columns},
        "marker_commit": pa.nulls(n, pa.bool_()),
    })
    marks = pa.table({
        **{c: markers.column(c) for c in columns},
        C.OFFSET: markers.column(C.OFFSET),
        "row": pa.nulls(m, pa.int64()),
        **{f"marker_{c}": markers.column(c) for c in columns},
        "marker_commit": pc.equal(markers.column(C.CONTROL), C.COMMIT),
    })
    # Each pending row, then the next marker of its transaction, if any, in sort order.
    both = pa.concat_tables([probe, marks]).sort_by([(c, "ascending") for c in (*columns, C.OFFSET)])
    same = None
    for c in columns:
        equal = pc.equal(pc.fill_null_backward(both.column(f"marker_{c}")), both.column(c))
        same = equal if same is None else pc.and_(same, equal)
    same = pc.fill_null(same, False)
    next_commit = pc.fill_null_backward(both.column("marker_commit"))
    is_probe = pc.is_valid(both.column("row"))
    committed_rows = pc.filter(both.column("row"), pc.and_(is_probe, pc.and_(same, pc.fill_null(next_commit, False))))
    open_rows = pc.filter(both.column("row"), pc.and_(is_probe, pc.invert(same)))
    return pending.take(committed_rows), pending.take(open_rows)


def _latest_per_key(rows: Any) -> Any:
    """The row with the highest offset of each logical key (``rows`` carry ``_key_kind``)."""
    if rows.num_rows == 0:
        return rows
    ordered = rows.sort_by([(C.PARTITION, "ascending"), (C.OFFSET, "ascending")])
    ordered = ordered.append_column(_ORDER, pa.array(range(ordered.num_rows), pa.int64()))
    last = ordered.group_by(list(ARROW_KEY_COLUMNS), use_threads=False).aggregate([(_ORDER, "max")])
    keep = pc.sort_indices(last.column(f"{_ORDER}_max"))
    return ordered.take(pc.take(last.column(f"{_ORDER}_max"), keep)).drop_columns([_ORDER])


@dataclass
class Compactor:
    """Folds history rows, chunk by chunk, into the compacted view.

    Feed each log partition's chunks in offset order (chunks of different partitions may
    interleave); :meth:`result` is exact whatever the chunking. Memory: one row per key seen
    and the transactional commits still pending (the settled rows), plus buffered rows until
    they number ``reduce_rows`` or as many as the settled rows, whichever is more (so that
    reducing costs linear time), plus the copies a reduction makes: a few times the settled
    rows at its peak.
    """

    reduce_rows: int = 1 << 18
    _settled: Any = None
    _pending: Any = None
    _markers: list[Any] = field(default_factory=list)
    _buffer: list[Any] = field(default_factory=list)
    _buffered: int = 0
    _last_offsets: dict[int, int] = field(default_factory=dict)

    def add(self, rows: Any) -> None:
        """Add a ``pyarrow.RecordBatch`` or ``Table`` of history rows.

        Raises ValueError if a partition's rows go back in offset order.
        """
        if rows.num_rows == 0:
            return
        table = rows if isinstance(rows, pa.Table) else pa.Table.from_batches([rows])
        spans = table.group_by("partition").aggregate([("offset", "min"), ("offset", "max")])
        for partition, first, last in zip(*(spans.column(c).to_pylist()
                                            for c in ("partition", "offset_min", "offset_max"))):
            if first <= self._last_offsets.get(partition, -2):
                hint = (" (segments outside a __consumer_offsets-N directory all count as partition -1: "
                        "name their directories by partition)" if partition == -1 else "")
                raise ValueError(f"rows of log partition {partition} are not in offset order: offset {first} "
                                 f"after {self._last_offsets[partition]}: the compacted view reads each "
                                 f"partition's log once, in offset order{hint}")
            self._last_offsets[partition] = last
        self._buffer.append(rows)
        self._buffered += rows.num_rows
        settled = 0 if self._settled is None else self._settled.num_rows
        if self._buffered >= max(settled, self.reduce_rows):
            self._reduce()

    def _reduce(self) -> None:
        if not self._buffer:
            return
        chunk = logical_key_columns(pa.Table.from_batches(
            [b for t in self._buffer for b in (t.to_batches() if isinstance(t, pa.Table) else [t])]
        ))
        self._buffer, self._buffered = [], 0
        control = chunk.column(C.CONTROL)
        markers = chunk.filter(pc.is_in(control, pa.array([C.COMMIT, C.ABORT])))
        if markers.num_rows:
            self._markers.append(markers)
        data = chunk.filter(pc.and_(pc.is_null(control), pc.is_valid(chunk.column(C.RECORD_TYPE))))
        waits = pending_mask(data)
        pending = data.filter(waits)
        if self._pending is not None:
            pending = pa.concat_tables([self._pending, pending])
        committed, self._pending = _resolve(pending, markers)
        parts = [data.filter(pc.invert(waits)), committed]
        if self._settled is not None:
            parts.insert(0, self._settled)
        self._settled = _latest_per_key(pa.concat_tables(parts))

    def reduced(self) -> Any:
        """The rows that still matter to what follows, by (partition, offset): per key the
        latest applied record or tombstone, the transactional commits still pending, and every
        transaction marker (``None`` if nothing was added).

        Compacting the ``reduced()`` rows of consecutive runs of a log, in offset order, gives
        what compacting the whole log gives: that is how the log's runs can be reduced by
        different tasks and finished in one (:func:`groupcoord.spark.compacted`).
        """
        self._reduce()
        if self._settled is None:
            return None
        parts = [self._settled, *self._markers] + ([self._pending] if self._pending is not None else [])
        return (pa.concat_tables(parts).drop_columns([KEY_KIND])
                .sort_by([(C.PARTITION, "ascending"), (C.OFFSET, "ascending")]))

    def result(self) -> Any:
        """The live rows (``pyarrow.Table`` of the input's schema), by (partition, offset)."""
        self._reduce()
        if self._settled is None:
            return None
        live = self._settled.filter(pc.invert(self._settled.column(C.IS_TOMBSTONE)))
        return live.drop_columns([KEY_KIND])


def compact(batches: Iterable[Any], schema: Any = None) -> Any:
    """The compacted view of history rows (record batches or tables, each log partition's in
    offset order) as a ``pyarrow.Table`` of their schema (``schema`` when there are none)."""
    compactor = Compactor()
    for batch in batches:
        compactor.add(batch)
    result = compactor.result()
    if result is None:
        if schema is None:
            from groupcoord.format.codec import arrow_schema

            schema = arrow_schema()
        return schema.empty_table()
    return result


@dataclass(frozen=True)
class CompactedState:
    """The compacted view as the coordinator's maps, for comparing with its loaded state.

    ``offsets``: (group, topic, partition) -> (committed offset, leader epoch, metadata,
    commit timestamp, expire timestamp). ``groups``: group -> (protocol type, generation,
    protocol, leader, member ids). ``other``: the remaining live rows as dicts.
    """

    offsets: dict[tuple[str, str, int], tuple[int, int, str, int, int]]
    groups: dict[str, tuple[str, int, str | None, str | None, tuple[str, ...]]]
    other: list[dict[str, Any]]


def compacted_state(table: Any) -> CompactedState:
    """:class:`CompactedState` of a compacted table (per-row Python: for tests and reports)."""
    offsets: dict[tuple[str, str, int], tuple[int, int, str, int, int]] = {}
    groups: dict[str, tuple[str, int, str | None, str | None, tuple[str, ...]]] = {}
    other: list[dict[str, Any]] = []
    for row in table.to_pylist():
        if row[C.RECORD_TYPE] in OFFSET_COMMIT_TYPES and row[C.COMMITTED_OFFSET] is not None:
            offsets[(row[C.GROUP], row[C.TOPIC], row[C.KEY_PARTITION])] = (
                row[C.COMMITTED_OFFSET], row[C.LEADER_EPOCH], row[C.METADATA],
                row[C.COMMIT_TIMESTAMP], row[C.EXPIRE_TIMESTAMP],
            )
        elif row[C.RECORD_TYPE] == RecordType.GROUP_METADATA and row[C.GENERATION] is not None:
            members = tuple(m[C.MEMBER_ID] for m in row[C.MEMBERS] or [])
            groups[row[C.GROUP]] = (row[C.PROTOCOL_TYPE], row[C.GENERATION], row[C.PROTOCOL],
                                    row[C.LEADER], members)
        else:
            other.append(row)
    return CompactedState(offsets, groups, other)
