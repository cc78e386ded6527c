"""Producer ids for InitProducerId, unique across restarts of a data directory.

As Kafka's brokers get them from the KRaft controller (``ProducerIdsBlock``,
``RPCProducerIdManager``), ids are handed out from blocks of :data:`PRODUCER_ID_BLOCK_SIZE`:
a block is used only once the start of the next is durable in ``DATA_DIR/producer-ids.json``
(the controller's ``ProducerIdsRecord``), so a restart, even after a crash, never gives an id
twice; at most the rest of a block is skipped. The first block is taken before serving
(blocking). The next is saved in a worker thread once 90% of the current one is used, as
Kafka prefetches it; a request that finds the block used up before that save is done gets
``None`` and is answered COORDINATOR_LOAD_IN_PROGRESS, as Kafka answers it, which producers
retry.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import NamedTuple

from groupcoord.server.topics import save_json

log = logging.getLogger(__name__)

PRODUCER_IDS_FILE = "producer-ids.json"
PRODUCER_ID_BLOCK_SIZE = 1000
PREFETCH_FRACTION = 0.9
"""How much of a block is used before the next is asked for (Kafka's RPCProducerIdManager)."""


class ProducerIdsBlock(NamedTuple):
    first_producer_id: int
    size: int = PRODUCER_ID_BLOCK_SIZE

    @property
    def next_block_first_id(self) -> int:
        return self.first_producer_id + self.size


class ProducerIdManager:
    """Hands out producer ids on the event loop from durably reserved blocks."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / PRODUCER_IDS_FILE
        self._block: ProducerIdsBlock | None = None
        self._next_id = 0
        self._next_block: ProducerIdsBlock | None = None
        self._reserving: asyncio.Task[None] | None = None

    def _read_next_block_start(self) -> int:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return 0
        try:
            start = int(data["next_producer_id"])
            if start < 0:
                raise ValueError(f"next_producer_id is {start}")
            return start
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{self.path}: not a groupcoord producer ids file ({error})") from None

    def _reserve(self, block: ProducerIdsBlock) -> None:
        """Make ``block`` taken for good (blocking: fsyncs)."""
        save_json(self.path, {"next_producer_id": block.next_block_first_id})

    def start(self) -> None:
        """Reserve the first block (blocking: call it before serving).

        Raises:
            ValueError: the file is not one this class writes.
            OSError: it could not be written.
        """
        block = ProducerIdsBlock(self._read_next_block_start())
        self._reserve(block)
        self._block, self._next_id = block, block.first_producer_id

    def generate(self) -> int | None:
        """A new producer id, or None while the next block is being reserved."""
        block = self._block
        if block is None:
            return None
        if self._next_id >= block.next_block_first_id:
            if self._next_block is None:
                self._prefetch(block)
                return None
            block = self._block = self._next_block
            self._next_block = None
            self._next_id = block.first_producer_id
        producer_id = self._next_id
        self._next_id += 1
        if producer_id - block.first_producer_id >= block.size * PREFETCH_FRACTION:
            self._prefetch(block)
        return producer_id

    def _prefetch(self, current: ProducerIdsBlock) -> None:
        if self._next_block is None and self._reserving is None:
            self._reserving = asyncio.ensure_future(
                self._reserve_next(ProducerIdsBlock(current.next_block_first_id)))

    async def _reserve_next(self, block: ProducerIdsBlock) -> None:
        try:
            await asyncio.to_thread(self._reserve, block)
        except OSError as error:
            log.error("Cannot reserve producer ids from %d: saving %s failed: %s",
                      block.first_producer_id, self.path, error)
        else:
            self._next_block = block
        finally:
            self._reserving = None

    async def close(self) -> None:
        """Wait for a block being reserved."""
        if self._reserving is not None:
            await asyncio.shield(self._reserving)
