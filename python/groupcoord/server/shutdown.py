"""The signals that stop ``groupcoord serve``: SIGTERM, SIGINT and SIGHUP, from its first
moments on.

The event loop handles them while the server runs (:func:`on_stop_signal`), but importing the
command line's other commands and the server's modules and starting the loop take a while,
and the default actions are wrong for a server meanwhile: SIGTERM and SIGHUP end the process
at once (killed, not exit 0), SIGINT raises KeyboardInterrupt wherever the import or the
start-up happens to be. So the command calls :func:`catch_stop_signals` first, which only
notes a signal; the loop then stops the server as soon as it can (before it starts, or once
its start has finished: nothing is left half-opened), with the same clean shutdown and exit
status as a signal while serving.

A signal that arrives before the command's first line runs (while the interpreter starts and
imports the ``groupcoord`` package and the command line, some 100 ms) still takes its default
action: no handler can be installed sooner. Nothing has been opened or written by then.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""SIGHUP too (a closed terminal, a session ending): its default ends the process at once,
without flushing the log; the JVM runs Kafka's shutdown hooks on it. Unless it is ignored,
as under nohup, which then keeps the server running."""

_received: list[int] = []


def catch_stop_signals() -> None:
    """Note the stop signals from now on (those not ignored), for :func:`on_stop_signal`."""
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _note)


def _note(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)


def on_stop_signal(loop: asyncio.AbstractEventLoop, stop: Callable[[], object]) -> None:
    """Call ``stop`` on the loop at a stop signal (not ignored); at once if one was noted
    since :func:`catch_stop_signals`."""
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            loop.add_signal_handler(signum, stop)
    if _received:
        _received.clear()
        stop()
