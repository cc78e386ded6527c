"""The process the compacted-topic crash test kills: appends one keyed record per batch to the
data topic ``keyed``'s partition 0 (``cleanup.policy=compact``, small segments, a busy cleaner)
and prints each acknowledged append as ``ACK <number> <offset>``.

Usage: ``python data_compaction_crash_child.py DATA_DIR COUNT [swap N]``. Record number ``i`` (see
:func:`record`) goes to offset ``i``; a run resumes at the log end. With ``swap N`` the process
kills itself with SIGKILL in the middle of the cleaner's N-th swap: after the cleaned segment
was committed (``.log.swap``) and one replaced file renamed ``.deleted``. Without it the
parent kills it at a random moment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sys
import time
from typing import Any

from crash_support import Acknowledgements, finish, throttle
from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.log import BatchAppend, TopicPartition
from groupcoord.storage import LogManager
from groupcoord.storage.topic_config import topic_log_config

TP = TopicPartition("keyed", 0)
KEYS = 40
CONFIG = Config().with_overrides({
    "log.cleaner.backoff.ms": "5",
    "log.cleanup.policy": "compact",
})
SETTINGS = dataclasses.replace(
    topic_log_config(CONFIG, {}), segment_bytes=8192, index_interval_bytes=1024, delete_retention_ms=100,
    min_cleanable_ratio=0.05, file_delete_delay_ms=0,
)


def record(i: int) -> tuple[bytes, bytes | None]:
    """Record number ``i``: key ``i mod KEYS``, every 37th a tombstone."""
    return b"key-%d" % (i % KEYS), None if i % 37 == 36 else b"value-%d" % i


def arm_kill_mid_swap(n: int) -> None:
    real = os.replace
    renames = [0]

    def replace(source: Any, target: Any) -> None:
        real(source, target)
        if str(target).endswith(".log.deleted"):
            renames[0] += 1
            if renames[0] == n:
                sys.stderr.write(f"KILLPOINT swap #{n}\n")
                sys.stderr.flush()
                os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace  # type: ignore[assignment]


async def main(data_dir: str, count: int) -> None:
    manager = LogManager(data_dir, CONFIG)
    await manager.start()
    log = await manager.open_log(TP, SETTINGS)
    end = log.next_offset
    print(f"START {end}", flush=True)
    acks = Acknowledgements()

    for number in range(end, count):
        key, value = record(number)
        now = int(time.time() * 1000)
        batch = codec.write_records([(0, now, key, value)], base_offset=0, timestamp=now)
        manager.append_to(TP, BatchAppend(bytearray(batch), 1), acks.sent(number))
        await throttle(lambda: acks.outstanding, 64)
    await finish(lambda: acks.outstanding)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[3] == "swap":
        arm_kill_mid_swap(int(sys.argv[4]))
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
