"""Consumer-protocol groups (KIP-848: ConsumerGroupHeartbeat, ConsumerGroupDescribe; clients
with ``group.protocol=consumer``) from real clients, against each server of :data:`KINDS`:
the Java client (kafka-clients) and confluent-kafka (librdkafka) share a topic and hand over
a leaving member's partitions without ever giving one to two members at once; commits survive
a server restart; a regex subscription picks up a topic created later;
``kafka-consumer-groups`` describes the group's members and state and lists groups by type.

Kafka 4.3.1 is the reference; the server runs with :data:`group_members.CONSUMER_PROTOCOL_SETTINGS`
(Kafka's names for short sessions and heartbeats).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from client_support import ConsumerProcess
from data_servers import KAFKA_TOOL_TIMEOUT_S, DataServer, create_topics, kafka_tool, serve
from data_support import Processes
from group_members import (
    CONSUMER_PROTOCOL_SETTINGS,
    MEMBER_CLIENTS,
    MemberProcess,
    check_handovers,
    names,
    ownership_timeline,
    wait_shared,
)
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError
from server_process import wait_for

pytestmark = [pytest.mark.timeout(240), pytest.mark.clients, pytest.mark.java]

KINDS = ["kafka", "groupcoord"]
"""The servers every test runs against."""
SHARED = "shared"
SHARED_PARTITIONS = 6
DESCRIBED = "described"
RESUMED = "resumed"
COMMITTED = {f"{RESUMED}:0": 3, f"{RESUMED}:1": 5, f"{RESUMED}:2": 7}
"""What the restart test commits: neither the earliest nor the latest offset of any partition."""
RECORDS_PER_PARTITION = 10
TOPICS = {SHARED: SHARED_PARTITIONS, DESCRIBED: 4, RESUMED: len(COMMITTED)}
REGEX_WAIT_S = 60.0
"""Kafka matches a group's regexes again when a topic is created, at most every 10 s."""
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@pytest.fixture(scope="module", params=KINDS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataServer]:
    with serve(request.param, tmp_path_factory.mktemp(request.param), TOPICS, CONSUMER_PROTOCOL_SETTINGS) as server:
        yield server


