"""Kafka's topic configs (``TopicConfig``, ``LogConfig``), each declared once as data.

A topic keeps only its overrides (``retention.ms=3600000``), as strings, the way clients send
them; every other config takes its value from the broker's synonym (``log.retention.ms``,
the broker-level default under Kafka's name) or, where groupcoord has no such broker
setting, Kafka's own default. :func:`topic_log_config` turns a topic's overrides into the
:class:`~groupcoord.storage.log_config.LogConfig` its partitions' logs run by.

What groupcoord acts on: ``cleanup.policy``, ``retention.ms``, ``retention.bytes``,
``segment.bytes``, ``segment.ms``, ``min.compaction.lag.ms``, ``max.compaction.lag.ms``,
``delete.retention.ms``, ``min.cleanable.dirty.ratio``, ``file.delete.delay.ms``,
``max.message.bytes``, ``message.timestamp.*``, ``index.interval.bytes``, ``flush.messages``
and ``flush.ms``. The others are accepted, kept and described as Kafka does, with no effect
on one node without tiered storage (replication throttles, ``min.insync.replicas``,
``unclean.leader.election.enable``, ``local.retention.*``, ``preallocate``,
``segment.index.bytes``, ``segment.jitter.ms``, compression levels); two are refused where
Kafka would act and groupcoord cannot: ``compression.type`` other than ``producer`` (the
broker does not recompress) and ``remote.storage.enable=true`` (no tiered storage, refused
as Kafka refuses it when the broker has none).
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from groupcoord.config import Config, attribute_name
from groupcoord.storage.flush import FlushPolicy
from groupcoord.storage.log_config import LONG_MAX, LogConfig

__all__ = [
    "ConfigType",
    "TOPIC_CONFIGS",
    "TopicConfigDef",
    "effective_topic_configs",
    "format_value",
    "parse_topic_config",
    "topic_log_config",
    "validate_topic_configs",
]

INT_MAX = 2**31 - 1


class ConfigType(enum.IntEnum):
    """Kafka's ``ConfigDef.Type`` as DescribeConfigs v3+ numbers it."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


Check = Callable[[Any], "str | None"]


def at_least(low: int) -> Check:
    return lambda v: None if v >= low else f"must be at least {low}"


def between(low: int, high: int) -> Check:
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def one_of(*choices: str) -> Check:
    return lambda v: None if v in choices else f"must be one of {', '.join(choices)}"


def each_of(*choices: str) -> Check:
    return lambda v: None if set(v) <= set(choices) and v else f"must be a list of {', '.join(choices)}"


_THROTTLED = re.compile(r"\*|([0-9]+:[0-9]+)(,[0-9]+:[0-9]+)*|")


def throttled_replicas(value: list[str]) -> str | None:
    return None if _THROTTLED.fullmatch(",".join(value)) else "must be * or a list of partition:broker"


def _gzip_level(v: int) -> str | None:
    return None if v == -1 or 1 <= v <= 9 else "must be -1 or between 1 and 9"


@dataclass(frozen=True)
class TopicConfigDef:
    """One topic config: its Kafka name and type, its broker synonym (a groupcoord setting
    named as Kafka names it) or Kafka's default, and the values it accepts."""

    name: str
    type: ConfigType
    doc: str
    broker: str | None = None
    """The broker setting whose value is this config's default (Kafka's primary synonym)."""
    default: Any = None
    """The default where there is no broker synonym."""
    check: Check | None = None
    refuse: Callable[[Any], str | None] | None = None
    """A value Kafka accepts that groupcoord cannot honour, and why."""

    def default_value(self, config: Config) -> Any:
        if self.name in _DERIVED:
            return _DERIVED[self.name](config)
        if self.broker is not None:
            return getattr(config, attribute_name(self.broker))
        return self.default


_DERIVED: dict[str, Callable[[Config], Any]] = {
    "retention.ms": lambda c: c.retention_ms,
    "segment.ms": lambda c: c.segment_roll_ms,
    "cleanup.policy": lambda c: [p.strip() for p in c.log_cleanup_policy.split(",")],
}
"""Defaults computed from several broker settings (``log.retention.hours`` and the rest)."""

