"""Which ``__consumer_offsets`` partition owns a group: Kafka's ``partitionFor``."""

from __future__ import annotations

from functools import lru_cache


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: ``31*h + unit`` over UTF-16 code units, as a signed int32."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


CACHED_GROUP_ID_LENGTH = 256
"""Group ids up to this long have their partition cached: any client may name any group id
(up to 32,767 bytes), so caching longer ones would let clients pin memory."""


def partition_for(group_id: str, num_partitions: int) -> int:
    """``Utils.abs(groupId.hashCode()) % num_partitions``; ``Utils.abs`` maps MIN_VALUE to 0."""
    if len(group_id) <= CACHED_GROUP_ID_LENGTH:
        return _cached_partition_for(group_id, num_partitions)
    return _partition_for(group_id, num_partitions)


def _partition_for(group_id: str, num_partitions: int) -> int:
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be at least 1, not {num_partitions}")
    h = java_string_hash(group_id)
    return (0 if h == -0x80000000 else abs(h)) % num_partitions


_cached_partition_for = lru_cache(maxsize=1 << 16)(_partition_for)
