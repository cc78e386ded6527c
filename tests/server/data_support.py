"""What the data-plane suites share: the four clients' producers and consumers as processes
(``data_process.py`` for the Python clients, the Java client's data modes), and what their
lines say.

A producer's messages are numbered (``seq``); each acknowledgement names the partition and
offset the server gave it, so a test knows exactly which record a consumer must find where.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pytest
from client_support import SESSION_TIMEOUT_MS, ClientProcess, is_disjoint_cover
from data_process import key, value
from group_members import MemberProcess
from java_client import java_client
from server_process import wait_for

CLIENTS = ("kafka-python", "aiokafka", "confluent-kafka", "java")
CLIENT_PARAMS = [pytest.param(c, marks=pytest.mark.java) if c == "java" else c for c in CLIENTS]
"""The ``params`` of a test run with each client; the Java client's need Java and Maven."""
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
KEYS = 36
"""Enough that every partition of six gets keys, by murmur2 (Java, kafka-python, aiokafka) and
by CRC-32 (librdkafka's consistent_random)."""
PRODUCE_TIMEOUT_S = 120.0
DATA_PROCESS = Path(__file__).with_name("data_process.py")


def command(client: str, mode: str, *args: object) -> list[str]:
    """The command line running ``client``'s ``mode`` (see ``data_process.py``)."""
    words = [str(a) for a in args]
    if client == "java":
        return java_client(mode, *words)
    return [sys.executable, str(DATA_PROCESS), mode, client, *words]


class Record(NamedTuple):
    """A record as a consumer printed it, with when the test read the line (monotonic)."""

    at: float
    partition: int
    offset: int
    key: str
    value: str


