"""The yardstick of the compacted view: the coordinator itself, loading the log.

:func:`load` replays log partitions into a real :class:`GroupCoordinator` the way a restart
and ``groupcoord inspect`` do (``begin_loading``, ``replay_records``, ``complete_loading``).
:func:`coordinator_view` and :func:`compacted_view` put what the coordinator then holds and
what a compacted table holds in one shape, so that tests compare them with ``==``:

- ``offsets``: (group, topic, partition) -> (offset of the record that holds it, committed
  offset, leader epoch, metadata, commit timestamp, expire timestamp), -1 for "none";
- ``groups``: group -> (protocol type, generation, protocol, leader, member ids), for groups
  that group metadata describes (the coordinator's trivial groups, Empty with generation 0 and
  no protocol type, made by offset commits alone, are left out).

The coordinator does not serve the new coordinator's record types (3 and up); for those
:func:`latest_other_records` gives what the compacted view must keep: the last record of each
logical key (:func:`groupcoord.format.replay_rules.logical_key`) that has a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.coordinator import GroupCoordinator, MockTime
from groupcoord.log.memory import InMemoryLog
from groupcoord.format.replay_rules import logical_key

View = tuple[dict[tuple[str, str, int], tuple[Any, ...]], dict[str, tuple[Any, ...]]]


def load(partitions: Mapping[int, Iterable[codec.OffsetsRecord]], config: Config | None = None) -> GroupCoordinator:
    """A coordinator that loaded each log partition's records (in offset order)."""
    coordinator = GroupCoordinator(config or Config(), InMemoryLog(), MockTime())
    coordinator.startup(enable_metadata_expiration=False)
    for partition, records in sorted(partitions.items()):
        coordinator.begin_loading(partition)
        coordinator.replay_records(records)
        coordinator.complete_loading(partition)
    return coordinator


def load_bytes(data: bytes, partition: int) -> GroupCoordinator:
    return load({partition: codec.decode_records(data, partition=partition)})


def coordinator_view(coordinator: GroupCoordinator) -> View:
    """What ``coordinator`` holds, in the shape of the module docstring."""
    manager = coordinator.manager
    offsets = {}
    for group_id in manager.offsets.group_ids():
        for tp, committed in manager.offsets.committed(group_id).items():
            o = committed.offset
            offsets[(group_id, tp.topic, tp.partition)] = (
                committed.record_offset, o.committed_offset,
                -1 if o.leader_epoch is None else o.leader_epoch, o.metadata, o.commit_timestamp_ms,
                -1 if o.expire_timestamp_ms is None else o.expire_timestamp_ms,
            )
    groups = {
        g.group_id: (g.protocol_type or "", g.generation_id, g.protocol_name, g.leader_id,
                     tuple(sorted(g.members)))
        for g in manager.current_groups()
        if g.protocol_type is not None or g.generation_id != 0 or g.members
    }
    return offsets, groups


def compacted_view(rows: Iterable[dict[str, Any]]) -> View:
    """:func:`coordinator_view`'s shape of compacted rows (``table.to_pylist()``)."""
    offsets = {}
    groups = {}
    for row in rows:
        if row["record_type"] in (0, 1) and not row["is_tombstone"]:
            offsets[(row["group"], row["topic"], row["key_partition"])] = (
                row["offset"], row["committed_offset"], row["leader_epoch"], row["metadata"],
                row["commit_timestamp"], row["expire_timestamp"],
            )
        elif row["record_type"] == 2 and not row["is_tombstone"]:
            group = (row["protocol_type"], row["generation"], row["protocol"], row["leader"],
                     tuple(sorted(m["member_id"] for m in row["members"])))
            if group[:2] != ("", 0) or group[4]:
                groups[row["group"]] = group
    return offsets, groups


def latest_other_records(records: Iterable[codec.OffsetsRecord]) -> dict[Any, int]:
    """(partition, logical key) -> offset of the last record of each key of a type other than
    0 to 2, for the keys whose last record has a value."""
    latest: dict[Any, codec.OffsetsRecord] = {}
    for r in records:
        if r.key is not None and r.key.record_type > 2:
            latest[(r.partition, logical_key(r.key))] = r
    return {k: r.offset for k, r in latest.items() if r.value is not None}
