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


def maven_classpath(project: Path, artifact: str) -> str:
    """Fetch the dependencies of ``project``'s pom.xml (unless ``artifact``'s pinned jar is in
    ``project/lib``) and compile ``project/src/main/java`` into ``project/classes``; the class
    path to run it."""
    mvn, javac = shutil.which("mvn"), shutil.which("javac")
    assert mvn and javac, "the Java tests need Maven and a JDK (17+) on the PATH"
    lib, classes = project / "lib", project / "classes"
    version = re.search(rf"<artifactId>{artifact}</artifactId>\s*<version>([^<]+)</version>",
                        (project / "pom.xml").read_text())
    assert version, f"{project}/pom.xml pins no {artifact} version"
    if not (lib / f"{artifact}-{version.group(1)}.jar").exists():  # Maven takes seconds even when done
        subprocess.run([mvn, "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                       cwd=project, check=True, timeout=600)
    classes.mkdir(exist_ok=True)
    sources = sorted(str(source) for source in (project / "src/main/java").glob("*.java"))
    subprocess.run([javac, "-d", str(classes), "-cp", f"{lib}/*", *sources], check=True, timeout=300)
    return f"{lib}/*:{classes}"


@functools.cache
def java_client_classpath() -> str:
    """Fetch kafka-clients and compile the client; the class path to run it."""
    return maven_classpath(JAVA, "kafka-clients")


CLIENT_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
"""A short-lived client's JVM: the quick compiler only and the simplest collector, which halve
the seconds a client takes to start and produce (its hot loops are the network's)."""


def java_client(*args: str) -> list[str]:
    """The command line running the Java client with ``args``."""
    return ["java", *CLIENT_JVM_OPTIONS, "-cp", java_client_classpath(), "JavaClient", *args]
