"""The process the crash tests kill: appends the deterministic workload through the durable
log and prints each acknowledged append as ``ACK <append number> <offset>``.

Usage: ``python storage_crash_child.py DATA_DIR SEED COUNT [OPERATION N]``. It opens partition
0 (recovering what an earlier run left), resumes the workload at the append whose first
offset is the log end, and keeps the cleaner busy (small segments, short backoff). With
``OPERATION N`` the N-th call of ``os.OPERATION`` (replace, unlink, fsync, write, pwrite)
kills the process with SIGKILL: before the call, or for ``pwrite`` after writing half its
bytes (a torn append). Without it the parent kills it at a random moment.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from typing import Any

from crash_support import Acknowledgements, finish, throttle
from groupcoord.config import Config
from groupcoord.storage import LogManager
from offsets_workload import records_count, workload

CONFIG = Config().with_overrides({
    "offsets.topic.segment.bytes": "16384",
    "log.index.interval.bytes": "1024",
    "log.cleaner.backoff.ms": "5",
    "log.cleaner.min.cleanable.ratio": "0.05",
    "log.cleaner.delete.retention.ms": "100",
})


def arm_kill(operation: str, n: int) -> None:
    real = getattr(os, operation)
    calls = [0]

    def die(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] == n:
            sys.stderr.write(f"KILLPOINT {operation} #{n}\n")
            sys.stderr.flush()
            if operation == "pwrite":
                fd, data, offset = args
                real(fd, bytes(data)[: len(data) // 2], offset)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args)

    setattr(os, operation, die)


async def main(data_dir: str, seed: int, count: int) -> None:
    manager = LogManager(data_dir, CONFIG)
    await manager.start()
    await manager.open_partition(0)
    end = manager.partition_log(0).next_offset
    appends = list(workload(seed, count))
    first, offset = 0, 0
    while offset < end:
        offset += records_count(appends[first])
        first += 1
    if offset != end:
        raise SystemExit(f"log end {end} is not an append boundary")
    print(f"START {first} {end}", flush=True)
    rng = random.Random(seed * 7919 + end)
    acks = Acknowledgements()

    number = first
    while number < len(appends):
        for _ in range(rng.choice((1, 1, 4, 32, 200))):
            if number == len(appends):
                break
            manager.append(0, appends[number], acks.sent(number))
            number += 1
        await throttle(lambda: acks.outstanding, 256)
    await finish(lambda: acks.outstanding)


if __name__ == "__main__":
    if len(sys.argv) == 6:
        arm_kill(sys.argv[4], int(sys.argv[5]))
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
