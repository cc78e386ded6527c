"""The iteration orders of Java's collections, for assignments identical to Kafka's.

Kafka's assignors break ties by the order in which they meet members, topics and partitions,
and that order is the iteration order of a ``java.util.HashMap`` or ``HashSet``: ascending
bucket, then insertion order within a bucket. A bucket is ``(h ^ (h >>> 16)) & (capacity - 1)``
where ``h`` is the key's ``hashCode()``. The capacity depends on how the collection was built:

* ``new HashMap<>()`` filled by ``put`` starts at 16 and doubles each time the size passes
  three quarters of it (:func:`grown_capacity`);
* the copy constructor ``new HashSet<>(collection)`` sizes the table once, to
  ``tableSizeFor(max(n / 0.75 + 1, 16))`` (:func:`copied_capacity`).

The emulation is exact for the shapes Kafka's tests use (short member ids, a handful of
topics, small partition numbers). It cannot know a map's history (a map that grew and then
shrank keeps its larger table) nor the order of a source set within a bucket, so elsewhere it
is a deterministic best effort.

A plain ``dict`` handed to an assignor stands for a ``HashMap`` whose keys were inserted in
the dict's order. A :class:`collections.OrderedDict` stands for a ``LinkedHashMap`` or
``TreeMap``: it is iterated as it is, as Kafka iterates those.
"""

from __future__ import annotations

import base64
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TypeVar

K = TypeVar("K")

_INT_MASK = 0xFFFFFFFF
_LONG_MASK = 0xFFFFFFFFFFFFFFFF
_DEFAULT_CAPACITY = 16


def uuid_from_kafka(text: str) -> uuid.UUID:
    """Kafka's ``Uuid.fromString``: 16 bytes in unpadded URL-safe base64 (22 characters)."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"{text!r} decodes to {len(raw)} bytes, not the 16 of a Kafka Uuid")
    return uuid.UUID(bytes=raw)


def uuid_to_kafka(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: the inverse of :func:`uuid_from_kafka`."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_sort_key(value: uuid.UUID) -> tuple[int, int]:
    """Kafka's ``Uuid.compareTo`` order: the signed most, then least, significant 64 bits."""
    msb = value.int >> 64
    lsb = value.int & _LONG_MASK
    return (msb - (1 << 64) if msb >> 63 else msb, lsb - (1 << 64) if lsb >> 63 else lsb)


def uuid_hash(value: uuid.UUID) -> int:
    """Kafka's ``Uuid.hashCode`` as an unsigned 32-bit value."""
    x = (value.int >> 64) ^ (value.int & _LONG_MASK)
    return ((x >> 32) ^ x) & _INT_MASK


def _utf16_units(text: str) -> Iterable[int]:
    if text.isascii():
        return text.encode("ascii")
    data = text.encode("utf-16-be", "surrogatepass")
    return [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]


def string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units) as an unsigned 32-bit value."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & _INT_MASK
    return h


def java_string_key(text: str) -> bytes:
    """A sort key ordering strings as Java's ``String.compareTo`` does (by UTF-16 code unit).

    Python compares code points, which differs for characters outside the Basic Multilingual
    Plane; big-endian UTF-16 bytes compare like the code units they encode.
    """
    return text.encode("utf-16-be", "surrogatepass")


def grown_capacity(size: int) -> int:
    """The table size of a ``new HashMap<>()`` after ``size`` distinct puts."""
    capacity = _DEFAULT_CAPACITY
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def copied_capacity(size: int) -> int:
    """The table size of ``new HashSet<>(collection)`` for a collection of ``size`` elements."""
    wanted = max(int(size / 0.75) + 1, _DEFAULT_CAPACITY)
    return 1 << (wanted - 1).bit_length()


def hash_order(keys: Iterable[K], key_hash: Callable[[K], int], capacity: int) -> list[K]:
    """``keys``, inserted in their order into a Java hash table of ``capacity`` buckets, in
    the table's iteration order."""
    mask = capacity - 1

    def bucket(key: K) -> int:
        h = key_hash(key)
        return (h ^ (h >> 16)) & mask

    # sorted() is stable: keys sharing a bucket keep their insertion order, as in a bucket's list.
    return sorted(keys, key=bucket)


def map_order(mapping: Mapping[K, object], key_hash: Callable[[K], int]) -> list[K]:
    """The keys of ``mapping`` in the order Kafka iterates the map it stands for (see the
    module's docstring): a ``HashMap`` filled by ``put``, unless it is an ``OrderedDict``."""
    if isinstance(mapping, OrderedDict) or len(mapping) <= 1:
        return list(mapping)
    return hash_order(mapping, key_hash, grown_capacity(len(mapping)))


def topic_set_order(topic_ids: Collection[uuid.UUID]) -> list[uuid.UUID]:
    """A copy-constructed ``HashSet<Uuid>`` in iteration order. The source set's own order is
    unknown, so keys sharing a bucket come in ``Uuid.compareTo`` order."""
    return hash_order(sorted(topic_ids, key=uuid_sort_key), uuid_hash, copied_capacity(len(topic_ids)))


def partition_set_order(partitions: Collection[int]) -> list[int]:
    """A copy-constructed ``HashSet<Integer>`` in iteration order: ascending while every
    partition is below the table size, which ``Integer.hashCode`` (the value) makes its bucket."""
    capacity = copied_capacity(len(partitions))
    ordered = sorted(partitions)
    if not ordered or ordered[-1] < capacity:
        return ordered
    return hash_order(ordered, lambda p: p & _INT_MASK, capacity)
