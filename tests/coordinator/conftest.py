"""The ``ctx`` fixture: a coordinator per test, once per purgatory implementation, whose log
must replay to the live state when the test ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from consumer_context import ConsumerContext
from coordinator_context import Context, assert_replay_matches

from groupcoord.purgatory import IMPLEMENTATIONS


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def ctx(request: pytest.FixtureRequest) -> Iterator[Context]:
    context = Context(IMPLEMENTATIONS[request.param])
    yield context
    assert_replay_matches(context)


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def consumer_ctx(request: pytest.FixtureRequest) -> Iterator[ConsumerContext]:
    """A coordinator with topics ``foo`` (6 partitions) and ``bar`` (3) to subscribe to, the
    assignment interval 0 (every epoch bump computes a target at once)."""
    context = ConsumerContext(IMPLEMENTATIONS[request.param])
    yield context
    assert_replay_matches(context)
