"""Test helpers for the offsets log: a replay oracle and a deterministic append workload.

:func:`replay` gives the state a log yields (latest value per logical key, tombstones and
transaction markers applied by the rules of :mod:`groupcoord.format.replay_rules`); it is the
yardstick that a recovered or cleaned log must meet. :func:`workload` is a reproducible
sequence of appends (offset commits over a small key space so compaction has work,
tombstones, group metadata, transactions ended by COMMIT or ABORT markers): a process that
appends it in order puts the record of append ``i`` at an offset the test can compute, so a
surviving log can be checked against exactly what was written.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from groupcoord.format import codec
from groupcoord.log import Append
from groupcoord.format.replay_rules import LogicalKey, Transaction, is_pending, logical_key, transaction_of


def replay(records: Iterable[Any]) -> dict[LogicalKey, Any]:
    """The state a log replays to, by the rules of :mod:`groupcoord.format.replay_rules` applied record
    by record: logical key -> value. ``records`` need ``partition``, ``offset``, ``control``,
    ``producer_id``, ``key`` and ``value`` (OffsetsRecord has them)."""
    committed: dict[LogicalKey, tuple[Any, int]] = {}
    pending: dict[Transaction, dict[LogicalKey, tuple[Any, int]]] = {}
    for r in records:
        transaction = transaction_of(r.producer_id, r.partition)
        if r.control is not None:
            ended = pending.pop(transaction, {})
            if r.control == "commit":
                for k, (value, offset) in ended.items():
                    current = committed.get(k)
                    if current is None or offset > current[1]:
                        committed[k] = (value, offset)
            continue
        k = logical_key(r.key)
        if r.value is None:
            committed.pop(k, None)
            for open_transaction in pending.values():
                open_transaction.pop(k, None)
        elif isinstance(r.key, codec.OffsetCommitKey) and is_pending(r.producer_id):
            pending.setdefault(transaction, {})[k] = (r.value, r.offset)
        else:
            committed[k] = (r.value, r.offset)
    return {k: v for k, (v, _) in committed.items()}


@dataclass(frozen=True)
class Written:
    """A record as the workload wrote it (the fields :func:`replay` reads)."""

    offset: int
    control: str | None
    producer_id: int
    is_transactional: bool
    key: Any
    value: Any
    partition: int = -1


GROUPS = [f"group-{g}" for g in range(5)]
TOPICS = ["orders", "payments", "audit"]


def _offset_record(rng: random.Random, n: int, tombstone: bool) -> tuple[bytes, bytes | None]:
    key = codec.OffsetCommitKey(rng.choice(GROUPS), rng.choice(TOPICS), rng.randrange(4))
    if tombstone:
        return codec.encode_key(key), None
    value = codec.OffsetCommitValue(n, f"m{n}" if n % 3 == 0 else "", 1_700_000_000_000 + n, n % 7)
    return codec.encode_key(key), codec.encode_value(value)


def _group_record(rng: random.Random, n: int) -> tuple[bytes, bytes | None]:
    group = rng.choice(GROUPS)
    member = codec.MemberMetadata(f"member-{n}", None, "client", "/127.0.0.1", 30000, 10000, b"s", b"a")
    value = codec.GroupMetadataValue("consumer", n, "range", f"member-{n}", 1_700_000_000_000 + n, [member])
    return codec.encode_key(codec.GroupMetadataKey(group)), codec.encode_value(value)


def workload(seed: int, count: int, *, transactions: bool = True) -> Iterator[Append]:
    """``count`` appends, the same for the same seed."""
    rng = random.Random(seed)
    open_producer: int | None = None
    producers = iter(range(4000, 1 << 30))
    for n in range(count):
        timestamp = 1_700_000_000_000 + n
        roll = rng.random()
        if transactions and open_producer is not None and roll < 0.08:
            yield Append([], timestamp, producer_id=open_producer, producer_epoch=0,
                         control="commit" if rng.random() < 0.7 else "abort", coordinator_epoch=1)
            open_producer = None
        elif transactions and open_producer is not None and roll < 0.2:
            records = [_offset_record(rng, n, False) for _ in range(rng.randint(1, 3))]
            yield Append(records, timestamp, producer_id=open_producer, producer_epoch=0, transactional=True)
        elif transactions and open_producer is None and roll < 0.03:
            open_producer = next(producers)
            yield Append([_offset_record(rng, n, False)], timestamp, producer_id=open_producer,
                         producer_epoch=0, transactional=True)
        elif roll < 0.3:
            yield Append([_group_record(rng, n)], timestamp)
        else:
            records = [_offset_record(rng, n, rng.random() < 0.08) for _ in range(rng.randint(1, 4))]
            yield Append(records, timestamp)


def records_count(append: Append) -> int:
    return 1 if append.control is not None else len(append.records)


def written_records(appends: Iterable[Append]) -> Iterator[Written]:
    """What appending ``appends`` in order to an empty partition writes, offset by offset."""
    offset = 0
    for append in appends:
        if append.control is not None:
            yield Written(offset, append.control, append.producer_id, True, None, None)
            offset += 1
            continue
        for key, value in append.records:
            decoded = codec.decode_key(key)
            yield Written(offset, None, append.producer_id, append.transactional, decoded,
                          codec.decode_value(decoded, value))
            offset += 1
