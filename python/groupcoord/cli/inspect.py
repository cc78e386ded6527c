"""``groupcoord inspect DATA_DIR``: what loading a ``__consumer_offsets`` log directory yields.

The directory is ours or one copied from a Kafka broker (its ``__consumer_offsets-N``
partition directories), or one such partition directory. Each partition is replayed into a
coordinator exactly as the server loads it at startup, without changing any file, and the
result is printed: every group with its state, protocol, generation, leader and members
(consumer groups' assignments decoded to topic partitions), and every committed offset.
``--json`` prints one JSON document instead of tables; a progress bar goes to stderr while a
long load runs.

Damage in a partition's log is classified by the policy the server loads by
(:mod:`groupcoord.storage.damage`, with the data directory's recovery points, clean-shutdown
marker and ``log.recovery.skip.damaged.batches.enable``): a partition the server would refuse
is left out and named on stderr (file, byte, reason, the repair command), as
``"damaged_partitions"`` in ``--json``, and the exit status is 3. Exit status: 0 loaded
everything, 1 an error (nothing printed), 2 bad arguments, 3 printed without the damaged
partitions.

Groups of Kafka 4's consumer protocol (KIP-848, record types 3 to 8 and 16) are loaded by the
same replay and shown apart, with their epochs, state and members' epochs and assignments.
Their topic ids are named from the records of Kafka 3.7 to 4.0 that list topics
(:class:`ConsumerGroups`), and from the ``__cluster_metadata`` log of a KRaft broker's
directory when there is one.
"""

from __future__ import annotations

import base64
import json
import logging
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from groupcoord.config import Config
from groupcoord.coordinator import GroupCoordinator, SystemTime
from groupcoord.coordinator.consumer.assignors.java_order import uuid_to_kafka
from groupcoord.coordinator.group import ClassicGroup
from groupcoord.format import codec
from groupcoord.format.records import RecordType
from groupcoord.log import LogDamagedError
from groupcoord.log.memory import InMemoryLog
from groupcoord.protocol import ProtocolError
from groupcoord.protocol.primitives import read_string, read_unsigned_varint, read_uuid
from groupcoord.server.topics import METADATA_FILE, OFFSETS_TOPIC, TopicRegistry
from groupcoord.storage import read_directory
from groupcoord.storage.checkpoint import recovery_state
from groupcoord.storage.partition import effective_segments, partition_of_directory, partitions_under

PROGRESS_AFTER_S = 1.0
"""A load shorter than this shows no progress bar."""

logger = logging.getLogger("groupcoord.cli.inspect")

MEMBER_STATES = {0: "stable", 1: "unrevoked_partitions", 2: "unreleased_partitions", 127: "unknown"}
"""Kafka's ``MemberState`` names, by the byte a current-assignment record stores."""


