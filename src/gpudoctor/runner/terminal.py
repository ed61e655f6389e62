"""Sharing gpudoctor's terminal with the job, so that it can read what is typed.

The job runs in its own process group (so that a signal reaches its whole tree). A process
group that is not the terminal's foreground one is stopped (SIGTTIN) when it reads the
terminal. So when gpudoctor's standard input is its controlling terminal and gpudoctor is in
the foreground, :class:`TerminalShare` makes the job's group the foreground group while the
job runs, and takes the terminal back at the end: the keyboard then reaches the job as it
would without gpudoctor (what is typed, and Ctrl-C, Ctrl-\\ and Ctrl-Z as signals to the
job's group).

When the job is stopped from the terminal (Ctrl-Z, or a read from the background), gpudoctor
takes the terminal back and stops its own group with the same signal, so that the shell sees
its job stopped; when the shell continues it (``fg``, ``bg``), gpudoctor continues the job,
handing it the terminal again when gpudoctor is in the foreground.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from types import FrameType

_TERMINAL_STOPS = frozenset({signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU})
_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


def _foreground_group(fd: int) -> int | None:
    """The foreground process group of the terminal ``fd``, if it is our controlling one."""
    try:
        return os.tcgetpgrp(fd) if os.isatty(fd) else None
    except OSError:  # not our controlling terminal
        return None


class TerminalShare:
    """Hands the terminal on ``fd`` to the job's process group while the job runs."""

    def __init__(self, fd: int = 0) -> None:
        """Share the terminal on ``fd`` (standard input) when it is ours and we lead it."""
        self.fd = fd
        self.own_group = os.getpgrp()
        self.active = _foreground_group(fd) == self.own_group
        self._given: int | None = None  # the group we made the foreground one
        self._previous_ttou: _Handler = None

    def give(self, group: int) -> None:
        """Make ``group`` the terminal's foreground group (no-op when not sharing).

        The group is then continued: a read of the terminal it made before it was given the
        terminal stopped it (SIGTTIN), and SIGCONT also discards such a stop still pending.
        """
        if not self.active:
            return
        if self._previous_ttou is None:
            # Taking the terminal back from the background would stop us without this; and
            # our own writes to the terminal stay allowed under `stty tostop`.
            self._previous_ttou = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        with contextlib.suppress(OSError):
            os.tcsetpgrp(self.fd, group)
            self._given = group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGCONT)

    def take_back(self) -> None:
        """Make gpudoctor's group the foreground one again, if the job's group still is.

        (After ``bg`` the shell has the terminal: it is left to the shell.)
        """
        current = _foreground_group(self.fd)
        # The job's group may be gone: the terminal then names a group that no longer exists.
        if self._given is not None and current in (self._given, *_gone(current)):
            with contextlib.suppress(OSError):
                os.tcsetpgrp(self.fd, self.own_group)
        self._given = None

    def close(self) -> None:
        """Take the terminal back for good and restore the SIGTTOU handler."""
        self.take_back()
        if self._previous_ttou is not None:
            signal.signal(signal.SIGTTOU, self._previous_ttou)
            self._previous_ttou = None

    def follow_stop(self, group: int, number: int) -> None:
        """The job's group was stopped by ``number``: stop like it, then continue it.

        Only the terminal's stop signals are followed (a SIGSTOP sent to the job by someone
        else is theirs to undo). Stopping returns when gpudoctor is continued; the job is
        then given the terminal if gpudoctor has it, and continued.
        """
        if number not in _TERMINAL_STOPS:
            return
        self.take_back()
        os.killpg(self.own_group, number)  # returns once the shell continues us
        if _foreground_group(self.fd) == self.own_group:  # continued in the foreground
            self.active = True
            self.give(group)
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGCONT)


def _gone(group: int | None) -> tuple[int, ...]:
    """``(group,)`` when no process is left in it, else ``()``."""
    if group is None:
        return ()
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return (group,)
    except PermissionError:
        pass
    return ()


def stop_signal(pid: int) -> int | None:
    """The signal that stopped child ``pid`` since the last call, if it was stopped.

    Never reaps the child (exits are left to :mod:`subprocess`).
    """
    try:
        result = os.waitid(os.P_PID, pid, os.WSTOPPED | os.WNOHANG)
    except (AttributeError, ChildProcessError, OSError):
        return None
    if result is None or result.si_code != os.CLD_STOPPED:
        return None
    return result.si_status
