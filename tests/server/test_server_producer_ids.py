"""InitProducerId: producer ids from durably reserved blocks, unique across restarts of a data
directory; the answers for transactional ids and malformed requests; and kafka-python's
idempotent producer getting its id from a served process."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaProducer
from server_process import ServerProcess, wait_for
from test_server_inprocess import CONFIG, Client, run, serving

from groupcoord.errors import Errors
from groupcoord.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from groupcoord.server.app import ServerOptions
from groupcoord.server.producer_ids import (
    PRODUCER_ID_BLOCK_SIZE,
    PRODUCER_IDS_FILE,
    ProducerIdManager,
)


async def init(client: Client, version: int, transactional_id: str | None = None,
               producer_id: int = -1, producer_epoch: int = -1) -> tuple[int, int, int]:
    response = await client.call(InitProducerIdRequest(
        transactional_id=transactional_id, transaction_timeout_ms=60_000,
        producer_id=producer_id, producer_epoch=producer_epoch,
    ), InitProducerIdResponse, version)
    return response.error_code, response.producer_id, response.producer_epoch


def test_idempotent_producers_get_fresh_ids_at_every_version(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)

    async def main() -> None:
        async with serving(options) as (_, _, client):
            answers = [await init(client, version) for version in range(6)]
            assert answers == [(Errors.NONE, pid, 0) for pid in range(6)]
            # The id and epoch of a producer asking for a new epoch are ignored without a
            # transactional id: a fresh id, epoch 0, as Kafka answers.
            assert await init(client, 5, producer_id=3, producer_epoch=7) == (Errors.NONE, 6, 0)

    run(main)


def test_what_is_refused(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
    refused_id = (-1, -1)

    async def main() -> None:
        async with serving(options) as (_, _, client):
            assert await init(client, 4, producer_id=3) == (Errors.INVALID_REQUEST, *refused_id)
            assert await init(client, 4, producer_epoch=3) == (Errors.INVALID_REQUEST, *refused_id)
            assert await init(client, 4, "") == (Errors.INVALID_REQUEST, *refused_id)
            assert await init(client, 0, "") == (Errors.INVALID_REQUEST, *refused_id)
            # No transaction coordinator: as a broker that does not lead the id's partition.
            assert await init(client, 4, "txn") == (Errors.NOT_COORDINATOR, *refused_id)
            assert await init(client, 5) == (Errors.NONE, 0, 0), "no id was used up"

    run(main)


def test_ids_do_not_repeat_across_restarts(tmp_path: Path) -> None:
    options = ServerOptions(port=0, data_dir=tmp_path, config=CONFIG)
    given: list[int] = []

    async def main() -> None:
        for _ in range(3):
            async with serving(options) as (_, _, client):
                for _ in range(3):
                    error, producer_id, _ = await init(client, 4)
                    assert error == Errors.NONE
                    given.append(producer_id)

    run(main)
    assert given == [0, 1, 2, 1000, 1001, 1002, 2000, 2001, 2002]
    assert json.loads((tmp_path / PRODUCER_IDS_FILE).read_text()) == {"next_producer_id": 3000}


def test_the_next_block_is_reserved_off_the_loop_and_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save of the second block waits for the test, which releases it only once a request
    has found the first block used up: on the loop, this would deadlock."""
    released = threading.Event()
    reserve = ProducerIdManager._reserve
    calls = 0

    def held_reserve(self: ProducerIdManager, *args: Any) -> None:
        nonlocal calls
        calls += 1
        if calls > 1:
            assert released.wait(5), "the next block was reserved on the event loop"
        reserve(self, *args)

    monkeypatch.setattr(ProducerIdManager, "_reserve", held_reserve)

    async def main() -> None:
        manager = ProducerIdManager(tmp_path)
        manager.start()
        ids = [manager.generate() for _ in range(PRODUCER_ID_BLOCK_SIZE)]
        assert ids == list(range(PRODUCER_ID_BLOCK_SIZE)), "the prefetch does not hold anyone up"
        assert manager.generate() is None, "used up, the next block not saved yet"
        released.set()
        for _ in range(200):
            producer_id = manager.generate()
            if producer_id is not None:
                break
            await asyncio.sleep(0.01)
        assert producer_id == PRODUCER_ID_BLOCK_SIZE
        await manager.close()

    run(main)
    assert calls == 2
    again = ProducerIdManager(tmp_path)
    again.start()
    assert again.generate() == 2 * PRODUCER_ID_BLOCK_SIZE


def test_a_damaged_producer_ids_file_refuses_to_start(tmp_path: Path) -> None:
    (tmp_path / PRODUCER_IDS_FILE).write_text('{"next": 1}')
    with pytest.raises(ValueError, match="not a groupcoord producer ids file"):
        ProducerIdManager(tmp_path).start()


@pytest.mark.clients
def test_kafka_python_idempotent_producer_gets_an_id_unique_across_restarts(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", topics=["produced:1"])
    seen = []
    try:
        for _ in range(2):
            server.start()
            producer = KafkaProducer(bootstrap_servers=server.bootstrap, enable_idempotence=True)
            try:
                manager = producer._transaction_manager
                wait_for(lambda: manager.producer_id_and_epoch.is_valid, 15, "a producer id")
                seen.append((manager.producer_id_and_epoch.producer_id,
                             manager.producer_id_and_epoch.epoch))
            finally:
                producer.close(timeout=2)
            assert server.stop() == 0, server.log()
    finally:
        server.kill()
    assert seen == [(0, 0), (1000, 0)]
    assert "Traceback" not in server.log()

