"""Broker configuration with Kafka's names and defaults.

Each setting is declared once in :data:`CONFIG_DEFS` under its Kafka name
(``group.min.session.timeout.ms``); :class:`Config` exposes it as the same name with dots
turned into underscores (``config.group_min_session_timeout_ms``). Values come from the
defaults, a ``server.properties`` file and ``--set name=value`` overrides, in that order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ConfigDef:
    name: str
    type: type
    default: Any
    doc: str
    at_least: float | None = None


CONFIG_DEFS: tuple[ConfigDef, ...] = (
    ConfigDef("group.min.session.timeout.ms", int, 6000,
              "The smallest session timeout a member may ask for.", 0),
    ConfigDef("group.max.session.timeout.ms", int, 1_800_000,
              "The largest session timeout a member may ask for.", 0),
    ConfigDef("group.initial.rebalance.delay.ms", int, 3000,
              "How long the first rebalance of an empty group waits for more members.", 0),
    ConfigDef("group.max.size", int, INT32_MAX, "The most members a classic group may hold.", 1),
    ConfigDef("offsets.topic.num.partitions", int, 50,
              "Partitions of __consumer_offsets; fixes which partition owns a group.", 1),
    ConfigDef("offsets.topic.replication.factor", int, 3,
              "Accepted for compatibility; groupcoord keeps one copy.", 1),
    ConfigDef("offsets.topic.segment.bytes", int, 104_857_600,
              "Size at which a __consumer_offsets segment is rolled.", 1),
    ConfigDef("log.roll.hours", int, 168,
              "Age at which a __consumer_offsets segment is rolled at its next append.", 1),
    ConfigDef("log.roll.ms", int, -1,
              "log.roll.hours in milliseconds, which it overrides unless -1.", -1),
    ConfigDef("offsets.topic.compression.codec", int, 0,
              "Compression of the coordinator's batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.", 0),
    ConfigDef("offsets.load.buffer.size", int, 5_242_880,
              "Bytes read at a time when loading a partition.", 1),
    ConfigDef("offsets.retention.minutes", int, 10080,
              "How long committed offsets of an empty group are kept.", 1),
    ConfigDef("offsets.retention.check.interval.ms", int, 600_000,
              "How often expired offsets are looked for.", 1),
    ConfigDef("offsets.commit.timeout.ms", int, 5000,
              "How long an append to __consumer_offsets may take before it fails with "
              "REQUEST_TIMED_OUT (it may still be written).", 1),
    ConfigDef("offset.metadata.max.bytes", int, 4096,
              "The longest metadata string an offset commit may carry.", 0),
    ConfigDef("message.max.bytes", int, 1_048_588,
              "The largest record batch the log accepts.", 0),
    ConfigDef("log.flush.interval.messages", int, 1,
              "Records appended before the log is fsynced (1: durable before the response).", 1),
    ConfigDef("log.flush.interval.ms", int, -1,
              "Most milliseconds between fsyncs; -1 leaves it to log.flush.interval.messages.", -1),
    ConfigDef("log.cleaner.delete.retention.ms", int, 86_400_000,
              "How long the cleaner keeps tombstones.", 0),
    ConfigDef("log.cleaner.min.cleanable.ratio", float, 0.5,
              "Dirty fraction of a log above which the cleaner compacts it.", 0),
    ConfigDef("log.cleaner.enable", bool, True,
              "Run the log cleaner (compaction of __consumer_offsets).", None),
    ConfigDef("log.cleaner.backoff.ms", int, 15_000,
              "How long the cleaner sleeps when no log needs cleaning.", 0),
    ConfigDef("log.cleaner.dedupe.buffer.size", int, 134_217_728,
              "Memory for the cleaner's key map; bounds the keys one cleaning pass can map "
              "(24 bytes per key as Kafka counts them).", 1024),
    ConfigDef("log.index.interval.bytes", int, 4096,
              "Bytes of log between two entries of a segment's offset index.", 0),
    ConfigDef("auto.create.topics.enable", bool, True,
              "Create unknown topics named in metadata requests.", None),
    ConfigDef("num.partitions", int, 1, "Partitions of an auto-created topic.", 1),
    ConfigDef("node.id", int, 0, "This node's id in Metadata and FindCoordinator answers.", 0),
    ConfigDef("advertised.listeners", str, "",
              "PLAINTEXT://host:port clients are told to connect to; empty: the bound address.",
              None),
    ConfigDef("socket.request.max.bytes", int, 104_857_600,
              "The largest request frame accepted; a larger one closes the connection.", 1),
    ConfigDef("connections.max.idle.ms", int, 600_000,
              "Connections with no complete request for this long are closed.", 1),
    ConfigDef("groupcoord.owned.partitions", str, "all",
              "__consumer_offsets partitions this node owns at start: all, or a list like "
              "0,3,10-19 (changed at run time with PUT /admin/owned-partitions).", None),
)

_DEFS_BY_NAME = {d.name: d for d in CONFIG_DEFS}


def attribute_name(kafka_name: str) -> str:
    return kafka_name.replace(".", "_")


def _parse(definition: ConfigDef, raw: Any) -> Any:
    if isinstance(raw, str):
        text = raw.strip()
        if definition.type is bool:
            if text.lower() not in ("true", "false"):
                raise ValueError(f"{definition.name} must be true or false, not {raw!r}")
            value: Any = text.lower() == "true"
        else:
            try:
                value = definition.type(text)
            except ValueError:
                raise ValueError(
                    f"{definition.name} must be {definition.type.__name__}, not {raw!r}"
                ) from None
    elif definition.type is float and isinstance(raw, int) and not isinstance(raw, bool):
        value = float(raw)
    elif type(raw) is definition.type:
        value = raw
    else:
        raise ValueError(f"{definition.name} must be {definition.type.__name__}, not {raw!r}")
    if definition.at_least is not None and value < definition.at_least:
        raise ValueError(f"{definition.name} must be at least {definition.at_least}, not {value}")
    return value


@dataclass(frozen=True)
class Config:
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = INT32_MAX
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_topic_segment_bytes: int = 104_857_600
    log_roll_hours: int = 168
    log_roll_ms: int = -1
    offsets_topic_compression_codec: int = 0
    offsets_load_buffer_size: int = 5_242_880
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600_000
    offsets_commit_timeout_ms: int = 5000
    offset_metadata_max_bytes: int = 4096
    message_max_bytes: int = 1_048_588
    log_flush_interval_messages: int = 1
    log_flush_interval_ms: int = -1
    log_cleaner_delete_retention_ms: int = 86_400_000
    log_cleaner_min_cleanable_ratio: float = 0.5
    log_cleaner_enable: bool = True
    log_cleaner_backoff_ms: int = 15_000
    log_cleaner_dedupe_buffer_size: int = 134_217_728
    log_index_interval_bytes: int = 4096
    auto_create_topics_enable: bool = True
    num_partitions: int = 1
    node_id: int = 0
    advertised_listeners: str = ""
    socket_request_max_bytes: int = 104_857_600
    connections_max_idle_ms: int = 600_000
    groupcoord_owned_partitions: str = "all"
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60 * 1000

    @property
    def segment_roll_ms(self) -> int:
        """How long a segment fills before it is rolled: log.roll.ms, else log.roll.hours."""
        return self.log_roll_ms if self.log_roll_ms != -1 else self.log_roll_hours * 3_600_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> Config:
        """Build from Kafka-named settings; unknown names are kept in ``extra``."""
        known: dict[str, Any] = {}
        extra: dict[str, str] = {}
        for name, raw in properties.items():
            definition = _DEFS_BY_NAME.get(name)
            if definition is None:
                extra[name] = str(raw)
            else:
                known[attribute_name(name)] = _parse(definition, raw)
        config = cls(**known, extra=extra)
        config.validate()
        return config

    def with_overrides(self, properties: Mapping[str, Any]) -> Config:
        merged = {d.name: getattr(self, attribute_name(d.name)) for d in CONFIG_DEFS}
        merged.update(self.extra)
        merged.update(properties)
        return Config.from_properties(merged)

    def validate(self) -> None:
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "group.min.session.timeout.ms must not exceed group.max.session.timeout.ms"
            )
        if self.log_roll_ms == 0:
            raise ValueError("log.roll.ms must be at least 1, or -1 to use log.roll.hours")
        self.owned_partitions()
        self.advertised_address()

    def owned_partitions(self) -> list[int]:
        """``groupcoord.owned.partitions`` as partition numbers: ``all`` or ``0,3,10-19``."""
        spec = self.groupcoord_owned_partitions.strip()
        limit = self.offsets_topic_num_partitions
        if spec == "all":
            return list(range(limit))
        partitions: set[int] = set()
        try:
            for part in filter(None, (p.strip() for p in spec.split(","))):
                low, _, high = part.partition("-")
                partitions.update(range(int(low), int(high or low) + 1))
        except ValueError:
            raise ValueError(
                f"groupcoord.owned.partitions must be all or a list like 0,3,10-19, not {spec!r}"
            ) from None
        outside = sorted(p for p in partitions if not 0 <= p < limit)
        if outside:
            raise ValueError(
                f"groupcoord.owned.partitions names {outside}, outside 0..{limit - 1}"
            )
        return sorted(partitions)

    def advertised_address(self) -> tuple[str, int] | None:
        """The (host, port) of ``advertised.listeners`` (one PLAINTEXT listener), or None."""
        spec = self.advertised_listeners.strip()
        if not spec:
            return None
        scheme, sep, address = spec.partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or scheme.upper() != "PLAINTEXT" or not colon or not host or not port.isdigit():
            raise ValueError(
                f"advertised.listeners must be one PLAINTEXT://host:port listener, not {spec!r}"
            )
        return host, int(port)

    def as_properties(self) -> dict[str, Any]:
        return {d.name: getattr(self, attribute_name(d.name)) for d in CONFIG_DEFS}


def read_properties(path: str | Path) -> dict[str, str]:
    """Parse a Java ``.properties`` file (``name=value`` or ``name: value``, ``#``/``!`` comments)."""
    properties: dict[str, str] = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        for sep in ("=", ":"):
            if sep in stripped:
                name, value = stripped.split(sep, 1)
                properties[name.strip()] = value.strip()
                break
        else:
            raise ValueError(f"{path}:{lineno}: expected name=value, got {line!r}")
    return properties


assert {attribute_name(d.name) for d in CONFIG_DEFS} == {
    f.name for f in dataclasses.fields(Config) if f.name != "extra"
}, "CONFIG_DEFS and Config fields must name the same settings"
assert all(
    getattr(Config(), attribute_name(d.name)) == d.default for d in CONFIG_DEFS
), "Config defaults must match CONFIG_DEFS"
