"""Deleting a partition's log (``LogManager.delete_log``, :mod:`groupcoord.storage.deletion`):
its directory renamed at once as Kafka names it, its checkpoints forgotten, the renamed
directory removed after the delay, and one left by an earlier run removed after the delay from
the next start."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from groupcoord.config import Config
from groupcoord.log import Append, TopicPartition
from groupcoord.storage import LogManager
from groupcoord.storage.checkpoint import RECOVERY_POINT_FILE
from groupcoord.storage.deletion import MAX_FILE_NAME_LENGTH, delete_dir_name, is_delete_dir

from test_storage_manager import commit, wait_for

DELETED = re.compile(r"(.+)-(\d+)\.[0-9a-f]{32}-delete")


def deleted(data_dir: Path) -> list[tuple[str, ...]]:
    """(topic, partition) of each directory renamed for deletion."""
    return sorted(m.groups() for p in data_dir.iterdir() if (m := DELETED.fullmatch(p.name)))


def config() -> Config:
    return Config().with_overrides({"log.cleaner.enable": "false"})


def test_the_deleted_directory_is_named_as_kafka_names_it() -> None:
    name = delete_dir_name("orders", 3)
    assert DELETED.fullmatch(name) and name.startswith("orders-3.") and is_delete_dir(Path(name))
    long = delete_dir_name("t" * 249, 12)
    assert len(long) == MAX_FILE_NAME_LENGTH and re.fullmatch(r"t+-12\.[0-9a-f]{32}-delete", long)
    assert is_delete_dir(Path(long))
    assert not is_delete_dir(Path("orders-3")) and not is_delete_dir(Path("orders-3.deleted"))


def test_a_deleted_log_is_renamed_forgotten_and_removed_after_the_delay(tmp_path: Path) -> None:
    tp = TopicPartition("orders", 0)

    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start(file_delete_delay_ms=10_000)
        await manager.open_log(tp)
        written: list[object] = []
        manager.append_to(tp, Append([commit("g", 0, 1)], 1), written.append)
        await wait_for(lambda: bool(written), "the append")
        await manager.close_log(tp)  # writes its recovery point
        await manager.open_log(tp)
        assert "orders 0" in (tmp_path / RECOVERY_POINT_FILE).read_text()

        await manager.delete_log(tp, delay_ms=200)
        assert manager.log(tp) is None and not (tmp_path / "orders-0").exists()
        assert deleted(tmp_path) == [("orders", "0")]
        (renamed,) = [p for p in tmp_path.iterdir() if DELETED.fullmatch(p.name)]
        assert "orders 0" not in (tmp_path / RECOVERY_POINT_FILE).read_text()
        await wait_for(lambda: not renamed.exists(), "the renamed directory to be removed", 10)

        # Created again under the name: an empty log.
        log = await manager.open_log(tp)
        assert (log.log_start_offset, log.next_offset) == (0, 0)
        await manager.close()

    asyncio.run(body())


def test_a_directory_left_renamed_is_removed_after_the_delay_from_the_next_start(tmp_path: Path) -> None:
    left = tmp_path / delete_dir_name("orders", 1)
    left.mkdir()
    (left / "00000000000000000000.log").write_bytes(b"x")

    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start(file_delete_delay_ms=300)
        assert manager.deleter.pending() == [left] and left.exists()
        await wait_for(lambda: not left.exists(), "the leftover to be removed", 10)
        await manager.close()

    asyncio.run(body())


def test_a_close_before_the_delay_leaves_the_directory_for_the_next_start(tmp_path: Path) -> None:
    tp = TopicPartition("orders", 2)

    async def body() -> None:
        manager = LogManager(tmp_path, config())
        await manager.start(file_delete_delay_ms=60_000)
        await manager.open_log(tp)
        await manager.delete_log(tp, delay_ms=60_000)
        await manager.close()

    asyncio.run(body())
    assert deleted(tmp_path) == [("orders", "2")]
