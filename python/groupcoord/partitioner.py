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


@lru_cache(maxsize=1 << 16)
def partition_for(group_id: str, num_partitions: int) -> int:
    """``Utils.abs(groupId.hashCode()) % num_partitions``; ``Utils.abs`` maps MIN_VALUE to 0."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be at least 1, not {num_partitions}")
    h = java_string_hash(group_id)
    return (0 if h == -0x80000000 else abs(h)) % num_partitions
