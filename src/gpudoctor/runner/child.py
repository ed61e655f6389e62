"""Starting the job and copying its output through, unchanged, while keeping the last lines.

The child runs in its own process group (so a signal can reach its whole tree) with the
standard input it was given. Each of its standard output and error is a pseudo-terminal when
gpudoctor's own is a terminal (progress bars and colours keep working), a pipe otherwise.
Every chunk read is written at once, byte for byte, to gpudoctor's matching descriptor, to
the ``--log`` file if any, and to a :class:`KeptOutput` that holds only the last lines.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import selectors
import signal
import struct
import subprocess
import sys
import termios
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from gpudoctor.runner.terminal import TerminalShare, stop_signal

CHUNK = 1 << 20
PIPE_SIZE = 1 << 20
"""Pipes are enlarged to this (Linux) so that a chatty job seldom waits for gpudoctor."""
BATCH_WAIT_S = 0.002
"""After copying a chunk, wait this long before the next read unless the chunk filled half
of its pipe. A chatty job then writes into the pipe without waking gpudoctor at each of its
writes, and its output is copied in large chunks (a few hundred a second at most), for at
most this much delay; a job writing faster than that is copied without waiting."""
IDLE_WAIT_S = 0.05
"""While the job writes nothing, its pipes are looked at this often at least."""
POLL_EVERY_S = 0.1
MAX_KEPT_BYTES = 16 * 1024 * 1024
"""However many lines are asked for, the kept output never holds more than this."""
TRIM_FROM = 1 << 20
"""The kept output is trimmed to the lines asked for once it holds this much (or more)."""
MAX_PARTIAL = 65536
"""A line without its newline yet (a progress bar) is kept to its last this many bytes."""
DRAIN_SECONDS = 0.5
"""After the child exits, how long output still open elsewhere (a grandchild) is read."""
LEFTOVER_GRACE = 2.0
"""How long the child's leftover group members get between SIGTERM and SIGKILL."""