class ConsumerGroups:
    """The topic names that KIP-848 records of Kafka 3.7 to 4.0 carry (their partition
    metadata, record type 4) and the partition each group was read from, gathered while the
    partitions load; the groups themselves are the coordinator's, loaded by its one replay."""

    def __init__(self) -> None:
        self.topic_names: dict[str, str] = {}
        """Topic id (as Kafka prints it) to name."""
        self._partitions: dict[str, int] = {}
        """The partition each group's records were read from."""

    def replay(self, record: codec.OffsetsRecord) -> None:
        key, value = record.key, record.value
        if isinstance(key, codec.ConsumerGroupKey):
            self._partitions[key.group_id] = record.partition
        if (isinstance(key, codec.ConsumerGroupKey) and isinstance(value, codec.ConsumerGroupValue)
                and key.record_type == RecordType.CONSUMER_GROUP_PARTITION_METADATA):
            for topic in value.fields.get("topics") or ():
                self.topic_names[topic["topic_id"]] = topic["topic_name"]

    def snapshot(self, coordinator: GroupCoordinator, topic_names: dict[str, str]) -> list[dict[str, Any]]:
        """Each consumer group the coordinator loaded, as plain data, its topics named by
        ``topic_names`` (and by what the records name) where they can be; ids with no name
        stay ids."""
        names = {**topic_names, **self.topic_names}

        def partitions(assignment: Mapping[uuid.UUID, Iterable[int]]) -> dict[str, list[int]]:
            return {names.get(uuid_to_kafka(t), uuid_to_kafka(t)): sorted(ps) for t, ps in assignment.items()}

        manager = coordinator.manager
        groups = []
        for group in sorted(manager.consumer_groups.groups.values(), key=lambda g: g.group_id):
            members = [{
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "rack_id": m.rack_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "subscribed_topic_names": sorted(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex or None,
                "server_assignor": m.server_assignor,
                "rebalance_timeout_ms": m.rebalance_timeout_ms,
                "member_epoch": m.member_epoch,
                "previous_member_epoch": m.previous_member_epoch,
                "state": MEMBER_STATES.get(int(m.state), str(int(m.state))),
                "assignment": partitions(m.assigned_partitions),
                "partitions_pending_revocation": partitions(m.partitions_pending_revocation),
                "target_assignment": partitions(group.target_of(m.member_id)),
            } for m in sorted(group.members.values(), key=lambda m: m.member_id)]
            groups.append({
                "group": group.group_id,
                "partition": self._partitions.get(group.group_id, manager.partition_for(group.group_id)),
                "state": group.state.value,
                "group_epoch": group.group_epoch,
                "assignment_epoch": group.assignment_epoch,
                "assignors": sorted({m.server_assignor for m in group.members.values() if m.server_assignor}),
                "members": members,
            })
        return groups


TOPIC_RECORD = 2
"""The api key of KRaft's ``TopicRecord`` (name, topic id) in ``__cluster_metadata``."""


def cluster_topic_names(data_dir: Path) -> dict[str, str]:
    """Topic id (as Kafka prints it) to name, from the ``TopicRecord``s of a KRaft broker's
    ``__cluster_metadata-0`` beside the partitions (its log and snapshots); empty when there
    is none. A file that does not read is skipped with a warning: names are a convenience."""
    directory = data_dir / "__cluster_metadata-0"
    if not directory.is_dir():
        return {}
    names: dict[str, str] = {}
    files = sorted(directory.glob("*.checkpoint")) + sorted(directory.glob("*.log"))
    for path in files:
        try:
            batches = codec.read_segment(path, stop_at_corruption=True)
        except (OSError, ValueError) as e:
            logger.warning("cannot read %s for topic names: %s", path, e)
            continue
        for batch in batches:
            if batch.is_control:
                continue
            for record in batch.records:
                topic = _topic_record(record.value)
                if topic is not None:
                    names[topic[1]] = topic[0]
    return names


def _topic_record(value: bytes | None) -> tuple[str, str] | None:
    """(name, topic id) of a serialized ``TopicRecord``: frame version 1, api key, version
    (unsigned varints), then the record (flexible: a compact string, a uuid)."""
    if value is None:
        return None
    try:
        frame_version, position = read_unsigned_varint(value, 0)
        api_key, position = read_unsigned_varint(value, position)
        if frame_version != 1 or api_key != TOPIC_RECORD:
            return None
        _, position = read_unsigned_varint(value, position)
        name, position = read_string(value, position, compact=True)
        topic_id, _ = read_uuid(value, position)
    except ProtocolError:
        return None
    return name, base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode()


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


def load(
    data_dir: Path,
    config: Config,
    progress_stream: TextIO | None = None,
    consumer_groups: ConsumerGroups | None = None,
    damaged: dict[int, LogDamagedError] | None = None,
) -> GroupCoordinator:
    """A coordinator holding what ``data_dir``'s partitions replay to: those of a log
    directory, or the one partition of a ``__consumer_offsets-N`` directory; every record
    also goes to ``consumer_groups`` when given. A partition the corruption policy refuses
    raises :class:`~groupcoord.log.LogDamagedError`, or with ``damaged`` is recorded there
    and left out.

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
    root = data_dir if partition_of_directory(data_dir) < 0 else data_dir.parent
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
                                partition=partition, state=recovery_state(root, partition),
                                skip_damaged=config.log_recovery_skip_damaged_batches_enable)
        label = directories[partition].name
        try:
            # The policy refuses a partition before its first record, so none is replayed.
            for chunk in _with_progress(chunks, progress, done, sizes[partition], label):
                for record in chunk:
                    manager.replay_log_record(record)
                    if consumer_groups is not None:
                        consumer_groups.replay(record)
        except LogDamagedError as error:
            if damaged is None:
                raise
            damaged[partition] = error
            coordinator.unload_partition(partition)
            done += sum(sizes[partition])
            continue
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


def snapshot(
    coordinator: GroupCoordinator,
    consumer_groups: ConsumerGroups | None = None,
    topic_names: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Groups and offsets as plain data (what ``--json`` prints); with ``consumer_groups``,
    also the KIP-848 groups (``consumer_groups``), which then replace the protocol-less groups
    their offsets alone make in the classic coordinator."""
    manager = coordinator.manager
    modern = consumer_groups.snapshot(coordinator, topic_names or {}) if consumer_groups is not None else []
    modern_ids = {g["group"] for g in modern}
    groups = []
    for group in sorted(manager.current_groups(), key=lambda g: g.group_id):
        if group.group_id in modern_ids and not group.protocol_type and not group.members:
            continue
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
    return {"groups": groups, "consumer_groups": modern, "offsets": offsets, "open_transactions": pending}


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO) -> None:
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n")


