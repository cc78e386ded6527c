"""Byte-for-byte parity with kafka-python 3's protocol classes, which are generated from
Kafka's own JSON message specifications: for every message and every version both declare,
the same values encode to the same bytes, and each side decodes the other's bytes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol import Message

from protocol_kafka_python import (
    KAFKA_PYTHON_LACKS,
    KAFKA_PYTHON_SHARED as SHARED,
    from_kafka_python,
    kafka_python_class,
    to_kafka_python,
)
from protocol_values import MESSAGE_VERSIONS, message_id, message_strategy, sample_message


def check_parity(message: Any, version: int) -> None:
    cls = type(message)
    kp_cls = kafka_python_class(cls.__name__)
    ours = message.encode(version)
    theirs = bytes(
        to_kafka_python(message, kp_cls, version, cls.is_flexible(version)).encode(version=version)
    )
    assert ours == theirs
    if cls.__name__ == "ApiVersionsResponse" and message.error_code != 0:
        return  # kafka-python reads any failed ApiVersions answer as v0 (test_protocol_frames)
    assert from_kafka_python(kp_cls.decode(ours, version=version), cls, version) == message
    assert cls.decode(theirs, version) == message


def test_parity_covers_every_message() -> None:
    assert {cls for cls, _ in SHARED} == {
        cls for cls, _ in MESSAGE_VERSIONS if cls.__name__ not in KAFKA_PYTHON_LACKS
    }
    assert len(SHARED) > 200


@pytest.mark.parametrize("name", sorted(KAFKA_PYTHON_LACKS))
def test_kafka_python_still_lacks(name: str) -> None:
    with pytest.raises(LookupError):
        kafka_python_class(name)


@pytest.mark.parametrize("cls_version", SHARED, ids=message_id)
def test_sample_parity(cls_version: tuple[type[Message], int]) -> None:
    cls, version = cls_version
    check_parity(sample_message(cls, version), version)
    check_parity(cls(), version)


@pytest.mark.parametrize("cls_version", SHARED, ids=message_id)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_parity(cls_version: tuple[type[Message], int], data: st.DataObject) -> None:
    cls, version = cls_version
    check_parity(data.draw(message_strategy(cls, version)), version)
