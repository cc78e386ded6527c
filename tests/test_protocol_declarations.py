"""Our declarations against Kafka's own JSON message specifications, as shipped inside
kafka-python 3 (``kafka/protocol/schemas/resources``, Kafka 4.1's files): for every version both
describe, the same fields in the same order, with the same types, nullability, tags and
defaults. Byte parity (test_protocol_kafka_python) cannot see defaults of absent fields; this
can. The versions kafka-python's files no longer describe are checked by aiokafka parity.

kafka-python 3 ships no files for KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe:
``kafka_message_specs/`` holds Kafka 4.3.1's, copied unchanged from Kafka's
``clients/src/main/resources/common/message/``."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from groupcoord.protocol import Message
from groupcoord.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Array,
    FieldType,
    Primitive,
    Struct,
    in_range,
    parse_versions,
)

from protocol_values import MESSAGE_VERSIONS, message_id

PRIMITIVES = {
    p.name: p
    for p in (
        INT8,
        INT16,
        INT32,
        INT64,
        UINT16,
        UINT32,
        FLOAT64,
        BOOL,
        STRING,
        BYTES,
        UUID,
        RECORDS,
    )
}


KAFKA_MESSAGE_SPECS = Path(__file__).with_name("kafka_message_specs")


def spec_text(name: str) -> str:
    shipped = resources.files("kafka.protocol.schemas.resources").joinpath(f"{name}.json")
    if shipped.is_file():
        return shipped.read_text()
    return (KAFKA_MESSAGE_SPECS / f"{name}.json").read_text()


def load_spec(name: str) -> dict[str, Any]:
    text = spec_text(name)
    spec: dict[str, Any] = json.loads(
        "\n".join(re.sub(r"^\s*//.*", "", line) for line in text.splitlines())
    )
    common = {struct["name"]: struct["fields"] for struct in spec.get("commonStructs", [])}

    def inline(fields: list[dict[str, Any]]) -> None:
        for f in fields:
            struct_name = f["type"].removeprefix("[]")
            if "fields" not in f and struct_name in common:
                f["fields"] = common[struct_name]
            inline(f.get("fields", []))

    inline(spec["fields"])
    return spec


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def spec_default(spec_field: dict[str, Any], wire: Primitive) -> Any:
    raw = spec_field.get("default")
    if isinstance(raw, bool | int):
        return raw
    if raw is None or (raw == "" and wire is not STRING):
        return wire.zero
    if raw == "null":
        return None
    if wire is BOOL:
        return raw == "true"
    if wire is STRING:
        return raw
    return int(raw, 0)


def check_fields(
    cls: type[Struct], spec_fields: list[dict[str, Any]], version: int, flexible: bool
) -> None:
    ours = [f for f in cls.__fields__ if f.present(version)]
    theirs = [sf for sf in spec_fields if in_range(version, parse_versions(sf["versions"]))]
    where = f"{cls.__name__} v{version}"
    assert [f.name for f in ours] == [snake(sf["name"]) for sf in theirs], where
    for f, sf in zip(ours, theirs, strict=True):
        at = f"{where}.{f.name}"
        assert f.is_nullable(version) == in_range(
            version, parse_versions(sf.get("nullableVersions", "none"))
        ), at
        tagged = (
            "taggedVersions" in sf
            and in_range(version, parse_versions(sf["taggedVersions"]))
            and flexible
        )
        assert f.is_tagged(version, flexible) == tagged, at
        if tagged:
            assert f.tag == sf["tag"], at
        if sf.get("flexibleVersions") is not None:
            assert f.is_compact(version, flexible) == in_range(
                version, parse_versions(sf["flexibleVersions"])
            ), at
        check_type(f.type, sf, version, flexible, at)
        if isinstance(f.type, Primitive):
            assert f.make_default() == spec_default(sf, f.type), at


def check_type(wire: FieldType, sf: dict[str, Any], version: int, flexible: bool, at: str) -> None:
    spec_type: str = sf["type"]
    if isinstance(wire, Array):
        assert spec_type.startswith("[]"), at
        element = wire.element
        if isinstance(element, Primitive):
            assert PRIMITIVES[spec_type[2:]] is element, at
        else:
            assert element.__name__ == spec_type[2:], at
            check_fields(element, sf["fields"], version, flexible)
    elif isinstance(wire, type):
        assert wire.__name__ == spec_type, at
        check_fields(wire, sf["fields"], version, flexible)
    else:
        assert PRIMITIVES[spec_type] is wire, at


SPEC_VERSIONS = [
    (cls, version)
    for cls, version in MESSAGE_VERSIONS
    if in_range(version, parse_versions(load_spec(cls.__name__)["validVersions"]))
]


def test_spec_check_covers_every_message() -> None:
    assert {cls for cls, _ in SPEC_VERSIONS} == {cls for cls, _ in MESSAGE_VERSIONS}


@pytest.mark.parametrize("cls_version", SPEC_VERSIONS, ids=message_id)
def test_declaration_matches_kafka_spec(cls_version: tuple[type[Message], int]) -> None:
    cls, version = cls_version
    spec = load_spec(cls.__name__)
    assert spec["apiKey"] == cls.api_key  # type: ignore[attr-defined]
    assert cls.is_flexible(version) == in_range(version, parse_versions(spec["flexibleVersions"]))
    check_fields(cls, spec["fields"], version, cls.is_flexible(version))


@pytest.mark.parametrize("name", ["RequestHeader", "ResponseHeader"])
def test_headers_match_kafka_spec(name: str) -> None:
    from groupcoord.protocol import headers

    cls = getattr(headers, name)
    spec = load_spec(name)
    for version in range(cls.min_version, cls.max_version + 1):
        check_fields(cls, spec["fields"], version, cls.is_flexible(version))