def _partitions_text(assignment: dict[str, list[int]] | None) -> str:
    return " ".join(f"{topic}:{','.join(map(str, partitions))}" for topic, partitions in (assignment or {}).items())


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
             _partitions_text(m["assignment"])
             if isinstance(m["assignment"], dict) and "error" not in m["assignment"]
             else m["assignment"]]
            for g, m in members], out)
    modern = data.get("consumer_groups") or []
    if modern:
        out.write(f"\nCONSUMER GROUPS, KIP-848 ({len(modern)})\n")
        _table(["group", "partition", "state", "group epoch", "assignment epoch", "assignor", "members"],
               [[g["group"], g["partition"], g["state"], g["group_epoch"], g["assignment_epoch"],
                 ",".join(g["assignors"]), len(g["members"])] for g in modern], out)
        modern_members = [(g, m) for g in modern for m in g["members"]]
        out.write(f"\nCONSUMER GROUP MEMBERS, KIP-848 ({len(modern_members)})\n")
        _table(["group", "member", "instance", "client", "host", "member epoch", "state", "assignment"],
               [[g["group"], m["member_id"], m["instance_id"], m["client_id"], m["client_host"],
                 m["member_epoch"], m["state"], _partitions_text(m["assignment"])]
                for g, m in modern_members], out)
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
    consumer_groups = ConsumerGroups()
    damaged: dict[int, LogDamagedError] = {}
    try:
        coordinator = load(path, config, consumer_groups=consumer_groups, damaged=damaged)
    except (ValueError, codec.CorruptRecordError) as e:
        sys.stderr.write(f"groupcoord inspect: {e}\n")
        return 1
    root = path if partition_of_directory(path) < 0 else path.parent
    for partition, error in sorted(damaged.items()):
        sys.stderr.write(
            f"groupcoord inspect: __consumer_offsets-{partition} is damaged and left out, as the "
            f"server refuses it: {error}; see groupcoord repair {root} --partition {partition}\n"
        )
    data = snapshot(coordinator, consumer_groups, cluster_topic_names(root))
    if damaged:
        data["damaged_partitions"] = [
            {"partition": p, "file": str(e.path), "position": e.position, "reason": e.reason}
            for p, e in sorted(damaged.items())
        ]
    if as_json:
        json.dump(data, out, indent=2)
        out.write("\n")
    else:
        print_tables(data, out)
    out.flush()
    return 3 if damaged else 0


__all__ = ["ConsumerGroups", "cluster_topic_names", "load", "main", "snapshot"]
