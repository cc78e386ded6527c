"""Kafka's network threads, as one: answers are written to client sockets off the event loop.

Writing an answer to a socket is a system call that also wakes the client waiting for it; on
a small virtual machine it costs more than handling a heartbeat. Kafka does it on its network
threads (``SocketServer``'s processors) while its request handler threads go on; groupcoord's
one event loop hands each answer to :class:`NetworkThread` (:class:`groupcoord._native.Sender`,
a thread in Rust that needs no GIL), which copies it into a queue, and wakes the thread once per
turn of the loop. Each connection's answers are written in order, from a duplicate of its
descriptor, so that a descriptor the loop closes and the system reuses never receives an
answer meant for another connection (a connection holds two descriptors).

Handing an answer over costs the time it takes the thread to wake, which a client waiting for
that one answer notices (a rebalance is a chain of such waits). So the first
:data:`WRITES_PER_TURN` answers of a turn of the loop are written on the loop itself when
nothing of their connection is still queued; the thread writes the rest, which a turn answering
many connections at once (a heartbeat per member, a group's JoinGroup answers) has plenty of.

A connection whose answers pile up unwritten (past :data:`WRITE_HIGH_WATER`: a client that
does not read) is not served until the thread has written them down to
:data:`WRITE_LOW_WATER`, as asyncio's transports pause and resume writing: the thread tells
the loop through a socket pair the loop watches.

A connection whose transport has no socket (or whose descriptor cannot be duplicated: the
open files limit) writes through its transport as before.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from typing import Protocol

from groupcoord import _native

log = logging.getLogger(__name__)

WRITE_HIGH_WATER = 65_536
"""Bytes of answers queued for one connection above which it is not served until they are
written (asyncio's own transports pause at the same mark)."""
WRITE_LOW_WATER = 16_384
"""Queued bytes at or below which a paused connection is served again."""
WRITES_PER_TURN = 8
"""Answers of one turn of the loop written on the loop itself (the others by the thread)."""


class Writer(Protocol):
    """A connection as the network thread sees it."""

    def resume_writing(self) -> None: ...


class NetworkThread:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._notified, notify = socket.socketpair()
        self._notified.setblocking(False)
        self._sender = _native.Sender(notify.detach())
        loop.add_reader(self._notified.fileno(), self._on_written)
        self._turn_ends = False
        self._writes_left = WRITES_PER_TURN
        self._wake = False
        self._paused: dict[_native.Channel, Writer] = {}
        self._stopped = False

    def open(self, transport: asyncio.BaseTransport) -> _native.Channel | None:
        """A channel to ``transport``'s socket, or None to write through the transport."""
        sock = transport.get_extra_info("socket")
        if sock is None or self._stopped:
            return None
        try:
            fd = os.dup(sock.fileno())
        except OSError as error:
            log.warning("Answers to a connection are written on the event loop: %s", error)
            return None
        return self._sender.open(fd)

    def send(self, channel: _native.Channel, data: bytes | bytearray, writer: Writer) -> bool:
        """Write ``data`` on ``channel``: now, or queued for the thread, which is woken at the
        end of this turn. Returns False if the channel's unwritten answers passed
        :data:`WRITE_HIGH_WATER`: ``writer.resume_writing`` is called once they are down to
        :data:`WRITE_LOW_WATER`."""
        if not self._turn_ends:
            self._turn_ends = True
            self._loop.call_soon(self._end_turn)
        if self._writes_left:
            self._writes_left -= 1
            if channel.try_write(data):
                return True
        else:
            channel.send(data)
        self._wake = True
        if channel.queued <= WRITE_HIGH_WATER:
            return True
        self._paused[channel] = writer
        channel.notify_below(WRITE_LOW_WATER)
        return False

    def forget(self, channel: _native.Channel) -> None:
        """``channel`` is closed: its writer is not resumed."""
        self._paused.pop(channel, None)

    def _end_turn(self) -> None:
        self._turn_ends = False
        self._writes_left = WRITES_PER_TURN
        if self._wake:
            self._wake = False
            self._sender.wake()

    def _on_written(self) -> None:
        try:
            while self._notified.recv(4096):
                pass
        except BlockingIOError:
            pass
        for channel, writer in list(self._paused.items()):
            if channel.queued <= WRITE_LOW_WATER:
                del self._paused[channel]
                writer.resume_writing()
            else:  # notified just before the last write, which the socket took only in part
                channel.notify_below(WRITE_LOW_WATER)

    def stop(self) -> None:
        """Write what is queued (one try per socket), close the descriptors, stop the thread."""
        if self._stopped:
            return
        self._stopped = True
        self._loop.remove_reader(self._notified.fileno())
        self._sender.stop()
        self._notified.close()
        self._paused.clear()