T = ConfigType
TOPIC_CONFIGS: tuple[TopicConfigDef, ...] = (
    TopicConfigDef("cleanup.policy", T.LIST, "delete: old segments go by retention.ms and "
                   "retention.bytes; compact: the cleaner keeps the latest record per key; or both.",
                   broker="log.cleanup.policy", check=each_of("compact", "delete")),
    TopicConfigDef("compression.gzip.level", T.INT, "Gzip level when the broker recompresses.",
                   default=-1, check=_gzip_level),
    TopicConfigDef("compression.lz4.level", T.INT, "LZ4 level when the broker recompresses.",
                   default=9, check=between(1, 17)),
    TopicConfigDef("compression.type", T.STRING, "Compression of stored batches; producer keeps "
                   "the producer's.", default="producer",
                   check=one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
                   refuse=lambda v: None if v == "producer" else
                   "groupcoord stores batches as produced and does not recompress them"),
    TopicConfigDef("compression.zstd.level", T.INT, "Zstandard level when the broker recompresses.",
                   default=3, check=between(-131072, 22)),
    TopicConfigDef("delete.retention.ms", T.LONG, "How long a compacted topic keeps a tombstone "
                   "once it is the latest record of its key.",
                   broker="log.cleaner.delete.retention.ms", check=at_least(0)),
    TopicConfigDef("file.delete.delay.ms", T.LONG, "How long a deleted segment's files stay, "
                   "renamed .deleted, before they are removed.",
                   broker="log.segment.delete.delay.ms", check=at_least(0)),
    TopicConfigDef("flush.messages", T.LONG, "Records appended between two fsyncs of a partition.",
                   default=LONG_MAX, check=at_least(1)),
    TopicConfigDef("flush.ms", T.LONG, "Most milliseconds between two fsyncs of a partition.",
                   default=LONG_MAX, check=at_least(0)),
    TopicConfigDef("follower.replication.throttled.replicas", T.LIST, "Replicas throttled on the "
                   "follower side (no effect on one node).", default=[], check=throttled_replicas),
    TopicConfigDef("index.interval.bytes", T.INT, "Bytes of log between two offset index entries.",
                   broker="log.index.interval.bytes", check=at_least(0)),
    TopicConfigDef("leader.replication.throttled.replicas", T.LIST, "Replicas throttled on the "
                   "leader side (no effect on one node).", default=[], check=throttled_replicas),
    TopicConfigDef("local.retention.bytes", T.LONG, "Tiered storage's local retention.bytes "
                   "(no tiered storage: -2 follows retention.bytes).", default=-2, check=at_least(-2)),
    TopicConfigDef("local.retention.ms", T.LONG, "Tiered storage's local retention.ms "
                   "(no tiered storage: -2 follows retention.ms).", default=-2, check=at_least(-2)),
    TopicConfigDef("max.compaction.lag.ms", T.LONG, "Longest a record stays uncompacted before "
                   "its log is cleaned whatever its dirty ratio.",
                   broker="log.cleaner.max.compaction.lag.ms", check=at_least(1)),
    TopicConfigDef("max.message.bytes", T.INT, "The largest record batch the topic accepts.",
                   broker="message.max.bytes", check=at_least(0)),
    TopicConfigDef("message.timestamp.after.max.ms", T.LONG, "How far after the broker's clock a "
                   "CreateTime timestamp may be.", broker="log.message.timestamp.after.max.ms",
                   check=at_least(0)),
    TopicConfigDef("message.timestamp.before.max.ms", T.LONG, "How far before the broker's clock a "
                   "CreateTime timestamp may be.", broker="log.message.timestamp.before.max.ms",
                   check=at_least(0)),
    TopicConfigDef("message.timestamp.type", T.STRING, "CreateTime keeps the producer's "
                   "timestamps; LogAppendTime stamps each batch with the broker's clock.",
                   broker="log.message.timestamp.type", check=one_of("CreateTime", "LogAppendTime")),
    TopicConfigDef("min.cleanable.dirty.ratio", T.DOUBLE, "Dirty fraction of a compacted log "
                   "above which the cleaner cleans it.", broker="log.cleaner.min.cleanable.ratio",
                   check=between(0, 1)),
    TopicConfigDef("min.compaction.lag.ms", T.LONG, "How old a record must be before the cleaner "
                   "may compact it away.", broker="log.cleaner.min.compaction.lag.ms",
                   check=at_least(0)),
    TopicConfigDef("min.insync.replicas", T.INT, "In-sync replicas an acks=all write needs "
                   "(one node: one).", default=1, check=at_least(1)),
    TopicConfigDef("preallocate", T.BOOLEAN, "Preallocate segment files (no effect here).",
                   default=False),
    TopicConfigDef("remote.log.copy.disable", T.BOOLEAN, "Tiered storage: stop copying segments "
                   "to remote storage.", default=False),
    TopicConfigDef("remote.log.delete.on.disable", T.BOOLEAN, "Tiered storage: delete remote "
                   "data when it is disabled.", default=False),
    TopicConfigDef("remote.storage.enable", T.BOOLEAN, "Tiered storage for the topic.",
                   default=False, refuse=lambda v: None if not v else
                   "Tiered Storage functionality is disabled in the broker"),
    TopicConfigDef("retention.bytes", T.LONG, "The most bytes a partition keeps before its oldest "
                   "segments are deleted; -1: no limit.", broker="log.retention.bytes"),
    TopicConfigDef("retention.ms", T.LONG, "How long a segment is kept after its newest record; "
                   "-1: forever.", broker="log.retention.ms", check=at_least(-1)),
    TopicConfigDef("segment.bytes", T.INT, "Size at which a partition's segment is rolled.",
                   broker="log.segment.bytes", check=at_least(1_048_576)),
    TopicConfigDef("segment.index.bytes", T.INT, "Size of a segment's offset index (no effect "
                   "here: indexes grow as needed).", default=10_485_760, check=at_least(4)),
    TopicConfigDef("segment.jitter.ms", T.LONG, "Random jitter subtracted from segment.ms (no "
                   "effect here).", default=0, check=at_least(0)),
    TopicConfigDef("segment.ms", T.LONG, "Age at which a partition's segment is rolled.",
                   broker="log.roll.ms", check=at_least(1)),
    TopicConfigDef("unclean.leader.election.enable", T.BOOLEAN, "Elect a replica outside the ISR "
                   "(no effect on one node).", default=False),
)
"""Every topic config Kafka 4 describes, in its order (alphabetical)."""
del T

