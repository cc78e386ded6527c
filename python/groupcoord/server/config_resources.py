"""Config resources as DescribeConfigs, AlterConfigs and IncrementalAlterConfigs see them
(Kafka's ``ConfigHelper`` and ``ConfigAdminManager``): a topic's configs, each with its value,
where it comes from and its synonyms, and the broker's own settings, read-only.

A topic config's value is the topic's override (source DYNAMIC_TOPIC_CONFIG), else its
broker synonym's (STATIC_BROKER_CONFIG when set in ``server.properties`` or ``--set``, else
DEFAULT_CONFIG). Its synonyms, in priority order, are the override, then the broker settings
behind its default that are set, then the primary broker setting's default when it has one:
a topic whose ``retention.ms`` comes from an unset ``log.retention.ms`` lists none, as Kafka 4
lists none. ``__consumer_offsets`` is described as Kafka creates it: ``cleanup.policy=compact``,
``compression.type=producer`` and its ``segment.bytes`` as overrides; its configs are the
broker's ``offsets.topic.*`` settings and cannot be altered here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from groupcoord.config import CONFIG_DEFS, Config, ConfigDef, attribute_name
from groupcoord.errors import Errors
from groupcoord.protocol import Response
from groupcoord.server.broker import Broker
from groupcoord.server.registry import RequestContext
from groupcoord.server.topics import OFFSETS_TOPIC, Topic, TopicRegistry
from groupcoord.storage.topic_config import (
    TOPIC_CONFIGS,
    TOPIC_CONFIGS_BY_NAME,
    ConfigType,
    TopicConfigDef,
    format_value,
    parse_topic_config,
    validate_topic_configs,
)

__all__ = [
    "AlterRequest",
    "ConfigEntry",
    "ConfigError",
    "ConfigSource",
    "IncrementalOp",
    "ResourceType",
    "Synonym",
    "altered_overrides",
    "broker_config_entries",
    "check_broker_name",
    "offsets_topic_overrides",
    "serve_alter_configs",
    "plan_alter",
    "topic_config_entries",
]


class ResourceType(enum.IntEnum):
    """Kafka's ``ConfigResource.Type``."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    """Kafka's ``DescribeConfigsResponse.ConfigSource``."""

    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class IncrementalOp(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    doc: str
    read_only: bool = False
    synonyms: list[Synonym] = field(default_factory=list)


class ConfigError(Exception):
    """A resource's change refused: the error code and Kafka's message."""

    def __init__(self, error: Errors, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


_BROKER_DEFS: dict[str, ConfigDef] = {d.name: d for d in CONFIG_DEFS}

_SET_SYNONYMS: dict[str, tuple[str, ...]] = {
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
}
"""Where a default is computed from several broker settings: every one that may be set."""

_UNSET: dict[str, Any] = {"log.roll.ms": -1}
"""Broker settings whose value means "unset" (Kafka's null) other than None."""


def _broker_value(config: Config, name: str) -> Any:
    return getattr(config, attribute_name(name))


def _is_set(config: Config, name: str) -> bool:
    value = _broker_value(config, name)
    return value is not None and value != _UNSET.get(name) and value != _BROKER_DEFS[name].default


def _topic_synonyms(config: Config, definition: TopicConfigDef, overrides: Mapping[str, str]) -> list[Synonym]:
    synonyms: list[Synonym] = []
    if definition.name in overrides:
        synonyms.append(Synonym(definition.name, overrides[definition.name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
    if definition.broker is None:
        return synonyms
    for name in _SET_SYNONYMS.get(definition.name, (definition.broker,)):
        if _is_set(config, name):
            synonyms.append(Synonym(name, format_value(_broker_value(config, name)),
                                    ConfigSource.STATIC_BROKER_CONFIG))
    default = _BROKER_DEFS[definition.broker].default
    if default is not None and default != _UNSET.get(definition.broker):
        synonyms.append(Synonym(definition.broker, format_value(default), ConfigSource.DEFAULT_CONFIG))
    return synonyms


def topic_config_entries(config: Config, overrides: Mapping[str, str]) -> list[ConfigEntry]:
    """Every config of a topic with these overrides, in Kafka's order."""
    entries = []
    for definition in TOPIC_CONFIGS:
        synonyms = _topic_synonyms(config, definition, overrides)
        if definition.name in overrides:
            value = format_value(parse_topic_config(definition, overrides[definition.name]))
        else:
            value = format_value(definition.default_value(config))
        entries.append(ConfigEntry(
            name=definition.name, value=value,
            source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
            type=definition.type, doc=definition.doc, synonyms=synonyms,
        ))
    return entries


def offsets_topic_overrides(config: Config) -> dict[str, str]:
    """``__consumer_offsets``' configs as Kafka creates the topic with them."""
    return {
        "cleanup.policy": "compact",
        "compression.type": "producer",
        "segment.bytes": str(config.offsets_topic_segment_bytes),
    }


def _broker_type(definition: ConfigDef) -> ConfigType:
    if definition.kafka_type is not None:
        return ConfigType[definition.kafka_type]
    if definition.type is bool:
        return ConfigType.BOOLEAN
    if definition.type is float:
        return ConfigType.DOUBLE
    if definition.type is str:
        return ConfigType.STRING
    long = definition.name.endswith(".ms") or (definition.default is not None and abs(definition.default) > 2**31 - 1)
    return ConfigType.LONG if long else ConfigType.INT


def broker_config_entries(config: Config, node_id: int) -> list[ConfigEntry]:
    """The broker's settings under Kafka's names (groupcoord changes none at run time: all
    read-only), with ``node.id``'s Kafka synonym ``broker.id``. Kafka's internal settings are
    listed only when set, as Kafka lists them."""
    entries = []
    for definition in sorted(CONFIG_DEFS, key=lambda d: d.name):
        if definition.internal and not _is_set(config, definition.name):
            continue
        value = _broker_value(config, definition.name)
        synonyms = []
        if _is_set(config, definition.name):
            synonyms.append(Synonym(definition.name, format_value(value), ConfigSource.STATIC_BROKER_CONFIG))
        if definition.default is not None:
            synonyms.append(Synonym(definition.name, format_value(definition.default), ConfigSource.DEFAULT_CONFIG))
        entries.append(ConfigEntry(
            name=definition.name, value=None if value is None else format_value(value),
            source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
            type=_broker_type(definition), doc=definition.doc, read_only=True, synonyms=synonyms,
        ))
    return entries


def check_broker_name(name: str, node_id: int) -> None:
    """A BROKER resource names this node (or, with an empty name, the cluster's defaults).

    Raises:
        ConfigError: INVALID_REQUEST, with Kafka's message, for another broker's id.
    """
    if name != "" and name != str(node_id):
        raise ConfigError(Errors.INVALID_REQUEST,
                          f"Unexpected broker id, expected {node_id} or empty string, but received {name}")


def altered_overrides(
    topic: Topic, config: Config, changes: list[tuple[str, int, str | None]], *, incremental: bool
) -> dict[str, str]:
    """The overrides ``topic`` would have after ``changes`` (name, operation, value): each an
    IncrementalAlterConfigs operation, or with ``incremental=False`` (AlterConfigs) the whole
    new set of overrides.

    Raises:
        ConfigError: a duplicate or unknown name, an operation that does not fit the
            config, or a resulting value the config does not take (Kafka's errors).
    """
    names = [name for name, _, _ in changes]
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise ConfigError(Errors.INVALID_REQUEST, f"Error due to duplicate config keys : {', '.join(duplicates)}")
    overrides = dict(topic.configs) if incremental else {}
    for name, operation, value in changes:
        definition = TOPIC_CONFIGS_BY_NAME.get(name)
        if definition is None:
            raise ConfigError(Errors.INVALID_CONFIG, f"Unknown topic config name: {name}")
        if not incremental or operation == IncrementalOp.SET:
            if value is None:
                raise ConfigError(Errors.INVALID_CONFIG, f"Null value not supported for : {name}")
            overrides[name] = value
        elif operation == IncrementalOp.DELETE:
            overrides.pop(name, None)
        elif operation in (IncrementalOp.APPEND, IncrementalOp.SUBTRACT):
            if definition.type is not ConfigType.LIST:
                verb = "append" if operation == IncrementalOp.APPEND else "subtract"
                raise ConfigError(Errors.INVALID_CONFIG,
                                  f"Config value {verb} is not allowed for config key: {name}")
            current = (
                parse_topic_config(definition, overrides[name]) if name in overrides
                else definition.default_value(config)
            )
            given = [v.strip() for v in (value or "").split(",") if v.strip()]
            if operation == IncrementalOp.APPEND:
                result = current + [v for v in given if v not in current]
            else:
                result = [v for v in current if v not in given]
            overrides[name] = ",".join(result)
        else:
            raise ConfigError(Errors.INVALID_REQUEST, f"Unknown alter config operation {operation} for {name}")
    error = validate_topic_configs(overrides)
    if error is not None:
        raise ConfigError(Errors.INVALID_CONFIG, error)
    return overrides


def refuse_offsets_topic(name: str) -> None:
    if name == OFFSETS_TOPIC:
        raise ConfigError(Errors.INVALID_REQUEST,
                          f"{OFFSETS_TOPIC} runs by the broker's offsets.topic.* settings here")


@dataclass(frozen=True)
class AlterRequest:
    """One resource of an AlterConfigs or IncrementalAlterConfigs request."""

    resource_type: int
    resource_name: str
    changes: list[tuple[str, int, str | None]]


Outcome = tuple[Errors, str | None]


def plan_alter(
    topics: TopicRegistry, config: Config, node_id: int, requests: list[AlterRequest], *, incremental: bool
) -> tuple[list[Outcome], dict[int, Topic]]:
    """Check every resource of an alter request: each one's outcome (NONE where it would
    apply) and, by position, the topics with their new overrides to save."""
    outcomes: list[Outcome] = []
    altered: dict[int, Topic] = {}
    keys = [(r.resource_type, r.resource_name) for r in requests]
    for index, request in enumerate(requests):
        try:
            if keys.count((request.resource_type, request.resource_name)) > 1:
                raise ConfigError(Errors.INVALID_REQUEST, "Error due to duplicate resources")
            if request.resource_type == ResourceType.TOPIC:
                refuse_offsets_topic(request.resource_name)
                topic = topics.get(request.resource_name)
                if topic is None:
                    raise ConfigError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                      f"The topic '{request.resource_name}' does not exist.")
                overrides = altered_overrides(topic, config, request.changes, incremental=incremental)
                altered[index] = replace(topic, configs=overrides)
            elif request.resource_type == ResourceType.BROKER:
                check_broker_name(request.resource_name, node_id)
                if request.changes:
                    names = ", ".join(sorted({name for name, _, _ in request.changes}))
                    raise ConfigError(Errors.INVALID_REQUEST, f"Cannot update these configs dynamically: {names}")
            else:
                raise ConfigError(Errors.INVALID_REQUEST, f"Unsupported resource type: {request.resource_type}")
        except ConfigError as error:
            outcomes.append((error.error, error.message))
        else:
            outcomes.append((Errors.NONE, None))
    return outcomes, altered


async def _save_altered(broker: Broker, altered: Mapping[int, Topic], outcomes: list[Outcome]) -> list[Outcome]:
    """Save each altered topic's overrides durably and apply them to its open partitions; a
    topic deleted meanwhile gets UNKNOWN_TOPIC_OR_PARTITION. The outcomes, updated."""
    outcomes = list(outcomes)
    for index, topic in altered.items():
        current = broker.topics.get(topic.name)
        if current is None or current.topic_id != topic.topic_id:
            outcomes[index] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{topic.name}' does not exist.")
            continue
        broker.replicas.apply_configs(await broker.topics.alter_configs(topic.name, topic.configs))
    return outcomes


def serve_alter_configs(
    broker: Broker, ctx: RequestContext, requests: list[AlterRequest], *, incremental: bool, validate_only: bool,
    response: Callable[[list[Outcome]], Response],
) -> None:
    """Serve an AlterConfigs (``incremental=False``) or IncrementalAlterConfigs request:
    check every resource, then (unless ``validate_only``) save and apply the changes before
    answering with ``response(outcomes)``."""
    outcomes, altered = plan_alter(broker.topics, broker.config, broker.node.node_id, requests,
                                   incremental=incremental)
    if validate_only or not altered:
        ctx.respond(response(outcomes))
        return

    async def save() -> Response:
        return response(await _save_altered(broker, altered, outcomes))

    ctx.respond_later(save(), lambda error: response([(error, None)] * len(requests)))
