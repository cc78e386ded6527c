"""The topics this node serves, persisted in the data directory.

A topic is a name, a partition count, a topic id and its config overrides (``retention.ms``
and the rest, :mod:`groupcoord.storage.topic_config`); each partition's data is a log of the
storage engine (opened by :class:`~groupcoord.server.replica_manager.ReplicaManager`). Topics
come from ``--topic name:partitions`` and, as
with Kafka's ``auto.create.topics.enable``, from Metadata requests naming unknown topics
(``num.partitions`` partitions). They are kept with the cluster id in ``DATA_DIR/metadata.json``,
rewritten atomically (temporary file, fsync, rename) on every change. The file also keeps how
many partitions ``__consumer_offsets`` has: as in Kafka, once the topic exists its own count
holds, whatever ``offsets.topic.num.partitions`` says later.

A topic created by a Metadata request is saved off the event loop, in a worker thread; as in
Kafka, it is answered LEADER_NOT_AVAILABLE while it is being created and exists (for every
request) once saved and its partitions' logs are open, so no client is ever told of a topic a
crash could lose.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groupcoord.coordinator.results import TopicPartition
from groupcoord.errors import Errors

log = logging.getLogger(__name__)

METADATA_FILE = "metadata.json"
OFFSETS_TOPIC = "__consumer_offsets"
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: int
    topic_id: uuid.UUID
    configs: Mapping[str, str] = field(default_factory=dict, hash=False)
    """The topic's config overrides, as clients set them (the rest are the broker's defaults)."""


def topic_name_error(name: str) -> str | None:
    """Why ``name`` is not a legal Kafka topic name (Kafka's ``Topic.validate``), or None."""
    if name in ("", ".", ".."):
        return f"topic name {name!r} is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters"
    if not _LEGAL_TOPIC_NAME.fullmatch(name):
        return f"topic name {name!r} has characters other than ASCII alphanumerics, '.', '_', '-'"
    return None


def parse_topic_spec(spec: str) -> tuple[str, int]:
    """``--topic NAME:PARTITIONS`` as (name, partitions)."""
    name, sep, count = spec.rpartition(":")
    if not sep or not count.isdigit() or int(count) < 1:
        raise ValueError(f"--topic takes NAME:PARTITIONS with PARTITIONS >= 1, not {spec!r}")
    error = topic_name_error(name)
    if error is not None:
        raise ValueError(error)
    return name, int(count)


def new_cluster_id() -> str:
    """A cluster id as Kafka makes them: a random uuid in unpadded base64url (22 characters)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def save_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` durably (blocking: fsyncs): a temporary file, fsynced and
    renamed over it, then the directory fsynced, so a crash leaves the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    with open(temporary, "w") as out:
        json.dump(data, out, indent=1)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class TopicRegistry:
    """Topics by name and by id, loaded from and saved to ``DATA_DIR/metadata.json``."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / METADATA_FILE
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._creating: dict[str, Topic] = {}
        self._saving: asyncio.Task[None] | None = None
        self._save_lock = asyncio.Lock()
        """Held while a changed file is saved, so that saves land in the order they were made."""
        self.cluster_id = ""
        self.before_create: Callable[[Topic], Awaitable[None]] | None = None
        """Awaited for each topic a Metadata request creates, before it exists for clients
        (its partitions' logs are opened)."""
        self.offsets_topic_partitions: int | None = None
        """``__consumer_offsets``' partition count; None in a file older than it."""
        if self.path.exists():
            self._load()
        else:
            self.cluster_id = new_cluster_id()
            self._save(self._document(self))

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
            self.cluster_id = str(data["cluster_id"])
            for entry in data["topics"]:
                configs = {str(k): str(v) for k, v in dict(entry.get("configs", {})).items()}
                self._add(Topic(str(entry["name"]), int(entry["partitions"]),
                                uuid.UUID(entry["topic_id"]), configs))
            if data.get("offsets_topic_partitions") is not None:
                self.offsets_topic_partitions = int(data["offsets_topic_partitions"])
                if self.offsets_topic_partitions < 1:
                    raise ValueError(f"offsets_topic_partitions is {self.offsets_topic_partitions}")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{self.path}: not a groupcoord metadata file ({error})") from None

    def _document(self, topics: Iterable[Topic]) -> dict[str, Any]:
        return {
            "cluster_id": self.cluster_id,
            "offsets_topic_partitions": self.offsets_topic_partitions,
            "topics": [
                {"name": t.name, "partitions": t.partitions, "topic_id": str(t.topic_id),
                 "configs": dict(t.configs)}
                for t in topics
            ],
        }

    def _save(self, data: dict[str, Any]) -> None:
        """Write ``metadata.json`` durably (blocking: fsyncs)."""
        save_json(self.path, data)

    def _add(self, topic: Topic) -> None:
        replaced = self._by_name.get(topic.name)
        if replaced is not None:
            self._by_id.pop(replaced.topic_id, None)
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id] = topic

    def _remove(self, name: str) -> None:
        topic = self._by_name.pop(name, None)
        if topic is not None:
            self._by_id.pop(topic.topic_id, None)

    async def commit(self, changed: Iterable[Topic] = (), removed: Iterable[str] = ()) -> None:
        """Save the registry with ``changed`` topics added or replaced (by name) and the
        ``removed`` names gone, in a worker thread; the change is made in memory once the
        file holding it is durable. Changes are saved one at a time, in the order asked.

        Raises:
            OSError: the file could not be saved; nothing changed.
        """
        changed = list(changed)
        removed = set(removed)
        async with self._save_lock:
            kept = {t.name: t for t in self if t.name not in removed}
            kept.update((t.name, t) for t in changed)
            await asyncio.to_thread(self._save, self._document(kept.values()))
            for name in removed:
                self._remove(name)
            for topic in changed:
                self._add(topic)

    async def alter_configs(self, name: str, configs: Mapping[str, str]) -> Topic:
        """Replace topic ``name``'s config overrides with ``configs`` (validated by the
        caller), durably; the topic as it now is."""
        topic = replace(self._by_name[name], configs=dict(configs))
        await self.commit([topic])
        return topic

    def __iter__(self) -> Iterator[Topic]:
        return iter(sorted(self._by_name.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> Topic | None:
        """A data topic (``__consumer_offsets`` is :attr:`offsets_topic`)."""
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        """A data topic, or ``__consumer_offsets``, by its topic id."""
        offsets = self.offsets_topic
        if offsets is not None and topic_id == offsets.topic_id:
            return offsets
        return self._by_id.get(topic_id)

    def readable(self, name: str) -> Topic | None:
        """A topic Fetch and ListOffsets read: a data topic or ``__consumer_offsets``."""
        offsets = self.offsets_topic
        return offsets if offsets is not None and name == OFFSETS_TOPIC else self._by_name.get(name)

    @property
    def offsets_topic(self) -> Topic | None:
        """``__consumer_offsets`` (an internal topic: read, never produced to), once its
        partition count is settled. Its topic id is derived from the cluster id, so it is the
        same across restarts without being kept in the file."""
        if self.offsets_topic_partitions is None:
            return None
        return Topic(OFFSETS_TOPIC, self.offsets_topic_partitions,
                     uuid.uuid5(uuid.NAMESPACE_URL, f"kafka:{self.cluster_id}/{OFFSETS_TOPIC}"))

    def settle_offsets_topic_partitions(self, configured: int, existing: Iterable[int]) -> int:
        """``__consumer_offsets``' partition count: the one this file keeps, else (a new data
        directory, or one from before the file kept it) ``configured``, then kept (blocking).

        Raises:
            ValueError: the file keeps none and a partition of ``existing`` (the partition
                directories already there) is ``configured`` or beyond: the log was written
                with more partitions, and its groups would be looked for in the wrong ones.
        """
        if self.offsets_topic_partitions is not None:
            return self.offsets_topic_partitions
        beyond = [p for p in existing if p >= configured]
        if beyond:
            raise ValueError(
                f"{self.path.parent} has {OFFSETS_TOPIC}-{max(beyond)}, beyond offsets.topic.num.partitions="
                f"{configured}: set it to the count this data directory was written with")
        self.offsets_topic_partitions = configured
        self._save(self._document(self))
        return configured

    def declare(self, name: str, partitions: int) -> Topic:
        """Create ``name`` or grow it to ``partitions`` (the command line's ``--topic``),
        saved before this returns (blocking: call it before serving).

        Raises:
            ValueError: an illegal name, or fewer partitions than the topic already has
                (Kafka cannot shrink a topic either).
        """
        error = topic_name_error(name)
        if error is not None or name == OFFSETS_TOPIC:
            raise ValueError(error or f"{OFFSETS_TOPIC} is internal")
        existing = self._by_name.get(name)
        if existing is not None:
            if partitions < existing.partitions:
                raise ValueError(
                    f"topic {name} has {existing.partitions} partitions in {self.path.parent}; "
                    f"it cannot shrink to {partitions}"
                )
            if partitions == existing.partitions:
                return existing
            topic = replace(existing, partitions=partitions)
        else:
            topic = Topic(name, partitions, uuid.uuid4())
        self._add(topic)
        self._save(self._document(self))
        return topic

    def create(self, name: str, partitions: int) -> Errors:
        """Auto-create ``name`` (Metadata with auto.create.topics.enable; on the event loop):
        start saving it in the background and answer LEADER_NOT_AVAILABLE, as Kafka answers
        a topic being created; or the error for an illegal or internal name."""
        if topic_name_error(name) is not None:
            return Errors.INVALID_TOPIC_EXCEPTION
        if name == OFFSETS_TOPIC:
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if name not in self._creating:
            self._creating[name] = Topic(name, partitions, uuid.uuid4())
            if self._saving is None:
                self._saving = asyncio.ensure_future(self._save_created())
        return Errors.LEADER_NOT_AVAILABLE

    async def _save_created(self) -> None:
        """Save the topics being created (those asked for meanwhile in the next round), in a
        worker thread; each exists once the file holding it is durable."""
        try:
            while self._creating:
                created = dict(self._creating)
                async with self._save_lock:
                    await self._create(created.values())
                for name in created:
                    del self._creating[name]
        finally:
            self._saving = None

    async def _create(self, created: Iterable[Topic]) -> None:
        """Save ``created`` and open their partitions (under the save lock: no other change is
        saved meanwhile, so the file always holds every topic clients know)."""
        created = list(created)
        try:
            await asyncio.to_thread(self._save, self._document([*self, *created]))
        except OSError as error:
            log.error("Cannot create topics %s: saving %s failed: %s",
                      sorted(t.name for t in created), self.path, error)
            return
        for topic in created:
            if self.before_create is not None:
                try:
                    await self.before_create(topic)
                except OSError as error:
                    log.error("Cannot open the partitions of topic %s: %s", topic.name, error)
                    continue
            self._add(topic)

    async def close(self) -> None:
        """Wait for the topics being created to be saved."""
        if self._saving is not None:
            await asyncio.shield(self._saving)

    def has_partition(self, name: str, partition: int) -> bool:
        """Whether ``name`` (a data topic or ``__consumer_offsets``) has ``partition``."""
        topic = self.readable(name)
        return topic is not None and 0 <= partition < topic.partitions

    def split_known(
        self, partitions: Iterable[TopicPartition]
    ) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """``partitions`` split into those that exist here and the others (the answer a
        request gets for them: UNKNOWN_TOPIC_OR_PARTITION, as Kafka checks its metadata)."""
        known: list[TopicPartition] = []
        unknown: list[TopicPartition] = []
        for tp in partitions:
            (known if self.has_partition(tp.topic, tp.partition) else unknown).append(tp)
        return known, unknown
