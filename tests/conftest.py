"""Fixtures of the purgatory suites: every test runs once per implementation."""

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
