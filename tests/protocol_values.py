"""Values for protocol tests, derived from the declarations: hypothesis strategies that fill
exactly the fields a version has, and one non-default sample value per wire type."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from hypothesis import strategies as st

from groupcoord.protocol import APIS, Message, Request, RequestHeader, request_header_version
from groupcoord.protocol.codec import INT_RANGES
from groupcoord.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    RECORDS,
    STRING,
    UUID as UUID_TYPE,
    Array,
    Field,
    FieldType,
    Primitive,
    Struct,
)

MESSAGES: list[type[Message]] = [
    cls for api in APIS.values() for cls in (api.request, api.response)
]
MESSAGE_VERSIONS = [
    (cls, version) for cls in MESSAGES for version in range(cls.min_version, cls.max_version + 1)
]


def message_id(param: Any) -> str:
    if isinstance(param, tuple):
        return f"{param[0].__name__}-v{param[1]}"
    return str(param)


def _primitive(wire: Primitive) -> st.SearchStrategy[Any]:
    if wire.name in INT_RANGES:
        low, high = INT_RANGES[wire.name]
        return st.integers(low, high)
    if wire is BOOL:
        return st.booleans()
    if wire is FLOAT64:
        return st.floats(allow_nan=False)
    if wire is STRING:
        return st.text(st.characters(codec="utf-8"), max_size=12)
    if wire is BYTES or wire is RECORDS:
        return st.binary(max_size=12)
    if wire is UUID_TYPE:
        return st.uuids()
    raise AssertionError(wire)


def value_strategy(
    wire: FieldType, version: int, flexible: bool, nullable: bool
) -> st.SearchStrategy[Any]:
    if isinstance(wire, Array):
        base: st.SearchStrategy[Any] = st.lists(
            value_strategy(wire.element, version, flexible, False), max_size=3
        )
    elif isinstance(wire, type):
        base = struct_strategy(wire, version, flexible)
    else:
        base = _primitive(wire)
    return st.none() | base if nullable else base


def struct_strategy(cls: type[Struct], version: int, flexible: bool) -> st.SearchStrategy[Any]:
    fields = {
        f.name: value_strategy(f.type, version, flexible, f.is_nullable(version))
        for f in cls.__fields__
        if f.present(version)
    }
    return st.builds(cls, **fields)


def message_strategy(cls: type[Message], version: int) -> st.SearchStrategy[Any]:
    return struct_strategy(cls, version, cls.is_flexible(version))


def sample_value(f: Field, version: int) -> Any:
    """A value of ``f`` that differs from its default and is valid at ``version``."""
    wire = f.type
    if isinstance(wire, Array):
        element = wire.element
        if isinstance(element, type):
            return [sample_message(element, version)]
        return [_sample_primitive(element, 0)]
    if isinstance(wire, type):
        return sample_message(wire, version)
    default = f.make_default()
    value = _sample_primitive(wire, 0)
    return value if value != default else _sample_primitive(wire, 1)


def _sample_primitive(wire: Primitive, which: int) -> Any:
    if wire.name in INT_RANGES:
        return (7, -3)[which] if wire.name.startswith("int") else (7, 9)[which]
    samples: dict[str, tuple[Any, Any]] = {
        "bool": (True, False),
        "float64": (1.5, -2.25),
        "string": ("grüße", "x"),
        "bytes": (b"\x00\x01", b"z"),
        "records": (b"\x00\x01", b"z"),
        "uuid": (UUID(int=0x0123456789ABCDEF0123456789ABCDEF), UUID(int=1)),
    }
    return samples[wire.name][which]


def sample_message(cls: type[Struct], version: int) -> Any:
    """An instance of ``cls`` whose every field present at ``version`` is not its default."""
    return cls(**{f.name: sample_value(f, version) for f in cls.__fields__ if f.present(version)})


def request_frame(
    request: Request, version: int, correlation_id: int, client_id: str | None
) -> bytes:
    header = RequestHeader(
        request_api_key=request.api_key,
        request_api_version=version,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    header_version = request_header_version(request.is_flexible(version))
    return header.encode(header_version) + request.encode(version)
