"""The ``ctx`` fixture: a coordinator per test, once per purgatory implementation, whose log
must replay to the live state when the test ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from coordinator_context import Context, assert_replay_matches

from groupcoord.purgatory import IMPLEMENTATIONS


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def ctx(request: pytest.FixtureRequest) -> Iterator[Context]:
    context = Context(IMPLEMENTATIONS[request.param])
    yield context
    assert_replay_matches(context)
