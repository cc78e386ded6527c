"""The topics this node serves, persisted in the data directory.

A topic is a name, a partition count, a topic id and its config overrides (``retention.ms``
and the rest, :mod:`groupcoord.storage.topic_config`); each partition's data is a log of the
storage engine (opened by :class:`~groupcoord.server.replica_manager.ReplicaManager`). Topics
come from ``--topic name:partitions``, from CreateTopics and CreatePartitions
(:mod:`groupcoord.server.topic_admin`) and, as with Kafka's ``auto.create.topics.enable``,
from Metadata requests naming unknown topics (``num.partitions`` partitions); DeleteTopics
removes them. They are kept with the cluster id in ``DATA_DIR/metadata.json``,
rewritten atomically (temporary file, fsync, rename) on every change. The file also keeps how
many partitions ``__consumer_offsets`` has: as in Kafka, once the topic exists its own count
holds, whatever ``offsets.topic.num.partitions`` says later.

A topic created by a Metadata request is saved off the event loop, in a worker thread; as in
Kafka, it is answered LEADER_NOT_AVAILABLE while it is being created and exists (for every
request) once saved and its partitions' logs are open, so no client is ever told of a topic a
crash could lose. A topic created by CreateTopics exists on the same terms; one deleted is gone
for clients at once, and stays in the file as being deleted until its partitions' directories
are renamed for deletion, so that a start after a crash finishes the renaming.
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
    """Why ``name`` is not a legal Kafka topic name, in the words of Kafka's
    ``Topic.validate``, or None."""
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    if not _LEGAL_TOPIC_NAME.fullmatch(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def _topic_of(entry: dict[str, Any]) -> Topic:
    configs = {str(k): str(v) for k, v in dict(entry.get("configs", {})).items()}
    return Topic(str(entry["name"]), int(entry["partitions"]), uuid.UUID(entry["topic_id"]), configs)


def _entry(topic: Topic) -> dict[str, Any]:
    return {"name": topic.name, "partitions": topic.partitions, "topic_id": str(topic.topic_id),
            "configs": dict(topic.configs)}


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
    """Topics by name and by id, loaded from and saved to ``DATA_DIR/metadata.json``.

    Two views: the topics clients see (a topic is added once it is saved and its
    partitions' logs are open, and removed the moment its deletion starts), and those the
    file holds (:meth:`_document`). Saves on the event loop run one at a time, in a worker
    thread, each writing every change made before it began.
    """

    def __init__(self, data_dir: str | Path) -> None:
        self.path = Path(data_dir) / METADATA_FILE
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self.version = 0
        """Grows at every change clients see (a topic added, grown or removed): consumer groups
        check their subscribed topics again (:class:`~groupcoord.server.metadata_image.MetadataImage`)."""
        self._durable: dict[str, Topic] = {}
        """The topics the file holds, or will once the save under way or next is done."""
        self.deleting: dict[str, Topic] = {}
        """Topics deleted whose partition directories may not be renamed for deletion yet:
        kept in the file, so that a start after a crash renames them."""
        self._creating: dict[str, Topic] = {}
        self._saving: asyncio.Task[None] | None = None
        self._save_lock = asyncio.Lock()
        """Held while a changed file is saved, so that saves land in the order they were made."""
        self.cluster_id = ""
        self.before_create: Callable[[Topic], Awaitable[None]] | None = None
        """Awaited for each topic created (or grown), before it exists for clients (its
        partitions' logs are opened)."""
        self.offsets_topic_partitions: int | None = None
        """``__consumer_offsets``' partition count; None in a file older than it."""
        if self.path.exists():
            self._load()
        else:
            self.cluster_id = new_cluster_id()
            self._save(self._document())

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
            self.cluster_id = str(data["cluster_id"])
            for entry in data["topics"]:
                topic = _topic_of(entry)
                self._add(topic)
                self._durable[topic.name] = topic
            for entry in data.get("deleting", ()):
                topic = _topic_of(entry)
                if self._by_id.get(topic.topic_id) is None:  # not a deletion that failed to save
                    self.deleting[topic.name] = topic
            if data.get("offsets_topic_partitions") is not None:
                self.offsets_topic_partitions = int(data["offsets_topic_partitions"])
                if self.offsets_topic_partitions < 1:
                    raise ValueError(f"offsets_topic_partitions is {self.offsets_topic_partitions}")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{self.path}: not a groupcoord metadata file ({error})") from None

    def _document(self) -> dict[str, Any]:
        """What the file holds: the durable view."""
        return {
            "cluster_id": self.cluster_id,
            "offsets_topic_partitions": self.offsets_topic_partitions,
            "topics": [_entry(t) for t in sorted(self._durable.values(), key=lambda t: t.name)],
            "deleting": [_entry(t) for t in sorted(self.deleting.values(), key=lambda t: t.name)],
        }

    def _save(self, data: dict[str, Any]) -> None:
        """Write ``metadata.json`` durably (blocking: fsyncs)."""
        save_json(self.path, data)

    async def _save_change(self, changed: Iterable[Topic] = (), removed: Iterable[str] = ()) -> None:
        """Save the durable view with ``changed`` topics added or replaced (by name) and the
        ``removed`` names gone, in a worker thread, once the saves before have finished; the
        durable view holds the change once the file does (OSError if it could not be
        written: nothing changed)."""
        async with self._save_lock:
            durable = {name: t for name, t in self._durable.items() if name not in set(removed)}
            durable.update((t.name, t) for t in changed)
            previous, self._durable = self._durable, durable
            try:
                await asyncio.to_thread(self._save, self._document())
            except OSError:
                self._durable = previous
                raise

    async def commit(self, changed: Iterable[Topic] = (), removed: Iterable[str] = ()) -> None:
        """Save the registry with ``changed`` topics added or replaced (by name) and the
        ``removed`` names gone, in a worker thread; the change is made in memory once the
        file holding it is durable. Changes are saved one at a time, in the order asked.

        Raises:
            OSError: the file could not be saved; nothing changed.
        """
        changed = list(changed)
        removed = set(removed)
        await self._save_change(changed, removed)
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

    def _add(self, topic: Topic) -> None:
        self.version += 1
        replaced = self._by_name.get(topic.name)
        if replaced is not None:
            self._by_id.pop(replaced.topic_id, None)
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id] = topic

    def _remove(self, name: str) -> None:
        topic = self._by_name.pop(name, None)
        if topic is not None:
            self.version += 1
            self._by_id.pop(topic.topic_id, None)

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

    def is_taken(self, name: str) -> bool:
        """Whether ``name`` is a topic, or one being created."""
        return name in self._by_name or name in self._creating or name == OFFSETS_TOPIC

    def collision(self, name: str) -> str | None:
        """A topic (or one being created) whose name differs from ``name`` only by '.'
        against '_' (Kafka's ``Topic.hasCollision``: the two clash in metric names)."""
        unified = name.replace(".", "_")
        for other in (*self._by_name, *self._creating):
            if other != name and other.replace(".", "_") == unified:
                return other
        return None

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
        self._save(self._document())
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
        self._durable[name] = topic
        self._save(self._document())
        return topic

    def create(self, name: str, partitions: int) -> Errors:
        """Auto-create ``name`` (Metadata with auto.create.topics.enable; on the event loop):
        start saving it in the background and answer LEADER_NOT_AVAILABLE, as Kafka answers
        a topic being created; or the error for an illegal or internal name."""
        if topic_name_error(name) is not None:
            return Errors.INVALID_TOPIC_EXCEPTION
        if name == OFFSETS_TOPIC:
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        if name not in self._creating and name not in self._durable:
            self._creating[name] = Topic(name, partitions, uuid.uuid4())
            if self._saving is None:
                self._saving = asyncio.ensure_future(self._save_created())
        return Errors.LEADER_NOT_AVAILABLE

    async def _save_created(self) -> None:
        """Save the topics being auto-created (those asked for meanwhile in the next round);
        each exists once the file holding it is durable and its logs are open."""
        try:
            while True:
                created = {name: t for name, t in self._creating.items() if name not in self._durable}
                if not created:
                    break
                await self._create_saved(list(created.values()))
        finally:
            self._saving = None

    async def _create_saved(self, topics: list[Topic]) -> None:
        try:
            await self._save_change(topics)
        except OSError as error:
            log.error("Cannot create topics %s: saving %s failed: %s",
                      sorted(t.name for t in topics), self.path, error)
            for topic in topics:
                self._creating.pop(topic.name, None)
            return
        for topic in topics:
            try:
                if self.before_create is not None:
                    await self.before_create(topic)
            except OSError as error:
                log.error("Cannot open the partitions of topic %s: %s", topic.name, error)
            else:
                self._add(topic)
            finally:
                self._creating.pop(topic.name, None)

    async def create_topic(self, topic: Topic) -> None:
        """Create ``topic`` (CreateTopics): saved, then its partitions' logs opened, then it
        exists for clients. The caller checked that its name is free (:meth:`is_taken`);
        it is reserved from now on.

        Raises:
            OSError: the file could not be saved (the topic does not exist) or its logs
                could not be opened (it exists in the file: a restart serves it).
        """
        self._creating[topic.name] = topic
        try:
            await self._save_change([topic])
        except OSError:
            self._creating.pop(topic.name, None)
            raise
        try:
            if self.before_create is not None:
                await self.before_create(topic)
            self._add(topic)
        finally:
            self._creating.pop(topic.name, None)

    async def add_partitions(self, topic: Topic, count: int) -> Topic:
        """Grow ``topic`` to ``count`` partitions (CreatePartitions): saved, then the new
        partitions' logs opened, then the new count exists for clients.

        Raises:
            OSError: as :meth:`create_topic`.
        """
        grown = replace(topic, partitions=count)
        await self._save_change([grown])
        if self.before_create is not None:
            await self.before_create(grown)
        if self._by_name.get(topic.name) is topic:
            self._add(grown)
        return grown

    def delete_topic(self, topic: Topic) -> asyncio.Future[None]:
        """Delete ``topic`` (DeleteTopics): gone for clients at once; the future returned is
        done once the file keeps it as being deleted (:attr:`deleting`), until
        :meth:`deleted`. It fails with OSError if the file could not be saved: the topic is
        then back as it was."""
        self._remove(topic.name)
        self.deleting[topic.name] = topic

        async def save() -> None:
            try:
                await self._save_change(removed=[topic.name])
            except OSError:
                if self.deleting.get(topic.name) is topic:
                    del self.deleting[topic.name]
                    self._add(topic)
                raise

        return asyncio.ensure_future(save())

    async def deleted(self, topic: Topic) -> None:
        """``topic``'s partition directories are renamed for deletion: it leaves the file."""
        if self.deleting.get(topic.name) is topic:
            del self.deleting[topic.name]
            await self._save_change()

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
