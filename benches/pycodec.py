"""Pure-Python decoding of ``__consumer_offsets`` keys and values: the codec's reference and
benchmark baseline.

It decodes record types 0, 1 and 2 (OffsetCommitValue and GroupMetadataValue versions 0 to 4)
into plain dicts shaped like the Rust classes' ``to_dict()``, and walks a log buffer with
kafka-python's record parser (``kafka.record.MemoryRecords``), the outside peer. Other record
types and versions come back as opaque dicts, as in the Rust codec; tagged fields are skipped.

The layouts are not restated here: each (schema, version) is read by a function compiled once,
at import, from the declaration (:mod:`groupcoord.format.records`): the straight-line code a
hand-written decoder would be (one dict display of the fields' reads in wire order), so that
the baseline costs what it did when it was written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from struct import Struct
from typing import Any

from groupcoord.format import records

_I16 = Struct(">h")
_I32 = Struct(">i")
_I64 = Struct(">q")


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def i16(self) -> int:
        (v,) = _I16.unpack_from(self.data, self.pos)
        self.pos += 2
        return int(v)

    def i32(self) -> int:
        (v,) = _I32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(v)

    def i64(self) -> int:
        (v,) = _I64.unpack_from(self.data, self.pos)
        self.pos += 8
        return int(v)

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"truncated at byte {self.pos}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def classic_string(self) -> str | None:
        n = self.i16()
        return None if n == -1 else self._take(n).decode()

    def compact_string(self) -> str | None:
        n = self.uvarint() - 1
        return None if n == -1 else self._take(n).decode()

    def classic_bytes(self) -> bytes | None:
        n = self.i32()
        return None if n == -1 else self._take(n)

    def compact_bytes(self) -> bytes | None:
        n = self.uvarint() - 1
        return None if n == -1 else self._take(n)

    def array_len(self, compact: bool) -> int:
        return self.uvarint() - 1 if compact else self.i32()

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self._take(self.uvarint())


def _expression(t: records.FieldType, flexible: bool, version: int, names: dict[str, Any]) -> str:
    """Python reading a value of type ``t`` from ``r``; the struct readers it calls go into
    ``names``."""
    if isinstance(t, records.Array):
        element = _expression(t.element, flexible, version, names)
        return f"[{element} for _ in range(r.array_len({flexible}))]"
    if isinstance(t, records.Struct):
        name = f"_read_{len(names)}"
        names[name] = _struct_reader(t.fields, version, flexible)
        return f"{name}(r)"
    if t is records.STRING or t is records.BYTES:
        kind = "string" if t is records.STRING else "bytes"
        return f"r.{'compact' if flexible else 'classic'}_{kind}()"
    return {"int16": "r.i16()", "int32": "r.i32()", "int64": "r.i64()"}[t.name]


def _struct_reader(
    fields: tuple[records.Field, ...], version: int, flexible: bool, lead: str | None = None
) -> Callable[..., dict[str, Any]]:
    """A reader of a struct at ``version``, compiled once from the declaration into the
    straight-line function a hand-written decoder would be: the fields on the wire read in
    their order, the others at their defaults; tagged fields are skipped. With ``lead``, it
    takes one more argument, the struct's first entry (a record's type or version)."""
    names: dict[str, Any] = {}
    entries, copies = [f"{lead!r}: {lead}"] if lead else [], []
    for f in fields:
        if f.tag is not None:
            continue
        if f.present(version):
            entries.append(f"{f.name!r}: {_expression(f.type, flexible, version, names)}")
        elif isinstance(f.default, records.CopyOf):
            copies.append(f"    out[{f.name!r}] = out[{f.default.field!r}]")
        else:
            entries.append(f"{f.name!r}: {f.zero()!r}")
    source = "\n".join([
        f"def read(r{', ' + lead if lead else ''}):",
        f"    out = {{{', '.join(entries)}}}",
        *copies,
        *(["    r.skip_tagged_fields()"] if flexible else []),
        "    return out",
    ])
    exec(source, names)  # noqa: S102 - source made above from the declaration
    read: Callable[..., dict[str, Any]] = names["read"]
    return read


def _value_readers(schema: records.Schema) -> dict[int, Callable[..., dict[str, Any]]]:
    low, high = schema.versions
    return {v: _struct_reader(schema.fields, v, schema.is_flexible(v), "version")
            for v in range(low, high + 1)}


_KEYS = {int(r.type): _struct_reader(r.key.fields, 0, False, "record_type") for r in records.RECORDS
         if not r.type.is_consumer_group}
_VALUES = {int(r.type): _value_readers(r.value) for r in records.RECORDS
           if not r.type.is_consumer_group}


def decode_key(data: bytes) -> dict[str, Any]:
    r = _Reader(data)
    record_type = r.i16()
    read = _KEYS.get(record_type)
    if read is None:
        return {"record_type": record_type, "data": data[2:]}
    return read(r, record_type)


def decode_value(key: dict[str, Any], data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    record_type = key["record_type"]
    versions = _VALUES.get(record_type)
    if versions is None and len(data) < 2:
        return {"record_type": record_type, "version": None, "data": data}
    r = _Reader(data)
    version = r.i16()
    read = versions.get(version) if versions is not None else None
    if read is None:
        return {"record_type": record_type, "version": version, "data": data[2:]}
    return read(r, version)


_SUBSCRIPTION = _value_readers(records.CONSUMER_PROTOCOL_SUBSCRIPTION)
_ASSIGNMENT = _value_readers(records.CONSUMER_PROTOCOL_ASSIGNMENT)


def _pairs(partitions: list[dict[str, Any]]) -> list[tuple[str | None, list[int]]]:
    return [(p["topic"], p["partitions"]) for p in partitions]


def decode_subscription(data: bytes) -> dict[str, Any]:
    """The consumer protocol's subscription (versions 0 to 3; a later one is read as its
    version-3 prefix) inside a member's metadata."""
    r = _Reader(data)
    version = r.i16()
    out = _SUBSCRIPTION[min(version, max(_SUBSCRIPTION))](r, version)
    out["owned_partitions"] = _pairs(out["owned_partitions"])
    return out


def decode_assignment(data: bytes) -> dict[str, Any]:
    """The consumer protocol's assignment (versions 0 to 3) inside a member's metadata."""
    r = _Reader(data)
    version = r.i16()
    out = _ASSIGNMENT[min(version, max(_ASSIGNMENT))](r, version)
    out["assigned_partitions"] = _pairs(out["assigned_partitions"])
    return out


def decode_records(data: bytes, partition: int = -1) -> Iterator[dict[str, Any]]:
    """Every record of a log buffer, parsed by kafka-python and decoded here."""
    from kafka.record.memory_records import MemoryRecords  # type: ignore[import-untyped]

    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        control = batch.is_control_batch
        for record in batch:
            key = None if control else decode_key(record.key)
            yield {
                "partition": partition,
                "offset": record.offset,
                "timestamp": record.timestamp,
                "key": key,
                "value": None if key is None else decode_value(key, record.value),
            }
