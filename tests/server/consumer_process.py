"""A consumer in a process of its own, for tests that kill it with SIGKILL.

    python consumer_process.py CLIENT BOOTSTRAP GROUP TOPIC SESSION_TIMEOUT_MS

CLIENT is kafka-python, aiokafka or confluent-kafka. The consumer joins GROUP subscribed to
TOPIC and prints ``assigned 0,3,5`` (partition numbers) whenever its assignment changes, then
polls until killed, or gives up after :data:`LIFETIME_S`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterable

LIFETIME_S = 120.0
HEARTBEAT_INTERVAL_MS = 200


def report(partitions: Iterable[int], last: list[str]) -> None:
    line = "assigned " + ",".join(str(p) for p in sorted(partitions))
    if not last or last[0] != line:
        last[:] = [line]
        print(line, flush=True)


def run_kafka_python(bootstrap: str, group: str, topic: str, session_ms: int) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
        session_timeout_ms=session_ms, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
        fetch_max_wait_ms=100,
    )
    _loop(lambda: consumer.poll(timeout_ms=100),
          lambda: [tp.partition for tp in consumer.assignment()])


def run_confluent_kafka(bootstrap: str, group: str, topic: str, session_ms: int) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
        "session.timeout.ms": session_ms, "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
        "fetch.wait.max.ms": 100,
    })
    consumer.subscribe([topic])
    _loop(lambda: consumer.poll(0.1), lambda: [tp.partition for tp in consumer.assignment()])


def run_aiokafka(bootstrap: str, group: str, topic: str, session_ms: int) -> None:
    from aiokafka import AIOKafkaConsumer

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
            session_timeout_ms=session_ms, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            fetch_max_wait_ms=100,
        )
        await consumer.start()
        last: list[str] = []
        deadline = time.monotonic() + LIFETIME_S
        while time.monotonic() < deadline:
            await consumer.getmany(timeout_ms=100)
            report((tp.partition for tp in consumer.assignment()), last)

    asyncio.run(main())


def _loop(poll: Callable[[], object], assignment: Callable[[], list[int]]) -> None:
    last: list[str] = []
    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        poll()
        report(assignment(), last)


if __name__ == "__main__":
    client, bootstrap, group, topic, session = sys.argv[1:6]
    runner = {
        "kafka-python": run_kafka_python,
        "aiokafka": run_aiokafka,
        "confluent-kafka": run_confluent_kafka,
    }[client]
    runner(bootstrap, group, topic, int(session))
