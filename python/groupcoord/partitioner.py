"""Which ``__consumer_offsets`` partition owns a group: Kafka's ``partitionFor``,
``Utils.abs(groupId.hashCode()) % offsets.topic.num_partitions``.

Both functions are the Rust core's: Java's ``String.hashCode`` runs over UTF-16 code units,
which the core reads from the Python string's own storage, so that loading or unloading a
partition can afford to ask for every group in memory.
"""

from __future__ import annotations

from groupcoord._native import java_string_hash, partition_for

__all__ = ["java_string_hash", "partition_for"]
