"""Forwarding the signals that ask a job to stop: Ctrl-C, SIGTERM and SIGHUP.

While the job runs, each of these received by gpudoctor is sent on to the job's process
group and gpudoctor keeps running, to copy the job's last output and report how it ended. A
second Ctrl-C kills the group (SIGKILL), for a job that does not stop when asked.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Forwarder:
    """Sends the forwarded signals to a process group; remembers what it sent."""

    def __init__(self, send: Callable[[int], None]) -> None:
        """``send(signal_number)`` delivers a signal to the job's group."""
        self._send = send
        self.interrupts = 0
        self.received: list[int] = []

    def handle(self, number: int, _frame: FrameType | None = None) -> None:
        """The signal handler: forward, and kill on the second Ctrl-C."""
        self.received.append(number)
        if number == signal.SIGINT:
            self.interrupts += 1
            if self.interrupts > 1:
                self._send(signal.SIGKILL)
                return
        self._send(number)


@contextlib.contextmanager
def forwarding(send: Callable[[int], None]) -> Iterator[Forwarder]:
    """Forward :data:`FORWARDED` signals with ``send`` inside the block (main thread only),
    restoring the previous handlers after it."""
    forwarder = Forwarder(send)
    previous = {number: signal.signal(number, forwarder.handle) for number in FORWARDED}
    try:
        yield forwarder
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
