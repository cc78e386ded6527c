"""The Java client (kafka-clients, pinned in ``java/pom.xml``): built once per test run.

Java 17 and Maven come from the machine; Maven fetches kafka-clients from Maven Central into
``java/lib`` (ignored by git) when it does not hold the pinned version yet, and javac compiles
``java/src/main/java`` into ``java/classes``. ``JavaClient`` forms a group and administers it;
its data-plane modes are ``DataClient``'s.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

JAVA = Path(__file__).with_name("java")


@functools.cache
def java_client_classpath() -> str:
    """Fetch kafka-clients and compile the client; the class path to run it."""
    mvn, javac = shutil.which("mvn"), shutil.which("javac")
    assert mvn and javac, "the Java client tests need Maven and a JDK (17+) on the PATH"
    lib, classes = JAVA / "lib", JAVA / "classes"
    version = re.search(r"<artifactId>kafka-clients</artifactId>\s*<version>([^<]+)</version>",
                        (JAVA / "pom.xml").read_text())
    assert version, "java/pom.xml pins no kafka-clients version"
    if not (lib / f"kafka-clients-{version.group(1)}.jar").exists():  # Maven takes seconds even when done
        subprocess.run([mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                       cwd=JAVA, check=True, timeout=600)
    classes.mkdir(exist_ok=True)
    sources = sorted(str(source) for source in (JAVA / "src/main/java").glob("*.java"))
    subprocess.run([javac, "-d", str(classes), "-cp", f"{lib}/*", *sources], check=True, timeout=300)
    return f"{lib}/*:{classes}"


CLIENT_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
"""A short-lived client's JVM: the quick compiler only and the simplest collector, which halve
the seconds a client takes to start and produce (its hot loops are the network's)."""


def java_client(*args: str) -> list[str]:
    """The command line running the Java client with ``args``."""
    return ["java", *CLIENT_JVM_OPTIONS, "-cp", java_client_classpath(), "JavaClient", *args]
