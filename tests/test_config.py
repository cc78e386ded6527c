from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from groupcoord.config import CONFIG_DEFS, Config, read_properties


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
