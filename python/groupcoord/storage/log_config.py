"""The settings one partition's log runs by (Kafka's ``LogConfig``): how it rolls, indexes,
flushes and validates, taken once from the broker's :class:`~groupcoord.config.Config` for
``__consumer_offsets`` and for data topics.

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

__all__ = ["LogConfig", "NEVER"]

NEVER = 2**63 - 1
"""Kafka's Long.MAX_VALUE, as a flush interval: never by count."""


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
    retention_ms: int = -1
    """``retention.ms``: segments whose newest record is older go (-1: unlimited)."""
    retention_bytes: int = -1
    """``retention.bytes``: the oldest segments go while the log is larger (-1: unlimited)."""
    delete: bool = False
    """``cleanup.policy`` includes ``delete``: retention by time and size applies."""
    delete_retention_ms: int = 86_400_000
    """``delete.retention.ms``: how long the cleaner keeps a tombstone once it kept it."""
    min_compaction_lag_ms: int = 0
    """``min.compaction.lag.ms``: no record younger is compacted away."""
    max_compaction_lag_ms: int = NEVER
    """``max.compaction.lag.ms``: a log with dirty records older is cleaned whatever its ratio."""
    min_cleanable_ratio: float = 0.5
    """``min.cleanable.dirty.ratio``."""
    file_delete_delay_ms: int = 60_000
    """``file.delete.delay.ms``: how long a deleted segment's files stay, renamed ``.deleted``."""

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
            min_compaction_lag_ms=config.log_cleaner_min_compaction_lag_ms,
            max_compaction_lag_ms=config.log_cleaner_max_compaction_lag_ms,
            min_cleanable_ratio=config.log_cleaner_min_cleanable_ratio,
            file_delete_delay_ms=config.log_segment_delete_delay_ms,
        )

    @classmethod
    def data_topic(cls, config: Config) -> LogConfig:
        return cls(
            segment_bytes=config.log_segment_bytes,
            segment_ms=config.segment_roll_ms,
            index_interval_bytes=config.log_index_interval_bytes,
            flush=FlushPolicy(interval_messages=NEVER, interval_ms=-1),
            max_message_bytes=config.message_max_bytes,
            log_append_time=config.log_message_timestamp_type == "LogAppendTime",
            producer_state=True,
            timestamp_before_max_ms=config.log_message_timestamp_before_max_ms,
            timestamp_after_max_ms=config.log_message_timestamp_after_max_ms,
            compact="compact" in config.cleanup_policy,
            delete="delete" in config.cleanup_policy,
            retention_ms=config.retention_ms,
            retention_bytes=config.log_retention_bytes,
            delete_retention_ms=config.log_cleaner_delete_retention_ms,
            min_compaction_lag_ms=config.log_cleaner_min_compaction_lag_ms,
            max_compaction_lag_ms=config.log_cleaner_max_compaction_lag_ms,
            min_cleanable_ratio=config.log_cleaner_min_cleanable_ratio,
            file_delete_delay_ms=config.log_segment_delete_delay_ms,
        )
