"""Durable log benchmarks: appends of offset commits per second through the log manager, and
the time to load (recover, read and decode) a 1 GiB ``__consumer_offsets`` partition.

Appends: ``concurrent`` makes 100 appends per loop turn (many clients committing at once: one
batch and one fsync per turn, group commit), ``sequential`` waits for each append before the
next (one fsync per append). Each under the default flush policy
(``log.flush.interval.messages=1``: fsync before the callback) and with flushing off (Kafka's
default, ``Long.MAX``: acknowledged once written to the OS). Full scale: 50,000 concurrent /
2,000 sequential appends per round; ``GROUPCOORD_BENCH_SCALE=smoke``: 500 / 20.

Load: a partition of ten segments holding 1 GiB of realistic records (the codec benchmark's
data) is opened after a clean shutdown (only the active segment is checked batch by batch)
and read to the end, every record decoded. Smoke: 4 MiB.

``extra_info`` holds appends/s and MB/s; ``benches/report_storage.py`` prints the table.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import scaled
from offsets_data import segment

from groupcoord.config import Config
from groupcoord.format import codec
from groupcoord.log import Append
from groupcoord.storage import LogManager
from groupcoord.storage.segment import walk_batches

FLUSH = {"fsync-per-turn": "1", "flush-off": str(2**63 - 1)}
APPENDS = {"concurrent": scaled(50_000, 500), "sequential": scaled(2_000, 20)}
PER_TURN = 100
LOAD_BYTES = scaled(1 << 30, 4 << 20)
LOAD_SEGMENTS = 10


@pytest.fixture
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="groupcoord-bench-", dir=Path.cwd()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def commits(n: int) -> list[Append]:
    return [
        Append([(
            codec.encode_key(codec.OffsetCommitKey(f"group-{i % 50}", "events", i % 64)),
            codec.encode_value(codec.OffsetCommitValue(i, "", 1_700_000_000_000 + i, 3)),
        )], 1_700_000_000_000 + i)
        for i in range(n)
    ]


async def append_all(data_dir: Path, flush: str, mode: str, appends: list[Append]) -> int:
    config = Config().with_overrides({"log.flush.interval.messages": flush, "log.cleaner.enable": "false"})
    manager = LogManager(data_dir, config)
    await manager.start()
    await manager.open_partition(0)
    loop = asyncio.get_running_loop()
    done = 0
    if mode == "concurrent":
        finished = loop.create_future()

        def acknowledge(result: object) -> None:
            nonlocal done
            done += 1
            if done == len(appends) and not finished.done():
                finished.set_result(None)

        for start in range(0, len(appends), PER_TURN):
            for append in appends[start : start + PER_TURN]:
                manager.append(0, append, acknowledge)
            await asyncio.sleep(0)
        await finished
    else:
        for append in appends:
            acked: asyncio.Future[object] = loop.create_future()
            manager.append(0, append, acked.set_result)
            await acked
            done += 1
    await manager.close()
    return done


@pytest.mark.parametrize("flush", sorted(FLUSH))
@pytest.mark.parametrize("mode", sorted(APPENDS))
def test_append_commits(benchmark: Any, data_dir: Path, mode: str, flush: str) -> None:
    appends = commits(APPENDS[mode])
    rounds = [0]

    def setup() -> tuple[tuple[Path], dict[str, Any]]:
        rounds[0] += 1
        return (data_dir / f"round-{rounds[0]}",), {}

    def run(directory: Path) -> int:
        return asyncio.run(append_all(directory, FLUSH[flush], mode, appends))

    benchmark.group = f"append-{mode}"
    result = benchmark.pedantic(run, setup=setup, rounds=scaled(3, 1), iterations=1)
    assert result == len(appends)
    benchmark.extra_info.update(appends=len(appends), mode=mode, flush=flush)


def build_partition(directory: Path, total_bytes: int, segments: int) -> int:
    """``segments`` segment files of realistic batches, offsets running on from one file to
    the next (the base offset is outside the CRC, so one generated segment is reused)."""
    directory.mkdir(parents=True)
    data = segment(total_bytes // segments)
    batches = list(walk_batches(data))
    span = batches[-1].last_offset + 1
    for k in range(segments):
        shifted = bytearray(data)
        for b in batches:
            shifted[b.position : b.position + 8] = (b.base_offset + k * span).to_bytes(8, "big")
        (directory / f"{k * span:020d}.log").write_bytes(shifted)
    return span * segments


def test_load_partition(benchmark: Any, data_dir: Path) -> None:
    directory = data_dir / "__consumer_offsets-0"
    end = build_partition(directory, LOAD_BYTES, LOAD_SEGMENTS)
    size = sum(p.stat().st_size for p in directory.glob("*.log"))
    (data_dir / "recovery-point-offset-checkpoint").write_text(f"0\n1\n__consumer_offsets 0 {end}\n")
    config = Config().with_overrides({"log.cleaner.enable": "false", "offsets.topic.segment.bytes": str(size)})

    async def load() -> int:
        manager = LogManager(data_dir, config)
        await manager.start()
        await manager.open_partition(0)

        def read_all() -> int:
            return sum(len(chunk) for chunk in manager.read(0))

        count = await asyncio.to_thread(read_all)
        await manager.close()
        return count

    benchmark.group = "load"
    records = benchmark.pedantic(lambda: asyncio.run(load()), rounds=scaled(3, 1), iterations=1)
    assert records == end
    benchmark.extra_info.update(bytes=size, records=records)
