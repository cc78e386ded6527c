"""Primitive encodings against known vectors (Kafka's ByteUtilsTest values), and their bounds."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from groupcoord.protocol import ProtocolError, primitives as p

VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]

UNSIGNED_VARINTS = [(0, "00"), (127, "7f"), (128, "8001"), (300, "ac02"), (2**32 - 1, "ffffffff0f")]


@pytest.mark.parametrize(("value", "encoded"), VARINTS)
def test_varint_vectors(value: int, encoded: str) -> None:
    out = bytearray()
    p.write_varint(out, value)
    assert out.hex() == encoded
    assert p.read_varint(bytes(out), 0) == (value, len(out))


@pytest.mark.parametrize(("value", "encoded"), UNSIGNED_VARINTS)
def test_unsigned_varint_vectors(value: int, encoded: str) -> None:
    assert p.unsigned_varint(value).hex() == encoded
    assert p.read_unsigned_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    out = bytearray()
    p.write_varlong(out, value)
    assert len(out) <= 10
    assert p.read_varlong(bytes(out), 0) == (value, len(out))


def test_varint_bounds() -> None:
    with pytest.raises(ProtocolError, match="longer than 5 bytes"):
        p.read_varint(bytes.fromhex("ffffffffff01"), 0)
    with pytest.raises(ProtocolError, match="truncated"):
        p.read_unsigned_varint(bytes.fromhex("ff"), 0)
    assert p.read_varlong(bytes.fromhex("ffffffffffffffffff01"), 0) == (-(2**63), 10)


def test_fixed_width_readers() -> None:
    data = bytes.fromhex("ff 8000 80000000 8000000000000000 ffff ffffffff 3ff8000000000000 02")
    pos = 0
    values = []
    for reader in (
        p.read_int8,
        p.read_int16,
        p.read_int32,
        p.read_int64,
        p.read_uint16,
        p.read_uint32,
        p.read_float64,
        p.read_bool,
    ):
        value, pos = reader(data, pos)
        values.append(value)
    assert values == [-1, -(2**15), -(2**31), -(2**63), 2**16 - 1, 2**32 - 1, 1.5, True]
    with pytest.raises(ProtocolError) as caught:
        p.read_int64(data, len(data) - 3)
    assert (caught.value.position, caught.value.reason) == (
        len(data) - 3,
        "truncated: needs 8 bytes, 3 left",
    )


def test_strings_and_bytes() -> None:
    out = bytearray()
    p.write_nullable_string(out, "héllo")
    p.write_nullable_string(out, None)
    p.write_nullable_string(out, "x", compact=True)
    p.write_nullable_string(out, None, compact=True)
    p.write_nullable_bytes(out, b"ab", compact=True)
    p.write_nullable_bytes(out, None)
    assert (
        out.hex()
        == "0006" + "héllo".encode().hex() + "ffff" + "0278" + "00" + "036162" + "ffffffff"
    )
    data, pos = bytes(out), 0
    s1, pos = p.read_string(data, pos)
    s2, pos = p.read_nullable_string(data, pos)
    s3, pos = p.read_string(data, pos, compact=True)
    s4, pos = p.read_nullable_string(data, pos, compact=True)
    b1, pos = p.read_bytes(data, pos, compact=True)
    b2, pos = p.read_nullable_bytes(data, pos)
    assert (s1, s2, s3, s4, b1, b2, pos) == ("héllo", None, "x", None, b"ab", None, len(data))
    with pytest.raises(ProtocolError, match="exceeds 32767"):
        p.read_string(p.unsigned_varint(40_000), 0, compact=True)
    with pytest.raises(ProtocolError, match="negative bytes length"):
        p.read_bytes(bytes.fromhex("fffffffe"), 0)


def test_arrays_and_tagged_fields() -> None:
    out = bytearray()
    p.write_array_length(out, 3, compact=True)
    p.write_array_length(out, None)
    p.write_tagged_fields(out, [(0, b"\x01"), (300, b"")])
    data = bytes(out) + b"\x00\x00\x00"
    count, pos = p.read_array_length(data, 0, compact=True)
    null, pos = p.read_array_length(data, pos)
    tags, pos = p.read_tagged_fields(data, pos)
    assert (count, null, tags) == (3, -1, [(0, b"\x01"), (300, b"")])
    with pytest.raises(ProtocolError, match="exceeds the 0 bytes left"):
        p.read_array_length(bytes.fromhex("00000001"), 0)
    uuid, _ = p.read_uuid(bytes(range(16)), 0)
    assert uuid.bytes == bytes(range(16))


def test_invalid_utf8_reads_as_replacements_unless_they_outgrow_a_string() -> None:
    assert p.read_string(b"\x00\x03ab\xff", 0) == ("ab\ufffd", 5)
    fits = b"\x2a\xaa" + b"\xff" * 10_922  # 32,766 bytes once replaced
    assert p.read_string(fits, 0) == ("\ufffd" * 10_922, len(fits))
    with pytest.raises(ProtocolError, match="reads as 32769 bytes with its invalid bytes replaced"):
        p.read_string(b"\x2a\xab" + b"\xff" * 10_923, 0)
    assert p.read_string(b"\x7f\xff" + "é".encode() * 16_383 + b"a", 0)[0] == "é" * 16_383 + "a"
