"""Topic configs: Kafka's names, types and checks, broker defaults, the LogConfig they make,
and a topic's overrides kept in ``metadata.json``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from groupcoord.config import Config
from groupcoord.server.topics import TopicRegistry
from groupcoord.storage.log_config import LONG_MAX
from groupcoord.storage.topic_config import (
    TOPIC_CONFIGS,
    effective_topic_configs,
    format_value,
    topic_log_config,
    validate_topic_configs,
)


def test_every_config_is_declared_once_in_kafkas_order() -> None:
    names = [d.name for d in TOPIC_CONFIGS]
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    assert {"cleanup.policy", "retention.ms", "retention.bytes", "segment.bytes", "segment.ms",
            "min.compaction.lag.ms", "delete.retention.ms", "max.message.bytes",
            "message.timestamp.type"} <= set(names)


@pytest.mark.parametrize("overrides, message", [
    ({"retention.mss": "1"}, "Unknown topic config name: retention.mss"),
    ({"retention.ms": None}, "Null value not supported"),
    ({"retention.ms": "soon"}, "expected a long"),
    ({"retention.ms": "-2"}, "must be at least -1"),
    ({"segment.bytes": "1000"}, "must be at least 1048576"),
    ({"segment.bytes": str(2**31)}, "expected a int"),
    ({"cleanup.policy": "compact,shred"}, "must be a list of compact, delete"),
    ({"cleanup.policy": ""}, "must be a list of compact, delete"),
    ({"message.timestamp.type": "Now"}, "must be one of CreateTime, LogAppendTime"),
    ({"min.cleanable.dirty.ratio": "1.5"}, "must be between 0 and 1"),
    ({"preallocate": "yes"}, "expected a boolean"),
    ({"compression.type": "lz4"}, "does not recompress"),
    ({"remote.storage.enable": "true"}, "Tiered Storage functionality is disabled"),
    ({"leader.replication.throttled.replicas": "0:x"}, "partition:broker"),
])
def test_bad_values_are_refused_with_the_reason(overrides: dict[str, str | None], message: str) -> None:
    error = validate_topic_configs(overrides)
    assert error is not None and message in error


def test_good_values_pass() -> None:
    assert validate_topic_configs({
        "cleanup.policy": "compact, delete", "retention.ms": "-1", "retention.bytes": "-5",
        "segment.bytes": "1048576", "min.cleanable.dirty.ratio": "0.1", "preallocate": "TRUE",
        "compression.type": "producer", "leader.replication.throttled.replicas": "*",
        "follower.replication.throttled.replicas": "0:1,1:1",
    }) is None


def test_defaults_come_from_the_broker_settings_under_kafkas_names() -> None:
    config = Config.from_properties({
        "log.retention.hours": "2", "log.cleanup.policy": "compact", "log.segment.bytes": "2000000",
        "log.roll.hours": "3", "message.max.bytes": "5000",
    })
    values = effective_topic_configs(config, {})
    assert values["retention.ms"] == 7_200_000
    assert values["cleanup.policy"] == ["compact"]
    assert values["segment.bytes"] == 2_000_000
    assert values["segment.ms"] == 10_800_000
    assert values["max.message.bytes"] == 5000
    assert values["flush.messages"] == LONG_MAX
    assert effective_topic_configs(config.with_overrides({"log.retention.minutes": "3"}), {})[
        "retention.ms"] == 180_000
    assert effective_topic_configs(config.with_overrides({"log.retention.ms": "-7"}), {})[
        "retention.ms"] == -1
    overridden = effective_topic_configs(config, {"retention.ms": "5", "cleanup.policy": "delete,compact"})
    assert overridden["retention.ms"] == 5 and overridden["cleanup.policy"] == ["delete", "compact"]
    assert format_value(overridden["cleanup.policy"]) == "delete,compact"
    assert format_value(values["preallocate"]) == "false"


def test_the_log_config_of_a_topic() -> None:
    config = Config()
    default = topic_log_config(config, {})
    assert (default.delete, default.compact, default.retention_ms, default.retention_bytes) == (
        True, False, 604_800_000, -1)
    assert default.flush.interval_messages == LONG_MAX and default.flush.interval_ms == -1
    assert default.producer_state
    settings = topic_log_config(config, {
        "cleanup.policy": "compact", "retention.bytes": "100", "segment.ms": "60000",
        "message.timestamp.type": "LogAppendTime", "min.compaction.lag.ms": "5",
        "delete.retention.ms": "7", "flush.messages": "1", "flush.ms": "1000",
        "file.delete.delay.ms": "0", "max.message.bytes": "99", "min.cleanable.dirty.ratio": "0.25",
    })
    assert settings.compact and not settings.delete
    assert (settings.retention_bytes, settings.segment_ms, settings.min_compaction_lag_ms,
            settings.delete_retention_ms, settings.file_delete_delay_ms, settings.max_message_bytes,
            settings.min_cleanable_ratio) == (100, 60000, 5, 7, 0, 99, 0.25)
    assert settings.log_append_time
    assert settings.flush.interval_messages == 1 and settings.flush.interval_ms == 1000


def test_a_topics_overrides_are_kept_and_saved_in_order(tmp_path: Path) -> None:
    async def run() -> None:
        registry = TopicRegistry(tmp_path)
        registry.declare("orders", 2)
        changes = [registry.alter_configs("orders", {"retention.ms": str(n)}) for n in range(5)]
        await asyncio.gather(*changes)
        assert registry.get("orders").configs == {"retention.ms": "4"}  # type: ignore[union-attr]
        await registry.alter_configs("orders", {"cleanup.policy": "compact"})

    asyncio.run(run())
    reloaded = TopicRegistry(tmp_path)
    topic = reloaded.get("orders")
    assert topic is not None and topic.partitions == 2 and topic.configs == {"cleanup.policy": "compact"}
    assert reloaded.declare("orders", 3).configs == {"cleanup.policy": "compact"}
