"""The Java client (kafka-clients, pinned in ``tests/server/java/pom.xml``) against
``groupcoord serve``: two consumers share a topic's partitions, a commit round-trips, and the
admin client lists, describes, lists the offsets of and deletes the group.

Java 17 and Maven come from the machine; Maven fetches kafka-clients from Maven Central into
``tests/server/java/lib`` (ignored by git) on the first run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from client_support import PARTITIONS, TOPIC, is_disjoint_cover
from server_process import ServerProcess

pytestmark = [pytest.mark.java, pytest.mark.clients]

JAVA = Path(__file__).with_name("java")


def _build() -> Path:
    """Fetch kafka-clients and compile the client; the class path to run it."""
    mvn, javac = shutil.which("mvn"), shutil.which("javac")
    assert mvn and javac, "the Java client test needs Maven and a JDK (17+) on the PATH"
    lib, classes = JAVA / "lib", JAVA / "classes"
    subprocess.run([mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                   cwd=JAVA, check=True, timeout=600)
    classes.mkdir(exist_ok=True)
    subprocess.run([javac, "-d", str(classes), "-cp", f"{lib}/*",
                    str(JAVA / "src/main/java/JavaClient.java")], check=True, timeout=300)
    return Path(f"{lib}/*:{classes}")


def test_the_java_client_forms_a_group_commits_and_administers_it(server: ServerProcess) -> None:
    classpath = _build()
    group = "java-client-group"
    run = subprocess.run(["java", "-cp", str(classpath), "JavaClient", server.bootstrap, group, TOPIC],
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
