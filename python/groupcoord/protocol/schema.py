"""How messages are declared: typed classes whose fields carry their wire type and versions.

A message is declared once, for all its versions, in the terms of Kafka's JSON message
specifications (``clients/src/main/resources/common/message/*.json``)::

    class HeartbeatRequest(Request, api_key=12, versions="0-4", flexible="4+"):
        group_id: str = field(STRING)
        generation_id: int = field(INT32)
        member_id: str = field(STRING)
        group_instance_id: str | None = field(STRING, versions="3+", nullable="3+", default=None)

- ``versions`` of a message are its valid versions; ``flexible`` the versions that use compact
  strings, bytes and arrays and end every struct with tagged fields.
- A field exists on the wire in its ``versions`` (``"0+"``, ``"3+"``, ``"2-4"``, ``"1"``); in
  other versions it is not written and decodes to its default. ``nullable`` are the versions
  where it may be null (None); ``tag`` makes it a tagged field in ``tagged_versions`` (its
  ``versions`` unless given). ``flexible="none"`` keeps a string non-compact in flexible
  versions (the request header's client id).
- Without ``default``, a field defaults to Kafka's zero value for its type: 0, False, ``""``,
  ``b""``, the zero uuid, an empty list, a default struct, None for records.
- Nested structs are declared the same way as ``Struct`` subclasses (inner classes named as in
  Kafka's specification), and referenced with ``field(Sub)`` or ``field(Array(Sub))``. A
  nullable struct (``nullable=..., default=None``) is preceded on the wire by an int8 marker,
  -1 for null and 1 for a struct, as Kafka's generated ``write`` and ``read`` do.
- Field order is wire order.

Every class gets a keyword-only ``__init__`` (every argument optional), ``__eq__`` and
``__repr__``, and ``__slots__``. Type checkers see the classes as dataclasses
(``dataclass_transform``), so handlers get typed attributes. Encoders and decoders are
derived from the declarations by :mod:`groupcoord.protocol.codec`, once per (message,
version); :mod:`groupcoord.protocol.message` gives messages their ``encode`` and ``decode``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self, cast, dataclass_transform

from groupcoord.protocol.errors import ProtocolError
from groupcoord.protocol.primitives import ZERO_UUID
from groupcoord.versions import MAX_VERSION, NO_VERSIONS
from groupcoord.versions import VersionRange as VersionRange
from groupcoord.versions import in_range as in_range
from groupcoord.versions import parse_versions as parse_versions

@dataclass(frozen=True)
class Primitive:
    """A primitive wire type. ``fmt`` is its ``struct`` format when it has a fixed size."""

    name: str
    fmt: str | None
    zero: object

    def __repr__(self) -> str:
        return self.name.upper()


INT8 = Primitive("int8", "b", 0)
INT16 = Primitive("int16", "h", 0)
INT32 = Primitive("int32", "i", 0)
INT64 = Primitive("int64", "q", 0)
UINT16 = Primitive("uint16", "H", 0)
UINT32 = Primitive("uint32", "I", 0)
FLOAT64 = Primitive("float64", "d", 0.0)
BOOL = Primitive("bool", "?", False)
STRING = Primitive("string", None, "")
BYTES = Primitive("bytes", None, b"")
UUID = Primitive("uuid", None, ZERO_UUID)
RECORDS = Primitive("records", None, None)
"""A record set: nullable bytes (compact in flexible versions), kept undecoded."""


@dataclass(frozen=True)
class Array:
    """An array (compact in flexible versions) of a primitive or a struct."""

    element: Primitive | type[Struct]

    def __repr__(self) -> str:
        element = self.element
        return (
            f"Array({element!r})"
            if isinstance(element, Primitive)
            else f"Array({element.__name__})"
        )


FieldType = Primitive | Array | type["Struct"]

_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Field:
    """One declared field, as the codec sees it."""

    name: str
    type: FieldType
    versions: VersionRange
    nullable: VersionRange
    tag: int | None
    tagged_versions: VersionRange
    default: object
    """The default value; for lists and structs, see ``make_default``."""
    flexible: VersionRange | None
    """Versions where this field is compact; None: the message's flexible versions."""

    def present(self, version: int) -> bool:
        return in_range(version, self.versions)

    def is_nullable(self, version: int) -> bool:
        return in_range(version, self.nullable)

    def is_tagged(self, version: int, flexible: bool) -> bool:
        return flexible and self.tag is not None and in_range(version, self.tagged_versions)

    def is_compact(self, version: int, flexible: bool) -> bool:
        return flexible if self.flexible is None else in_range(version, self.flexible)

    def make_default(self) -> Any:
        """A fresh default value (a new list or struct for mutable defaults)."""
        if self.default is _NO_DEFAULT:
            if isinstance(self.type, Array):
                return []
            if isinstance(self.type, type):
                return self.type()
            return self.type.zero
        return self.default

    @property
    def default_is_mutable(self) -> bool:
        return self.default is _NO_DEFAULT and not isinstance(self.type, Primitive)


@dataclass(frozen=True)
class _FieldSpec:
    type: FieldType
    versions: str
    nullable: str
    tag: int | None
    tagged_versions: str | None
    default: object
    flexible: str | None


def field(
    wire_type: FieldType,
    *,
    versions: str = "0+",
    nullable: str = "none",
    tag: int | None = None,
    tagged_versions: str | None = None,
    default: Any = _NO_DEFAULT,
    flexible: str | None = None,
) -> Any:
    """Declare a field of a ``Struct`` or ``Message`` (see the module docstring)."""
    return _FieldSpec(wire_type, versions, nullable, tag, tagged_versions, default, flexible)


