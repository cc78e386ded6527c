"""Byte-for-byte parity with aiokafka 0.14's hand-written protocol structs: a second, independent
peer that also covers the oldest versions kafka-python 3 no longer declares (OffsetCommit v0-1,
OffsetFetch v0, ListOffsets v0, Fetch v0-3, Produce v0-2). aiokafka has one class per version
and no flexible ones, so values are compared in wire order, as nested tuples."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import aiokafka.protocol
import pytest
from aiokafka.protocol.api import RequestStruct, Response
from aiokafka.protocol.struct import Struct as AiokafkaStruct
from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.protocol import Message, Request
from groupcoord.protocol.schema import Struct

from protocol_values import MESSAGE_VERSIONS, message_id, message_strategy, sample_message


def aiokafka_classes() -> dict[tuple[int, int, bool], Any]:
    """aiokafka's structs by (api key, version, is request)."""
    found = {}
    for info in pkgutil.walk_packages(aiokafka.protocol.__path__, "aiokafka.protocol."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (
                isinstance(cls, type)
                and issubclass(cls, (RequestStruct, Response))
                and isinstance(getattr(cls, "API_KEY", None), int)
                and isinstance(getattr(cls, "API_VERSION", None), int)
            ):
                found[(cls.API_KEY, cls.API_VERSION, issubclass(cls, RequestStruct))] = cls
    return found


AIOKAFKA = aiokafka_classes()

AIOKAFKA_MISTAKES = {
    # aiokafka declares current_leader_epoch as Int64; Kafka's ListOffsetsRequest.json says
    # int32, and kafka-python (test_protocol_kafka_python) agrees with our bytes.
    ("ListOffsetsRequest", 4),
    ("ListOffsetsRequest", 5),
}

AIOKAFKA_OTHER_SHAPES = {
    # Same bytes, another shape: aiokafka nests each topic's count and assignments in a struct
    # of their own (kafka-python's parity covers these versions).
    "CreatePartitionsRequest",
}

SHARED = [
    (cls, version)
    for cls, version in MESSAGE_VERSIONS
    if (cls.api_key, version, issubclass(cls, Request)) in AIOKAFKA
    and not cls.is_flexible(version)
    and (cls.__name__, version) not in AIOKAFKA_MISTAKES
    and cls.__name__ not in AIOKAFKA_OTHER_SHAPES
]


def as_tuple(value: Any, version: int) -> Any:
    """Our value in wire order: a struct as the tuple of its fields present at ``version``.

    A struct with a single field is that field's value: the same bytes, and how aiokafka
    models MetadataRequest's topics (a list of names)."""
    if isinstance(value, Struct):
        fields = [
            as_tuple(getattr(value, f.name), version)
            for f in value.__fields__
            if f.present(version)
        ]
        return fields[0] if len(fields) == 1 and not isinstance(value, Message) else tuple(fields)
    if isinstance(value, list):
        return [as_tuple(v, version) for v in value]
    return value


def aiokafka_as_tuple(value: Any) -> Any:
    if isinstance(value, AiokafkaStruct):
        return tuple(aiokafka_as_tuple(getattr(value, name)) for name in value.SCHEMA.names)
    if isinstance(value, (list, tuple)):
        items = [aiokafka_as_tuple(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def lists_as_tuples(value: Any) -> Any:
    """aiokafka decodes a nested struct as a tuple and accepts tuples or lists when encoding."""
    if isinstance(value, (list, tuple)):
        return tuple(lists_as_tuples(v) for v in value)
    return value


def check_parity(message: Any, version: int) -> None:
    cls = type(message)
    peer = AIOKAFKA[(cls.api_key, version, issubclass(cls, Request))]
    ours = message.encode(version)
    fields = as_tuple(message, version)
    assert peer(*fields).encode() == ours
    assert lists_as_tuples(aiokafka_as_tuple(peer.decode(ours))) == lists_as_tuples(fields)


def test_aiokafka_covers_the_oldest_versions() -> None:
    shared = {(cls.__name__, version) for cls, version in SHARED}
    for oldest in [
        ("OffsetCommitRequest", 0),
        ("OffsetCommitRequest", 1),
        ("OffsetFetchRequest", 0),
        ("ListOffsetsRequest", 0),
        ("ListOffsetsResponse", 0),
        ("FetchRequest", 0),
        ("FetchResponse", 3),
        ("ProduceResponse", 0),
    ]:
        assert oldest in shared


@pytest.mark.parametrize("name_version", sorted(AIOKAFKA_MISTAKES))
def test_aiokafka_mistakes_are_still_there(name_version: tuple[str, int]) -> None:
    name, version = name_version
    (cls,) = [cls for cls, v in MESSAGE_VERSIONS if cls.__name__ == name and v == version]
    message = sample_message(cls, version)
    peer = AIOKAFKA[(cls.api_key, version, True)]
    assert peer(*as_tuple(message, version)).encode() != message.encode(version)


@pytest.mark.parametrize("cls_version", SHARED, ids=message_id)
def test_sample_parity(cls_version: tuple[type[Message], int]) -> None:
    cls, version = cls_version
    check_parity(sample_message(cls, version), version)


@pytest.mark.parametrize("cls_version", SHARED, ids=message_id)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_parity(cls_version: tuple[type[Message], int], data: st.DataObject) -> None:
    cls, version = cls_version
    check_parity(data.draw(message_strategy(cls, version)), version)