TOPIC_CONFIGS_BY_NAME: dict[str, TopicConfigDef] = {d.name: d for d in TOPIC_CONFIGS}


def parse_topic_config(definition: TopicConfigDef, raw: str) -> Any:
    """``raw`` as a value of ``definition``'s type (Kafka's ``ConfigDef.parseType``).

    Raises:
        ValueError: not a value of that type, or one the config does not take.
    """
    text = raw.strip()
    kind = definition.type
    value: Any
    try:
        if kind is ConfigType.BOOLEAN:
            if text.lower() not in ("true", "false"):
                raise ValueError
            value = text.lower() == "true"
        elif kind in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
            value = int(text)
            bound = INT_MAX if kind is ConfigType.INT else 2**15 - 1 if kind is ConfigType.SHORT else LONG_MAX
            if not -bound - 1 <= value <= bound:
                raise ValueError
        elif kind is ConfigType.DOUBLE:
            value = float(text)
            if not math.isfinite(value):
                raise ValueError
        elif kind is ConfigType.LIST:
            value = [item.strip() for item in text.split(",")] if text else []
        else:
            value = text
    except ValueError:
        raise ValueError(f"Invalid value {raw} for configuration {definition.name}: "
                         f"expected a {kind.name.lower()}") from None
    for rule in (definition.check, definition.refuse):
        reason = rule(value) if rule is not None else None
        if reason is not None:
            raise ValueError(f"Invalid value {raw} for configuration {definition.name}: {reason}")
    return value


def validate_topic_configs(overrides: Mapping[str, str | None]) -> str | None:
    """Why ``overrides`` cannot be a topic's configs (INVALID_CONFIG's message), or None."""
    for name, raw in overrides.items():
        definition = TOPIC_CONFIGS_BY_NAME.get(name)
        if definition is None:
            return f"Unknown topic config name: {name}"
        if raw is None:
            return f"Null value not supported for topic configs: {name}"
        try:
            parse_topic_config(definition, raw)
        except ValueError as error:
            return str(error)
    return None


def effective_topic_configs(config: Config, overrides: Mapping[str, str]) -> dict[str, Any]:
    """Every topic config's value: the topic's override, else its broker default."""
    return {
        d.name: parse_topic_config(d, overrides[d.name]) if d.name in overrides else d.default_value(config)
        for d in TOPIC_CONFIGS
    }


def format_value(value: Any) -> str:
    """A config value as Kafka's DescribeConfigs writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def topic_log_config(config: Config, overrides: Mapping[str, str]) -> LogConfig:
    """The :class:`LogConfig` of a data topic with these overrides (already validated)."""
    values = effective_topic_configs(config, overrides)
    policy = values["cleanup.policy"]
    return LogConfig(
        segment_bytes=values["segment.bytes"],
        segment_ms=values["segment.ms"],
        index_interval_bytes=values["index.interval.bytes"],
        flush=FlushPolicy(
            interval_messages=values["flush.messages"],
            interval_ms=-1 if values["flush.ms"] == LONG_MAX else values["flush.ms"],
        ),
        max_message_bytes=values["max.message.bytes"],
        log_append_time=values["message.timestamp.type"] == "LogAppendTime",
        compact="compact" in policy,
        delete="delete" in policy,
        producer_state=True,
        timestamp_before_max_ms=values["message.timestamp.before.max.ms"],
        timestamp_after_max_ms=values["message.timestamp.after.max.ms"],
        retention_ms=values["retention.ms"],
        retention_bytes=values["retention.bytes"],
        delete_retention_ms=values["delete.retention.ms"],
        min_compaction_lag_ms=values["min.compaction.lag.ms"],
        max_compaction_lag_ms=values["max.compaction.lag.ms"],
        min_cleanable_ratio=values["min.cleanable.dirty.ratio"],
        file_delete_delay_ms=values["file.delete.delay.ms"],
    )
