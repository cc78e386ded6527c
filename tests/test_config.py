from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from groupcoord.config import (
    CONFIG_DEFS,
    Config,
    ConsumerGroupMigrationPolicy,
    parse_list,
    read_properties,
)


def test_kafka_defaults() -> None:
    c = Config()
    assert c.group_min_session_timeout_ms == 6000
    assert c.group_max_session_timeout_ms == 1_800_000
    assert c.group_initial_rebalance_delay_ms == 3000
    assert c.group_max_size == 2**31 - 1
    assert c.offsets_topic_num_partitions == 50
    assert c.offsets_retention_minutes == 10080
    assert c.offset_metadata_max_bytes == 4096
    assert c.max_incremental_fetch_session_cache_slots == 1000


def test_retention_minutes_computed_as_long() -> None:
    # testOffsetsRetentionMsIntegerOverflow: Int.MaxValue minutes must not wrap.
    c = Config.from_properties({"offsets.retention.minutes": str(2**31 - 1)})
    assert c.offsets_retention_ms == (2**31 - 1) * 60_000


def test_from_properties_parses_types_and_keeps_unknown() -> None:
    c = Config.from_properties(
        {"group.max.size": "4", "auto.create.topics.enable": "false", "broker.rack": "r1",
         "log.cleaner.min.cleanable.ratio": "0.25"}
    )
    assert c.group_max_size == 4
    assert c.auto_create_topics_enable is False
    assert c.log_cleaner_min_cleanable_ratio == 0.25
    assert c.extra == {"broker.rack": "r1"}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("group.max.size", "0", "at least 1"),
        ("group.max.size", "four", "must be int"),
        ("auto.create.topics.enable", "yes", "true or false"),
        ("max.incremental.fetch.session.cache.slots", "-1", "at least 0"),
    ],
)
def test_bad_values_rejected(name: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Config.from_properties({name: value})


def test_min_session_must_not_exceed_max() -> None:
    with pytest.raises(ValueError, match="must not exceed"):
        Config.from_properties({"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"})


def test_overrides_and_round_trip(tmp_path: Path) -> None:
    f = tmp_path / "server.properties"
    f.write_text("# comment\ngroup.initial.rebalance.delay.ms=0\noffsets.topic.num.partitions: 3\n")
    c = Config.from_properties(read_properties(f)).with_overrides({"group.max.size": "7"})
    assert (c.group_initial_rebalance_delay_ms, c.offsets_topic_num_partitions, c.group_max_size) == (0, 3, 7)
    assert Config.from_properties(c.as_properties()) == c
    assert set(c.as_properties()) == {d.name for d in CONFIG_DEFS}


def test_a_config_built_directly_is_checked_as_one_read_from_properties() -> None:
    with pytest.raises(ValueError, match="group.max.size must be at least 1, not 0"):
        Config(group_max_size=0)
    with pytest.raises(ValueError, match="must not exceed"):
        dataclasses.replace(Config(), group_min_session_timeout_ms=10, group_max_session_timeout_ms=5)
    assert {d.name: d.default for d in CONFIG_DEFS}["group.initial.rebalance.delay.ms"] == 3000


def test_consumer_group_defaults_are_kafka_4_3s() -> None:
    c = Config()
    assert (c.group_consumer_session_timeout_ms, c.group_consumer_min_session_timeout_ms,
            c.group_consumer_max_session_timeout_ms) == (45_000, 45_000, 60_000)
    assert (c.group_consumer_heartbeat_interval_ms, c.group_consumer_min_heartbeat_interval_ms,
            c.group_consumer_max_heartbeat_interval_ms) == (5000, 5000, 15_000)
    assert (c.group_consumer_assignment_interval_ms, c.group_consumer_min_assignment_interval_ms,
            c.group_consumer_max_assignment_interval_ms) == (1000, 0, 15_000)
    assert c.group_consumer_max_size == 2**31 - 1
    assert c.group_consumer_regex_refresh_interval_ms == 600_000
    assert c.consumer_group_assignors() == ["uniform", "range"]
    assert c.rebalance_protocols() == ["classic", "consumer", "streams"]
    policy = c.consumer_group_migration_policy()
    assert policy is ConsumerGroupMigrationPolicy.BIDIRECTIONAL
    assert policy.is_upgrade_enabled and policy.is_downgrade_enabled


def test_consumer_group_lists_and_policy_are_parsed_as_kafka_parses_them() -> None:
    c = Config.from_properties({
        "group.consumer.assignors": " range , uniform ",
        "group.coordinator.rebalance.protocols": "classic",
        "group.consumer.migration.policy": "UpGrade",
    })
    assert c.consumer_group_assignors() == ["range", "uniform"]
    assert c.rebalance_protocols() == ["classic"]
    policy = c.consumer_group_migration_policy()
    assert policy is ConsumerGroupMigrationPolicy.UPGRADE
    assert policy.is_upgrade_enabled and not policy.is_downgrade_enabled
    assert parse_list("") == [] and parse_list("a,,b") == ["a", "", "b"]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        # GroupCoordinatorConfig's requires, in its order
        ({"group.consumer.min.heartbeat.interval.ms": "16000"},
         "group.consumer.max.heartbeat.interval.ms must be greater than or equal to "
         "group.consumer.min.heartbeat.interval.ms"),
        ({"group.consumer.heartbeat.interval.ms": "4999"},
         "group.consumer.heartbeat.interval.ms must be greater than or equal to "
         "group.consumer.min.heartbeat.interval.ms"),
        ({"group.consumer.heartbeat.interval.ms": "15001"},
         "group.consumer.heartbeat.interval.ms must be less than or equal to "
         "group.consumer.max.heartbeat.interval.ms"),
        ({"group.consumer.min.session.timeout.ms": "60001"},
         "group.consumer.max.session.timeout.ms must be greater than or equal to "
         "group.consumer.min.session.timeout.ms"),
        ({"group.consumer.session.timeout.ms": "44999"},
         "group.consumer.session.timeout.ms must be greater than or equal to "
         "group.consumer.min.session.timeout.ms"),
        ({"group.consumer.session.timeout.ms": "60001"},
         "group.consumer.session.timeout.ms must be less than or equal to "
         "group.consumer.max.session.timeout.ms"),
        ({"group.consumer.min.session.timeout.ms": "1000", "group.consumer.session.timeout.ms": "5000"},
         "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
        ({"group.consumer.min.assignment.interval.ms": "15001"},
         "group.consumer.max.assignment.interval.ms must be greater than or equal to "
         "group.consumer.min.assignment.interval.ms"),
        ({"group.consumer.min.assignment.interval.ms": "2000"},
         "group.consumer.assignment.interval.ms must be greater than or equal to "
         "group.consumer.min.assignment.interval.ms"),
        ({"group.consumer.assignment.interval.ms": "15001"},
         "group.consumer.assignment.interval.ms must be less than or equal to "
         "group.consumer.max.assignment.interval.ms"),
        # the declared least values (Kafka's atLeast, in groupcoord's words)
        ({"group.consumer.session.timeout.ms": "0"}, "group.consumer.session.timeout.ms must be at least 1, not 0"),
        ({"group.consumer.assignment.interval.ms": "-1"},
         "group.consumer.assignment.interval.ms must be at least 0, not -1"),
        ({"group.consumer.regex.refresh.interval.ms": "9999"},
         "group.consumer.regex.refresh.interval.ms must be at least 10000, not 9999"),
        ({"group.consumer.max.size": "0"}, "group.consumer.max.size must be at least 1, not 0"),
        # Kafka's ConfigDef validators and KafkaConfig's check of the protocols
        ({"group.consumer.assignors": ""},
         "Configuration 'group.consumer.assignors' must not be empty. Valid values include: any non-empty value"),
        ({"group.consumer.assignors": "range,range"},
         "Configuration 'group.consumer.assignors' values must not be duplicated."),
        ({"group.consumer.assignors": "range,,uniform"},
         "Configuration 'group.consumer.assignors' values must not be empty."),
        ({"group.consumer.assignors": "com.example.Sticky"}, "Class com.example.Sticky cannot be found"),
        ({"group.consumer.migration.policy": "sideways"},
         "Invalid value sideways for configuration group.consumer.migration.policy: String must be one "
         "of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"),
        ({"group.coordinator.rebalance.protocols": ""},
         "Configuration 'group.coordinator.rebalance.protocols' must not be empty. Valid values include: "
         "[classic, consumer, share, streams]"),
        ({"group.coordinator.rebalance.protocols": "classic,bogus"},
         "Invalid value bogus for configuration group.coordinator.rebalance.protocols: String must be "
         "one of: classic, consumer, share, streams"),
        ({"group.coordinator.rebalance.protocols": "consumer"},
         "Disabling the 'classic' protocol is not supported."),
    ],
)
def test_consumer_group_settings_are_checked_with_kafkas_messages(
    properties: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        Config.from_properties(properties)
    assert str(caught.value) == message