def consumer_groups(target: DataServer, *args: str) -> list[list[str]]:
    """``kafka-consumer-groups`` with ``args``: the words of each line it prints."""
    run = subprocess.run(kafka_tool(GROUPS, "--bootstrap-server", target.bootstrap, *args),
                         capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return [line.split() for line in run.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("client", MEMBER_CLIENTS)
def test_members_share_a_topic_and_hand_over_a_leaving_member_s_partitions(
    target: DataServer, processes: Processes, client: str
) -> None:
    """Three members share six partitions disjointly and completely; one closes, and the
    other two take over its partitions. By the members' rebalance callbacks, every partition
    changed hands only after its previous owner had revoked it."""
    group = f"share-{client}"
    partitions = names(SHARED, SHARED_PARTITIONS)
    members = [processes.member(client, target.bootstrap, group, f"{client}-{n}", f"topics:{SHARED}")
               for n in range(3)]
    wait_shared(members, partitions)
    leaving, staying = members[0], members[1:]
    held = leaving.owned()
    leaving.leave()
    assert leaving.events("revoked")[-1]["partitions"] == sorted(held), leaving.events()
    wait_shared(staying, partitions)
    assert check_handovers(ownership_timeline(members)) >= SHARED_PARTITIONS + len(held)


def test_the_handover_check_fails_on_a_partition_owned_twice() -> None:
    """The check above fails when a member is given a partition before its owner revoked it."""
    timeline = [(1, "assigned", "t:0", "a"), (2, "assigned", "t:0", "b"), (3, "revoked", "t:0", "a")]
    with pytest.raises(AssertionError, match="t:0 assigned to b at 2 while a owned it"):
        check_handovers(timeline)
    assert check_handovers(sorted([*timeline[:1], (3, "revoked", "t:0", "a"), (4, "assigned", "t:0", "b")])) == 2


@pytest.mark.parametrize(("client", "subscription"), [
    ("java", "regex"),  # a SubscriptionPattern: the coordinator matches it
    ("java", "pattern"),  # a java.util.regex.Pattern: the client matches it, sends topic names
    ("confluent-kafka", "regex"),
])
def test_a_regex_subscription_picks_up_a_topic_created_later(
    target: DataServer, processes: Processes, client: str, subscription: str
) -> None:
    prefix = f"rx-{client}-{subscription}"
    first, later = f"{prefix}-a", f"{prefix}-b"
    create_topics(target.bootstrap, {first: 2})
    member = processes.member(client, target.bootstrap, f"{prefix}-group", "regex-member",
                              f"{subscription}:{prefix}-.*")
    wait_shared([member], names(first, 2))
    create_topics(target.bootstrap, {later: 3})
    wait_shared([member], names(first, 2) | names(later, 3), REGEX_WAIT_S)
    assert check_handovers(ownership_timeline([member])) == 5


def test_consumer_groups_describes_the_members_and_state_of_a_consumer_protocol_group(
    target: DataServer, processes: Processes
) -> None:
    """``--describe --members [--verbose]`` and ``--describe --state [--verbose]`` of two
    members with the range assignor: Kafka's columns, each member by its id, host and client
    id with what it owns, epochs that agree once the group is stable."""
    group = "describe-group"
    members = [processes.member("confluent-kafka", target.bootstrap, group, f"described-{n}",
                                f"topics:{DESCRIBED}", "range") for n in range(2)]
    wait_shared(members, names(DESCRIBED, TOPICS[DESCRIBED]))
    by_id = {m.member_id(): m for m in members}

    header, *rows = consumer_groups(target, "--describe", "--members", "--group", group)
    assert header == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    assert sorted((r[0], r[1], r[2], r[3], int(r[4])) for r in rows) == sorted(
        (group, i, "/127.0.0.1", m.client_id, len(m.owned())) for i, m in by_id.items()), rows

    header, *rows = consumer_groups(target, "--describe", "--members", "--verbose", "--group", group)
    assert header == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH",
                      "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
    epochs = set()
    for row in rows:
        member = by_id[row[1]]
        owned = f"{DESCRIBED}:" + ",".join(str(p) for p in sorted(int(tp.split(":")[1]) for tp in member.owned()))
        assert row[5] == row[7] and row[6] == row[8] == owned, rows
        epochs.add(int(row[5]))
    assert len(rows) == 2, rows

    header, *rows = consumer_groups(target, "--describe", "--state", "--group", group)
    assert header == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
    assert [[r[0], r[1], r[3], r[4], r[5]] for r in rows] == [[group, target.bootstrap, "range", "Stable", "2"]]

    header, *rows = consumer_groups(target, "--describe", "--state", "--verbose", "--group", group)
    assert header == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                      "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
    (row,) = rows
    group_epoch, target_epoch = int(row[5]), int(row[6])
    # Each join raised the group's epoch; the stable members are at the target's.
    assert row[3:5] == ["range", "Stable"] and row[7] == "2" and group_epoch >= 2, rows
    assert epochs == {group_epoch} and target_epoch == group_epoch, (epochs, rows)


def test_groups_are_listed_by_type(target: DataServer, processes: Processes) -> None:
    """``kafka-consumer-groups --list --type`` and the admin client's ListGroups with a type
    filter: a consumer-protocol group is of type Consumer, a classic group of type Classic."""
    modern, classic = "listed-consumer", "listed-classic"
    member = processes.member("java", target.bootstrap, modern, "listed", f"topics:{SHARED}")
    classic_member = ConsumerProcess("kafka-python", target.bootstrap, classic, SHARED)
    try:
        wait_shared([member], names(SHARED, SHARED_PARTITIONS))
        wait_for(classic_member.current, 60, "the classic member to be assigned")
        check_listed_by_type(target, modern, classic)
    finally:
        classic_member.close()


def check_listed_by_type(target: DataServer, modern: str, classic: str) -> None:
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    def listed(*args: str) -> list[list[str]]:
        return [row for row in consumer_groups(target, "--list", *args) if row[0] in (modern, classic)]

    assert listed("--type", "consumer") == [[modern, "Consumer"]]
    assert listed("--type", "classic") == [[classic, "Classic"]]
    assert sorted(listed("--type")) == [[classic, "Classic"], [modern, "Consumer"]]
    assert listed("--type", "consumer", "--state") == [[modern, "Consumer", "Stable"]]

    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    for kind, group in ((ConsumerGroupType.CONSUMER, modern), (ConsumerGroupType.CLASSIC, classic)):
        result = admin.list_consumer_groups(types={kind}, request_timeout=30).result(60)
        assert not result.errors
        found = [(g.group_id, g.type, g.state) for g in result.valid if g.group_id in (modern, classic)]
        assert found == [(group, kind, ConsumerGroupState.STABLE)], found


def committed_offsets(target: DataServer, group: str) -> dict[str, int]:
    """The group's committed offsets by the admin client, asked again while the server answers
    with a retriable error (a restarted server loads its groups first)."""
    admin = KafkaAdminClient(bootstrap_servers=target.bootstrap)

    def listed() -> tuple[dict[str, int]] | None:
        try:
            offsets = admin.list_group_offsets(group)[group]
        except KafkaError as error:
            if not error.retriable:
                raise
            return None
        return ({f"{tp.topic}:{tp.partition}": o.offset for tp, o in offsets.items()},)

    try:
        return wait_for(listed, 60, "the restarted server to list the group's offsets", 0.2)[0]
    finally:
        admin.close()


def test_commits_survive_a_server_restart(target: DataServer, processes: Processes) -> None:
    """A member commits offsets, leaves; the server stops and starts again on its directory; the
    group's offsets are listed as committed, and a new member of the group (another client)
    starts reading each partition at its committed offset."""
    group = "resume-group"
    producer = KafkaProducer(bootstrap_servers=target.bootstrap, acks="all", enable_idempotence=False)
    try:
        for future in [producer.send(RESUMED, value=b"%d" % n, partition=p)
                       for p in range(len(COMMITTED)) for n in range(RECORDS_PER_PARTITION)]:
            future.get(30)
    finally:
        producer.close(30)
    first = processes.member("java", target.bootstrap, group, "before-restart", f"topics:{RESUMED}")
    wait_shared([first], set(COMMITTED))
    assert first.commit(COMMITTED) == COMMITTED
    first.leave()

    target.stop()
    target.restart()

    assert committed_offsets(target, group) == COMMITTED
    second = processes.member("confluent-kafka", target.bootstrap, group, "after-restart", f"topics:{RESUMED}")

    def read_every_partition() -> bool:
        second.alive()
        return len(second.first_offsets()) == len(COMMITTED)

    wait_for(read_every_partition, 60, "the new member to read every partition")
    assert second.first_offsets() == COMMITTED


def test_consumer_groups_deletes_a_consumer_protocol_group_once_empty(
    target: DataServer, processes: Processes
) -> None:
    """``kafka-consumer-groups --delete`` (DeleteGroups) of a consumer-protocol group: refused
    while a member is in it, done once it left; its offsets go with it, and describing it then
    says it does not exist."""
    group = "deleted-group"
    member = processes.member("java", target.bootstrap, group, "doomed", f"topics:{RESUMED}")
    wait_shared([member], set(COMMITTED))
    assert member.commit({f"{RESUMED}:0": 1}) == {f"{RESUMED}:0": 1}

    def delete() -> str:
        run = subprocess.run(kafka_tool(GROUPS, "--bootstrap-server", target.bootstrap, "--delete", "--group", group),
                             capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False)
        return run.stdout + run.stderr

    refused = delete()
    assert "GroupNotEmptyException: The group is not empty." in refused, refused
    member.leave()
    done = delete()
    assert f"Deletion of requested consumer groups ('{group}') was successful." in done, done
    assert committed_offsets(target, group) == {}
    # The tool's ConsumerGroupDescribe of a group gone is answered GROUP_ID_NOT_FOUND.
    described = subprocess.run(
        kafka_tool(GROUPS, "--bootstrap-server", target.bootstrap, "--describe", "--state", "--group", group),
        capture_output=True, text=True, timeout=KAFKA_TOOL_TIMEOUT_S, check=False)
    assert f"GroupIdNotFoundException: Group {group} not found." in described.stdout, described


def test_a_classic_member_joins_a_consumer_protocol_group(target: DataServer, processes: Processes) -> None:
    """A classic consumer (kafka-python: JoinGroup, SyncGroup, Heartbeat) that joins a group of
    the consumer protocol becomes one of its members: the server-side assignor gives the two
    members the topic's partitions disjointly and completely, the classic one through its
    SyncGroup; once it leaves, the other member has them all again."""
    group = "mixed-group"
    member = processes.member("java", target.bootstrap, group, "modern", f"topics:{SHARED}")
    wait_shared([member], names(SHARED, SHARED_PARTITIONS))
    classic = ConsumerProcess("kafka-python", target.bootstrap, group, SHARED)
    try:
        wait_sharing(member, classic)
    finally:
        classic.close()
    wait_shared([member], names(SHARED, SHARED_PARTITIONS))


def wait_sharing(member: MemberProcess, classic: ConsumerProcess) -> None:
    """Wait until the consumer-protocol ``member`` and the ``classic`` one share the topic
    ``shared`` disjointly and completely, each with some of it."""
    every = set(range(SHARED_PARTITIONS))

    def shared() -> bool:
        member.alive()
        mine = {int(tp.split(":")[1]) for tp in member.owned()}
        theirs = classic.current()
        return bool(theirs) and bool(mine) and mine | theirs == every and not mine & theirs

    wait_for(shared, 60, "the classic and the consumer-protocol member to share the topic", 0.1)


def test_a_consumer_protocol_member_joins_and_leaves_a_classic_group(target: DataServer,
                                                                     processes: Processes) -> None:
    """KIP-848's online migration both ways: a classic consumer (kafka-python) forms a classic
    group; a consumer-protocol member (the Java client) joining it converts it to a consumer
    group, and the two share the topic; the consumer-protocol member commits and leaves, which
    converts the group back to a classic group whose member gets the whole topic again. No
    committed offset is lost."""
    group = "migrated-group"
    every = set(range(SHARED_PARTITIONS))
    classic = ConsumerProcess("kafka-python", target.bootstrap, group, SHARED)
    try:
        wait_for(lambda: classic.current() == every, 60, "the classic member to get the topic", 0.1)
        assert group_type(target, group) == "Classic"
        member = processes.member("java", target.bootstrap, group, "upgrading", f"topics:{SHARED}")
        wait_sharing(member, classic)
        assert group_type(target, group) == "Consumer"
        committed = {tp: 4 for tp in sorted(member.owned())}
        assert member.commit(committed) == committed
        member.leave()
        wait_for(lambda: classic.current() == every, 60, "the classic member to get the topic back", 0.1)
        assert group_type(target, group) == "Classic"
    finally:
        classic.close()
    assert committed_offsets(target, group) == committed


def group_type(target: DataServer, group: str) -> str:
    """The group's type as ``kafka-consumer-groups --list --type`` shows it."""
    return next(row[1] for row in consumer_groups(target, "--list", "--type") if row[0] == group)