class ProducerProcess(ClientProcess):
    """``produce``: numbered keyed messages, ``count`` from a producer per compression; with
    ``on_go``, it sends once told to (:meth:`go`)."""

    def __init__(self, client: str, bootstrap: str, topic: str, stderr: Path, *,
                 compressions: Sequence[str] = COMPRESSIONS, count: int = 100, interval_ms: int = 0,
                 on_go: bool = False) -> None:
        self.client = client
        self.compressions = list(compressions)
        self.count = count
        super().__init__(command(client, "produce", bootstrap, topic, ",".join(compressions), count, KEYS,
                                 interval_ms, "on-go" if on_go else "now"), stderr, stdin=on_go)

    def go(self) -> None:
        self.tell("go")

    @property
    def total(self) -> int:
        return len(self.compressions) * self.count

    def message(self, seq: int) -> tuple[str, str]:
        """The key and value of message ``seq``."""
        return key(seq, KEYS), value(seq, self.compressions[seq // self.count])

    def acked(self) -> dict[int, tuple[int, int]]:
        """(partition, offset) by seq, of the messages acknowledged so far."""
        return {int(s): (int(p), int(o)) for p, o, s in self.words("acked")}

    def failed(self) -> list[list[str]]:
        return self.words("failed")

    def healthy(self) -> bool:
        """True, unless it has exited before having everything acknowledged (then fail)."""
        if self.process.poll() is not None and len(self.acked()) < self.total:
            self.finish(0)
        return True

    def finish(self, timeout: float = PRODUCE_TIMEOUT_S) -> dict[int, tuple[int, int]]:
        """Wait until it has sent everything; every message must have been acknowledged, once."""
        code = self.wait(timeout)
        acked = self.acked()
        assert code == 0 and not self.failed() and sorted(acked) == list(range(self.total)), (
            f"the {self.client} producer exited {code}, {len(acked)} of {self.total} acknowledged, "
            f"failures {self.failed()[:5]}: {self.errors()}"
        )
        assert len(self.words("acked")) == self.total, "a message was acknowledged twice"
        return acked


class ConsumerProcess(ClientProcess):
    """``consume``: a member of ``group`` that commits after every poll."""

    def __init__(self, client: str, bootstrap: str, group: str, topic: str, stderr: Path, *,
                 max_records: int = 500, pause_ms: int = 0) -> None:
        super().__init__(command(client, "consume", bootstrap, group, topic, SESSION_TIMEOUT_MS, max_records,
                                 pause_ms), stderr)

    def records(self) -> list[Record]:
        read = []
        for at, line in list(self.lines):
            words = line.split()
            if words[:1] == ["record"]:
                _, partition, offset, k, v = words
                read.append(Record(at, int(partition), int(offset), k, v))
        return read

    def commits(self, kind: str = "committed") -> dict[int, int]:
        """The last offset of each partition in its ``kind`` lines (``committed``: confirmed;
        ``committing``: attempted)."""
        last: dict[int, int] = {}
        for words in self.words(kind):
            for item in words[0].split(","):
                partition, offset = item.split(":")
                last[int(partition)] = int(offset)
        return last


def wait_settled(consumers: Sequence[ClientProcess], partitions: int, timeout: float) -> None:
    """Wait until the consumers' assignments cover the partitions, each once."""
    def settled() -> bool:
        for consumer in consumers:
            if consumer.process.poll() is not None:
                raise AssertionError(f"a consumer exited with {consumer.process.returncode}: "
                                     f"{consumer.errors()}")
        return is_disjoint_cover([c.current() for c in consumers], partitions)

    try:
        wait_for(settled, timeout, "the consumers to share the partitions")
    except AssertionError as error:
        raise AssertionError(f"{error}: {[sorted(c.current()) for c in consumers]} "
                             f"{[c.errors() for c in consumers]}") from None


def log_ends(acked: dict[int, tuple[int, int]]) -> dict[int, int]:
    """Each partition's log end offset, from the acknowledgements of everything it holds."""
    ends: dict[int, int] = {}
    for partition, offset in acked.values():
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    return ends


def check_offsets_dense(acked: dict[int, tuple[int, int]]) -> None:
    """A fresh topic's acknowledged offsets are 0, 1, 2... in each partition, each given once."""
    by_partition: dict[int, list[int]] = {}
    for partition, offset in acked.values():
        by_partition.setdefault(partition, []).append(offset)
    for partition, offsets in by_partition.items():
        assert sorted(offsets) == list(range(len(offsets))), f"partition {partition}: {sorted(offsets)}"


def check_in_producer_order(acked: dict[int, tuple[int, int]], count: int) -> None:
    """In each partition, the later a producer sent a message, the higher its offset (an
    idempotent producer's retries never reorder); ``count`` messages a producer."""
    last: dict[tuple[int, int], int] = {}
    for seq in sorted(acked):
        partition, offset = acked[seq]
        place = (seq // count, partition)
        assert offset > last.get(place, -1), f"seq {seq} at {partition}:{offset} after {last[place]}"
        last[place] = offset


class Collected:
    """Who read which record, checked against what the producer had acknowledged."""

    def __init__(self, producer: ProducerProcess, acked: dict[int, tuple[int, int]],
                 consumers: Sequence[ConsumerProcess]) -> None:
        self.seq_at = {place: seq for seq, place in acked.items()}
        self.producer = producer
        self.reads: dict[tuple[int, int], list[int]] = {}
        """(partition, offset): the indexes of the consumers that read it, once per read."""
        for index, consumer in enumerate(consumers):
            for record in consumer.records():
                place = (record.partition, record.offset)
                assert place in self.seq_at, f"consumer {index} read {place}, which was never acknowledged"
                expected = producer.message(self.seq_at[place])
                assert (record.key, record.value) == expected, f"{place}: {record} is not {expected}"
                self.reads.setdefault(place, []).append(index)

    def missing(self) -> list[tuple[int, int]]:
        return sorted(set(self.seq_at) - set(self.reads))

    def duplicates(self) -> dict[tuple[int, int], list[int]]:
        return {place: who for place, who in self.reads.items() if len(who) > 1}


def check_each_reads_in_order(consumers: Sequence[ConsumerProcess]) -> None:
    """Each consumer reads each partition in offset order."""
    for index, consumer in enumerate(consumers):
        last: dict[int, int] = {}
        for record in consumer.records():
            assert record.offset > last.get(record.partition, -1), (
                f"consumer {index} read {record.partition}:{record.offset} after {last[record.partition]}")
            last[record.partition] = record.offset


def everything_read(consumers: Sequence[ConsumerProcess], acked: dict[int, tuple[int, int]]) -> bool:
    read = {(r.partition, r.offset) for c in consumers for r in c.records()}
    return read >= set(acked.values())


class Processes:
    """The client processes of a test, each with its standard error in the test's directory;
    those still running are killed at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[ClientProcess] = []

    def _stderr(self, name: str) -> Path:
        return self.directory / f"{len(self.started)}-{name}.stderr"

    def producer(self, client: str, bootstrap: str, topic: str, *, compressions: Sequence[str] = COMPRESSIONS,
                 count: int = 100, interval_ms: int = 0, on_go: bool = False) -> ProducerProcess:
        process = ProducerProcess(client, bootstrap, topic, self._stderr(f"produce-{client}"),
                                  compressions=compressions, count=count, interval_ms=interval_ms, on_go=on_go)
        self.started.append(process)
        return process

    def consumer(self, client: str, bootstrap: str, group: str, topic: str, **options: int) -> ConsumerProcess:
        process = ConsumerProcess(client, bootstrap, group, topic, self._stderr(f"consume-{client}"), **options)
        self.started.append(process)
        return process

    def tail(self, client: str, bootstrap: str, topic: str, partition: int, max_wait_ms: int) -> ClientProcess:
        process = ClientProcess(command(client, "tail", bootstrap, topic, partition, max_wait_ms),
                                self._stderr(f"tail-{client}"))
        self.started.append(process)
        return process

    def member(self, client: str, bootstrap: str, group: str, client_id: str, subscription: str,
               assignor: str = "-") -> MemberProcess:
        """A consumer-protocol member (``group_members.MemberProcess``)."""
        process = MemberProcess(client, bootstrap, group, client_id, subscription,
                                self._stderr(f"member-{client_id}"), assignor)
        self.started.append(process)
        return process

    def close(self) -> None:
        for process in self.started:
            process.close()
