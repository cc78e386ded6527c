"""Both purgatories against a trivial model, on random sequences of calls (hypothesis).

The model is a dict of pending operations with their expiration times, the watcher lists as
plain lists, and Kafka's purge rule spelled out. After every step the implementations and the
model must agree on the return value, on which operations completed and which expired (and
expiries must come in ascending expiration order), on ``num_delayed()``, ``watched()``,
each operation's ``completed`` flag, and ``next_expiration_ms()`` must never be later than
the earliest pending expiration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from purgatory_support import Impl, load_implementation

KEYS = ["k0", "k1", "k2", "k3", ("g", 4), 5]
BOUNDARY_DELAYS = [
    0, -1, -100, 1, 2, 19, 20, 21, 399, 400, 401, 7_999, 8_000, 8_001,
    159_999, 160_000, 160_001, 1_800_000, 3_199_999, 3_200_000, 3_200_001, 64_000_000,
]
delays = st.one_of(
    st.sampled_from(BOUNDARY_DELAYS),
    st.integers(-50, 50_000),
    st.integers(0, 2**40),
)
jumps = st.one_of(
    st.integers(0, 30), st.integers(0, 10_000), st.integers(0, 10**7), st.just(2**41)
)
op_ref = st.integers(0, 10**6)
key = st.sampled_from(KEYS)
actions = st.one_of(
    st.tuples(st.just("add"), st.lists(key, min_size=1, max_size=3, unique=True), delays,
              st.booleans()),
    st.tuples(st.just("satisfy"), op_ref),
    st.tuples(st.just("check"), key),
    st.tuples(st.just("force"), op_ref),
    st.tuples(st.just("deadline"), key, delays),
    st.tuples(st.just("complete_deadline"), key),
    st.tuples(st.just("cancel"), key),
    st.tuples(st.just("advance"), jumps),
    st.tuples(st.just("advance_back"), st.integers(1, 1_000)),
)


@dataclass
class ModelOp:
    expiration: int
    completable: bool
    state: str = "idle"  # idle | pending | completed


@dataclass
class Model:
    now: int
    purge_interval: int
    ops: list[ModelOp] = field(default_factory=list)
    lists: dict[Any, list[int]] = field(default_factory=dict)
    deadlines: dict[Any, int] = field(default_factory=dict)
    estimated: int = 0

    def pending(self) -> int:
        return sum(op.state == "pending" for op in self.ops)

    def num_delayed(self) -> int:
        return self.pending() + len(self.deadlines)

    def watched(self) -> int:
        return sum(map(len, self.lists.values())) + len(self.deadlines)

    def earliest(self) -> int | None:
        times = [op.expiration for op in self.ops if op.state == "pending"]
        times += self.deadlines.values()
        return min(times, default=None)

    def complete(self, i: int, events: list[Any]) -> bool:
        op = self.ops[i]
        if op.state == "completed":
            return False
        op.state = "completed"
        events.append(("complete", i))
        return True

    def add(self, keys: list[Any], delay: int, completable: bool, events: list[Any]) -> bool:
        i = len(self.ops)
        self.ops.append(ModelOp(self.now + delay, completable))
        if completable:
            return self.complete(i, events)
        for k in keys:
            self.lists.setdefault(k, []).append(i)
        self.estimated += 1
        self.ops[i].state = "pending"
        return False

    def check(self, k: Any, events: list[Any]) -> int:
        watching = self.lists.get(k)
        if watching is None:
            return 0
        n = 0
        for i in watching:
            if self.ops[i].state != "completed" and self.ops[i].completable:
                n += self.complete(i, events)
        live = [i for i in watching if self.ops[i].state != "completed"]
        if live:
            self.lists[k] = live
        else:
            del self.lists[k]
        return n

    def deadline(self, k: Any, delay: int) -> int:
        completed = int(k in self.deadlines)
        self.deadlines[k] = self.now + delay
        return completed

    def cancel(self, k: Any) -> list[int]:
        self.deadlines.pop(k, None)
        cancelled = [i for i in self.lists.pop(k, []) if self.ops[i].state != "completed"]
        for i in cancelled:
            self.ops[i].state = "idle"
        return cancelled

    def advance(self, t: int, events: list[Any]) -> int:
        self.now = max(self.now, t)
        due: list[tuple[int, Any]] = [
            (op.expiration, ("op", i)) for i, op in enumerate(self.ops)
            if op.state == "pending" and op.expiration <= self.now
        ]
        due += [(e, ("deadline", k)) for k, e in self.deadlines.items() if e <= self.now]
        for _, (kind, what) in sorted(due, key=lambda d: d[0]):
            if kind == "op":
                self.complete(what, events)
                events.append(("expire", what))
            else:
                del self.deadlines[what]
                events.append(("deadline", what))
        pending = self.pending()
        if self.estimated - pending > self.purge_interval:
            self.estimated = pending
            for k in list(self.lists):
                live = [i for i in self.lists[k] if self.ops[i].state != "completed"]
                if live:
                    self.lists[k] = live
                else:
                    del self.lists[k]
        return len(due)


class Driven:
    """One implementation under test, with operations that log into ``events``."""

    def __init__(self, impl: Impl, start_ms: int, purge_interval: int) -> None:
        self.events: list[Any] = []
        events = self.events

        class Op(impl.delayed_operation):  # type: ignore[misc, name-defined]
            def __init__(self, delay_ms: int, index: int, completable: bool) -> None:
                super().__init__(delay_ms)
                self.index = index
                self.completable = completable

            def try_complete(self) -> bool:
                return bool(self.completable and self.force_complete())

            def on_complete(self) -> None:
                events.append(("complete", self.index))

            def on_expiration(self) -> None:
                events.append(("expire", self.index))

        self.op_class = Op
        self.ops: list[Any] = []
        self.purgatory = impl.purgatory(
            "model", start_ms=start_ms, purge_interval=purge_interval
        )

    def on_deadline(self, k: Any) -> None:
        self.events.append(("deadline", k))

    def step(self, action: tuple[Any, ...], model: Model) -> Any:
        p = self.purgatory
        match action:
            case ("add", keys, delay, completable):
                op = self.op_class(delay, len(self.ops), completable)
                self.ops.append(op)
                return p.try_complete_else_watch(op, keys)
            case ("satisfy", i):
                self.ops[i].completable = True
                return None
            case ("check", k):
                return p.check_and_complete(k)
            case ("force", i):
                return self.ops[i].force_complete()
            case ("deadline", k, delay):
                return p.watch_deadline(k, delay, self.on_deadline)
            case ("complete_deadline", k):
                return p.complete_deadline(k)
            case ("cancel", k):
                return sorted(op.index for op in p.cancel_for_key(k))
            case ("advance", t) | ("advance_back", t):
                return p.advance_clock(t)
        raise AssertionError(action)


def model_step(model: Model, action: tuple[Any, ...], events: list[Any]) -> Any:
    match action:
        case ("add", keys, delay, completable):
            return model.add(keys, delay, completable, events)
        case ("satisfy", i):
            model.ops[i].completable = True
            return None
        case ("check", k):
            return model.check(k, events)
        case ("force", i):
            if model.ops[i].state == "completed":
                return False
            return model.complete(i, events)
        case ("deadline", k, delay):
            return model.deadline(k, delay)
        case ("complete_deadline", k):
            return model.deadlines.pop(k, None) is not None
        case ("cancel", k):
            return sorted(model.cancel(k))
        case ("advance", t) | ("advance_back", t):
            return model.advance(t, events)
    raise AssertionError(action)


def concrete(action: tuple[Any, ...], model: Model) -> tuple[Any, ...] | None:
    """Resolve references to earlier operations and relative times; None to skip."""
    match action:
        case ("satisfy" | "force", ref):
            return (action[0], ref % len(model.ops)) if model.ops else None
        case ("advance", jump):
            return ("advance", min(model.now + jump, 2**62))
        case ("advance_back", back):
            return ("advance_back", model.now - back)
    return action


def run(implementations: list[Impl], start_ms: int, purge_interval: int,
        steps: list[tuple[Any, ...]]) -> None:
    model = Model(start_ms, purge_interval)
    driven = [Driven(impl, start_ms, purge_interval) for impl in implementations]
    for raw in steps:
        action = concrete(raw, model)
        if action is None:
            continue
        expected_events: list[Any] = []
        expected = model_step(model, action, expected_events)
        for d in driven:
            d.events.clear()
            got = d.step(action, model)
            where = f"{d.purgatory!r} after {action!r}"
            assert got == expected, where
            assert sorted(d.events, key=repr) == sorted(expected_events, key=repr), where
            expiries = [
                model.ops[what].expiration if kind == "expire" else None
                for kind, what in d.events if kind == "expire"
            ]
            assert expiries == sorted(expiries), where  # type: ignore[type-var]
            assert d.purgatory.num_delayed() == model.num_delayed(), where
            assert d.purgatory.watched() == model.watched(), where
            assert d.purgatory.now_ms == model.now, where
            assert [op.completed for op in d.ops] == [
                op.state == "completed" for op in model.ops
            ], where
            earliest = model.earliest()
            nxt = d.purgatory.next_expiration_ms()
            if earliest is None:
                assert nxt is None, where
            else:
                assert nxt is not None and nxt <= earliest, where
                if earliest > model.now:
                    assert nxt > model.now, where


@pytest.mark.parametrize("ids", [("python",), ("rust", "python")], ids="+".join)
@settings(max_examples=250, deadline=None)
@example(start_ms=0, purge_interval=1, steps=[  # exactly purge_interval lingering: no purge
    ("add", ["k0"], 100, False), ("force", 0), ("advance", 5), ("add", ["k0"], 9, False),
    ("force", 1), ("advance", 1),
])
@example(start_ms=5, purge_interval=0, steps=[  # cancelled ops linger until purged
    ("add", ["k0", "k1"], 30, False), ("cancel", "k0"), ("satisfy", 0), ("check", "k1"),
    ("add", ["k1"], -3, False), ("deadline", "k1", 0), ("advance", 0), ("advance", 10**7),
])
@given(
    start_ms=st.sampled_from([0, 12_345, -1_000, 1_700_000_000_000]),
    purge_interval=st.sampled_from([0, 1, 2, 3, 1000]),
    steps=st.lists(actions, max_size=60),
)
def test_implementations_agree_with_model(
    ids: tuple[str, ...], start_ms: int, purge_interval: int, steps: list[tuple[Any, ...]]
) -> None:
    run([load_implementation(name) for name in ids], start_ms, purge_interval, steps)
