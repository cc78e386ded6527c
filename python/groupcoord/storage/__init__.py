"""The durable ``__consumer_offsets`` log, stored as Kafka stores it.

``DATA_DIR/__consumer_offsets-N/<20-digit base offset>.log`` segments of record batches
(written by the Rust codec), each with a sparse ``.index``; rolled at
``offsets.topic.segment.bytes``; recovered at open by one corruption policy (torn tails
truncated, other damage refusing the partition, interrupted cleanings completed); compacted in
the background with Kafka's cleaner semantics.

Modules, one concern each: :mod:`~groupcoord.storage.segment` (a segment file and batch
headers), :mod:`~groupcoord.storage.index` (the offset index),
:mod:`~groupcoord.storage.partition` (one partition: recovery, append, roll, read),
:mod:`~groupcoord.storage.damage` (the corruption policy: scanning and classifying damage),
:mod:`~groupcoord.storage.repair` (rewriting a damaged partition, ``groupcoord repair``),
:mod:`~groupcoord.storage.flush` (the flush policy), :mod:`~groupcoord.storage.writer` (group
commit off the event loop), :mod:`~groupcoord.storage.cleaner` (compaction),
:mod:`~groupcoord.storage.checkpoint` (Kafka's checkpoint files),
:mod:`~groupcoord.storage.deletion` (deleted partitions' directories, removed later) and
:mod:`~groupcoord.storage.manager` (:class:`LogManager`, the
:class:`~groupcoord.log.PartitionWriter` / :class:`~groupcoord.log.PartitionReader` over a
data directory).
"""

from groupcoord.storage.cleaner import CleanResult, LogCleaner
from groupcoord.storage.flush import FlushPolicy
from groupcoord.storage.manager import LogManager
from groupcoord.storage.partition import LogCorruptError, PartitionLog, read_directory

__all__ = [
    "CleanResult",
    "FlushPolicy",
    "LogCleaner",
    "LogCorruptError",
    "LogManager",
    "PartitionLog",
    "read_directory",
]
