"""Kafka's primitive wire types: readers and writers.

Readers take ``(buf, pos)`` and return ``(value, new_pos)``; writers append to a
``bytearray``. Every reader checks its bounds before it touches the buffer and raises
:class:`~groupcoord.protocol.errors.ProtocolError` naming the byte position: a length prefix
is checked against the bytes that remain before anything is sliced or allocated, so a hostile
prefix costs nothing.

Encodings (Kafka's ``ByteBufferAccessor`` / ``ByteUtils``): integers big-endian; ``bool`` one
byte, non-zero is true; ``uuid`` 16 bytes; ``string`` an int16 length then UTF-8 (-1: null;
bytes that are not UTF-8 read as U+FFFD, as Java's ``String`` constructor reads them);
``bytes`` an int32 length (-1: null); *compact* strings, bytes and arrays (flexible versions)
an unsigned varint of length + 1 (0: null); ``varint``/``varlong`` zigzag-encoded, unsigned
varints little-endian base 128. Tagged fields: an unsigned varint count, then per field an
unsigned varint tag, an unsigned varint size and that many bytes.
"""

from __future__ import annotations

from struct import Struct
from uuid import UUID

from groupcoord.protocol.errors import ProtocolError

INT8 = Struct(">b")
INT16 = Struct(">h")
INT32 = Struct(">i")
INT64 = Struct(">q")
UINT16 = Struct(">H")
UINT32 = Struct(">I")
FLOAT64 = Struct(">d")

MAX_STRING_LENGTH = 0x7FFF
"""Kafka refuses strings longer than an int16 can count, compact or not."""

ZERO_UUID = UUID(int=0)


def truncated(buf: bytes, pos: int, size: int) -> ProtocolError:
    left = max(len(buf) - pos, 0)
    return ProtocolError(f"truncated: needs {size} bytes, {left} left", position=pos)


def _fixed(codec: Struct, buf: bytes, pos: int) -> tuple[int, int]:
    end = pos + codec.size
    if end > len(buf):
        raise truncated(buf, pos, codec.size)
    return int(codec.unpack_from(buf, pos)[0]), end


