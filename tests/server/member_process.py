"""A confluent-kafka (librdkafka) member of a consumer-protocol group (KIP-848,
``group.protocol=consumer``), in a process of its own, printing the JSON lines of the Java
client's ``member`` mode (``java/src/main/java/GroupMember.java`` describes them and the stdin
commands, ``commit topic:0:5,...`` and ``close``).

    python member_process.py BOOTSTRAP GROUP CLIENT_ID SUBSCRIPTION ASSIGNOR

SUBSCRIPTION is ``topics:A,B`` or ``regex:REGEX`` (matched by the coordinator; librdkafka marks
a regex with a leading ``^``); ASSIGNOR is ``group.remote.assignor`` or ``-``.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any

LIFETIME_S = 240.0


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def names(partitions: list[Any]) -> list[str]:
    return sorted(f"{tp.topic}:{tp.partition}" for tp in partitions)


def transition(event: str) -> Any:
    def callback(consumer: Any, partitions: list[Any]) -> None:
        emit(event, at_us=time.time_ns() // 1000, partitions=names(partitions))
    return callback


def commit(consumer: Any, offsets: str) -> None:
    from confluent_kafka import TopicPartition

    asked = []
    for item in offsets.split(","):
        topic, partition, offset = item.rsplit(":", 2)
        asked.append(TopicPartition(topic, int(partition), int(offset)))
    consumer.commit(offsets=asked, asynchronous=False)
    read = consumer.committed([TopicPartition(tp.topic, tp.partition) for tp in asked], timeout=30)
    emit("committed", offsets={f"{tp.topic}:{tp.partition}": tp.offset for tp in read})


def main(bootstrap: str, group: str, client_id: str, subscription: str, assignor: str) -> int:
    from confluent_kafka import Consumer

    config = {
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "group.protocol": "consumer", "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 100, "reconnect.backoff.max.ms": 200, "topic.metadata.refresh.interval.ms": 1000,
    }
    if assignor != "-":
        config["group.remote.assignor"] = assignor
    consumer = Consumer(config)
    kind, _, what = subscription.partition(":")
    topics = {"topics": lambda: what.split(","), "regex": lambda: [what if what.startswith("^") else "^" + what]}
    consumer.subscribe(topics[kind](), on_assign=transition("assigned"), on_revoke=transition("revoked"),
                       on_lost=transition("lost"))

    commands: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [commands.put(line.strip()) for line in sys.stdin], daemon=True).start()
    member = ""
    deadline = time.monotonic() + LIFETIME_S
    while time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            emit("record", partition=f"{message.topic()}:{message.partition()}", offset=message.offset())
        if consumer.memberid() and consumer.memberid() != member:
            member = consumer.memberid()
            emit("member", member_id=member, epoch=None)
        while not commands.empty():
            command = commands.get()
            if command == "close":
                consumer.close()
                emit("closed")
                return 0
            if not command.startswith("commit "):
                raise ValueError(command)
            commit(consumer, command.removeprefix("commit "))
    consumer.close()
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