# Its own process group: a signal can then reach the job's whole tree at once.
_NEW_GROUP: dict[str, Any] = (
    {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
)


@dataclass(slots=True)
class _Chunk:
    """One read of one stream, as it came; its newlines counted only when needed."""

    stream: int
    data: bytes
    newlines: int | None = None


class KeptOutput:
    """The last ``keep_lines`` lines of both streams, in arrival order, bounded in bytes.

    Feeding costs nothing per line however chatty the child: a chunk is stored as it was
    read in a deque. Only once the deque holds :data:`TRIM_FROM` bytes (or four times what
    the last trimming kept) are its newest chunks' newlines counted, enough for the lines
    asked for, and the older chunks dropped uncounted. Lines are split out only when
    :meth:`text` is called; each stream's lines are put back together separately there, so
    the two streams never mix within a line. A stream's output that has no newline yet (a
    progress bar redrawn with ``\\r``) waits in its own buffer, kept to its last
    :data:`MAX_PARTIAL` bytes.
    """

    def __init__(self, keep_lines: int, max_bytes: int = MAX_KEPT_BYTES) -> None:
        """Keep at most ``keep_lines`` lines and about ``max_bytes`` bytes."""
        self.keep_lines = keep_lines
        self.max_bytes = max_bytes
        self._chunks: deque[_Chunk] = deque()
        self._bytes = 0
        self._trim_at = min(max_bytes, TRIM_FROM)
        self._partial: dict[int, bytes] = {}
        self._lead: dict[int, bytes] = {}
        """Per stream, the start of its first kept line when the chunk holding that start was
        dropped (at most :data:`MAX_PARTIAL` bytes: the end of a longer one)."""
        self.bytes_seen = 0

    def feed(self, stream: int, data: bytes) -> None:
        """Add what ``stream`` (1 or 2) wrote."""
        self.bytes_seen += len(data)
        if b"\n" not in data:
            self._partial[stream] = (self._partial.get(stream, b"") + data)[-MAX_PARTIAL:]
            return
        pending = self._partial.pop(stream, None)
        if pending:
            self._chunks.append(_Chunk(stream, pending, 0))
            self._bytes += len(pending)
        self._chunks.append(_Chunk(stream, data))
        self._bytes += len(data)
        if self._bytes > self._trim_at:
            self._trim()

    def _trim(self) -> None:
        """Drop the chunks older than the lines asked for (or than ``max_bytes``)."""
        # A line more than asked is kept per stream: the first one may have lost its start.
        enough = self.keep_lines + 2
        lines = size = keep = 0
        for chunk in reversed(self._chunks):
            if lines >= enough or (keep and size + len(chunk.data) > self.max_bytes):
                break
            if chunk.newlines is None:
                chunk.newlines = chunk.data.count(b"\n")
            lines += chunk.newlines
            size += len(chunk.data)
            keep += 1
        while len(self._chunks) > keep:
            first = self._chunks.popleft()
            self._bytes -= len(first.data)
            cut = first.data.rfind(b"\n") + 1
            start = first.data[cut:] if cut else self._lead.get(first.stream, b"") + first.data
            self._lead[first.stream] = start[-MAX_PARTIAL:]
        self._trim_at = min(self.max_bytes, max(TRIM_FROM, 4 * self._bytes))

    def text(self) -> str:
        """The kept lines (and any unfinished ones) as text; invalid UTF-8 replaced."""
        carry = {stream: start for stream, start in self._lead.items() if start}
        pieces: list[bytes] = []
        for chunk in self._chunks:
            stream, data = chunk.stream, chunk.data
            end = data.rfind(b"\n") + 1
            if not end:
                carry[stream] = carry.get(stream, b"") + data
                continue
            pieces.append(carry.pop(stream, b"") + data[:end])
            if end < len(data):
                carry[stream] = data[end:]
        for stream in sorted(set(carry) | set(self._partial)):
            tail = (carry.get(stream, b"") + self._partial.get(stream, b""))[-MAX_PARTIAL:]
            if tail:
                pieces.append(tail + b"\n")
        lines = b"".join(pieces).decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(lines[-self.keep_lines :])

    @property
    def held_bytes(self) -> int:
        """How many bytes are held now (for the bounded-memory test)."""
        held = self._bytes + sum(len(p) for p in self._partial.values())
        return held + sum(len(start) for start in self._lead.values())


@dataclass(frozen=True)
class ChildExit:
    """How the child ended: ``returncode`` as :mod:`subprocess` gives it (``-N`` for signal N)."""

    returncode: int
    started_at: float
    ended_at: float

    @property
    def signal(self) -> int | None:
        """The signal that ended it, if one did."""
        return -self.returncode if self.returncode < 0 else None

    @property
    def exit_code(self) -> int:
        """The status a shell would report: the code, or 128 + N for signal N."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode


def _is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _copy_window_size(source_fd: int, target_fd: int, known: bytes | None = None) -> bytes | None:
    """Give ``target_fd`` the window size of ``source_fd`` unless it is ``known``; the size."""
    try:
        size = fcntl.ioctl(source_fd, termios.TIOCGWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
        if size != known:
            fcntl.ioctl(target_fd, termios.TIOCSWINSZ, size)
    except OSError:
        return known
    return size


def _output_ends(fd: int, use_pty: bool) -> tuple[int, int, int]:
    """(the end gpudoctor reads, the end the child writes, the size of a read that should
    be followed by the next one at once) for one of its streams."""
    if use_pty:
        import pty

        master, slave = pty.openpty()
        _copy_window_size(fd, slave)
        # No output processing (\n to \r\n): the bytes reach gpudoctor's terminal, which
        # does its own, as the job wrote them, and the log file gets them unchanged.
        with contextlib.suppress(termios.error):
            attributes = termios.tcgetattr(slave)
            attributes[1] &= ~termios.OPOST
            termios.tcsetattr(slave, termios.TCSANOW, attributes)
        # Waited on with select (see Child.pump): its reads never count as a full buffer.
        return master, slave, 1 << 30
    read_end, write_end = os.pipe()
    size = 65536  # the Linux default
    with contextlib.suppress(OSError, AttributeError):  # F_SETPIPE_SZ: Linux only
        size = fcntl.fcntl(read_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    return read_end, write_end, max(1, size // 2)


class Child:
    """A running job: its process, its output ends and what is kept of its output."""

    def __init__(
        self,
        argv: Sequence[str],
        kept: KeptOutput,
        log: BinaryIO | None = None,
        out_fds: tuple[int, int] = (1, 2),
        terminal: bool | None = None,
        stdin_fd: int = 0,
    ) -> None:
        """Start ``argv`` in a new process group.

        Args:
            argv: the command and its arguments.
            kept: where the last lines go.
            log: a binary file that receives every byte of output, if any.
            out_fds: gpudoctor's own standard output and error, where output is copied.
            terminal: use pseudo-terminals (default: for each stream whose target is one).
            stdin_fd: gpudoctor's standard input, which the child inherits: when it is the
                terminal gpudoctor leads, the child's group leads it while it runs
                (:class:`~gpudoctor.runner.terminal.TerminalShare`).

        Raises:
            OSError: the command cannot be started (not found, not executable).
        """
        self.kept = kept
        self.log = log
        self.out_fds = out_fds
        self._readers: dict[int, int] = {}  # our end → stream number (1 or 2)
        self._full: dict[int, int] = {}  # our end → a read this large: read again at once
        self._terminals: set[int] = set()  # our ends that are pseudo-terminals
        self._sizes: dict[int, bytes | None] = {}  # their window sizes, as last set
        child_ends = []
        try:
            for number, fd in zip((1, 2), out_fds, strict=True):
                use_pty = _is_terminal(fd) if terminal is None else terminal
                ours, theirs, full = _output_ends(fd, use_pty)
                self._readers[ours] = number
                self._full[ours] = full
                if use_pty:
                    self._terminals.add(ours)
                child_ends.append(theirs)
            self.started_at = time.time()
            self.process = subprocess.Popen(
                list(argv), stdout=child_ends[0], stderr=child_ends[1], **_NEW_GROUP
            )
            self.terminal = TerminalShare(stdin_fd)
            self.terminal.give(self.process.pid)
        except BaseException:
            for fd in (*self._readers, *child_ends):
                os.close(fd)
            raise
        finally:
            for fd in child_ends:
                with contextlib.suppress(OSError):
                    os.close(fd)

    @property
    def pid(self) -> int:
        """The child's pid, which is also its process group id."""
        return self.process.pid

    def signal_group(self, number: int) -> None:
        """Send signal ``number`` to the child's process group (no error once it is gone)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, number)

    def pump(self, on_idle: Callable[[], None] | None = None) -> ChildExit:
        """Copy output through until the child has exited and its output is drained.

        Pipes are never polled: once a pipe has been polled, Linux wakes its poller at every
        write into it, which made a chatty writer about a quarter slower.
        They are read without blocking after short sleeps instead: :data:`BATCH_WAIT_S`
        after a copy, doubling up to :data:`IDLE_WAIT_S` while nothing comes, none while
        the job writes faster than that. Pseudo-terminals (no such cost) are waited on with
        ``select``, so that what is typed is echoed at once.

        Leftover members of the child's process group are then asked to stop (SIGTERM,
        then SIGKILL after :data:`LEFTOVER_GRACE`), and every fd opened here is closed.
        """
        selector = selectors.DefaultSelector()
        reading = sorted(self._readers)
        for fd in reading:
            os.set_blocking(fd, False)
            if fd in self._terminals:
                selector.register(fd, selectors.EVENT_READ)
        exit_fd = _exit_fd(self.pid)  # readable once the child has exited
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        ready: set[int] = set()
        drain_until: float | None = None
        next_poll = time.monotonic() + POLL_EVERY_S
        wait = BATCH_WAIT_S
        try:
            while reading:
                copied = 0
                behind = False
                for fd in list(reading):
                    if fd in self._terminals and fd not in ready:
                        continue  # select said it has nothing
                    size = self._copy(fd)
                    if size < 0:
                        reading.remove(fd)
                        if fd in self._terminals:
                            selector.unregister(fd)
                    copied += max(size, 0)
                    behind = behind or size >= self._full[fd]
                if on_idle is not None:
                    on_idle()
                now = time.monotonic()
                if drain_until is None and (exit_fd in ready or now >= next_poll):
                    next_poll = now + POLL_EVERY_S
                    self._follow_window_sizes()
                    stopped_by = stop_signal(self.pid)
                    if stopped_by is not None:
                        self.terminal.follow_stop(self.pid, stopped_by)
                    if self.process.poll() is not None:
                        drain_until = now + DRAIN_SECONDS
                        if exit_fd is not None:
                            selector.unregister(exit_fd)
                            _close(exit_fd)
                            exit_fd = None
                elif drain_until is not None and now >= drain_until:
                    break
                if behind or not reading:
                    ready = set()
                    continue
                wait = BATCH_WAIT_S if copied else min(2 * wait, IDLE_WAIT_S)
                if drain_until is not None:
                    wait = min(wait, max(0.0, drain_until - now))
                if selector.get_map():
                    ready = {key.fd for key, _mask in selector.select(wait)}
                else:
                    time.sleep(wait)
            returncode = self.process.wait()
            ended_at = time.time()
        finally:
            self.terminal.close()
            selector.close()
            if exit_fd is not None:
                _close(exit_fd)
            self._stop_leftovers()
            for fd in self._readers:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return ChildExit(returncode, self.started_at, ended_at)

    def _follow_window_sizes(self) -> None:
        """Resize the job's pseudo-terminals when gpudoctor's terminal was resized.

        The job may not be told (the resize signal goes to the terminal's foreground group)
        and gpudoctor may not be either, so the sizes are compared at each poll.
        """
        for ours in self._terminals:
            target = self.out_fds[self._readers[ours] - 1]
            self._sizes[ours] = _copy_window_size(target, ours, self._sizes.get(ours))

    def _copy(self, fd: int) -> int:
        """Copy what is ready on ``fd``; how many bytes, or -1 at its end.

        A pseudo-terminal hands out a few kilobytes a read (the job writes a line at a time
        to a terminal): it is read until it has nothing more, and what was read is copied
        at once, so that the terminal gpudoctor writes to gets a few large writes.
        """
        pieces: list[bytes] = []
        size = 0
        ended = False
        while size < CHUNK:
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno != errno.EIO:  # EIO: a pseudo-terminal whose other end is closed
                    raise
                data = b""
            if not data:
                ended = True
                break
            pieces.append(data)
            size += len(data)
            if fd not in self._terminals:
                break
        if pieces:
            data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            stream = self._readers[fd]
            _write_all(self.out_fds[stream - 1], data)
            if self.log is not None:
                self.log.write(data)
            self.kept.feed(stream, data)
        return -1 if ended else size

    def _stop_leftovers(self) -> None:
        if not _group_alive(self.pid):
            return
        self.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + LEFTOVER_GRACE
        while time.monotonic() < deadline and _group_alive(self.pid):
            time.sleep(0.05)
        self.signal_group(signal.SIGKILL)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), else ``None``."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte to ``fd``, waiting when it is non-blocking and full.

    A reader that went away (EPIPE) stops the copy to that descriptor only: the job itself
    keeps running, as it would have with its output sent nowhere.
    """
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            time.sleep(0.001)
            continue
        except BrokenPipeError:
            return
        view = view[written:]
