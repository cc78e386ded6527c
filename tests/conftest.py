"""Fixtures shared by the suites: the purgatory implementations, and one local Spark.

Every test that uses the ``spark`` fixture is marked ``spark`` here, so that the fast tier
(``scripts/test.sh --fast``) leaves out exactly the tests that start Spark."""

from __future__ import annotations

from typing import Any

import pytest
from purgatory_support import IMPLEMENTATION_IDS, Events, Impl, load_implementation, make_op_class


@pytest.fixture(params=IMPLEMENTATION_IDS)
def impl(request: pytest.FixtureRequest) -> Impl:
    return load_implementation(request.param)


@pytest.fixture
def events() -> Events:
    return Events([])


@pytest.fixture
def Op(impl: Impl, events: Events) -> Any:  # noqa: N802 - a class
    return make_op_class(impl.delayed_operation, events)


@pytest.fixture(scope="session")
def spark() -> Any:
    """One local Spark for the whole run (local[2], loopback only, no UI), with the
    ``consumer_offsets`` source registered. Python workers run this interpreter."""
    import os
    import sys

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    import groupcoord.spark

    session = (
        SparkSession.builder.master("local[2]")
        .appName("groupcoord-tests")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    groupcoord.spark.register(session)
    yield session
    session.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
