"""``gpudoctor run`` in a terminal: the job reads what is typed and gets the keyboard's signals.

gpudoctor runs as the session leader of a pseudo-terminal made here (as under a shell, its
group leads the terminal); the test types on the terminal's other end and reads what appears
there. Before the job was given the terminal, a child reading a line was stopped (SIGTTIN) and
the run never ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Callable, Sequence
from pathlib import Path

PY = sys.executable


Answer = bytes | Callable[[int], None]  # typed, or done to the terminal (given its fd)


def _in_terminal(
    args: Sequence[str], typing: Sequence[tuple[bytes, Answer]], timeout: float = 20.0
) -> tuple[int | None, bytes]:
    """Run ``gpudoctor run ARGS`` on a new terminal; type each answer once its prompt shows.

    Returns gpudoctor's exit code (``None``: it did not end in time, then it is killed) and
    everything that appeared on the terminal.
    """
    env = {**os.environ, "GPUDOCTOR_FAKE_NVML": "healthy-8xh100", "NO_COLOR": "1"}
    pid, master = pty.fork()
    if pid == 0:  # the child: session leader, the terminal is its controlling one
        os.execve(PY, [PY, "-m", "gpudoctor", "run", "--interval", "0.2", *args], env)
    shown = b""
    pending = list(typing)
    code: int | None = None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.05)[0]:
                # OSError: every end of the terminal is closed, gpudoctor has ended
                with contextlib.suppress(OSError):
                    shown += os.read(master, 65536)
            if pending and pending[0][0] in shown:
                answer = pending.pop(0)[1]
                if callable(answer):
                    answer(master)
                else:
                    os.write(master, answer)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
    finally:
        if code is None:  # kill the job too: nothing may outlive a failed test
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{pid}/children") as kids:
                for child in kids.read().split():
                    os.killpg(int(child), signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(master)
    return code, shown


_ASKS = (
    "import sys\n"
    "print('your name?', flush=True)\n"
    "line = sys.stdin.readline()\n"
    "print('hello', line.strip().upper(), flush=True)\n"
)


def test_a_child_reads_a_line_typed_on_the_terminal() -> None:
    code, shown = _in_terminal(["--", PY, "-c", _ASKS], [(b"your name?", b"ada\n")])
    assert code == 0
    assert b"hello ADA" in shown


_COUNTS_SIGINT = (
    "import signal, sys, time\n"
    "got = []\n"
    "signal.signal(signal.SIGINT, lambda n, f: got.append(n))\n"
    "print('ready', flush=True)\n"
    "while not got:\n"
    "    time.sleep(0.01)\n"
    "time.sleep(0.5)\n"
    "print('SIGINTs:', len(got), flush=True)\n"
    "sys.exit(3)\n"
)


def test_ctrl_c_typed_on_the_terminal_reaches_the_child_once() -> None:
    code, shown = _in_terminal(["--", PY, "-c", _COUNTS_SIGINT], [(b"ready", b"\x03")])
    assert code == 3
    assert b"SIGINTs: 1" in shown


def test_output_through_the_terminal_is_not_translated_twice(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    code, shown = _in_terminal(
        ["--log", str(log), "--", PY, "-c", "print('one'); print('two')"], []
    )
    assert code == 0
    assert b"one\r\ntwo\r\n" in shown  # the terminal's own \n -> \r\n, once
    assert log.read_bytes() == b"one\ntwo\n"


def test_a_job_stopped_from_the_keyboard_is_not_left_stopped() -> None:
    # Ctrl-Z stops the job; gpudoctor follows with its own group, which the kernel does not
    # stop here (nothing in this session can continue it: an orphaned group), so it hands
    # the terminal back to the job at once and continues it.
    code, shown = _in_terminal(
        ["--", PY, "-c", _ASKS], [(b"your name?", b"\x1a"), (b"^Z", b"ada\n")]
    )
    assert code == 0
    assert b"hello ADA" in shown


_WAITS_FOR_WIDTH = (
    "import os, time\n"
    "print('ready', os.get_terminal_size(1).columns, flush=True)\n"
    "while os.get_terminal_size(1).columns != 123:\n"
    "    time.sleep(0.02)\n"
    "print('now', os.get_terminal_size(1).columns, 'columns', flush=True)\n"
)


def _resize(master: int) -> None:
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 123, 0, 0))


def test_the_job_sees_the_terminal_resized() -> None:
    code, shown = _in_terminal(["--", PY, "-c", _WAITS_FOR_WIDTH], [(b"ready", _resize)])
    assert code == 0
    assert b"now 123 columns" in shown
