"""Encoders and decoders derived from the declarations in :mod:`groupcoord.protocol.schema`.

Two implementations of the same rules live here:

- **The reference codec** (``reference_decode`` / ``reference_encode``) walks the declared
  fields one by one through :mod:`~groupcoord.protocol.primitives`, checking every bound and
  value. It is short, slow and precise: its errors name the field path and byte position.
- **The compiled codec** generates one flat Python function per (struct, version,
  flexibility) from the same declarations, the first time a version is used, and caches it
  on the message class. Consecutive fixed-size fields are read and written by one ``struct``
  call; nested structs call their own compiled functions. Generated code validates lengths
  (no allocation or slice from a hostile prefix) but does not track where it is: when it
  fails, :func:`explain_decode_failure` replays the bytes through the reference codec, which
  fails at the same place and raises the precise :class:`ProtocolError`.

Tests check both codecs agree byte for byte on every message and version.

Invariants of the generated decoders: locals ``buf`` (``bytes``), ``pos`` (the read position)
and ``end`` (``len(buf)``); any exception means malformed input. Generated encoders append to
the ``bytearray`` ``out``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeVar
from uuid import UUID as PyUUID

from groupcoord.protocol import primitives as p
from groupcoord.protocol.errors import EncodeError, ProtocolError, UnsupportedVersionError
from groupcoord.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    FieldType,
    MessageSchema,
    Primitive,
    Struct,
)

M = TypeVar("M", bound=MessageSchema)
Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray], None]

# ---------------------------------------------------------------------------------------------
# The reference codec
# ---------------------------------------------------------------------------------------------

_FIXED_READERS: dict[str, Callable[[bytes, int], tuple[Any, int]]] = {
    "int8": p.read_int8,
    "int16": p.read_int16,
    "int32": p.read_int32,
    "int64": p.read_int64,
    "uint16": p.read_uint16,
    "uint32": p.read_uint32,
    "float64": p.read_float64,
    "bool": p.read_bool,
}

INT_RANGES = {  # the values each integer type can carry
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}


_NULL_STRUCT = b"\xff"
_PRESENT_STRUCT = b"\x01"
"""The int8 marker before a nullable struct: -1 for null, 1 for a struct (any negative
marker reads as null, as in Kafka's generated ``read``)."""


def _path(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _read_value(
    wire: FieldType,
    buf: bytes,
    pos: int,
    version: int,
    flexible: bool,
    compact: bool,
    nullable: bool,
    path: str,
) -> tuple[Any, int]:
    if isinstance(wire, Array):
        start = pos
        count, pos = p.read_array_length(buf, pos, compact)
        if count == -1:
            if not nullable:
                raise ProtocolError("null in a non-nullable array", position=start)
            return None, pos
        items = []
        for i in range(count):
            item, pos = _read_value(
                wire.element, buf, pos, version, flexible, compact, False, f"{path}[{i}]"
            )
            items.append(item)
        return items, pos
    if isinstance(wire, type):
        if nullable:
            marker, pos = p.read_int8(buf, pos)
            if marker < 0:
                return None, pos
        return _reference_decode_struct(wire, buf, pos, version, flexible, path)
    if wire.fmt is not None:
        return _FIXED_READERS[wire.name](buf, pos)
    if wire is STRING:
        if nullable:
            return p.read_nullable_string(buf, pos, compact)
        return p.read_string(buf, pos, compact)
    if wire is BYTES or wire is RECORDS:
        if nullable:
            return p.read_nullable_bytes(buf, pos, compact)
        return p.read_bytes(buf, pos, compact)
    if wire is UUID:
        return p.read_uuid(buf, pos)
    raise AssertionError(wire)


def _read_field(
    f: Field, buf: bytes, pos: int, version: int, flexible: bool, path: str
) -> tuple[Any, int]:
    try:
        return _read_value(
            f.type,
            buf,
            pos,
            version,
            flexible,
            f.is_compact(version, flexible),
            f.is_nullable(version),
            path,
        )
    except ProtocolError as exc:
        if exc.field is None:
            exc.field = path
        raise


def _reference_decode_struct(
    cls: type[Struct], buf: bytes, pos: int, version: int, flexible: bool, path: str
) -> tuple[Any, int]:
    values: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in cls.__fields__:
        if not f.present(version):
            continue
        if f.is_tagged(version, flexible):
            assert f.tag is not None
            tagged[f.tag] = f
            continue
        values[f.name], pos = _read_field(f, buf, pos, version, flexible, _path(path, f.name))
    if flexible:
        section = _path(path, "<tagged fields>")
        try:
            count, pos = p.read_unsigned_varint(buf, pos)
            for _ in range(count):
                tag, pos = p.read_unsigned_varint(buf, pos)
                size_at = pos
                size, pos = p.read_unsigned_varint(buf, pos)
                if pos + size > len(buf):
                    raise ProtocolError(
                        f"tagged field {tag} of {size} bytes runs past the end", position=size_at
                    )
                known = tagged.get(tag)
                if known is not None:
                    # A known tag is read from its own bytes only, as the compiled codec does.
                    try:
                        values[known.name], _ = _read_field(
                            known,
                            buf[pos : pos + size],
                            0,
                            version,
                            flexible,
                            _path(path, known.name),
                        )
                    except ProtocolError as exc:
                        exc.position = None if exc.position is None else exc.position + pos
                        raise
                pos += size
        except ProtocolError as exc:
            if exc.field is None:
                exc.field = section
            raise
    return cls(**values), pos


def require_decodable(cls: type[MessageSchema], version: int) -> None:
    """Raise UnsupportedVersionError unless ``cls`` declares ``version``."""
    if not cls.supports(version):
        raise UnsupportedVersionError(
            f"version {version} is not declared ({cls.min_version}-{cls.max_version})",
            message_name=cls.name,
            api_version=version,
        )


def require_encodable(cls: type[MessageSchema], version: int) -> None:
    """Raise EncodeError unless ``cls`` declares ``version``."""
    if not cls.supports(version):
        raise EncodeError(
            f"version {version} is not declared ({cls.min_version}-{cls.max_version})",
            message_name=cls.name,
            version=version,
            field=None,
        )


def reference_decode(cls: type[M], data: bytes, pos: int, version: int) -> tuple[M, int]:
    """Decode one message at ``pos`` with the reference codec; returns it and the end."""
    require_decodable(cls, version)
    try:
        message, end = _reference_decode_struct(
            cls, bytes(data), pos, version, cls.is_flexible(version), ""
        )
    except ProtocolError as exc:
        exc.message_name = cls.name
        exc.api_version = version
        raise
    return message, end


class _Unencodable(Exception):
    def __init__(self, reason: str, path: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path


def _write_value(
    wire: FieldType,
    value: Any,
    out: bytearray,
    version: int,
    flexible: bool,
    compact: bool,
    nullable: bool,
    path: str,
) -> None:
    if value is None:
        if not nullable:
            raise _Unencodable("None in a field that is not nullable at this version", path)
        if isinstance(wire, Array):
            p.write_array_length(out, None, compact)
        elif isinstance(wire, type):
            out += _NULL_STRUCT
        elif wire is STRING:
            p.write_nullable_string(out, None, compact)
        else:
            p.write_nullable_bytes(out, None, compact)
        return
    if isinstance(wire, Array):
        if not isinstance(value, list):
            raise _Unencodable(f"expected a list, got {type(value).__name__}", path)
        p.write_array_length(out, len(value), compact)
        for i, item in enumerate(value):
            _write_value(wire.element, item, out, version, flexible, compact, False, f"{path}[{i}]")
        return
    if isinstance(wire, type):
        if not isinstance(value, wire):
            raise _Unencodable(f"expected {wire.__name__}, got {type(value).__name__}", path)
        if nullable:
            out += _PRESENT_STRUCT
        _reference_encode_struct(value, out, version, flexible, path)
        return
    if wire.name in INT_RANGES:
        low, high = INT_RANGES[wire.name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Unencodable(f"expected an int, got {type(value).__name__}", path)
        if not low <= value <= high:
            raise _Unencodable(f"{value} out of range for {wire.name}", path)
        out += struct.pack(">" + str(wire.fmt), value)
    elif wire is BOOL:
        if not isinstance(value, bool):
            raise _Unencodable(f"expected a bool, got {type(value).__name__}", path)
        out.append(1 if value else 0)
    elif wire is FLOAT64:
        if not isinstance(value, float | int) or isinstance(value, bool):
            raise _Unencodable(f"expected a float, got {type(value).__name__}", path)
        out += p.FLOAT64.pack(value)
    elif wire is STRING:
        if not isinstance(value, str):
            raise _Unencodable(f"expected a str, got {type(value).__name__}", path)
        try:
            p.write_nullable_string(out, value, compact)
        except (ValueError, UnicodeError) as exc:
            raise _Unencodable(str(exc), path) from None
    elif wire is BYTES or wire is RECORDS:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise _Unencodable(f"expected bytes, got {type(value).__name__}", path)
        p.write_nullable_bytes(out, bytes(value), compact)
    elif wire is UUID:
        if not isinstance(value, PyUUID):
            raise _Unencodable(f"expected a uuid.UUID, got {type(value).__name__}", path)
        out += value.bytes
    else:
        raise AssertionError(wire)


def _differs_from_default(f: Field, value: Any) -> bool:
    return bool(value != f.make_default())


def _reference_encode_struct(
    obj: Struct, out: bytearray, version: int, flexible: bool, path: str
) -> None:
    tagged: list[tuple[int, bytes]] = []
    for f in obj.__fields__:
        if not f.present(version):
            continue
        value = getattr(obj, f.name)
        compact = f.is_compact(version, flexible)
        nullable = f.is_nullable(version)
        fpath = _path(path, f.name)
        if f.is_tagged(version, flexible):
            assert f.tag is not None
            if _differs_from_default(f, value):
                raw = bytearray()
                _write_value(f.type, value, raw, version, flexible, compact, nullable, fpath)
                tagged.append((f.tag, bytes(raw)))
            continue
        _write_value(f.type, value, out, version, flexible, compact, nullable, fpath)
    if flexible:
        p.write_tagged_fields(out, sorted(tagged))


def reference_encode(message: MessageSchema, out: bytearray, version: int) -> None:
    """Append ``message`` at ``version`` to ``out`` with the reference codec."""
    cls = type(message)
    require_encodable(cls, version)
    try:
        _reference_encode_struct(message, out, version, cls.is_flexible(version), "")
    except _Unencodable as exc:
        raise EncodeError(
            exc.reason, message_name=cls.name, version=version, field=exc.path
        ) from None


# ---------------------------------------------------------------------------------------------
# The compiled codec
# ---------------------------------------------------------------------------------------------


class _Malformed(Exception):
    """Raised by generated decoders; the reference codec then says exactly what is wrong."""


def _skip_tagged_fields(buf: bytes, pos: int, count: int) -> int:
    end = len(buf)
    for _ in range(count):
        _, pos = p.read_unsigned_varint(buf, pos)
        size, pos = p.read_unsigned_varint(buf, pos)
        pos += size
        if pos > end:
            raise _Malformed
    return pos


def _write_tagged(out: bytearray, tagged: list[tuple[int, bytearray]]) -> None:
    p.write_unsigned_varint(out, len(tagged))
    for tag, raw in tagged:
        p.write_unsigned_varint(out, tag)
        p.write_unsigned_varint(out, len(raw))
        out += raw


def _unpack_array(fmt: str, count: int, buf: bytes, pos: int) -> list[Any]:
    return list(struct.unpack_from(f">{count}{fmt}", buf, pos))


def _pack_array(fmt: str, values: list[Any]) -> bytes:
    return struct.pack(f">{len(values)}{fmt}", *values)


_HELPERS: dict[str, Any] = {
    "_Malformed": _Malformed,
    "_uvarint": p.read_unsigned_varint,
    "_write_uvarint": p.write_unsigned_varint,
    "_skip_tags": _skip_tagged_fields,
    "_write_tags": _write_tagged,
    "_unpack_array": _unpack_array,
    "_pack_array": _pack_array,
    "_UUID": PyUUID,
    "_new": object.__new__,
    "_i16": p.INT16.unpack_from,
    "_i32": p.INT32.unpack_from,
    "_pack_i16": p.INT16.pack,
    "_pack_i32": p.INT32.pack,
}

_compiled_decoders: dict[tuple[type[Struct], int, bool], Decoder] = {}
_compiled_encoders: dict[tuple[type[Struct], int, bool], Encoder] = {}


class _Source:
    """Generated lines plus the constants and helpers they refer to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = dict(_HELPERS)
        self._counter = 0

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def local(self, stem: str) -> str:
        self._counter += 1
        return f"{stem}{self._counter}"

    def const(self, value: Any, stem: str = "_k") -> str:
        name = self.local(stem)
        self.namespace[name] = value
        return name

    def build(self, name: str, label: str) -> Any:
        exec(compile("\n".join(self.lines), f"<{label}>", "exec"), self.namespace)
        return self.namespace[name]


def _fixed_runs(fields: list[Field]) -> list[list[Field]]:
    """Group consecutive fixed-size primitive fields; other fields stand alone."""
    runs: list[list[Field]] = []
    for f in fields:
        fixed = isinstance(f.type, Primitive) and f.type.fmt is not None
        if fixed and runs and len(runs[-1]) and _is_fixed(runs[-1][0]):
            runs[-1].append(f)
        else:
            runs.append([f])
    return runs


def _is_fixed(f: Field) -> bool:
    return isinstance(f.type, Primitive) and f.type.fmt is not None


# ---- decoders ---------------------------------------------------------------------------------


def _emit_read_length(src: _Source, ind: int, var: str, compact: bool, wide: bool) -> None:
    if compact:
        src.emit(ind, f"{var} = buf[pos]")
        src.emit(ind, f"if {var} < 128:")
        src.emit(ind + 1, "pos += 1")
        src.emit(ind, "else:")
        src.emit(ind + 1, f"{var}, pos = _uvarint(buf, pos)")
        src.emit(ind, f"{var} -= 1")
    else:
        src.emit(ind, f"{var}, = {'_i32' if wide else '_i16'}(buf, pos)")
        src.emit(ind, f"pos += {4 if wide else 2}")


def _emit_read(
    src: _Source,
    ind: int,
    wire: FieldType,
    target: str,
    version: int,
    flexible: bool,
    compact: bool,
    nullable: bool,
) -> None:
    """Emit code that reads one value of ``wire`` into ``target``."""
    if isinstance(wire, type):
        dec = src.const(_struct_decoder(wire, version, flexible), "_dec")
        if nullable:
            src.emit(ind, "pos += 1")
            src.emit(ind, "if buf[pos - 1] > 127:")  # a negative int8 marker
            src.emit(ind + 1, f"{target} = None")
            src.emit(ind, "else:")
            src.emit(ind + 1, f"{target}, pos = {dec}(buf, pos)")
        else:
            src.emit(ind, f"{target}, pos = {dec}(buf, pos)")
        return
    if isinstance(wire, Array):
        n = src.local("n")
        _emit_read_length(src, ind, n, compact, wide=True)
        inner = ind
        if nullable:
            src.emit(ind, f"if {n} == -1:")
            src.emit(ind + 1, f"{target} = None")
            src.emit(ind, "else:")
            inner = ind + 1
        src.emit(inner, f"if {n} < 0 or {n} > end - pos:")
        src.emit(inner + 1, "raise _Malformed")
        element = wire.element
        if isinstance(element, Primitive) and element.fmt is not None:
            size = struct.calcsize(">" + element.fmt)
            src.emit(inner, f"{target} = _unpack_array({element.fmt!r}, {n}, buf, pos)")
            src.emit(inner, f"pos += {n} * {size}")
            return
        items, item = src.local("items"), src.local("item")
        src.emit(inner, f"{items} = []")
        src.emit(inner, f"for _ in range({n}):")
        _emit_read(src, inner + 1, element, item, version, flexible, compact, False)
        src.emit(inner + 1, f"{items}.append({item})")
        src.emit(inner, f"{target} = {items}")
        return
    if wire.fmt is not None:
        unpack = src.const(struct.Struct(">" + wire.fmt).unpack_from, "_unpack")
        src.emit(ind, f"{target}, = {unpack}(buf, pos)")
        src.emit(ind, f"pos += {struct.calcsize('>' + wire.fmt)}")
        return
    if wire is UUID:
        src.emit(ind, f"{target} = _UUID(bytes=buf[pos:pos + 16])")
        src.emit(ind, "pos += 16")
        return
    is_string = wire is STRING
    n = src.local("n")
    _emit_read_length(src, ind, n, compact, wide=not is_string)
    inner = ind
    if nullable:
        src.emit(ind, f"if {n} == -1:")
        src.emit(ind + 1, f"{target} = None")
        src.emit(ind, "else:")
        inner = ind + 1
    limit = f" or {n} > 32767" if is_string else ""
    src.emit(inner, f"if {n} < 0{limit} or pos + {n} > end:")
    src.emit(inner + 1, "raise _Malformed")
    as_text = ".decode('utf-8', 'replace')" if is_string else ""
    src.emit(inner, f"{target} = buf[pos:pos + {n}]{as_text}")
    if is_string:
        # Only a string of invalid UTF-8 can grow past the limit, three bytes per bad byte.
        src.emit(inner, f"if {n} > {p.MAX_STRING_LENGTH // 3} and len({target}.encode()) > {p.MAX_STRING_LENGTH}:")
        src.emit(inner + 1, "raise _Malformed")
    src.emit(inner, f"pos += {n}")


def _emit_defaults(src: _Source, ind: int, fields: list[Field]) -> None:
    for f in fields:
        if f.default_is_mutable:
            src.emit(ind, f"o.{f.name} = {src.const(f.make_default, '_make')}()")
        else:
            src.emit(ind, f"o.{f.name} = {src.const(f.make_default())}")


def _tagged_value_decoder(f: Field, version: int, flexible: bool) -> Decoder:
    src = _Source()
    src.emit(0, "def decode(buf, pos):")
    src.emit(1, "end = len(buf)")
    _emit_read(
        src,
        1,
        f.type,
        "value",
        version,
        flexible,
        f.is_compact(version, flexible),
        f.is_nullable(version),
    )
    src.emit(1, "return value, pos")
    decoder: Decoder = src.build("decode", f"decode tagged {f.name} v{version}")
    return decoder


def _struct_decoder(cls: type[Struct], version: int, flexible: bool) -> Decoder:
    key = (cls, version, flexible)
    cached = _compiled_decoders.get(key)
    if cached is not None:
        return cached
    src = _Source()
    src.namespace["_cls"] = cls
    present = [
        f for f in cls.__fields__ if f.present(version) and not f.is_tagged(version, flexible)
    ]
    tagged = [f for f in cls.__fields__ if f.present(version) and f.is_tagged(version, flexible)]
    absent = [f for f in cls.__fields__ if f not in present]
    src.emit(0, "def decode(buf, pos):")
    src.emit(1, "end = len(buf)")
    src.emit(1, "o = _new(_cls)")
    for run in _fixed_runs(present):
        if _is_fixed(run[0]):
            fmt = "".join(str(f.type.fmt) for f in run if isinstance(f.type, Primitive))
            unpack = src.const(struct.Struct(">" + fmt).unpack_from, "_unpack")
            targets = "".join(f"o.{f.name}, " for f in run)
            src.emit(1, f"{targets}= {unpack}(buf, pos)")
            src.emit(1, f"pos += {struct.calcsize('>' + fmt)}")
        else:
            f = run[0]
            _emit_read(
                src,
                1,
                f.type,
                f"o.{f.name}",
                version,
                flexible,
                f.is_compact(version, flexible),
                f.is_nullable(version),
            )
    _emit_defaults(src, 1, absent)
    if flexible:
        src.emit(1, "count = buf[pos]")
        src.emit(1, "if count < 128:")
        src.emit(2, "pos += 1")
        src.emit(1, "else:")
        src.emit(2, "count, pos = _uvarint(buf, pos)")
        src.emit(1, "if count:")
        if not tagged:
            src.emit(2, "pos = _skip_tags(buf, pos, count)")
        else:
            src.emit(2, "for _ in range(count):")
            src.emit(3, "tag, pos = _uvarint(buf, pos)")
            src.emit(3, "size, pos = _uvarint(buf, pos)")
            src.emit(3, "stop = pos + size")
            src.emit(3, "if stop > end:")
            src.emit(4, "raise _Malformed")
            for i, f in enumerate(tagged):
                dec = src.const(_tagged_value_decoder(f, version, flexible), "_dec_tag")
                src.emit(3, f"{'if' if i == 0 else 'elif'} tag == {f.tag}:")
                src.emit(4, f"o.{f.name}, _ = {dec}(buf[pos:stop], 0)")
            src.emit(3, "pos = stop")
    src.emit(1, "return o, pos")
    decoder: Decoder = src.build("decode", f"decode {cls.__qualname__} v{version}")
    _compiled_decoders[key] = decoder
    return decoder


# ---- encoders ---------------------------------------------------------------------------------


def _emit_write_length(src: _Source, ind: int, expr: str, compact: bool, wide: bool) -> None:
    if compact:
        n = src.local("n")
        src.emit(ind, f"{n} = {expr} + 1")
        src.emit(ind, f"if {n} < 128:")
        src.emit(ind + 1, f"out.append({n})")
        src.emit(ind, "else:")
        src.emit(ind + 1, f"_write_uvarint(out, {n})")
    else:
        src.emit(ind, f"out += {'_pack_i32' if wide else '_pack_i16'}({expr})")


def _emit_write(
    src: _Source,
    ind: int,
    wire: FieldType,
    value: str,
    version: int,
    flexible: bool,
    compact: bool,
    nullable: bool,
) -> None:
    """Emit code that writes ``value`` (a simple expression) of ``wire`` to ``out``."""
    if isinstance(wire, type):
        enc = src.const(_struct_encoder(wire, version, flexible), "_enc")
        if nullable:
            src.emit(ind, f"if {value} is None:")
            src.emit(ind + 1, f"out += {_NULL_STRUCT!r}")
            src.emit(ind, "else:")
            src.emit(ind + 1, f"out += {_PRESENT_STRUCT!r}")
            src.emit(ind + 1, f"{enc}({value}, out)")
        else:
            src.emit(ind, f"{enc}({value}, out)")
        return
    if isinstance(wire, Primitive) and wire.fmt is not None:
        pack = src.const(struct.Struct(">" + wire.fmt).pack, "_pack")
        src.emit(ind, f"out += {pack}({value})")
        return
    if wire is UUID:
        src.emit(ind, f"out += {value}.bytes")
        return
    inner = ind
    if nullable:
        null = b"\x00" if compact else (b"\xff\xff" if wire is STRING else b"\xff\xff\xff\xff")
        src.emit(ind, f"if {value} is None:")
        src.emit(ind + 1, f"out += {null!r}")
        src.emit(ind, "else:")
        inner = ind + 1
    if isinstance(wire, Array):
        _emit_write_length(src, inner, f"len({value})", compact, wide=True)
        element = wire.element
        if isinstance(element, Primitive) and element.fmt is not None:
            src.emit(inner, f"out += _pack_array({element.fmt!r}, {value})")
            return
        item = src.local("item")
        src.emit(inner, f"for {item} in {value}:")
        _emit_write(src, inner + 1, element, item, version, flexible, compact, False)
        return
    if wire is STRING:
        raw = src.local("raw")
        src.emit(inner, f"{raw} = {value}.encode()")
        src.emit(inner, f"if len({raw}) > 32767:")
        src.emit(inner + 1, "raise ValueError('string too long')")
        _emit_write_length(src, inner, f"len({raw})", compact, wide=False)
        src.emit(inner, f"out += {raw}")
        return
    _emit_write_length(src, inner, f"len({value})", compact, wide=True)
    src.emit(inner, f"out += {value}")


def _tagged_value_encoder(f: Field, version: int, flexible: bool) -> Encoder:
    src = _Source()
    src.emit(0, "def encode(value, out):")
    _emit_write(
        src,
        1,
        f.type,
        "value",
        version,
        flexible,
        f.is_compact(version, flexible),
        f.is_nullable(version),
    )
    encoder: Encoder = src.build("encode", f"encode tagged {f.name} v{version}")
    return encoder


def _struct_encoder(cls: type[Struct], version: int, flexible: bool) -> Encoder:
    key = (cls, version, flexible)
    cached = _compiled_encoders.get(key)
    if cached is not None:
        return cached
    src = _Source()
    present = [
        f for f in cls.__fields__ if f.present(version) and not f.is_tagged(version, flexible)
    ]
    tagged = sorted(
        (f for f in cls.__fields__ if f.present(version) and f.is_tagged(version, flexible)),
        key=lambda f: f.tag or 0,
    )
    src.emit(0, "def encode(o, out):")
    for run in _fixed_runs(present):
        if _is_fixed(run[0]):
            fmt = "".join(str(f.type.fmt) for f in run if isinstance(f.type, Primitive))
            pack = src.const(struct.Struct(">" + fmt).pack, "_pack")
            src.emit(1, f"out += {pack}({', '.join(f'o.{f.name}' for f in run)})")
        else:
            f = run[0]
            value = src.local("v")
            src.emit(1, f"{value} = o.{f.name}")
            _emit_write(
                src,
                1,
                f.type,
                value,
                version,
                flexible,
                f.is_compact(version, flexible),
                f.is_nullable(version),
            )
    if flexible and not tagged:
        src.emit(1, "out.append(0)")
    elif flexible:
        src.emit(1, "tagged = []")
        for f in tagged:
            enc = src.const(_tagged_value_encoder(f, version, flexible), "_enc_tag")
            if f.default is None:
                condition = f"o.{f.name} is not None"
            elif isinstance(f.type, Array):
                condition = f"o.{f.name}"
            else:
                condition = f"o.{f.name} != {src.const(f.make_default())}"
            src.emit(1, f"if {condition}:")
            src.emit(2, "raw = bytearray()")
            src.emit(2, f"{enc}(o.{f.name}, raw)")
            src.emit(2, f"tagged.append(({f.tag}, raw))")
        src.emit(1, "if tagged:")
        src.emit(2, "_write_tags(out, tagged)")
        src.emit(1, "else:")
        src.emit(2, "out.append(0)")
    if len(src.lines) == 1:
        src.emit(1, "pass")
    encoder: Encoder = src.build("encode", f"encode {cls.__qualname__} v{version}")
    _compiled_encoders[key] = encoder
    return encoder


# ---- entry points -----------------------------------------------------------------------------


def decoder_for(cls: type[MessageSchema], version: int) -> Decoder:
    """The compiled decoder of ``cls`` at ``version``: ``(buf, pos) -> (message, end)``."""
    require_decodable(cls, version)
    decoder = _struct_decoder(cls, version, cls.is_flexible(version))
    cls._decoders[version] = decoder
    return decoder


def encoder_for(cls: type[MessageSchema], version: int) -> Encoder:
    """The compiled encoder of ``cls`` at ``version``: ``(message, out) -> None``."""
    require_encodable(cls, version)
    encoder = _struct_encoder(cls, version, cls.is_flexible(version))
    cls._encoders[version] = encoder
    return encoder


def decode_message(cls: type[M], data: bytes, pos: int, version: int) -> tuple[M, int]:
    """Decode one message of ``cls`` at ``pos``; returns it and the position after it.

    Raises:
        ProtocolError: the bytes are not a message of ``cls`` at ``version``.
    """
    if type(data) is not bytes:
        data = bytes(data)
    decode = cls._decoders.get(version) or decoder_for(cls, version)
    try:
        message, end = decode(data, pos)
    except Exception as exc:
        raise explain_decode_failure(cls, version, data, pos, exc) from None
    return message, end


def explain_decode_failure(
    cls: type[MessageSchema], version: int, data: bytes, pos: int, exc: Exception
) -> ProtocolError:
    """The precise error for bytes the compiled decoder rejected, from the reference codec.

    If the reference codec accepts the bytes, the two disagree: that is a bug, and the
    compiled decoder's own exception is raised.
    """
    try:
        reference_decode(cls, data, pos, version)
    except ProtocolError as error:
        return error
    raise exc


def explain_encode_failure(message: MessageSchema, version: int, exc: Exception) -> EncodeError:
    """The precise error for a message the compiled encoder could not encode."""
    try:
        reference_encode(message, bytearray(), version)
    except EncodeError as error:
        return error
    raise exc