def _build_field(owner: str, name: str, spec: _FieldSpec) -> Field:
    versions = parse_versions(spec.versions)
    nullable = parse_versions(spec.nullable)
    tagged = NO_VERSIONS
    if spec.tag is not None:
        tagged = parse_versions(spec.tagged_versions or spec.versions)
    elif spec.tagged_versions is not None:
        raise TypeError(f"{owner}.{name}: tagged_versions without a tag")
    default = spec.default
    where = f"{owner}.{name}"
    if default is None and nullable == NO_VERSIONS:
        raise TypeError(f"{where}: default None but never nullable")
    if default is not _NO_DEFAULT and default is not None:
        wire = spec.type
        if not isinstance(wire, Primitive):
            raise TypeError(f"{where}: only primitive fields take a default value")
        if not isinstance(default, type(wire.zero) if wire.zero is not None else bytes):
            raise TypeError(f"{where}: default {default!r} does not fit {wire!r}")
    if isinstance(spec.type, type) and nullable != NO_VERSIONS and spec.tag is not None:
        raise TypeError(f"{where}: nullable tagged structs are not supported")
    flexible = None if spec.flexible is None else parse_versions(spec.flexible)
    if flexible is not None and spec.type is not STRING:
        raise TypeError(f"{where}: a flexible override is only supported on strings")
    return Field(name, spec.type, versions, nullable, spec.tag, tagged, default, flexible)


def _compile_dunders(cls: type[Struct]) -> None:
    """Give ``cls`` a keyword-only ``__init__``, ``__eq__`` and ``__repr__`` for its fields."""
    fields = cls.__fields__
    namespace: dict[str, Any] = {"_MISSING": _NO_DEFAULT}
    params, body = [], []
    for i, f in enumerate(fields):
        if f.default_is_mutable:
            namespace[f"_make{i}"] = f.make_default
            params.append(f"{f.name}=_MISSING")
            body.append(f"    self.{f.name} = _make{i}() if {f.name} is _MISSING else {f.name}")
        else:
            namespace[f"_default{i}"] = f.make_default()
            params.append(f"{f.name}=_default{i}")
            body.append(f"    self.{f.name} = {f.name}")
    signature = f"self, *, {', '.join(params)}" if params else "self"
    values = "".join(f"self.{f.name}, " for f in fields)
    other_values = "".join(f"other.{f.name}, " for f in fields)
    reprs = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields)
    source = "\n".join(
        [
            f"def __init__({signature}):",
            *(body or ["    pass"]),
            "def __eq__(self, other):",
            "    if other.__class__ is not self.__class__:",
            "        return NotImplemented",
            f"    return ({values}) == ({other_values})",
            "def __repr__(self):",
            f"    return f'{cls.__qualname__}({reprs})'",
        ]
    )
    exec(compile(source, f"<{cls.__qualname__} dunders>", "exec"), namespace)
    for name in ("__init__", "__eq__", "__repr__"):
        setattr(cls, name, namespace[name])


@dataclass_transform(kw_only_default=True, eq_default=True)
class StructMeta(type):
    """Collects ``field(...)`` declarations into ``__fields__`` and ``__slots__``."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> StructMeta:
        specs = {k: v for k, v in namespace.items() if isinstance(v, _FieldSpec)}
        for key in specs:
            del namespace[key]
        for key, annotation in namespace.get("__annotations__", {}).items():
            if key not in specs and "ClassVar" not in str(annotation):
                raise TypeError(f"{name}.{key}: annotated but not declared with field(...)")
        inherited = [f for base in bases for f in getattr(base, "__fields__", ())]
        if inherited and specs:
            raise TypeError(f"{name}: declared structs cannot be extended with more fields")
        namespace["__slots__"] = tuple(specs)
        namespace["__hash__"] = None  # mutable, compared by value
        cls = cast("type[Struct]", super().__new__(mcs, name, bases, namespace, **kwargs))
        cls.__fields__ = tuple(_build_field(name, k, spec) for k, spec in specs.items())
        _compile_dunders(cls)
        return cls


class Struct(metaclass=StructMeta):
    """A declared struct: a message body or one of its nested structures."""

    __fields__: ClassVar[tuple[Field, ...]] = ()


class MessageSchema(Struct):
    """A struct with its own valid and flexible versions: the declaration of a request or
    response body, or a header. :class:`groupcoord.protocol.message.Message` adds its
    ``encode`` and ``decode``."""

    name: ClassVar[str] = ""
    min_version: ClassVar[int] = 0
    max_version: ClassVar[int] = -1
    flexible_versions: ClassVar[VersionRange] = NO_VERSIONS
    _encoders: ClassVar[dict[int, Callable[[Any, bytearray], None]]]
    _decoders: ClassVar[dict[int, Callable[[bytes, int], tuple[Any, int]]]]

    def __init_subclass__(
        cls, *, versions: str = "", flexible: str = "none", **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if not versions:
            return  # an abstract base (Request, Response)
        cls.name = cls.__name__
        cls.min_version, cls.max_version = parse_versions(versions)
        cls.flexible_versions = parse_versions(flexible)
        cls._encoders = {}
        cls._decoders = {}

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return in_range(version, cls.flexible_versions)

    @classmethod
    def supports(cls, version: int) -> bool:
        return cls.min_version <= version <= cls.max_version


__all__ = [
    "Array",
    "BOOL",
    "BYTES",
    "FLOAT64",
    "Field",
    "INT16",
    "INT32",
    "INT64",
    "INT8",
    "MessageSchema",
    "Primitive",
    "RECORDS",
    "STRING",
    "Struct",
    "UINT16",
    "UINT32",
    "UUID",
    "field",
    "parse_versions",
]
