"""The process the coordinator crash test kills: the coordinator on the durable log (small
segments, a busy cleaner), committing offsets through ``handle_commit_offsets`` and printing
each acknowledged commit as ``ACK <group> <topic> <partition> <offset>``.

Usage: ``python coordinator_crash_child.py DATA_DIR RUN COUNT [OPERATION N]``. Commit ``i`` of
run ``RUN`` sets offset ``RUN * COUNT + i`` for group ``g<i % 7>``, partition ``i % 5`` of
topic ``t``, so offsets only grow per key across runs. With ``OPERATION N`` the N-th call of
``os.OPERATION`` kills the process (see storage_crash_child.arm_kill); otherwise the parent
kills it at a random moment.
"""

from __future__ import annotations

import asyncio
import random
import sys

from crash_support import finish, throttle
from groupcoord.coordinator import OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.storage import LogManager
from storage_crash_child import CONFIG as STORAGE_CONFIG
from storage_crash_child import arm_kill

CONFIG = STORAGE_CONFIG.with_overrides({"offsets.topic.num.partitions": "3"})


async def main(data_dir: str, run: int, count: int) -> None:
    log = LogManager(data_dir, CONFIG)
    await log.start()
    runtime = CoordinatorRuntime(CONFIG, log)
    await runtime.start(range(CONFIG.offsets_topic_num_partitions))
    await runtime.wait_loaded()
    print("START", flush=True)
    coordinator = runtime.coordinator
    rng = random.Random(run)
    outstanding = 0

    def acknowledged(group: str, tp: TopicPartition, offset: int, result: dict[TopicPartition, Errors]) -> None:
        nonlocal outstanding
        outstanding -= 1
        if result[tp] != Errors.NONE:
            print(f"ERROR {group} {result[tp].name}", flush=True)
            raise SystemExit(3)
        print(f"ACK {group} {tp.topic} {tp.partition} {offset}", flush=True)

    i = 0
    while i < count:
        for _ in range(rng.choice((1, 8, 64))):
            group, tp, offset = f"g{i % 7}", TopicPartition("t", i % 5), run * count + i
            outstanding += 1
            coordinator.handle_commit_offsets(
                group, "", None, -1, {tp: OffsetAndMetadata(offset, f"run {run}", 1)},
                lambda r, g=group, t=tp, o=offset: acknowledged(g, t, o, r),
            )
            i += 1
        runtime.after_request()
        await throttle(lambda: outstanding, 256)
    await finish(lambda: outstanding)


if __name__ == "__main__":
    if len(sys.argv) == 6:
        arm_kill(sys.argv[4], int(sys.argv[5]))
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
