"""A data partition's ``.index`` and ``.timeindex`` files, written by ``groupcoord serve`` and
by Kafka 4.3.1 for the same batches, compared byte for byte once each server has stopped: the
same entries (one per ``log.index.interval.bytes``, the time index holding the largest
timestamp so far) and the same last time-index entry, which Kafka's ``LogSegment.close``
appends and its indexes' close trims the preallocated file to.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from data_servers import serve
from kafka import KafkaProducer

pytestmark = [pytest.mark.timeout(240), pytest.mark.clients, pytest.mark.java]

TOPIC = "indexed"
SECONDS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 12]
"""Each message's timestamp, in seconds after the base: they rise and fall, so that the
largest so far is not always the last; the largest of all comes last, after the last index
entry, so that only the entry the close appends holds it."""


def index_files(kind: str, directory: Path, base_ms: int) -> dict[str, bytes]:
    directory.mkdir()
    with serve(kind, directory, {TOPIC: 1}, {"log.index.interval.bytes": "300"}) as server:
        producer = KafkaProducer(bootstrap_servers=server.bootstrap, acks="all", enable_idempotence=False)
        try:
            for n, seconds in enumerate(SECONDS):
                # One batch per message: each send is acknowledged before the next.
                producer.send(TOPIC, key=b"k%d" % n, value=b"v" * 40, timestamp_ms=base_ms + seconds * 1000).get(30)
        finally:
            producer.close(30)
    partition = server.log_dir / f"{TOPIC}-0"
    return {suffix: (partition / f"{0:020d}{suffix}").read_bytes() for suffix in (".index", ".timeindex")}


def test_index_and_time_index_files_are_kafka_s(tmp_path: Path) -> None:
    base_ms = int(time.time() * 1000) - 600_000
    written = {kind: index_files(kind, tmp_path / kind, base_ms) for kind in ("groupcoord", "kafka")}
    assert len(written["kafka"][".index"]) >= 2 * 8, "a few offset-index entries, not one"
    assert written["groupcoord"] == written["kafka"]
