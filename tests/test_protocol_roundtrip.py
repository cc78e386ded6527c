"""Every declared message, request and response, at every declared version: decode(encode(m))
is m, the compiled codec and the reference codec produce and read the same bytes, and each
field is on the wire exactly in the versions it declares."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol import APIS, Message
from groupcoord.protocol.codec import reference_decode, reference_encode

from protocol_values import (
    MESSAGE_VERSIONS,
    message_id,
    message_strategy,
    sample_message,
    sample_value,
)


def reference_bytes(message: Message, version: int) -> bytes:
    out = bytearray()
    reference_encode(message, out, version)
    return bytes(out)


@pytest.mark.parametrize("cls_version", MESSAGE_VERSIONS, ids=message_id)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip(cls_version: tuple[type[Message], int], data: st.DataObject) -> None:
    cls, version = cls_version
    message = data.draw(message_strategy(cls, version))
    encoded = message.encode(version)
    assert cls.decode(encoded, version) == message
    assert reference_bytes(message, version) == encoded
    assert reference_decode(cls, encoded, 0, version) == (message, len(encoded))


@pytest.mark.parametrize("cls_version", MESSAGE_VERSIONS, ids=message_id)
def test_every_field_present_exactly_in_its_versions(
    cls_version: tuple[type[Message], int],
) -> None:
    cls, version = cls_version
    base = cls()
    base_bytes = base.encode(version)
    for f in cls.__fields__:
        changed: Any = cls(**{f.name: sample_value(f, version)})
        encoded = changed.encode(version)
        if f.present(version):
            assert encoded != base_bytes, f"{f.name} should be written at v{version}"
            assert cls.decode(encoded, version) == changed
        else:
            assert encoded == base_bytes, f"{f.name} should not be written at v{version}"
            assert cls.decode(encoded, version) == base


@pytest.mark.parametrize("cls_version", MESSAGE_VERSIONS, ids=message_id)
def test_sample_with_every_field_set(cls_version: tuple[type[Message], int]) -> None:
    cls, version = cls_version
    message = sample_message(cls, version)
    encoded = message.encode(version)
    assert reference_bytes(message, version) == encoded
    assert cls.decode(encoded, version) == message


def test_registry_lists_the_issue_apis_and_ranges() -> None:
    declared = {key: (api.name, api.min_version, api.max_version) for key, api in APIS.items()}
    assert declared == {
        0: ("Produce", 0, 13),
        1: ("Fetch", 0, 18),
        2: ("ListOffsets", 0, 10),
        3: ("Metadata", 0, 13),
        8: ("OffsetCommit", 0, 10),
        9: ("OffsetFetch", 0, 10),
        10: ("FindCoordinator", 0, 6),
        11: ("JoinGroup", 0, 9),
        12: ("Heartbeat", 0, 4),
        13: ("LeaveGroup", 0, 5),
        14: ("SyncGroup", 0, 5),
        15: ("DescribeGroups", 0, 6),
        16: ("ListGroups", 0, 5),
        18: ("ApiVersions", 0, 4),
        19: ("CreateTopics", 2, 7),
        20: ("DeleteTopics", 1, 6),
        21: ("DeleteRecords", 0, 2),
        22: ("InitProducerId", 0, 5),
        23: ("OffsetForLeaderEpoch", 0, 4),
        32: ("DescribeConfigs", 1, 4),
        33: ("AlterConfigs", 0, 2),
        35: ("DescribeLogDirs", 1, 5),
        37: ("CreatePartitions", 0, 3),
        42: ("DeleteGroups", 0, 2),
        44: ("IncrementalAlterConfigs", 0, 1),
        47: ("OffsetDelete", 0, 0),
        60: ("DescribeCluster", 0, 2),
        68: ("ConsumerGroupHeartbeat", 0, 1),
        69: ("ConsumerGroupDescribe", 0, 1),
    }
    flexible_from = {
        key: api.flexible_versions[0]
        for key, api in APIS.items()
        if api.is_flexible(api.max_version)
    }
    assert flexible_from == {
        0: 9,
        1: 12,
        2: 6,
        3: 9,
        8: 8,
        9: 6,
        10: 3,
        11: 6,
        12: 4,
        13: 4,
        14: 4,
        15: 5,
        16: 3,
        18: 3,
        19: 5,
        20: 4,
        21: 2,
        22: 2,
        23: 4,
        32: 4,
        33: 2,
        35: 2,
        37: 2,
        42: 2,
        44: 1,
        60: 0,
        68: 0,
        69: 0,
    }
