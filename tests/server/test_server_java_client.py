"""The Java client (kafka-clients, pinned in ``tests/server/java/pom.xml``) against
``groupcoord serve``: two consumers share a topic's partitions, a commit round-trips, and the
admin client lists, describes, lists the offsets of and deletes the group.

``java_client.py`` builds it (Java 17 and Maven come from the machine).
"""

from __future__ import annotations

import subprocess

import pytest
from client_support import PARTITIONS, TOPIC, is_disjoint_cover
from java_client import java_client
from server_process import ServerProcess

pytestmark = [pytest.mark.java, pytest.mark.clients]


def test_the_java_client_forms_a_group_commits_and_administers_it(server: ServerProcess) -> None:
    group = "java-client-group"
    run = subprocess.run(java_client(server.bootstrap, group, TOPIC),
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [line.split(" ", 1) for line in run.stdout.splitlines()]
    facts: dict[str, list[str]] = {}
    for kind, rest in lines:
        facts.setdefault(kind, []).append(rest)
    assignments = [[int(p) for p in a.strip("[]").split(", ") if p] for a in facts["ASSIGNMENT"]]
    assert is_disjoint_cover(assignments, PARTITIONS), assignments
    partition, offset, metadata = facts["COMMITTED"][0].split(" ", 2)
    assert (int(offset), metadata) == (42, "from java")
    assert f"{group} Stable" in facts["LISTED"]
    state, members, assignor = facts["DESCRIBED"][0].split()
    assert (state, int(members), assignor) == ("Stable", 2, "range")
    assert facts["OFFSET"] == [f"{partition} 42"]
    assert facts["DELETED"] == ["true"]
