"""kafka-python 3 as a protocol peer: its class for each of our messages, the versions its
schemas declare, and conversions of values between its classes and ours."""

from __future__ import annotations

import importlib
from typing import Any

from groupcoord.protocol.schema import Array, Struct

from protocol_values import MESSAGE_VERSIONS

KAFKA_PYTHON_MODULES = (
    "kafka.protocol.metadata.api_versions",
    "kafka.protocol.metadata.metadata",
    "kafka.protocol.metadata.find_coordinator",
    "kafka.protocol.consumer.group",
    "kafka.protocol.consumer.fetch",
    "kafka.protocol.consumer.offsets",
    "kafka.protocol.admin.groups",
    "kafka.protocol.admin.configs",
    "kafka.protocol.admin.topics",
    "kafka.protocol.admin.cluster",
    "kafka.protocol.producer.produce",
    "kafka.protocol.producer.transaction",
)


def kafka_python_class(name: str) -> Any:
    for module in KAFKA_PYTHON_MODULES:
        cls = getattr(importlib.import_module(module), name, None)
        if cls is not None:
            return cls
    raise LookupError(name)


def kafka_python_versions(kp_cls: Any) -> range:
    """The versions kafka-python's schema declares (it pretends every message starts at 0)."""
    low, _, high = str(kp_cls.json["validVersions"]).partition("-")
    return range(int(low), int(high or low) + 1)


# kafka-python's own conveniences on top of the schemas (``json_patch`` in its message
# modules): authorized operations become a set of bit indexes (None for Kafka's "omitted",
# INT32_MIN), and two are renamed. Same bytes on the wire.
RENAMED = {
    ("MetadataResponse", "cluster_authorized_operations"): "authorized_operations",
    ("MetadataResponseTopic", "topic_authorized_operations"): "authorized_operations",
    ("DescribeClusterResponse", "cluster_authorized_operations"): "authorized_operations",
}
BITFIELDS = {*RENAMED, ("DescribedGroup", "authorized_operations")}
OMITTED = -(2**31)


def to_bit_set(value: int) -> set[int] | None:
    return None if value == OMITTED else {bit for bit in range(32) if value >> bit & 1}


def from_bit_set(bits: set[int] | None) -> int:
    unsigned = sum(1 << bit for bit in ({31} if bits is None else bits))
    return unsigned - (1 << 32) if unsigned >= 1 << 31 else unsigned


KAFKA_PYTHON_LACKS = {
    # KIP-848's APIs: kafka-python 3 knows their keys (``kafka.protocol.api_key``) but has
    # neither classes nor JSON specifications for them.
    "ConsumerGroupHeartbeatRequest",
    "ConsumerGroupHeartbeatResponse",
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
}

KAFKA_PYTHON_SHARED = [
    (cls, version)
    for cls, version in MESSAGE_VERSIONS
    if cls.__name__ not in KAFKA_PYTHON_LACKS
    and version in kafka_python_versions(kafka_python_class(cls.__name__))
]


def to_kafka_python(obj: Struct, kp_cls: Any, version: int, flexible: bool) -> Any:
    """Our value as kafka-python's. Tagged fields are passed only when they differ from their
    default: kafka-python writes every tagged field it was given, Kafka only non-default ones."""
    kwargs = {}
    for f in obj.__fields__:
        if not f.present(version):
            continue
        value = getattr(obj, f.name)
        if f.is_tagged(version, flexible) and value == f.make_default():
            continue
        key = (type(obj).__name__, f.name)
        kp_name = RENAMED.get(key, f.name)
        kp_field = kp_cls._struct.fields[kp_name]
        if key in BITFIELDS:
            value = to_bit_set(value)
        elif isinstance(f.type, type):
            value = to_kafka_python(value, kp_field.data_class, version, flexible)
        elif isinstance(f.type, Array) and isinstance(f.type.element, type) and value is not None:
            value = [to_kafka_python(v, kp_field.data_class, version, flexible) for v in value]
        kwargs[kp_name] = value
    return kp_cls(**kwargs)


def from_kafka_python(kp_obj: Any, cls: type[Struct], version: int) -> Any:
    """kafka-python's decoded value as ours, field by field."""
    kwargs = {}
    for f in cls.__fields__:
        if not f.present(version):
            continue
        key = (cls.__name__, f.name)
        value = getattr(kp_obj, RENAMED.get(key, f.name))
        if key in BITFIELDS:
            value = from_bit_set(value)
        elif isinstance(f.type, type):
            # kafka-python leaves an absent tagged struct as None; Kafka's default is a struct.
            value = f.make_default() if value is None else from_kafka_python(value, f.type, version)
        elif isinstance(f.type, Array) and isinstance(f.type.element, type) and value is not None:
            value = [from_kafka_python(v, f.type.element, version) for v in value]
        elif isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        kwargs[f.name] = value
    return cls(**kwargs)