def read_int8(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(INT8, buf, pos)


def read_int16(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(INT16, buf, pos)


def read_int32(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(INT32, buf, pos)


def read_int64(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(INT64, buf, pos)


def read_uint16(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(UINT16, buf, pos)


def read_uint32(buf: bytes, pos: int) -> tuple[int, int]:
    return _fixed(UINT32, buf, pos)


def read_float64(buf: bytes, pos: int) -> tuple[float, int]:
    if pos + 8 > len(buf):
        raise truncated(buf, pos, 8)
    return float(FLOAT64.unpack_from(buf, pos)[0]), pos + 8


def read_bool(buf: bytes, pos: int) -> tuple[bool, int]:
    if pos >= len(buf):
        raise truncated(buf, pos, 1)
    return buf[pos] != 0, pos + 1


def read_uuid(buf: bytes, pos: int) -> tuple[UUID, int]:
    if pos + 16 > len(buf):
        raise truncated(buf, pos, 16)
    return UUID(bytes=bytes(buf[pos : pos + 16])), pos + 16


def read_unsigned_varint(buf: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """An unsigned varint of at most ``max_bytes`` bytes (5 for 32 bits, 10 for 64)."""
    value = shift = 0
    start = pos
    end = len(buf)
    while True:
        if pos >= end:
            raise truncated(buf, pos, 1)
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if pos - start >= max_bytes:
            raise ProtocolError(f"varint longer than {max_bytes} bytes", position=start)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    raw, pos = read_unsigned_varint(buf, pos, 5)
    raw &= 0xFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    raw, pos = read_unsigned_varint(buf, pos, 10)
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), pos


def _length(buf: bytes, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    if compact:
        n, pos = read_unsigned_varint(buf, pos)
        return n - 1, pos
    return _fixed(INT32 if wide else INT16, buf, pos)


def _slice(buf: bytes, start: int, pos: int, n: int, what: str) -> bytes:
    if n < -1:
        raise ProtocolError(f"negative {what} length {n}", position=start)
    if pos + n > len(buf):
        raise ProtocolError(
            f"{what} length {n} runs past the end ({len(buf) - pos} bytes left)", position=start
        )
    return bytes(buf[pos : pos + n])


def read_nullable_string(buf: bytes, pos: int, compact: bool = False) -> tuple[str | None, int]:
    start = pos
    n, pos = _length(buf, pos, compact, wide=False)
    if n == -1:
        return None, pos
    if n > MAX_STRING_LENGTH:
        raise ProtocolError(f"string length {n} exceeds {MAX_STRING_LENGTH}", position=start)
    text = _slice(buf, start, pos, n, "string").decode("utf-8", "replace")
    if n > MAX_STRING_LENGTH // 3 and len(text.encode()) > MAX_STRING_LENGTH:
        raise ProtocolError(
            f"string of {n} bytes that are not all UTF-8 reads as {len(text.encode())} bytes with its "
            f"invalid bytes replaced, more than a string may hold ({MAX_STRING_LENGTH})", position=start)
    return text, pos + n


def read_string(buf: bytes, pos: int, compact: bool = False) -> tuple[str, int]:
    value, end = read_nullable_string(buf, pos, compact)
    if value is None:
        raise ProtocolError("null in a non-nullable string", position=pos)
    return value, end


def read_nullable_bytes(buf: bytes, pos: int, compact: bool = False) -> tuple[bytes | None, int]:
    start = pos
    n, pos = _length(buf, pos, compact, wide=True)
    if n == -1:
        return None, pos
    return _slice(buf, start, pos, n, "bytes"), pos + n


def read_bytes(buf: bytes, pos: int, compact: bool = False) -> tuple[bytes, int]:
    value, end = read_nullable_bytes(buf, pos, compact)
    if value is None:
        raise ProtocolError("null in non-nullable bytes", position=pos)
    return value, end


def read_array_length(buf: bytes, pos: int, compact: bool = False) -> tuple[int, int]:
    """An array's element count (-1: null), refused when it exceeds the bytes that remain:
    every element takes at least one byte, so such a count can only be hostile or corrupt."""
    start = pos
    n, pos = _length(buf, pos, compact, wide=True)
    if n < -1:
        raise ProtocolError(f"negative array length {n}", position=start)
    if n > len(buf) - pos:
        raise ProtocolError(
            f"array length {n} exceeds the {len(buf) - pos} bytes left", position=start
        )
    return n, pos


def read_tagged_fields(buf: bytes, pos: int) -> tuple[list[tuple[int, bytes]], int]:
    """A tagged-field section as ``(tag, raw bytes)`` pairs, in wire order."""
    count, pos = read_unsigned_varint(buf, pos)
    if count > len(buf) - pos:
        raise ProtocolError(f"tagged field count {count} exceeds the bytes left", position=pos)
    fields = []
    for _ in range(count):
        tag, pos = read_unsigned_varint(buf, pos)
        start = pos
        size, pos = read_unsigned_varint(buf, pos)
        fields.append((tag, _slice(buf, start, pos, size, "tagged field")))
        pos += size
    return fields, pos


def write_unsigned_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def unsigned_varint(value: int) -> bytes:
    """The unsigned varint encoding of ``value``, as bytes."""
    out = bytearray()
    write_unsigned_varint(out, value)
    return bytes(out)


def write_varint(out: bytearray, value: int) -> None:
    write_unsigned_varint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    write_unsigned_varint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def write_nullable_string(out: bytearray, value: str | None, compact: bool = False) -> None:
    if value is None:
        if compact:
            out.append(0)
        else:
            out += INT16.pack(-1)
        return
    raw = value.encode()
    if len(raw) > MAX_STRING_LENGTH:
        raise ValueError(f"string of {len(raw)} bytes exceeds {MAX_STRING_LENGTH}")
    if compact:
        write_unsigned_varint(out, len(raw) + 1)
    else:
        out += INT16.pack(len(raw))
    out += raw


def write_nullable_bytes(out: bytearray, value: bytes | None, compact: bool = False) -> None:
    if value is None:
        if compact:
            out.append(0)
        else:
            out += INT32.pack(-1)
        return
    if compact:
        write_unsigned_varint(out, len(value) + 1)
    else:
        out += INT32.pack(len(value))
    out += value


def write_array_length(out: bytearray, count: int | None, compact: bool = False) -> None:
    if compact:
        write_unsigned_varint(out, 0 if count is None else count + 1)
    else:
        out += INT32.pack(-1 if count is None else count)


def write_tagged_fields(out: bytearray, fields: list[tuple[int, bytes]]) -> None:
    """Write a tagged-field section; ``fields`` must be sorted by tag."""
    write_unsigned_varint(out, len(fields))
    for tag, raw in fields:
        write_unsigned_varint(out, tag)
        write_unsigned_varint(out, len(raw))
        out += raw
