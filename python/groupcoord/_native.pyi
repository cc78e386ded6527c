"""Type stubs for groupcoord's compiled core (``groupcoord._native``)."""

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar, TypeAlias, final

from typing_extensions import Self

__version__: str

class GroupCoordError(Exception):
    """Base class of the errors raised by groupcoord's native core."""

# --- purgatory -------------------------------------------------------------------------------

class DelayedOperation:
    """An operation that completes when its condition holds or expires after ``delay_ms``.

    Kafka's ``DelayedOperation``. Subclass it and override :meth:`try_complete`,
    :meth:`on_complete` and :meth:`on_expiration`; call ``super().__init__(delay_ms)``.

    ``on_complete`` runs exactly once, from :meth:`force_complete`, whether the operation
    completes (``try_complete`` saw its condition hold) or expires. On expiry the order is
    Kafka's: ``force_complete`` (so ``on_complete``) first, then ``on_expiration``.
    """

    def __init__(self, delay_ms: int) -> None: ...
    @property
    def delay_ms(self) -> int:
        """The delay given at construction, relative to the purgatory's clock when watched."""
    @property
    def completed(self) -> bool:
        """True once :meth:`force_complete` has run (by completion or expiry)."""
    def force_complete(self) -> bool:
        """Complete now: cancel the timer, run ``on_complete``. True only for the first call."""
    def try_complete(self) -> bool:
        """Check the condition; if it holds, return ``self.force_complete()``. Default: False."""
    def on_complete(self) -> None:
        """Called exactly once when the operation completes or expires. Default: nothing."""
    def on_expiration(self) -> None:
        """Called after ``on_complete`` when the operation expired. Default: nothing."""

@final
class Purgatory:
    """Delayed operations watched under keys, expiring on a hierarchical timing wheel.

    Kafka's ``DelayedOperationPurgatory`` over a ``SystemTimer`` (tick 1 ms, wheel size 20
    semantics). Time never comes from a clock inside: the caller moves it forward with
    :meth:`advance_clock`, and a delay is measured from the purgatory's current time
    (:attr:`now_ms`, the last time passed to ``advance_clock``).

    An operation with expiration ``E = now_ms + delay_ms`` expires in the first
    ``advance_clock(t)`` with ``t >= E`` (a delay <= 0 expires at the next ``advance_clock``),
    never inside the call that added it. Within one ``advance_clock`` operations expire in
    ascending order of expiration; ties in any order.

    Keys are any hashable Python objects, compared with ``==``. Callbacks (``try_complete``,
    ``on_complete``, ``on_expiration``, deadline callbacks) may call back into the purgatory.
    An exception raised by a callback propagates to the caller of the purgatory method and
    leaves the purgatory consistent: operations that were due but not yet expired stay due and
    expire at the next ``advance_clock``.
    """

    def __new__(
        cls, name: str = "purgatory", *, start_ms: int = 0, purge_interval: int = 1000
    ) -> Self: ...
    @property
    def name(self) -> str: ...
    @property
    def now_ms(self) -> int:
        """The purgatory's current time: the largest time passed to ``advance_clock``."""
    def try_complete_else_watch(
        self, operation: DelayedOperation, keys: Iterable[Hashable]
    ) -> bool:
        """Try to complete ``operation``; if not done, watch it under every key, try once more,
        and only then arm its timer. Returns True if it completed here.

        Raises ValueError for an empty ``keys`` or an operation already pending here,
        TypeError for an unhashable key.
        """
    def check_and_complete(self, key: Hashable) -> int:
        """Call ``try_complete`` on the operations watched under ``key``; return how many
        completed. Completed operations leave the key's watcher list; an empty list is removed."""
    def watch_deadline(
        self, key: Hashable, delay_ms: int, on_expiration: Callable[[Hashable], object]
    ) -> int:
        """The heartbeat cycle in one call: complete the deadline operation pending under
        ``key`` (if any), then watch a new one under ``key`` expiring at ``now_ms + delay_ms``.

        A deadline operation is a Rust-native delayed operation with no condition of its own:
        it completes only through this method or :meth:`complete_deadline`; when it expires,
        ``on_expiration(key)`` is called. Returns how many were completed (0 or 1).
        """
    def complete_deadline(self, key: Hashable) -> bool:
        """Complete the deadline operation pending under ``key`` without scheduling another."""
    def cancel_for_key(self, key: Hashable) -> list[DelayedOperation]:
        """Stop watching ``key``: cancel (not complete) every operation watched under it,
        including its deadline operation, and return the cancelled ``DelayedOperation``s."""
    def advance_clock(self, now_ms: int) -> int:
        """Move the clock to ``now_ms`` (never backwards) and expire every operation due by
        then. Returns how many expired. Also purges completed operations from watcher lists
        when more than ``purge_interval`` have accumulated (Kafka's rule)."""
    def next_expiration_ms(self) -> int | None:
        """When to call ``advance_clock`` next, or None if nothing is pending: at or before
        ``now_ms`` if an operation is already due, else the start of the earliest non-empty
        timer slot. That is never later than the earliest expiration, and exact when it is
        within 64 ms; a coarser slot starts earlier, and advancing to it moves its operations
        into finer slots, so the next answer is closer. The event loop sleeps until then
        instead of polling."""
    def watched(self) -> int:
        """Operations in watcher lists, counted once per key (Kafka's ``watched()``). A
        completed operation counts under its other keys until they are checked or purged,
        although the purgatory let go of the operation itself when it completed."""
    def num_delayed(self) -> int:
        """Operations pending in the timer (Kafka's ``numDelayed()``), exact."""
    def shutdown(self) -> None:
        """Cancel everything without running callbacks; later additions raise RuntimeError."""
    def __sizeof__(self) -> int:
        """The object and the memory its Rust core allocated (timing wheel, watcher lists,
        deadline index), not counting the keys, operations and callbacks it refers to."""

