"""The settings one partition's log runs by (Kafka's ``LogConfig``): how it rolls, indexes,
flushes, validates, keeps and compacts its data. ``__consumer_offsets`` takes them from the
broker's :class:`~groupcoord.config.Config`; a data topic from its topic configs over the
broker's defaults (:func:`groupcoord.storage.topic_config.topic_log_config`). A log's
settings are replaced when its topic's configs change: read ``log.settings`` when it is used.

``__consumer_offsets`` keeps groupcoord's own durability (``log.flush.interval.messages``,
default 1: fsynced before an append is acknowledged) and rolls at
``offsets.topic.segment.bytes``; it is compacted. Data topics keep Kafka's defaults: no fsync
forced per append (a segment is fsynced when rolled and when closed; an acknowledged append
has reached the operating system, which survives the process being killed) and segments of
``log.segment.bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupcoord.config import Config
from groupcoord.storage.flush import FlushPolicy

__all__ = ["LONG_MAX", "LogConfig", "NEVER"]

LONG_MAX = 2**63 - 1
"""Kafka's Long.MAX_VALUE."""
NEVER = LONG_MAX
"""Long.MAX_VALUE as a flush interval: never by count."""


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int
    segment_ms: int
    index_interval_bytes: int
    flush: FlushPolicy
    max_message_bytes: int
    log_append_time: bool = False
    """``message.timestamp.type=LogAppendTime``: the broker stamps each batch."""
    compact: bool = False
    """``cleanup.policy`` includes ``compact``: every record needs a key."""
    producer_state: bool = False
    """Keep idempotent producers' state and its ``.snapshot`` files (data topics)."""
    timestamp_before_max_ms: int = NEVER
    timestamp_after_max_ms: int = NEVER
    delete: bool = False
    """``cleanup.policy`` includes ``delete``: old segments go by retention (and DeleteRecords)."""
    retention_ms: int = -1
    """How long a segment is kept after its largest timestamp; -1: forever."""
    retention_bytes: int = -1
    """The most bytes the log keeps; -1: no limit."""
    delete_retention_ms: int = 86_400_000
    """How long a tombstone that is the latest of its key is kept once cleaned."""
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_ratio: float = 0.5
    file_delete_delay_ms: int = 60_000
    """How long deleted segments' files stay renamed ``.deleted`` before they are removed."""

    @classmethod
    def offsets_topic(cls, config: Config) -> LogConfig:
        return cls(
            segment_bytes=config.offsets_topic_segment_bytes,
            segment_ms=config.segment_roll_ms,
            index_interval_bytes=config.log_index_interval_bytes,
            flush=FlushPolicy.from_config(config),
            max_message_bytes=config.message_max_bytes,
            compact=True,
            delete_retention_ms=config.log_cleaner_delete_retention_ms,
            min_cleanable_ratio=config.log_cleaner_min_cleanable_ratio,
            file_delete_delay_ms=config.log_segment_delete_delay_ms,
        )
