"""Pure-Python decoding of ``__consumer_offsets`` keys and values: the codec's reference and
benchmark baseline.

It decodes record types 0, 1 and 2 (OffsetCommitValue and GroupMetadataValue versions 0 to 4)
into plain dicts shaped like the Rust classes' ``to_dict()``, and walks a log buffer with
kafka-python's record parser (``kafka.record.MemoryRecords``), the outside peer. Other record
types and versions come back as opaque dicts, as in the Rust codec.
"""

from __future__ import annotations

from collections.abc import Iterator
from struct import Struct
from typing import Any

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

    def string(self, compact: bool) -> str | None:
        n = self.uvarint() - 1 if compact else self.i16()
        return None if n == -1 else self._take(n).decode()

    def bytes_(self, compact: bool) -> bytes | None:
        n = self.uvarint() - 1 if compact else self.i32()
        return None if n == -1 else self._take(n)

    def array_len(self, compact: bool) -> int:
        return self.uvarint() - 1 if compact else self.i32()

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self._take(self.uvarint())


def decode_key(data: bytes) -> dict[str, Any]:
    r = _Reader(data)
    record_type = r.i16()
    if record_type in (0, 1):
        return {"record_type": record_type, "group": r.string(False), "topic": r.string(False),
                "partition": r.i32()}
    if record_type == 2:
        return {"record_type": 2, "group": r.string(False)}
    return {"record_type": record_type, "data": data[2:]}


def decode_value(key: dict[str, Any], data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    record_type = key["record_type"]
    if record_type not in (0, 1, 2) and len(data) < 2:
        return {"record_type": record_type, "version": None, "data": data}
    r = _Reader(data)
    version = r.i16()
    if record_type in (0, 1) and 0 <= version <= 4:
        flexible = version >= 4
        value: dict[str, Any] = {"version": version, "offset": r.i64(), "leader_epoch": -1}
        if version >= 3:
            value["leader_epoch"] = r.i32()
        value["metadata"] = r.string(flexible)
        value["commit_timestamp"] = r.i64()
        value["expire_timestamp"] = r.i64() if version == 1 else -1
        if flexible:
            r.skip_tagged_fields()
        return value
    if record_type == 2 and 0 <= version <= 4:
        flexible = version >= 4
        group: dict[str, Any] = {
            "version": version,
            "protocol_type": r.string(flexible),
            "generation": r.i32(),
            "protocol": r.string(flexible),
            "leader": r.string(flexible),
            "current_state_timestamp": r.i64() if version >= 2 else -1,
        }
        members = []
        for _ in range(r.array_len(flexible)):
            member: dict[str, Any] = {"member_id": r.string(flexible)}
            member["group_instance_id"] = r.string(flexible) if version >= 3 else None
            member["client_id"] = r.string(flexible)
            member["client_host"] = r.string(flexible)
            rebalance_timeout = r.i32() if version >= 1 else None
            member["session_timeout"] = r.i32()
            member["rebalance_timeout"] = (
                member["session_timeout"] if rebalance_timeout is None else rebalance_timeout
            )
            member["subscription"] = r.bytes_(flexible)
            member["assignment"] = r.bytes_(flexible)
            if flexible:
                r.skip_tagged_fields()
            members.append(member)
        group["members"] = members
        if flexible:
            r.skip_tagged_fields()
        return group
    return {"record_type": record_type, "version": version, "data": data[2:]}


def _topic_partitions(r: _Reader) -> list[tuple[str | None, list[int]]]:
    return [(r.string(False), [r.i32() for _ in range(r.array_len(False))])
            for _ in range(r.array_len(False))]


def decode_subscription(data: bytes) -> dict[str, Any]:
    """The consumer protocol's subscription (versions 0 to 3) inside a member's metadata."""
    r = _Reader(data)
    version = r.i16()
    out: dict[str, Any] = {"version": version, "topics": [r.string(False) for _ in range(r.array_len(False))]}
    out["user_data"] = r.bytes_(False)
    out["owned_partitions"] = _topic_partitions(r) if version >= 1 else []
    out["generation_id"] = r.i32() if version >= 2 else -1
    out["rack_id"] = r.string(False) if version >= 3 else None
    return out


def decode_assignment(data: bytes) -> dict[str, Any]:
    """The consumer protocol's assignment (versions 0 to 3) inside a member's metadata."""
    r = _Reader(data)
    version = r.i16()
    return {"version": version, "assigned_partitions": _topic_partitions(r), "user_data": r.bytes_(False)}


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
