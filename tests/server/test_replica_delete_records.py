"""DeleteRecords on the replica manager, in process: Kafka's answers for each case (the high
watermark for -1, past it OFFSET_OUT_OF_RANGE, a compact-only topic POLICY_VIOLATION,
``__consumer_offsets`` INVALID_TOPIC_EXCEPTION, an unknown partition), reads below the new log
start out of range, and the log start never moving back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from groupcoord.config import Config
from groupcoord.coordinator.clock import MockTime
from groupcoord.errors import Errors
from groupcoord.format import codec
from groupcoord.log import TopicPartition
from groupcoord.server.replica_manager import ProduceResult, ReplicaManager
from groupcoord.server.topics import TopicRegistry
from groupcoord.storage import LogManager

PLAIN = TopicPartition("plain", 0)
KEYED = TopicPartition("keyed", 0)


async def produce(replicas: ReplicaManager, tp: TopicPartition, count: int, now: int) -> ProduceResult:
    records = codec.write_records([(i, now, b"k%d" % i, b"v") for i in range(count)], base_offset=0,
                                  timestamp=now)
    answered: asyncio.Future[ProduceResult] = asyncio.get_running_loop().create_future()
    replicas.append_records(tp, records, client_id="test", allow_zstd=True, callback=answered.set_result)
    return await answered


def test_delete_records_answers_as_kafka_does(tmp_path: Path) -> None:
    async def main() -> None:
        config = Config().with_overrides({"log.cleaner.enable": "false"})
        time = MockTime()
        logs = LogManager(tmp_path, config)
        await logs.start()
        topics = TopicRegistry(tmp_path)
        topics.declare("plain", 1)
        topics.declare("keyed", 1)
        await topics.alter_configs("keyed", {"cleanup.policy": "compact"})
        replicas = ReplicaManager(config, logs, topics, time)
        await replicas.start(lambda tp: None)
        try:
            assert (await produce(replicas, PLAIN, 5, time.milliseconds())).error == Errors.NONE
            assert replicas.delete_records(PLAIN, 6)[:2] == (Errors.OFFSET_OUT_OF_RANGE, -1)
            assert replicas.delete_records(PLAIN, -2)[:2] == (Errors.OFFSET_OUT_OF_RANGE, -1)
            error, low, written = replicas.delete_records(PLAIN, 3)
            assert (error, low) == (Errors.NONE, 3) and written is not None
            await written
            assert replicas.read(PLAIN, 2, 10_000, min_one=True).error == Errors.OFFSET_OUT_OF_RANGE
            found = replicas.read(PLAIN, 3, 10_000, min_one=True)
            assert (found.error, found.log_start_offset, found.high_watermark) == (Errors.NONE, 3, 5)
            assert replicas.delete_records(PLAIN, 1)[:2] == (Errors.NONE, 3)  # never back
            assert replicas.delete_records(PLAIN, -1)[:2] == (Errors.NONE, 5)  # the high watermark
            assert (await produce(replicas, PLAIN, 1, time.milliseconds())).log_start_offset == 5
            assert replicas.delete_records(KEYED, 0)[:2] == (Errors.POLICY_VIOLATION, -1)
            await topics.alter_configs("keyed", {"cleanup.policy": "compact,delete"})
            replicas.apply_configs(topics.get("keyed"))  # type: ignore[arg-type]
            assert replicas.delete_records(KEYED, 0)[:2] == (Errors.NONE, 0)
            assert replicas.delete_records(TopicPartition("__consumer_offsets", 0), 0)[0] == (
                Errors.INVALID_TOPIC_EXCEPTION
            )
            assert replicas.delete_records(TopicPartition("plain", 1), 0)[0] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        finally:
            replicas.close()
            await logs.close()

    asyncio.run(main())
