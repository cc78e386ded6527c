"""Broker configuration with Kafka's names and defaults.

Each setting is declared once, as a field of :class:`Config` named as Kafka names it with
dots turned into underscores (``config.group_min_session_timeout_ms`` for
``group.min.session.timeout.ms``); :data:`CONFIG_DEFS` lists them under their Kafka names.
Values come from the defaults, a ``server.properties`` file and ``--set name=value``
overrides, in that order.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

INT32_MAX = 2**31 - 1

T = TypeVar("T")


class ConsumerGroupMigrationPolicy(enum.Enum):
    """``group.consumer.migration.policy`` (Kafka's ``ConsumerGroupMigrationPolicy``): whether a
    non-empty classic group may be converted to a consumer group (upgrade) and back
    (downgrade). Empty groups are converted either way whatever the policy."""

    BIDIRECTIONAL = "bidirectional"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    DISABLED = "disabled"

    @property
    def is_upgrade_enabled(self) -> bool:
        return self in (ConsumerGroupMigrationPolicy.BIDIRECTIONAL, ConsumerGroupMigrationPolicy.UPGRADE)

    @property
    def is_downgrade_enabled(self) -> bool:
        return self in (ConsumerGroupMigrationPolicy.BIDIRECTIONAL, ConsumerGroupMigrationPolicy.DOWNGRADE)


CONSUMER_GROUP_BUILTIN_ASSIGNORS = ("uniform", "range")
"""The server-side assignors of Kafka's ``GroupCoordinatorConfig``, by name; the first of
``group.consumer.assignors`` is the default."""

REBALANCE_PROTOCOLS = ("classic", "consumer", "share", "streams")
"""The values ``group.coordinator.rebalance.protocols`` takes (Kafka's ``Group.GroupType``)."""


def parse_list(text: str) -> list[str]:
    """A Kafka LIST setting's values: comma-separated, blanks around commas dropped, an empty
    string an empty list (``ConfigDef.parseType``)."""
    trimmed = text.strip()
    return re.split(r"\s*,\s*", trimmed) if trimmed else []


def _check_list(name: str, values: list[str], valid: tuple[str, ...] | None) -> None:
    """Kafka's ``ConfigDef.ValidList`` (neither empty nor null allowed), with its messages."""
    if not values:
        include = "any non-empty value" if valid is None else f"[{', '.join(valid)}]"
        raise ValueError(f"Configuration '{name}' must not be empty. Valid values include: {include}")
    if len(set(values)) != len(values):
        raise ValueError(f"Configuration '{name}' values must not be duplicated.")
    for value in values:
        if not value:
            raise ValueError(f"Configuration '{name}' values must not be empty.")
        if valid is not None and value not in valid:
            raise ValueError(
                f"Invalid value {value} for configuration {name}: String must be one of: {', '.join(valid)}"
            )


@dataclass(frozen=True)
class ConfigDef:
    name: str
    type: type
    default: Any
    doc: str
    at_least: float | None = None
    kafka_type: str | None = None
    """The name of Kafka's ``ConfigDef.Type`` (``"INT"``, ``"LIST"``) where the Python type and
    the name do not tell it."""
    internal: bool = False
    """Defined by Kafka with ``defineInternal``: DescribeConfigs lists it only when it is set."""


def setting(
    default: T,
    doc: str,
    *,
    at_least: float | None = None,
    kafka_type: str | None = None,
    internal: bool = False,
) -> T:
    """A :class:`Config` field: its default, what it does, the least value it takes, and how
    Kafka's DescribeConfigs presents it (see :class:`ConfigDef`)."""
    metadata = {"doc": doc, "at_least": at_least, "kafka_type": kafka_type, "internal": internal}
    return field(default=default, metadata=metadata)


def attribute_name(kafka_name: str) -> str:
    return kafka_name.replace(".", "_")


def _parse(definition: ConfigDef, raw: Any) -> Any:
    if raw is None and definition.default is None:
        return None
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
    return value


@dataclass(frozen=True)
class Config:
    group_min_session_timeout_ms: int = setting(
        6000,
        "The smallest session timeout a member may ask for.",
        at_least=0,
    )
    group_max_session_timeout_ms: int = setting(
        1_800_000,
        "The largest session timeout a member may ask for.",
        at_least=0,
    )
    group_initial_rebalance_delay_ms: int = setting(
        3000,
        "How long the first rebalance of an empty group waits for more members.",
        at_least=0,
    )
    group_max_size: int = setting(
        INT32_MAX,
        "The most members a classic group may hold.",
        at_least=1,
    )
    group_coordinator_rebalance_protocols: str = setting(
        "classic,consumer,streams",
        "The enabled rebalance protocols, a list of classic, consumer, share and streams; classic "
        "cannot be disabled, consumer enables the consumer group protocol (KIP-848). Deprecated "
        "by Kafka 4.3 in favour of the group.version feature.",
        kafka_type="LIST",
    )
    group_consumer_session_timeout_ms: int = setting(
        45_000,
        "The session timeout of members of consumer groups (the consumer group protocol).",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_min_session_timeout_ms: int = setting(
        45_000,
        "The smallest session timeout a consumer group may be configured with.",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_max_session_timeout_ms: int = setting(
        60_000,
        "The largest session timeout a consumer group may be configured with.",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_heartbeat_interval_ms: int = setting(
        5000,
        "The heartbeat interval given to the members of consumer groups.",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_min_heartbeat_interval_ms: int = setting(
        5000,
        "The smallest heartbeat interval a consumer group may be configured with.",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_max_heartbeat_interval_ms: int = setting(
        15_000,
        "The largest heartbeat interval a consumer group may be configured with.",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_max_size: int = setting(
        INT32_MAX,
        "The most members a consumer group may hold (group.max.size bounds classic groups).",
        at_least=1,
        kafka_type="INT",
    )
    group_consumer_assignors: str = setting(
        ",".join(CONSUMER_GROUP_BUILTIN_ASSIGNORS),
        "The server-side assignors of consumer groups, a list of uniform and range; the first "
        "is used when a member names none.",
        kafka_type="LIST",
    )
    group_consumer_migration_policy: str = setting(
        ConsumerGroupMigrationPolicy.BIDIRECTIONAL.value,
        "Which conversions of non-empty groups between the classic and the consumer group "
        "protocol are allowed: bidirectional, upgrade, downgrade or disabled (any case).",
    )
    group_consumer_assignment_interval_ms: int = setting(
        1000,
        "The least time between two target assignments of a consumer group.",
        at_least=0,
        kafka_type="INT",
    )
    group_consumer_min_assignment_interval_ms: int = setting(
        0,
        "The smallest assignment interval a consumer group may be configured with.",
        at_least=0,
        kafka_type="INT",
    )
    group_consumer_max_assignment_interval_ms: int = setting(
        15_000,
        "The largest assignment interval a consumer group may be configured with.",
        at_least=0,
        kafka_type="INT",
    )
    group_consumer_regex_refresh_interval_ms: int = setting(
        600_000,
        "How often the topics matching consumer groups' subscribed regular expressions are "
        "resolved again (internal in Kafka).",
        at_least=10_000,
        kafka_type="INT",
        internal=True,
    )
    offsets_topic_num_partitions: int = setting(
        50,
        "Partitions of __consumer_offsets; fixes which partition owns a group.",
        at_least=1,
    )
    offsets_topic_replication_factor: int = setting(
        3,
        "Accepted for compatibility; groupcoord keeps one copy.",
        at_least=1,
    )
    offsets_topic_segment_bytes: int = setting(
        104_857_600,
        "Size at which a __consumer_offsets segment is rolled.",
        at_least=1,
    )
    log_roll_hours: int = setting(
        168,
        "Age at which a __consumer_offsets segment is rolled at its next append.",
        at_least=1,
    )
    log_roll_ms: int = setting(
        -1,
        "log.roll.hours in milliseconds, which it overrides unless -1.",
        at_least=-1,
    )
    offsets_topic_compression_codec: int = setting(
        0,
        "Compression of the coordinator's batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.",
        at_least=0,
    )
    offsets_load_buffer_size: int = setting(
        5_242_880,
        "Bytes read at a time when loading a partition.",
        at_least=1,
    )
    offsets_retention_minutes: int = setting(
        10080,
        "How long committed offsets of an empty group are kept.",
        at_least=1,
    )
    offsets_retention_check_interval_ms: int = setting(
        600_000,
        "How often expired offsets are looked for.",
        at_least=1,
    )
    offsets_commit_timeout_ms: int = setting(
        5000,
        "How long an append to __consumer_offsets may take before it fails with "
        "REQUEST_TIMED_OUT (it may still be written).",
        at_least=1,
    )
    offset_metadata_max_bytes: int = setting(
        4096,
        "The longest metadata string an offset commit may carry.",
        at_least=0,
    )
    message_max_bytes: int = setting(
        1_048_588,
        "The largest record batch the log accepts.",
        at_least=0,
    )
    log_segment_bytes: int = setting(
        1_073_741_824,
        "Size at which a segment of a data topic is rolled (Kafka's segment.bytes default).",
        at_least=1_048_576,
    )
    log_message_timestamp_type: str = setting(
        "CreateTime",
        "Data topics' timestamp type: CreateTime (the producer's) or LogAppendTime (the broker's).",
    )
    log_message_timestamp_before_max_ms: int = setting(
        9_223_372_036_854_775_807,
        "How far before the broker's clock a CreateTime record's timestamp may be.",
        at_least=0,
    )
    log_message_timestamp_after_max_ms: int = setting(
        3_600_000,
        "How far after the broker's clock a CreateTime record's timestamp may be.",
        at_least=0,
    )
    fetch_max_bytes: int = setting(
        57_671_680,
        "The most bytes a Fetch is answered with, whatever it asks for.",
        at_least=1024,
    )
    log_flush_interval_messages: int = setting(
        1,
        "Records appended to __consumer_offsets before it is fsynced (1: durable before the "
        "response). Data topics keep Kafka's default: no fsync but at roll and close.",
        at_least=1,
    )
    log_flush_interval_ms: int = setting(
        -1,
        "Most milliseconds between fsyncs of __consumer_offsets; -1 leaves it to "
        "log.flush.interval.messages.",
        at_least=-1,
    )
    log_retention_ms: int | None = setting(
        None,
        "How long a data topic keeps a segment after its newest record (retention.ms's default); "
        "-1 keeps data forever. Unset: log.retention.minutes, else log.retention.hours.",
    )
    log_retention_minutes: int | None = setting(
        None,
        "log.retention.ms in minutes, when that is unset.",
    )
    log_retention_hours: int = setting(
        168,
        "log.retention.ms in hours, when neither it nor log.retention.minutes is set.",
    )
    log_retention_bytes: int = setting(
        -1,
        "The most bytes a data topic's partition keeps before its oldest segments are deleted "
        "(retention.bytes's default); -1: no limit.",
        at_least=-1,
    )
    log_retention_check_interval_ms: int = setting(
        300_000,
        "How often the partitions of data topics are checked for segments to delete.",
        at_least=1,
    )
    log_segment_delete_delay_ms: int = setting(
        60_000,
        "How long a deleted segment's files are kept (renamed .deleted) before they are removed "
        "(file.delete.delay.ms's default).",
        at_least=0,
    )
    log_cleanup_policy: str = setting(
        "delete",
        "Data topics' cleanup.policy default: delete, compact, or both (comma-separated).",
    )
    log_cleaner_min_compaction_lag_ms: int = setting(
        0,
        "How old a record must be before the cleaner may compact it away "
        "(min.compaction.lag.ms's default).",
        at_least=0,
    )
    log_cleaner_max_compaction_lag_ms: int = setting(
        9_223_372_036_854_775_807,
        "How long a record may stay uncompacted before its log is cleaned whatever its dirty "
        "ratio (max.compaction.lag.ms's default).",
        at_least=1,
    )
    log_cleaner_delete_retention_ms: int = setting(
        86_400_000,
        "How long the cleaner keeps tombstones.",
        at_least=0,
    )
    log_cleaner_min_cleanable_ratio: float = setting(
        0.5,
        "Dirty fraction of a log above which the cleaner compacts it.",
        at_least=0,
    )
    log_cleaner_enable: bool = setting(
        True,
        "Run the log cleaner (compaction of __consumer_offsets).",
    )
    log_cleaner_backoff_ms: int = setting(
        15_000,
        "How long the cleaner sleeps when no log needs cleaning.",
        at_least=0,
    )
    log_cleaner_dedupe_buffer_size: int = setting(
        134_217_728,
        "Memory for the cleaner's key map; bounds the keys one cleaning pass can map "
        "(24 bytes per key as Kafka counts them).",
        at_least=1024,
    )
    log_recovery_skip_damaged_batches_enable: bool = setting(
        False,
        "Availability over safety for a damaged log: instead of refusing a partition whose "
        "segments hold damage that is not a torn tail, copy the damaged segments aside, "
        "rewrite them without the bytes that do not decode and load the rest, logging each "
        "range skipped (see docs/storage.md).",
    )
    log_index_interval_bytes: int = setting(
        4096,
        "Bytes of log between two entries of a segment's offset index.",
        at_least=0,
    )
    producer_id_expiration_ms: int = setting(
        86_400_000,
        "How long a partition keeps the state of an idempotent producer that has not written "
        "to it; then it forgets the producer's epoch and sequence.",
        at_least=1,
    )
    producer_id_expiration_check_interval_ms: int = setting(
        600_000,
        "How often producers idle for producer.id.expiration.ms are forgotten.",
        at_least=1,
    )
    auto_create_topics_enable: bool = setting(
        True,
        "Create unknown topics named in metadata requests.",
    )
    num_partitions: int = setting(1, "Partitions of an auto-created topic.", at_least=1)
    node_id: int = setting(0, "This node's id in Metadata and FindCoordinator answers.", at_least=0)
    advertised_listeners: str = setting(
        "",
        "PLAINTEXT://host:port clients are told to connect to; empty: the bound address.",
    )
    max_incremental_fetch_session_cache_slots: int = setting(
        1000,
        "Fetch sessions (KIP-227) the broker keeps, over 8 shards of slots // 8 each; "
        "fewer than 8 disables them.",
        at_least=0,
    )
    socket_request_max_bytes: int = setting(
        104_857_600,
        "The largest request frame accepted; a larger one closes the connection.",
        at_least=1,
    )
    connections_max_idle_ms: int = setting(
        600_000,
        "Connections with no complete request for this long are closed.",
        at_least=1,
    )
    groupcoord_owned_partitions: str = setting(
        "all",
        "__consumer_offsets partitions this node owns at start: all, or a list like "
        "0,3,10-19 (changed at run time with PUT /admin/owned-partitions).",
    )
    extra: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """A configuration built directly, or by ``dataclasses.replace``, is checked as one read
        from properties is."""
        for definition in CONFIG_DEFS:
            value = getattr(self, attribute_name(definition.name))
            if definition.at_least is not None and value is not None and value < definition.at_least:
                raise ValueError(f"{definition.name} must be at least {definition.at_least}, not {value}")
        self.validate()

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60 * 1000

    @property
    def segment_roll_ms(self) -> int:
        """How long a segment fills before it is rolled: log.roll.ms, else log.roll.hours."""
        return self.log_roll_ms if self.log_roll_ms != -1 else self.log_roll_hours * 3_600_000

    @property
    def retention_ms(self) -> int:
        """Kafka's ``log.retention.ms`` over ``.minutes`` over ``.hours``; -1 for any negative."""
        if self.log_retention_ms is not None:
            millis = self.log_retention_ms
        elif self.log_retention_minutes is not None:
            millis = self.log_retention_minutes * 60_000
        else:
            millis = self.log_retention_hours * 3_600_000
        return -1 if millis < 0 else millis

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
        return cls(**known, extra=extra)

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
        if self.log_message_timestamp_type not in ("CreateTime", "LogAppendTime"):
            raise ValueError("log.message.timestamp.type must be CreateTime or LogAppendTime")
        policies = {p.strip() for p in self.log_cleanup_policy.split(",")}
        if not policies or not policies <= {"delete", "compact"}:
            raise ValueError(f"log.cleanup.policy must be delete, compact or both, not {self.log_cleanup_policy!r}")
        self.owned_partitions()
        self.advertised_address()
        self._validate_consumer_groups()

    def _validate_consumer_groups(self) -> None:
        """The ``group.consumer.*`` settings, checked as Kafka's ``ConfigDef`` validators,
        ``KafkaConfig`` and the ``GroupCoordinatorConfig`` constructor check them, with their
        messages."""
        _check_list("group.coordinator.rebalance.protocols", self.rebalance_protocols(), REBALANCE_PROTOCOLS)
        _check_list("group.consumer.assignors", self.consumer_group_assignors(), None)
        policy = self.group_consumer_migration_policy
        if policy.lower() not in {p.value for p in ConsumerGroupMigrationPolicy}:
            raise ValueError(
                f"Invalid value {policy} for configuration group.consumer.migration.policy: String "
                "must be one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"
            )
        if "classic" not in self.rebalance_protocols():
            raise ValueError("Disabling the 'classic' protocol is not supported.")
        for name in self.consumer_group_assignors():
            if name not in CONSUMER_GROUP_BUILTIN_ASSIGNORS:  # Kafka would load it as a class
                raise ValueError(f"Class {name} cannot be found")
        _require_within("heartbeat.interval.ms", self.group_consumer_heartbeat_interval_ms,
                        self.group_consumer_min_heartbeat_interval_ms,
                        self.group_consumer_max_heartbeat_interval_ms)
        _require_within("session.timeout.ms", self.group_consumer_session_timeout_ms,
                        self.group_consumer_min_session_timeout_ms,
                        self.group_consumer_max_session_timeout_ms)
        _require(self.group_consumer_heartbeat_interval_ms < self.group_consumer_session_timeout_ms,
                 "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")
        _require_within("assignment.interval.ms", self.group_consumer_assignment_interval_ms,
                        self.group_consumer_min_assignment_interval_ms,
                        self.group_consumer_max_assignment_interval_ms)

    def rebalance_protocols(self) -> list[str]:
        """``group.coordinator.rebalance.protocols`` as a list (Kafka's
        ``KafkaConfig.groupCoordinatorRebalanceProtocols``)."""
        return parse_list(self.group_coordinator_rebalance_protocols)

    def consumer_group_assignors(self) -> list[str]:
        """``group.consumer.assignors`` as a list of names, the default first."""
        return parse_list(self.group_consumer_assignors)

    def consumer_group_migration_policy(self) -> ConsumerGroupMigrationPolicy:
        """``group.consumer.migration.policy``, read in any case."""
        return ConsumerGroupMigrationPolicy(self.group_consumer_migration_policy.lower())

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


def _require(requirement: bool, message: str) -> None:
    """Kafka's ``Utils.require``."""
    if not requirement:
        raise ValueError(message)


def _require_within(kind: str, value: int, low: int, high: int) -> None:
    """``GroupCoordinatorConfig``'s three checks of ``group.consumer.KIND`` and its min and max,
    in its order."""
    name, least, most = (f"group.consumer.{qualifier}{kind}" for qualifier in ("", "min.", "max."))
    _require(high >= low, f"{most} must be greater than or equal to {least}")
    _require(value >= low, f"{name} must be greater than or equal to {least}")
    _require(value <= high, f"{name} must be less than or equal to {most}")


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


_TYPES = {"int": int, "int | None": int, "float": float, "bool": bool, "str": str}

CONFIG_DEFS: tuple[ConfigDef, ...] = tuple(
    ConfigDef(f.name.replace("_", "."), _TYPES[str(f.type)], f.default, f.metadata["doc"], f.metadata["at_least"],
              f.metadata["kafka_type"], f.metadata["internal"])
    for f in dataclasses.fields(Config)
    if f.name != "extra"
)
"""Every setting under its Kafka name (``group.min.session.timeout.ms``), from the fields of
:class:`Config`, where each is declared once."""

_DEFS_BY_NAME = {d.name: d for d in CONFIG_DEFS}
