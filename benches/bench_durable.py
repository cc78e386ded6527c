"""The coordinator on the durable log: offset commits per second and the time to load a 1 GiB
``__consumer_offsets`` partition, end to end through the coordinator (issue 5's benchmarks at
the coordinator level; ``bench_storage.py`` measures the log alone).

Commits: ``OffsetCommit`` requests (generation -1, one partition each, 50 groups) handled by
the coordinator on the durable log in a data directory on this disk; a commit counts when its
callback answers NONE, that is once the log reports the append complete. ``concurrent`` has
100 commits in flight per loop turn (many consumers committing at once: group commit),
``sequential`` waits for each answer before the next. Under the default flush policy
(``log.flush.interval.messages=1``, fsync before the answer) and with flushing off. Full
scale: 20,000 concurrent / 1,000 sequential commits per round; smoke: 400 / 20.

Load: a partition of ten segments holding 1 GiB of realistic records (the codec benchmark's
data: 90 % offset commits, 10 % group metadata of 3 to 30 members) loaded by the coordinator
runtime as at startup: opened, read in a worker thread, every record replayed into the
coordinator. Smoke: 4 MiB. ``benches/report_durable.py`` prints the table.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench_storage import FLUSH, build_partition
from conftest import scaled

from groupcoord.config import Config
from groupcoord.coordinator import OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.storage import LogManager

COMMITS = {"concurrent": scaled(20_000, 400), "sequential": scaled(1_000, 20)}
PER_TURN = 100
LOAD_BYTES = scaled(1 << 30, 4 << 20)
LOAD_SEGMENTS = 10


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="groupcoord-bench-", dir=Path.cwd()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def commit_all(data_dir: Path, flush: str, mode: str, count: int) -> int:
    config = Config().with_overrides({
        "log.flush.interval.messages": flush, "log.cleaner.enable": "false",
        "offsets.topic.num.partitions": "1",
    })
    log = LogManager(data_dir, config)
    await log.start()
    runtime = CoordinatorRuntime(config, log)
    await runtime.start([0])
    await runtime.wait_loaded()
    coordinator = runtime.coordinator
    loop = asyncio.get_running_loop()
    ok = 0

    def commit(i: int, answer: Any) -> None:
        tp = TopicPartition("events", i % 64)
        coordinator.handle_commit_offsets(f"group-{i % 50}", "", None, -1,
                                          {tp: OffsetAndMetadata(i, "", 1)}, answer)

    if mode == "concurrent":
        finished = loop.create_future()

        def answered(result: dict[TopicPartition, Errors]) -> None:
            nonlocal ok
            ok += all(e == Errors.NONE for e in result.values())
            if ok == count and not finished.done():
                finished.set_result(None)

        for start in range(0, count, PER_TURN):
            for i in range(start, min(start + PER_TURN, count)):
                commit(i, answered)
            await asyncio.sleep(0)
        await asyncio.wait_for(finished, 300)
    else:
        for i in range(count):
            answer: asyncio.Future[dict[TopicPartition, Errors]] = loop.create_future()
            commit(i, answer.set_result)
            ok += all(e == Errors.NONE for e in (await answer).values())
    await runtime.close()
    await log.close()
    return ok


@pytest.mark.parametrize("flush", sorted(FLUSH))
@pytest.mark.parametrize("mode", sorted(COMMITS))
def test_coordinator_commits(benchmark: Any, data_dir: Path, mode: str, flush: str) -> None:
    rounds = [0]

    def setup() -> tuple[tuple[Path], dict[str, Any]]:
        rounds[0] += 1
        return (data_dir / f"round-{rounds[0]}",), {}

    def run(directory: Path) -> int:
        return asyncio.run(commit_all(directory, FLUSH[flush], mode, COMMITS[mode]))

    benchmark.group = f"commits-{mode}"
    result = benchmark.pedantic(run, setup=setup, rounds=scaled(3, 1), iterations=1)
    assert result == COMMITS[mode]
    benchmark.extra_info.update(commits=COMMITS[mode], mode=mode, flush=flush)


def test_coordinator_load(benchmark: Any, data_dir: Path) -> None:
    directory = data_dir / "__consumer_offsets-0"
    end = build_partition(directory, LOAD_BYTES, LOAD_SEGMENTS)
    size = sum(p.stat().st_size for p in directory.glob("*.log"))
    (data_dir / "recovery-point-offset-checkpoint").write_text(f"0\n1\n__consumer_offsets 0 {end}\n")
    config = Config().with_overrides({
        "log.cleaner.enable": "false", "offsets.topic.segment.bytes": str(size),
        "offsets.topic.num.partitions": "1",
    })

    async def load() -> tuple[int, int, int]:
        log = LogManager(data_dir, config)
        await log.start()
        runtime = CoordinatorRuntime(config, log)
        await runtime.start([0])
        await runtime.wait_loaded()
        manager = runtime.coordinator.manager
        loaded = (runtime.loaded_records, len(manager.groups),
                  sum(manager.offsets.num_offsets(g) for g in manager.offsets.group_ids()))
        await runtime.close()
        await log.close()
        return loaded

    benchmark.group = "load"
    records, groups, offsets = benchmark.pedantic(lambda: asyncio.run(load()), rounds=scaled(3, 1), iterations=1)
    assert records == end and groups > 0 and offsets > 0
    benchmark.extra_info.update(bytes=size, records=records, groups=groups, offsets=offsets)