def empty_call() -> None:
    """An empty call into Rust: the floor of a Python -> Rust crossing (for benchmarks)."""

def call_repeatedly(callback: Callable[[], object], times: int) -> None:
    """Call ``callback()`` ``times`` times from Rust: the floor of a Rust -> Python crossing."""

# --- __consumer_offsets codec ----------------------------------------------------------------

class CorruptRecordError(GroupCoordError, ValueError):
    """Truncated or corrupt log input."""

    position: int | None
    """Absolute byte position (in the buffer or file) of the bad batch or field."""
    reason: str
    """What was wrong."""

class UnsupportedVersionError(GroupCoordError, ValueError):
    """A record version this codec cannot write."""

# --- generated by scripts/generate_records.py: record classes (do not edit) ---

@final
class OffsetCommitKey:
    """Key of a committed offset (record types 0 and 1; brokers since 0.9 write 1)."""

    def __new__(cls, group: str, topic: str, partition: int, record_type: int = 1) -> Self: ...
    @property
    def group(self) -> str: ...
    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def record_type(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class GroupMetadataKey:
    """Key of a group's metadata (record type 2)."""

    def __new__(cls, group: str) -> Self: ...
    @property
    def group(self) -> str: ...
    @property
    def record_type(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class OpaqueKey:
    """Key of a record type this codec does not decode (the new coordinator's 3 and up)."""

    def __new__(cls, record_type: int, data: bytes) -> Self: ...
    @property
    def record_type(self) -> int: ...
    @property
    def data(self) -> bytes: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class OffsetCommitValue:
    """A committed offset, OffsetCommitValue versions 0 to 4 (4 is flexible). Kafka 3.x and 4.0
    write 3, Kafka 4.1+ and groupcoord's coordinator write 4, and 1 carries an expiry.

    ``leader_epoch`` exists from version 3, ``expire_timestamp`` only in version 1; absent
    fields read as -1. ``topic_id``, the committed topic's id as Kafka prints it (22
    characters of base64url), is version 4's tagged field 0 (Kafka 4.1's schema), else None.
    ``unknown_tagged_fields``: see ``GroupMetadataValue``.
    """

    def __new__(
        cls,
        offset: int,
        metadata: str = "",
        commit_timestamp: int = -1,
        leader_epoch: int = -1,
        expire_timestamp: int = -1,
        version: int = 3,
        unknown_tagged_fields: Sequence[tuple[int, bytes]] = (),
        topic_id: str | None = None,
    ) -> Self: ...
    @property
    def offset(self) -> int: ...
    @property
    def metadata(self) -> str: ...
    @property
    def commit_timestamp(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...
    @property
    def expire_timestamp(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def unknown_tagged_fields(self) -> tuple[tuple[int, bytes], ...]: ...
    @property
    def topic_id(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class MemberMetadata:
    """One member of a classic group, as stored in GroupMetadataValue.
    ``unknown_tagged_fields``: see ``GroupMetadataValue``."""

    def __new__(
        cls,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout: int,
        session_timeout: int,
        subscription: bytes,
        assignment: bytes,
        unknown_tagged_fields: Sequence[tuple[int, bytes]] = (),
    ) -> Self: ...
    @property
    def member_id(self) -> str: ...
    @property
    def group_instance_id(self) -> str | None: ...
    @property
    def client_id(self) -> str: ...
    @property
    def client_host(self) -> str: ...
    @property
    def rebalance_timeout(self) -> int: ...
    @property
    def session_timeout(self) -> int: ...
    @property
    def subscription(self) -> bytes: ...
    @property
    def assignment(self) -> bytes: ...
    @property
    def unknown_tagged_fields(self) -> tuple[tuple[int, bytes], ...]: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class GroupMetadataValue:
    """A classic group's metadata, GroupMetadataValue versions 0 to 4 (Kafka 3.x and 4.1 write 3).

    ``unknown_tagged_fields`` (here, on each member and on ``OffsetCommitValue``): the tagged
    fields of a version-4 struct that Kafka's schema does not declare (a later Kafka may add
    some; KIP-915 evolves these records that way), as ``(tag, bytes)`` in the order read.
    Decoding keeps them and encoding writes them back, as Kafka's own classes do: encoding
    refuses them unless their tags strictly increase and stay within Java's ``int`` (at most
    2**31 - 1), and at a version before 4, which has no tagged fields. ``to_dict`` lists them as ``{"tag", "data"}`` only when there are any. The
    Arrow rows leave them out.
    """

    def __new__(
        cls,
        protocol_type: str,
        generation: int,
        protocol: str | None,
        leader: str | None,
        current_state_timestamp: int = -1,
        members: list[MemberMetadata] = ...,
        version: int = 3,
        unknown_tagged_fields: Sequence[tuple[int, bytes]] = (),
    ) -> Self: ...
    @property
    def protocol_type(self) -> str: ...
    @property
    def generation(self) -> int: ...
    @property
    def protocol(self) -> str | None: ...
    @property
    def leader(self) -> str | None: ...
    @property
    def current_state_timestamp(self) -> int: ...
    @property
    def members(self) -> list[MemberMetadata]: ...
    @property
    def version(self) -> int: ...
    @property
    def unknown_tagged_fields(self) -> tuple[tuple[int, bytes], ...]: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class OpaqueValue:
    """A value of a record type, or a value version, this codec does not decode.

    ``data`` is the value's bytes after its version. A value of an unknown record type that is
    shorter than a version (two bytes) still decodes, as Kafka skips such records unread: its
    ``version`` is None and ``data`` is the whole value. The constructor refuses ``version=None``
    with two bytes or more, which would read back as a version and its data, and for a record
    type the codec decodes (0 to 8, 16), whose short values do not decode.
    """

    def __new__(cls, record_type: int, version: int | None, data: bytes) -> Self: ...
    @property
    def record_type(self) -> int: ...
    @property
    def version(self) -> int | None: ...
    @property
    def data(self) -> bytes: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class ConsumerProtocolSubscription:
    """The consumer protocol's subscription (versions 0 to 3) inside a member's metadata."""

    def __new__(
        cls,
        topics: list[str],
        user_data: bytes | None = None,
        owned_partitions: list[tuple[str, list[int]]] = ...,
        generation_id: int = -1,
        rack_id: str | None = None,
        version: int = 3,
    ) -> Self: ...
    @property
    def topics(self) -> list[str]: ...
    @property
    def user_data(self) -> bytes | None: ...
    @property
    def owned_partitions(self) -> list[tuple[str, list[int]]]: ...
    @property
    def generation_id(self) -> int: ...
    @property
    def rack_id(self) -> str | None: ...
    @property
    def version(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class ConsumerProtocolAssignment:
    """The consumer protocol's assignment (versions 0 to 3) inside a member's metadata."""

    def __new__(
        cls,
        assigned_partitions: list[tuple[str, list[int]]],
        user_data: bytes | None = None,
        version: int = 3,
    ) -> Self: ...
    @property
    def assigned_partitions(self) -> list[tuple[str, list[int]]]: ...
    @property
    def user_data(self) -> bytes | None: ...
    @property
    def version(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class ConsumerGroupKey:
    """Key of a new-coordinator (KIP-848) consumer-group record, types 3 to 8 and 16.

    Types 5, 7 and 8 also carry ``member_id``; type 16 ``regular_expression``.
    """

    def __new__(
        cls,
        record_type: int,
        group_id: str,
        member_id: str | None = None,
        regular_expression: str | None = None,
    ) -> Self: ...
    @property
    def record_type(self) -> int: ...
    @property
    def group_id(self) -> str: ...
    @property
    def member_id(self) -> str | None: ...
    @property
    def regular_expression(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class ConsumerGroupValue:
    """Value of a consumer-group record (types 3 to 8, 16), decoded by its declared schema.

    Made from ``fields`` as the ``fields`` property gives them, checked against the record
    type's schema (unknown or missing fields, wrong types, ints out of range: ``ValueError``
    or ``TypeError`` naming the field). Uuids may be ``uuid.UUID`` objects or Kafka's strings,
    arrays any sequence, structs any mapping. Every untagged field must be given; a tagged
    field left out (or None where it is not nullable) takes its declared default, as in
    Kafka's classes, and a field at its default is left out when written.
    """

    def __new__(cls, record_type: int, fields: Mapping[str, Any], version: int = 0) -> Self: ...
    @property
    def record_type(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def schema(self) -> str:
        """Kafka's name of the value's schema, e.g. "ConsumerGroupMemberMetadataValue"."""
    @property
    def fields(self) -> dict[str, Any]:
        """The decoded fields (snake_case names; uuids as Kafka's base64url strings; absent
        tagged fields at their defaults: Kafka's, e.g. 0 for ``metadata_hash``, or None where
        that is null). A struct holding tagged fields its schema does not declare has
        one more entry, ``unknown_tagged_fields``: a list of ``{"tag", "data"}``, written
        back by ``encode_value`` in tag order among the known ones (refused, as Kafka's
        writers refuse it, unless their tags strictly increase and differ from the known
        ones'). A pickle or copy keeps them as read, in any order."""
    def to_dict(self) -> dict[str, Any]: ...

# --- end of generated record classes ---

_Key: TypeAlias = OffsetCommitKey | GroupMetadataKey | ConsumerGroupKey | OpaqueKey
_Value: TypeAlias = OffsetCommitValue | GroupMetadataValue | ConsumerGroupValue | OpaqueValue

@final
class Record:
    """One record of a batch: absolute offset and timestamp, raw key and value; equal and
    hashed by all its fields."""

    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> list[tuple[str, bytes | None]]:
        """A new list on every access: changing it leaves the record as it is."""

@final
class RecordBatch:
    """A batch as it lies in the log: magic 2, or one legacy (magic 0/1) message or wrapper,
    whose v2-only fields are -1 / False. Equal when every field and record is; not hashable."""

    __hash__: ClassVar[None]  # type: ignore[assignment]

    @property
    def position(self) -> int:
        """Byte position of the batch in the input."""
    @property
    def size(self) -> int:
        """Bytes the batch takes, its 12-byte offset and length prefix included."""
    @property
    def base_offset(self) -> int: ...
    @property
    def last_offset(self) -> int: ...
    @property
    def magic(self) -> int: ...
    @property
    def compression(self) -> str:
        """"none", "gzip", "snappy", "lz4" or "zstd"."""
    @property
    def timestamp_type(self) -> str:
        """"create" or "log_append"."""
    @property
    def base_timestamp(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def partition_leader_epoch(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control(self) -> bool: ...
    @property
    def crc(self) -> int: ...
    @property
    def delete_horizon_ms(self) -> int | None:
        """When the log cleaner may drop the batch's tombstones and transaction markers: the
        base timestamp of a batch the cleaner marked (attribute bit 6), else None."""
    @property
    def records(self) -> list[Record]:
        """A new list on every access: changing it leaves the batch as it is."""

@final
class OffsetsRecord:
    """One decoded record of a ``__consumer_offsets`` log; equal and hashed by all its fields.
    It pickles and copies, with its key and value, as every record class here does."""

    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def batch_position(self) -> int: ...
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def control(self) -> str | None:
        """"commit" or "abort" for a transaction marker; for another control record Kafka's
        name of its type in lower case ("leader_change", "snapshot_header",
        "snapshot_footer", "kraft_version", "kraft_voters") or "unknown" (a type Kafka does not
        know, or a key or marker that does not parse); None for a data record."""
    @property
    def key(self) -> _Key | None:
        """None for a control record."""
    @property
    def value(self) -> _Value | None:
        """None for a tombstone or a control record."""

@final
class RecordIterator:
    """The records of :func:`iter_records` / :func:`iter_segment`, decoded a chunk (about
    256 KB of records) ahead. A corrupt batch raises :class:`CorruptRecordError` after every
    record before it, or ends the iteration with ``stop_at_corruption``."""

    def __iter__(self) -> RecordIterator: ...
    def __next__(self) -> OffsetsRecord: ...

@final
class BatchIterator:
    """The batches of :func:`iter_batches` / :func:`iter_segment_batches`, parsed a window
    (about 256 KB of input) at a time. A corrupt batch raises :class:`CorruptRecordError` after
    every batch before it, or ends the iteration with ``stop_at_corruption``."""

    def __iter__(self) -> BatchIterator: ...
    def __next__(self) -> RecordBatch: ...

@final
class JsonLineIterator:
    """The lines of :func:`iter_segment_json`, about a mebibyte of whole lines (ASCII, each
    ending in a newline) at a time. A corrupt batch raises :class:`CorruptRecordError` after
    the lines of every batch before it, or ends the iteration with ``stop_at_corruption``."""

    def __iter__(self) -> JsonLineIterator: ...
    def __next__(self) -> bytes: ...

_Buffer: TypeAlias = bytes | bytearray | memoryview
"""A log buffer. ``bytes``, and a contiguous ``memoryview`` of ``bytes`` (a slice of a larger
log), are read where they lie; an iterator over a view holds it (``release()`` raises
``BufferError``) until the iterator is exhausted or deleted, as ``numpy.frombuffer`` does.
Any other buffer (a ``bytearray``, a view of one, an ``mmap``
of a segment) is copied first, since another thread could change it while the decode reads
without the GIL: it takes its size again in memory. For a file, pass its path to the
``*_segment`` readers. A ``memoryview`` of items other than bytes is refused (``.cast('B')``
makes it one)."""

def read_batches(
    data: _Buffer, *, position: int = 0, stop_at_corruption: bool = False
) -> list[RecordBatch]:
    """Parse a log buffer's batches. ``position`` is added to reported positions. Raises
    CorruptRecordError at the first corrupt or truncated batch, or with
    ``stop_at_corruption`` returns the valid batches before it."""

def read_segment(path: str | PathLike[str], *, stop_at_corruption: bool = False) -> list[RecordBatch]:
    """:func:`read_batches` of a segment file."""

def iter_batches(
    data: _Buffer, *, position: int = 0, stop_at_corruption: bool = False
) -> BatchIterator:
    """:func:`read_batches` one batch at a time, parsing about 256 KB of input at a time."""

def iter_segment_batches(path: str | PathLike[str], *, stop_at_corruption: bool = False) -> BatchIterator:
    """:func:`iter_batches` of a segment file (read whole when called)."""

@final
class Sender:
    """The network thread: answers handed to its channels are written to their sockets off the
    event loop, each connection's in order (``groupcoord.server.network``)."""

    def __new__(cls, notify_fd: int) -> Self:
        """``notify_fd``: one end of a Unix socket pair, owned by the sender from now on; the
        thread writes a byte to it when a channel that asked (``Channel.notify_below``) has
        written down to its mark."""
    def open(self, fd: int) -> Channel:
        """A channel writing to descriptor ``fd``, which it owns from now on: pass a duplicate
        of the connection's socket (``os.dup``), closed when the channel closes."""
    def wake(self) -> None:
        """Have the thread write what was sent since it last looked (once per turn of the loop)."""
    def stop(self) -> None:
        """Write what is queued (one try per socket), close every channel's descriptor and stop
        the thread."""

@final
class Channel:
    """One connection's way to its socket."""

    def send(self, data: bytes | bytearray) -> None:
        """Queue ``data`` to be written after everything sent before it."""
    def try_write(self, data: bytes | bytearray) -> bool:
        """Write ``data`` now, on the calling thread, if nothing sent before it is still
        queued; what the socket does not take at once is queued for the thread. True if all of
        it was written (or dropped: the channel is closed or its socket failed); False if some
        of it waits for the thread, which must then be woken."""
    @property
    def queued(self) -> int:
        """Bytes sent but not yet written to the socket."""
    def notify_below(self, mark: int) -> None:
        """Have the thread write a byte to the notification socket once at most ``mark`` bytes
        are left to write (at once if that is already so)."""
    def close(self, flush: bool = False) -> None:
        """Close the descriptor: at once, dropping what is queued, or (``flush``) after one last
        try at writing it."""

def iter_segment_json(
    path: str | PathLike[str],
    *,
    decode: bool = True,
    partition: int | None = None,
    stop_at_corruption: bool = False,
) -> JsonLineIterator:
    """``groupcoord dump-log``'s JSON lines of a segment file (read whole when called): one
    per record (the partition defaulting to the N of its ``__consumer_offsets-N`` directory),
    or per batch unless ``decode``; each line's ``file`` is ``str(path)``. Byte for byte what
    ``json.dumps(line, separators=(",", ":"))`` gives of the line built from the record
    objects, bytes in base64."""

def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` of ``s``: ``31*h + unit`` over its UTF-16 code units (a
    character beyond U+FFFF is two; a lone surrogate one), as a signed int32."""

def partition_for(group_id: str, num_partitions: int) -> int:
    """``Utils.abs(group_id.hashCode()) % num_partitions`` (``Utils.abs`` maps MIN_VALUE to
    0); ValueError unless ``num_partitions`` is at least 1."""

def topic_hash(
    topic_id: bytes, name: str, num_partitions: int, racks: Sequence[Sequence[str]] = ...
) -> int:
    """Kafka's ``Utils.computeTopicHash`` (KIP-1101) of a topic: ``topic_id`` its uuid's 16
    bytes, ``racks[i]`` partition ``i``'s racks; a signed int64."""

def group_hash(topic_hashes: Sequence[int]) -> int:
    """Kafka's ``Utils.computeGroupHash`` of topic hashes given in their topics' name order;
    0 for none."""

def valid_prefix_length(data: _Buffer) -> int:
    """Bytes at the start of ``data`` that are whole, valid batches (where recovery truncates).

    Valid as Kafka's log recovery sees a batch (framing, CRC), and beyond what it checks, a
    batch whose records decompress and are framed as their count says: a Kafka broker refuses
    to append any other. A batch whose records' keys or values do not decode counts, though
    the record decoders stop before it."""

def next_valid_batch(data: _Buffer, start: int, *, legacy: bool = False) -> int:
    """The first position after ``start`` where a whole batch that :func:`valid_prefix_length`
    accepts starts, or ``len(data)`` if none does: where a reader skipping a damaged region
    takes up again. Only batches of magic 2 count, unless ``legacy`` (a log of legacy message
    sets), when messages of magic 0 and 1 do too."""

def checksum_batches(data: _Buffer) -> int:
    """Benchmark ceiling: the CRC-32C of every batch and nothing else (no parsing, no
    decompression); returns how many batches match their stored CRC."""

def decompress_batches(data: _Buffer) -> int:
    """Benchmark ceiling: decompress every compressed batch's records into one reused buffer,
    parsing nothing; returns the number of bytes decompressed (0 for uncompressed logs).
    Raises :class:`CorruptRecordError` if a batch does not decompress."""

def write_batch(
    records: Sequence[tuple[bytes | None, bytes | None]],
    *,
    base_offset: int,
    timestamp: int,
    compression: str = "none",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = 0,
    is_transactional: bool = False,
    partition_leader_epoch: int = 0,
) -> bytes:
    """One RecordBatch v2 as a broker writes the coordinator's appends (CreateTime, every
    record stamped ``timestamp``, offsets ``base_offset`` onwards, CRC-32C)."""

_RecordToWrite: TypeAlias = (
    tuple[int, int, bytes | None, bytes | None]
    | tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]
)

def write_records(
    records: Iterable[_RecordToWrite],
    *,
    base_offset: int,
    last_offset: int | None = None,
    timestamp: int = -1,
    delete_horizon_ms: int | None = None,
    compression: str = "none",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = 0,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = 0,
) -> bytes:
    """One RecordBatch v2 whose records, ``(offset, timestamp, key, value[, headers])``, keep
    their own offsets and timestamps: appends merged into one batch, or what the log cleaner
    retains of a batch (Kafka's ``buildRetainedRecordsInto``).

    The batch spans ``base_offset..last_offset`` (default: the largest record offset) whatever
    records remain; offsets must increase within it. The base timestamp is the first record's,
    or ``delete_horizon_ms`` when given (attribute bit 6, record timestamps relative to it).
    With no records the batch is empty and both its timestamps are ``timestamp``.
    """

def write_control_batch(
    *,
    base_offset: int,
    timestamp: int,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int = 0,
    partition_leader_epoch: int = 0,
) -> bytes:
    """A control batch holding one transaction marker (COMMIT if ``commit`` else ABORT)."""

def decode_key(data: bytes) -> _Key: ...
def decode_value(key: _Key, data: bytes | None) -> _Value | None:
    """None for a tombstone (``data`` None)."""

def encode_key(key: _Key) -> bytes: ...
def encode_value(value: _Value) -> bytes:
    """Encodes at ``value.version``; UnsupportedVersionError for a version above 4."""

def decode_subscription(data: bytes) -> ConsumerProtocolSubscription: ...
def decode_assignment(data: bytes) -> ConsumerProtocolAssignment: ...
def encode_subscription(subscription: ConsumerProtocolSubscription) -> bytes: ...
def encode_assignment(assignment: ConsumerProtocolAssignment) -> bytes: ...
def decode_records(
    data: _Buffer, *, partition: int = -1, position: int = 0, stop_at_corruption: bool = False
) -> list[OffsetsRecord]:
    """Every record of a ``__consumer_offsets`` log buffer, keys and values decoded."""

def decode_segment(
    path: str | PathLike[str], *, partition: int | None = None, stop_at_corruption: bool = False
) -> list[OffsetsRecord]:
    """:func:`decode_records` of a segment file; ``partition`` defaults to the N of a
    ``__consumer_offsets-N`` parent directory, else -1."""

def iter_records(
    data: _Buffer, *, partition: int = -1, position: int = 0, stop_at_corruption: bool = False
) -> RecordIterator:
    """:func:`decode_records` one record at a time, holding few decoded records at once. From
    1 MiB of input on, a second thread checks and decompresses the next chunk of batches while
    the current one's records are given."""

def iter_segment(
    path: str | PathLike[str], *, partition: int | None = None, stop_at_corruption: bool = False
) -> RecordIterator:
    """:func:`iter_records` of a segment file (read whole when called)."""

def decode_arrow(
    data: _Buffer,
    *,
    partition: int = -1,
    position: int = 0,
    stop_at_corruption: bool = False,
    threads: int | None = None,
) -> Any:
    """Every record of a log buffer as one ``pyarrow.RecordBatch`` of :func:`arrow_schema`,
    built in Rust with no per-record Python object (needs ``pyarrow``).

    ``threads`` bounds the threads the decode uses (default: one per core; ``1`` decodes on
    the calling thread alone). From 16 MB of input on, runs of whole batches are decoded side
    by side and joined; gzip and zstd batches take two threads each, one decompressing ahead
    of the one that parses. The rows, and where a corrupt log stops, do not depend on it.

    One row per record. Every row: ``partition``, ``offset``, ``timestamp``,
    ``batch_position``, ``producer_id``, ``producer_epoch``, ``is_transactional``,
    ``is_tombstone``; ``control`` for control records (as ``OffsetsRecord.control``);
    ``record_type`` for data records, ``value_version`` for those with a value (null for
    tombstones, and for a value of an unknown type shorter than a version). Keys: ``group`` (``group_id`` for the consumer-group types), ``topic``,
    ``key_partition``, ``member_id`` (types 5, 7, 8), ``regular_expression`` (type 16). Offset
    commits:
    ``committed_offset``, ``leader_epoch``, ``metadata``, ``commit_timestamp``,
    ``expire_timestamp``, ``topic_id`` (when the value has one; as Kafka prints it). Group
    metadata: ``protocol_type``, ``generation``, ``protocol``,
    ``leader``, ``current_state_timestamp``, ``members`` (list of structs: the member's
    fields, raw ``subscription`` and ``assignment``, and for ``consumer`` groups
    ``subscribed_topics`` and ``assigned_partitions`` (list of ``{topic, partitions}``)).
    Consumer-group records (types 3-8, 16): ``epoch``, ``topic_partitions`` (list of
    ``{topic_id, partitions}``, topic ids as Kafka prints them: unpadded base64url) and
    ``consumer_group_fields`` (every field, as JSON: uuids likewise, bytes in base64).
    Opaque records: ``raw_key``, ``raw_value``.
    """

def decode_segment_arrow(
    path: str | PathLike[str],
    *,
    partition: int | None = None,
    stop_at_corruption: bool = False,
    threads: int | None = None,
) -> Any:
    """:func:`decode_arrow` of a segment file."""

def arrow_schema() -> Any:
    """The ``pyarrow.Schema`` of :func:`decode_arrow`."""

# --- produce validation ----------------------------------------------------------------------

class ProduceValidationError(ValueError):
    """A produced batch refused as a Kafka leader refuses it (``ProduceRequest.validateRecords``,
    ``UnifiedLog.analyzeAndValidateRecords``, ``LogValidator``)."""

    error_code: int
    """Kafka's error code for the partition's produce response: INVALID_RECORD (87),
    CORRUPT_MESSAGE (2), MESSAGE_TOO_LARGE (10), INVALID_TIMESTAMP (32),
    UNSUPPORTED_COMPRESSION_TYPE (76), or UNKNOWN_SERVER_ERROR (-1) where Kafka's own check
    fails with an unexpected exception (a compression id above 4, records that do not
    decompress)."""
    message: str
    """Kafka's message, without the topic partition. Kafka's response carries one only with
    ``record_errors``."""
    record_errors: list[tuple[int, str]]
    """The records at fault, (index in the batch, message); empty when the batch itself is."""

@final
class ProduceBatch:
    """What a valid produced batch says; equal when every field is."""

    @property
    def size(self) -> int:
        """Bytes of the batch, its 12-byte prefix included: all of the input."""
    @property
    def record_count(self) -> int: ...
    @property
    def last_offset_delta(self) -> int: ...
    @property
    def first_timestamp(self) -> int:
        """The header's base timestamp."""
    @property
    def max_timestamp(self) -> int:
        """The largest record timestamp (-1 if none is above -1); ``now_ms`` for a
        LogAppendTime topic."""
    @property
    def offset_of_max_timestamp_delta(self) -> int:
        """Offset delta of the first record holding ``max_timestamp`` (-1 if none); for a
        LogAppendTime topic, Kafka's: the last record uncompressed, the first compressed."""
    @property
    def producer_id(self) -> int: ...
    @property
    def producer_epoch(self) -> int: ...
    @property
    def base_sequence(self) -> int: ...
    @property
    def last_sequence(self) -> int:
        """``base_sequence + last_offset_delta``, wrapping past 2^31-1 to 0; -1 without a
        base sequence."""
    @property
    def is_transactional(self) -> bool: ...
    @property
    def compression(self) -> str:
        """"none", "gzip", "snappy", "lz4" or "zstd"."""

def validate_produce(
    data: _Buffer,
    *,
    max_message_bytes: int,
    require_keys: bool,
    log_append_time: bool,
    now_ms: int,
    before_max_ms: int,
    after_max_ms: int,
    allow_zstd: bool,
) -> ProduceBatch:
    """Check one partition's ``records`` of a Produce request (v3+: exactly one magic-2 batch)
    as a Kafka leader does before appending it, in Kafka's order; raise
    :class:`ProduceValidationError` with Kafka's error code on the first check that fails.
    Every record is read (decompressed): all records are checked before a refusal for keys
    (``require_keys``, a compacted topic) or timestamps (CreateTime outside
    ``[now_ms - before_max_ms, now_ms + after_max_ms]``; the LogAppendTime bit set by the
    producer), which lists them in ``record_errors``. Bytes after the batch are refused, so the
    input can be appended as it is."""

def assign_offsets(
    batch: bytearray, base_offset: int, partition_leader_epoch: int, log_append_time_ms: int | None
) -> None:
    """Give a batch :func:`validate_produce` accepted its place in the log, in place: its base
    offset and partition leader epoch (outside the CRC), and with ``log_append_time_ms`` (a
    LogAppendTime topic) the LogAppendTime timestamp type and max timestamp, the CRC computed
    again (Kafka's ``setMaxTimestamp``)."""

@final
class TopicRegex:
    """KIP-848's ``SubscribedTopicRegex``, compiled as Kafka's group coordinator compiles it
    (RE2J's ``Pattern.compile``) and matched as its ``TopicRegexResolver`` matches topics:
    against the whole name (``Matcher.matches()``), so ``a|b`` matches ``a`` and ``b`` but not
    ``ab``. Linear-time matching (the ``regex`` crate) over RE2J's syntax and meaning: ``\\d``,
    ``\\w``, ``\\s`` and ``\\b`` are ASCII, ``\\Q...\\E`` and octal escapes are read, and the
    flags ``x``, backreferences and lookaround are refused. Differences from RE2J:
    ``docs/compatibility.md``."""

    def __new__(cls, pattern: str) -> Self:
        """ValueError for a pattern RE2J would not compile, or one too large to compile here,
        with Kafka's INVALID_REGULAR_EXPRESSION message: ``SubscribedTopicRegex `<pattern>` is
        not a valid regular expression: <RE2J's description>.``"""
    @property
    def pattern(self) -> str:
        """The pattern as given."""
    def matches(self, name: str) -> bool:
        """Whether the pattern matches the whole of ``name``."""
    def matching(self, names: Iterable[str]) -> list[str]:
        """The names the pattern matches, in the order given (the same ``str`` objects).
        TypeError for an item that is not a ``str``; UnicodeEncodeError for one holding a lone
        surrogate, which no topic name does."""
