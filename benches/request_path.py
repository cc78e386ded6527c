"""The server's request path in this process, without sockets: for profiling it.

``groupcoord serve``'s server (its log, coordinator, handlers and connections) runs on uvloop in
this process; N connections are fed request frames directly (``data_received``) and their
answers caught by a stand-in transport, round after round (each connection one request in
flight, as a client has). What is left is the Python and Rust work of a request, from the
frame's bytes to the answer's: framing, decoding, the handler, the coordinator, the records,
the group commit queue and the log writer thread, the completion, the answer's encoding. The
kernel's part (reading and writing sockets) is measured by ``bench_vs_kafka.py``, not here.

    python benches/request_path.py commits [--connections 50] [--groups 1] [--rounds 400]
    python benches/request_path.py heartbeats [--connections 50] [--rounds 2000]
    ... [--set log.flush.interval.messages=9223372036854775807]

prints the CPU time per request (this process, every thread). Under a sampling profiler
(``py-spy record -f raw -o out.txt -- python benches/request_path.py heartbeats``) it shows
where that time goes, and ``python benches/request_path.py summarize out.txt`` sums the event
loop thread's samples by the part of groupcoord they were in; under ``valgrind --tool=callgrind``, the difference between a run of
``--rounds A`` and one of ``--rounds B``, divided by ``(B - A) x connections``, is the number
of instructions per request, repeatable whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uvloop
from loadgen import frame

from groupcoord.config import Config
from groupcoord.protocol import decode_response
from groupcoord.protocol.messages.heartbeat import HeartbeatRequest
from groupcoord.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from groupcoord.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from groupcoord.protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from groupcoord.server.app import Server, ServerOptions, tune_garbage_collector
from groupcoord.server.connection import KafkaConnection

TOPIC = "t"
SUBSCRIPTION = b"\x00\x01\x00\x00\x00\x01\x00\x01t\xff\xff\xff\xff"  # consumer protocol v1, topic t


class Answers(asyncio.Transport):
    """A transport that keeps what is written to it and resolves a future once it holds
    ``expected`` answers."""

    def __init__(self, answers: list[bytes], waiter: list[Any]) -> None:
        super().__init__()
        self.answers, self.waiter = answers, waiter

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.answers.append(bytes(data))
        future, expected = self.waiter
        if future is not None and len(self.answers) >= expected and not future.done():
            future.set_result(None)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 0) if name == "peername" else default  # no socket: no network thread

    def abort(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


class Bench:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.answers: list[bytes] = []
        self.waiter: list[Any] = [None, 0]
        self.connections: list[tuple[KafkaConnection, bytes]] = []

    def connect(self) -> KafkaConnection:
        assert self.server.broker is not None
        connection = KafkaConnection(self.server.broker, self.server.connections)
        connection.connection_made(Answers(self.answers, self.waiter))
        return connection

    async def send(self, frames: list[tuple[KafkaConnection, bytes]]) -> None:
        """Feed every frame, then wait for as many answers."""
        self.waiter[:] = [asyncio.get_running_loop().create_future(), len(self.answers) + len(frames)]
        for connection, data in frames:
            connection.data_received(data)
        await self.waiter[0]

    async def join(self, group: str) -> KafkaConnection:
        """A connection whose member formed ``group`` alone; its next frame is a heartbeat."""
        connection = self.connect()
        await self.send([(connection, frame(JoinGroupRequest(
            group_id=group, session_timeout_ms=60_000, rebalance_timeout_ms=60_000, member_id="",
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)]), 3, 1))])
        _, joined = decode_response(self.answers[-1][4:], JoinGroupResponse, 3)
        assert isinstance(joined, JoinGroupResponse) and joined.error_code == 0, joined
        await self.send([(connection, frame(SyncGroupRequest(
            group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
            assignments=[SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"")]), 3, 2))])
        heartbeat = HeartbeatRequest(group_id=group, generation_id=joined.generation_id, member_id=joined.member_id)
        self.connections.append((connection, frame(heartbeat, 4, 3)))
        return connection

    def committer(self, group: str, offset: int) -> None:
        request = OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[
            OffsetCommitRequestTopic(name=TOPIC, partitions=[
                OffsetCommitRequestPartition(partition_index=0, committed_offset=offset, committed_metadata="")])])
        self.connections.append((self.connect(), frame(request, 8, 1)))


async def main(args: argparse.Namespace) -> None:
    settings = {"offsets.topic.num.partitions": "50", "group.initial.rebalance.delay.ms": "0",
                **dict(s.split("=", 1) for s in args.set)}
    data_dir = Path(tempfile.mkdtemp(prefix="request-path-"))
    server = Server(ServerOptions(port=0, data_dir=data_dir, topics=[(TOPIC, 4)],
                                  config=Config.from_properties(settings)))
    await server.start()
    assert server.broker is not None
    await server.broker.runtime.wait_loaded()
    try:
        bench = Bench(server)
        for c in range(args.connections):
            if args.workload == "commits":
                bench.committer(f"group-{c % args.groups}", c)
            else:
                await bench.join(f"group-{c}")
        tune_garbage_collector()
        for _ in range(max(1, args.rounds // 10)):  # warm-up
            await bench.send(bench.connections)
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.rounds):
            await bench.send(bench.connections)
        requests = args.rounds * args.connections
        print(f"{args.workload}: {requests:,} requests, "
              f"{(time.process_time() - cpu) / requests * 1e6:.1f} us of CPU and "
              f"{(time.perf_counter() - started) / requests * 1e6:.1f} us of wall time each")
    finally:
        await server.stop()


PARTS = (
    ("decoding the request (framing, header, body)", ("<decode ", "decode_request", "_next_frame")),
    ("encoding the answer", ("<encode ", "encode_response", "_response")),
    ("connection bookkeeping (context, clock, metrics)", (
        "connection.py", "network.py", "registry.py", "broker.py", "metrics.py", "clock.py",
        "<string>", "logging")),
    ("handler and coordinator (Kafka's rules)", (
        "api_0", "coordinator.py", "offset_handlers.py", "offset_metadata_manager.py",
        "classic_protocol.py", "group.py", "shard.py", "group_metadata_manager.py", "topics.py",
        "purgatory")),
    ("records, write path, log queue", (
        "records.py", "write_path.py", "runtime.py", "writer.py", "LogManager", "partition.py",
        "segment.py")),
    ("event loop", ("uvloop", "asyncio")),
)
"""Where a sample's innermost frame (``function (file:line)``) was: the first part one of
whose markers it contains."""


def part_of(frame_name: str) -> str:
    for part, markers in PARTS:
        if any(marker in frame_name for marker in markers):
            return part
    return "other"


def summarize(path: str) -> None:
    """Shares of the event loop thread's samples in a ``py-spy record -f raw`` file."""
    shares: dict[str, int] = {}
    total = 0
    with open(path) as raw:
        for line in raw:
            stack, _, count = line.rstrip().rpartition(" ")
            if "uvloop" not in stack or "request_path.py" in stack.rsplit(";", 1)[-1]:
                continue  # another thread, or this harness's own frames
            part = part_of(stack.rsplit(";", 1)[-1])
            shares[part] = shares.get(part, 0) + int(count)
            total += int(count)
    for part, count in sorted(shares.items(), key=lambda item: -item[1]):
        print(f"{100 * count / total:5.1f}%  {part}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["summarize"]:
        summarize(sys.argv[2])
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=["commits", "heartbeats"])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--groups", type=int, default=1, help="commits: groups the connections commit to")
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    sys.exit(uvloop.run(main(parser.parse_args())))
