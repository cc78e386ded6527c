"""``groupcoord inspect DATA_DIR``: what loading a ``__consumer_offsets`` log directory yields.

The directory is ours or one copied from a Kafka broker (its ``__consumer_offsets-N``
partition directories), or one such partition directory. Each partition is replayed into a
coordinator exactly as the server loads it at startup, without changing any file, and the
result is printed: every group with its state, protocol, generation, leader and members
(consumer groups' assignments decoded to topic partitions), and every committed offset.
``--json`` prints one JSON document instead of tables; a progress bar goes to stderr while a
long load runs.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from groupcoord import codec
from groupcoord.config import Config
from groupcoord.coordinator import GroupCoordinator, SystemTime
from groupcoord.coordinator.group import ClassicGroup
from groupcoord.log.memory import InMemoryLog
from groupcoord.storage import read_directory
from groupcoord.server.topics import METADATA_FILE, OFFSETS_TOPIC, TopicRegistry
from groupcoord.storage.partition import effective_segments, partition_of_directory, partitions_under

PROGRESS_AFTER_S = 1.0
"""A load shorter than this shows no progress bar."""


@dataclass
class Progress:
    """A progress bar on ``stream`` for ``total`` bytes, shown once a load runs long."""

    total: int
    stream: TextIO
    started: float = 0.0
    last_draw: float = 0.0
    shown: bool = False

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    def update(self, done: int, label: str) -> None:
        now = time.monotonic()
        if now - self.started < PROGRESS_AFTER_S or now - self.last_draw < 0.2:
            return
        self.last_draw, self.shown = now, True
        fraction = done / self.total if self.total else 1.0
        bar = "#" * int(fraction * 30)
        self.stream.write(f"\rloading {label} [{bar:<30}] {fraction:6.1%} "
                          f"{done / 1e6:,.0f}/{self.total / 1e6:,.0f} MB")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write(f"\rloaded {self.total / 1e6:,.0f} MB in "
                              f"{time.monotonic() - self.started:.1f} s{' ' * 40}\n")
            self.stream.flush()


def _with_progress(
    chunks: Iterator[list[codec.OffsetsRecord]], progress: Progress, done_before: int,
    sizes: Sequence[int], label: str,
) -> Iterator[list[codec.OffsetsRecord]]:
    """Pass the chunks through, moving the bar: a batch position that goes back means the
    next segment file."""
    segment, position = 0, 0
    for chunk in chunks:
        last = chunk[-1].batch_position
        if last < position and segment + 1 < len(sizes):
            segment += 1
        position = last
        progress.update(done_before + sum(sizes[:segment]) + position, label)
        yield chunk


def _with_stored_partition_count(data_dir: Path, config: Config, warnings: TextIO) -> Config:
    """``config`` with the partition count our server keeps in ``metadata.json`` beside the
    partitions (as ``serve`` uses it); a count set to another value brings a warning."""
    log_dir = data_dir.parent if partition_of_directory(data_dir) >= 0 else data_dir
    if not (log_dir / METADATA_FILE).is_file():
        return config
    stored = TopicRegistry(log_dir).offsets_topic_partitions
    configured = config.offsets_topic_num_partitions
    if stored is None or stored == configured:
        return config
    if configured != Config().offsets_topic_num_partitions:
        warnings.write(f"groupcoord inspect: warning: offsets.topic.num.partitions={configured} is "
                       f"ignored: {log_dir / METADATA_FILE} keeps {stored}, the count "
                       f"{OFFSETS_TOPIC} was created with\n")
    return replace(config, offsets_topic_num_partitions=stored)


def load(data_dir: Path, config: Config, progress_stream: TextIO | None = None) -> GroupCoordinator:
    """A coordinator holding what ``data_dir``'s partitions replay to: those of a log
    directory, or the one partition of a ``__consumer_offsets-N`` directory.

    Groups hash to partitions by ``config``'s ``offsets.topic.num.partitions``, or by the count
    a ``metadata.json`` of ours beside the partitions keeps."""
    config = _with_stored_partition_count(data_dir, config, progress_stream or sys.stderr)
    directories = partitions_under(data_dir)
    if not directories and effective_segments(data_dir):
        raise ValueError(f"{data_dir} holds segments but is not named __consumer_offsets-N, so their "
                         "partition is unknown: give its log directory, or name it by partition")
    if not directories:
        raise ValueError(f"{data_dir} has no __consumer_offsets-N directories: give a broker's log "
                         "directory, ours, or one such partition directory")
    too_high = [p for p in directories if p >= config.offsets_topic_num_partitions]
    if too_high:
        raise ValueError(
            f"{data_dir} has partition {max(too_high)} but offsets.topic.num.partitions is "
            f"{config.offsets_topic_num_partitions}; set it to the cluster's"
        )
    coordinator = GroupCoordinator(config, InMemoryLog(), SystemTime())
    coordinator.startup(enable_metadata_expiration=False)
    sizes = {
        p: [path.stat().st_size for _, path in effective_segments(d)] for p, d in directories.items()
    }
    progress = Progress(sum(map(sum, sizes.values())), progress_stream or sys.stderr)
    done = 0
    manager = coordinator.manager
    misplaced: list[tuple[str, str]] = []
    for partition in sorted(directories):
        # The manager's load alone: no immigration (sessions, rebalancing a group over
        # group.max.size), which would show a state the log does not hold.
        known = {group.group_id for group in manager.current_groups()}
        manager.begin_loading(partition)
        chunks = read_directory(directories[partition], buffer_size=config.offsets_load_buffer_size,
                                partition=partition)
        label = directories[partition].name
        for chunk in _with_progress(chunks, progress, done, sizes[partition], label):
            for record in chunk:
                manager.replay_log_record(record)
        manager.complete_loading(partition)
        done += sum(sizes[partition])
        misplaced += [(group.group_id, label) for group in manager.current_groups()
                      if group.group_id not in known and manager.partition_for(group.group_id) != partition]
    if progress_stream is not None or sys.stderr.isatty():
        progress.close()
    if misplaced:
        # Kafka writes a group to the partition its id hashes to among the topic's partitions:
        # groups found elsewhere mean the count is not the cluster's (a copy from a cluster of
        # 3 partitions read with the default 50), and the partitions shown are not theirs.
        group, label = misplaced[0]
        (progress_stream or sys.stderr).write(
            f"groupcoord inspect: warning: {len(misplaced)} groups are not where "
            f"offsets.topic.num.partitions={config.offsets_topic_num_partitions} puts them "
            f"({group!r} is in {label}, not {manager.partition_for(group)}), so the partitions "
            f"shown for them are wrong; set it to the cluster's with "
            f"--set offsets.topic.num.partitions=N\n"
        )
    return coordinator


def _assignment(group: ClassicGroup, data: bytes) -> Any:
    if group.protocol_type != "consumer" or not data:
        return None
    try:
        assignment = codec.decode_assignment(data)
    except (codec.CorruptRecordError, ValueError) as e:
        return {"error": str(e)}
    return {topic: list(partitions) for topic, partitions in assignment.assigned_partitions}


def snapshot(coordinator: GroupCoordinator) -> dict[str, Any]:
    """Groups and offsets as plain data (what ``--json`` prints)."""
    manager = coordinator.manager
    groups = []
    for group in sorted(manager.current_groups(), key=lambda g: g.group_id):
        groups.append({
            "group": group.group_id,
            "partition": manager.partition_for(group.group_id),
            "state": group.state.value,
            "protocol_type": group.protocol_type,
            "generation": group.generation_id,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            # A group known only from its offsets has no recorded state time.
            "state_timestamp": group.current_state_timestamp if group.generation_id else None,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "session_timeout_ms": m.session_timeout_ms,
                    "rebalance_timeout_ms": m.rebalance_timeout_ms,
                    "assignment": _assignment(group, m.assignment),
                }
                for m in group.members.values()
            ],
        })
    offsets = []
    for group_id in sorted(manager.offsets.group_ids()):
        for tp, committed in sorted(manager.offsets.committed(group_id).items()):
            offset = committed.offset
            offsets.append({
                "group": group_id, "topic": tp.topic, "partition": tp.partition,
                "offset": offset.committed_offset, "leader_epoch": offset.leader_epoch,
                "metadata": offset.metadata, "commit_timestamp": offset.commit_timestamp_ms,
                "expire_timestamp": offset.expire_timestamp_ms,
                "record_offset": committed.record_offset,
            })
    pending = [
        {"producer_id": pid, "group": g, "topic": tp.topic, "partition": tp.partition,
         "offset": c.offset.committed_offset}
        for (pid, _), by_group in sorted(manager.offsets.pending_transactional().items())
        for g, tps in sorted(by_group.items())
        for tp, c in sorted(tps.items())
    ]
    return {"groups": groups, "offsets": offsets, "open_transactions": pending}


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO) -> None:
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")


def print_tables(data: dict[str, Any], out: TextIO) -> None:
    groups = data["groups"]
    out.write(f"GROUPS ({len(groups)})\n")
    _table(["group", "partition", "state", "protocol type", "generation", "protocol", "leader", "members"],
           [[g["group"], g["partition"], g["state"], g["protocol_type"], g["generation"],
             g["protocol"], g["leader"], len(g["members"])] for g in groups], out)
    members = [(g, m) for g in groups for m in g["members"]]
    out.write(f"\nMEMBERS ({len(members)})\n")
    _table(["group", "member", "instance", "client", "host", "assignment"],
           [[g["group"], m["member_id"], m["group_instance_id"], m["client_id"], m["client_host"],
             " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in (m["assignment"] or {}).items()
                      ) if isinstance(m["assignment"], dict) and "error" not in m["assignment"]
             else m["assignment"]]
            for g, m in members], out)
    offsets = data["offsets"]
    out.write(f"\nOFFSETS ({len(offsets)})\n")
    _table(["group", "topic", "partition", "offset", "leader epoch", "metadata", "commit timestamp"],
           [[o["group"], o["topic"], o["partition"], o["offset"], o["leader_epoch"], o["metadata"],
             o["commit_timestamp"]] for o in offsets], out)
    if data["open_transactions"]:
        out.write(f"\nOPEN TRANSACTIONS ({len(data['open_transactions'])})\n")
        _table(["producer id", "group", "topic", "partition", "offset"],
               [[t["producer_id"], t["group"], t["topic"], t["partition"], t["offset"]]
                for t in data["open_transactions"]], out)


def main(data_dir: str, config: Config, *, as_json: bool, out: TextIO = sys.stdout) -> int:
    path = Path(data_dir)
    if not path.is_dir():
        sys.stderr.write(f"groupcoord inspect: {data_dir} is not a directory\n")
        return 2
    try:
        coordinator = load(path, config)
    except (ValueError, codec.CorruptRecordError) as e:
        sys.stderr.write(f"groupcoord inspect: {e}\n")
        return 1
    data = snapshot(coordinator)
    if as_json:
        json.dump(data, out, indent=2)
        out.write("\n")
    else:
        print_tables(data, out)
    out.flush()
    return 0


__all__ = ["load", "main", "snapshot"]
