"""When the log is fsynced, and what an acknowledged append is promised.

Kafka's two settings, as its log applies them:

``log.flush.interval.messages`` = N
    fsync a partition once N records are unflushed. With N = 1 (groupcoord's default; Kafka's
    is Long.MAX) every append is fsynced before its callback runs: an acknowledged commit
    survives a crash of the machine. With N > 1 an append completes once written to the
    operating system: it survives the process being killed, and reaches the disk with the
    fsync that follows at most N - 1 records later (or by the time rule).

``log.flush.interval.ms`` = T
    also fsync a partition that has unflushed records T ms after its last fsync. -1 (the
    default) leaves flushing to the message count.

Whatever the settings, a rolled segment is fsynced when it is rolled (which moves the
recovery point), and a partition is fsynced when it is closed. Appends made in one turn of
the event loop go out as one batch per partition and share one fsync (group commit).
"""

from __future__ import annotations

from dataclasses import dataclass

from groupcoord.config import Config

__all__ = ["FlushPolicy"]


@dataclass(frozen=True)
class FlushPolicy:
    interval_messages: int = 1
    interval_ms: int = -1

    @classmethod
    def from_config(cls, config: Config) -> FlushPolicy:
        return cls(config.log_flush_interval_messages, config.log_flush_interval_ms)

    def flush_due(self, unflushed_messages: int, ms_since_last_flush: float) -> bool:
        """Whether a partition with this many unflushed records must be fsynced now."""
        if unflushed_messages <= 0:
            return False
        if unflushed_messages >= self.interval_messages:
            return True
        return 0 <= self.interval_ms <= ms_since_last_flush

    def ms_until_due(self, unflushed_messages: int, ms_since_last_flush: float) -> float | None:
        """How long until the time rule makes a flush due (None: it never will by itself)."""
        if unflushed_messages <= 0 or self.interval_ms < 0:
            return None
        return max(0.0, self.interval_ms - ms_since_last_flush)
