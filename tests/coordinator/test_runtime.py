"""The coordinator on a real event loop: background loads, the purgatory-driven timer, ownership
changes at run time. Real time (the loop's timer is what is tested), short timeouts, bounded
waits."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from coordinator_context import call_handler

from groupcoord.format import codec
from groupcoord.config import Config
from groupcoord.coordinator import JoinGroupResult, OffsetAndMetadata, TopicPartition
from groupcoord.coordinator.records import offset_commit_record
from groupcoord.coordinator.runtime import CoordinatorRuntime
from groupcoord.errors import Errors
from groupcoord.log import Append
from groupcoord.log.memory import InMemoryLog

GROUP = "runtime-group"
TP = TopicPartition("t", 0)
SUBSCRIPTION = codec.encode_subscription(codec.ConsumerProtocolSubscription(["t"]))


def _config(**overrides: Any) -> Config:
    return Config.from_properties({
        "offsets.topic.num.partitions": 4,
        "group.initial.rebalance.delay.ms": 0,
        "group.min.session.timeout.ms": 50,
        **overrides,
    })


class GatedLog(InMemoryLog):
    """Reads after the first chunk block until ``gate`` is set: a load that takes as long as
    the test wants, with part of the partition replayed meanwhile."""

    def __init__(self) -> None:
        super().__init__(complete_on_loop=True)
        self.gate = threading.Event()

    def read(self, partition: int) -> Iterator[Sequence[codec.OffsetsRecord]]:
        for i, chunk in enumerate(super().read(partition)):
            if i > 0:
                assert self.gate.wait(10), "the test never opened the gate"
            yield chunk


def _join(group_instance_id: str | None, *, known: bool = True, rebalance_ms: int = 100,
          session_ms: int = 100) -> dict[str, Any]:
    """A JoinGroup's arguments besides the group, member id and callback."""
    return dict(group_instance_id=group_instance_id, require_known_member_id=known,
                support_skipping_assignment=True, client_id="c", client_host="h",
                rebalance_timeout_ms=rebalance_ms, session_timeout_ms=session_ms,
                protocol_type="consumer", protocols=[("range", SUBSCRIPTION)])


def _seed(log: InMemoryLog, partition: int, offset: int) -> None:
    record = offset_commit_record(GROUP, TP, OffsetAndMetadata(offset, "", 1))
    log.append(partition, Append([record.encode()], 1), lambda _: None)
    log.complete_pending()


def test_partitions_load_in_the_background() -> None:
    async def main() -> None:
        log = GatedLog()
        runtime = CoordinatorRuntime(_config(), log)
        partition = runtime.coordinator.partition_for(GROUP)
        _seed(log, partition, 41)
        _seed(log, partition, 42)
        await runtime.start(range(4))
        c = runtime.coordinator
        # Other partitions are served at once; this one says it is loading.
        for _ in range(500):
            if c.manager.get_group(GROUP) is not None:  # the first chunk is replayed
                break
            await asyncio.sleep(0.01)
        assert partition in runtime.loading_partitions()
        assert c.handle_fetch_offsets(GROUP, False, [TP])[0] == Errors.COORDINATOR_LOAD_IN_PROGRESS
        result = await call_handler(runtime, c.handle_join_group, GROUP, "", **_join(None))
        assert result.error == Errors.COORDINATOR_LOAD_IN_PROGRESS
        assert await call_handler(runtime, c.handle_heartbeat, GROUP, "m", None, 1) == Errors.NONE  # answered blindly
        # ListGroups says a load is under way and lists none of its groups yet, though the
        # first batch is replayed.
        assert c.manager.get_group(GROUP) is not None, "the first chunk was never replayed"
        assert c.handle_list_groups() == (Errors.COORDINATOR_LOAD_IN_PROGRESS, [])
        log.gate.set()
        await asyncio.wait_for(runtime.wait_loaded(), 5)
        assert runtime.owned_partitions() == {0, 1, 2, 3}
        assert c.handle_fetch_offsets(GROUP, False, [TP])[1][TP].offset == 42
        assert runtime.loaded_records == 2
        await runtime.close()
        assert log.open == set()

    asyncio.run(main())


def test_the_timer_expires_sessions_without_requests() -> None:
    async def main() -> None:
        log = InMemoryLog(complete_on_loop=True)
        runtime = CoordinatorRuntime(_config(), log)
        await runtime.start(range(4))
        await runtime.wait_loaded()
        c = runtime.coordinator
        join: JoinGroupResult = await call_handler(runtime, c.handle_join_group, GROUP, "", **_join("instance"))
        assert join.error == Errors.NONE and join.generation_id == 1
        sync = await call_handler(runtime, c.handle_sync_group, GROUP, 1, join.member_id, protocol_type=None,
                           protocol_name=None, group_instance_id=None, assignment={join.member_id: b"a"})
        assert sync.error == Errors.NONE
        group = c.manager.get_group(GROUP)
        assert group is not None and group.size == 1
        # Nobody heartbeats: the session (100 ms) ends on the timer alone.
        for _ in range(100):
            if group.size == 0:
                break
            await asyncio.sleep(0.02)
        assert group.size == 0
        assert [r.value is not None for r in log.records(c.partition_for(GROUP))] == [True, True]
        await runtime.close()

    asyncio.run(main())


def test_ownership_changes_at_run_time() -> None:
    async def main() -> None:
        log = InMemoryLog(complete_on_loop=True)
        runtime = CoordinatorRuntime(_config(**{"group.initial.rebalance.delay.ms": 3000}), log)
        partition = runtime.coordinator.partition_for(GROUP)
        _seed(log, partition, 7)
        await runtime.start([partition])
        await runtime.wait_loaded()
        c = runtime.coordinator
        parked: asyncio.Future[JoinGroupResult] = asyncio.get_running_loop().create_future()
        c.handle_join_group(GROUP, "", **_join(None, known=False, rebalance_ms=60_000, session_ms=10_000),
                            callback=parked.set_result)
        assert not parked.done()
        # Losing the partition answers the waiting member NOT_COORDINATOR.
        await runtime.set_owned_partitions([])
        assert (await asyncio.wait_for(parked, 5)).error == Errors.NOT_COORDINATOR
        assert c.handle_fetch_offsets(GROUP, False, [TP])[0] == Errors.NOT_COORDINATOR
        assert partition not in log.open
        # Gaining it back loads it from the log again.
        await runtime.set_owned_partitions([partition])
        await runtime.wait_loaded()
        assert c.handle_fetch_offsets(GROUP, False, [TP])[1][TP].offset == 7
        try:
            await runtime.set_owned_partitions([99])
        except ValueError as e:
            assert "99" in str(e)
        else:
            raise AssertionError("a partition outside the topic was accepted")
        await runtime.close()

    asyncio.run(main())
