"""The live (psutil) process seam on real pids of the test machine."""

from __future__ import annotations

import os
import subprocess
import sys

from gpudoctor.snapshot.processes import inspect_process


def test_own_process_is_described() -> None:
    details = inspect_process(os.getpid())
    assert details.exists is True
    assert details.zombie is False
    assert details.cmdline is not None and details.cmdline[0]
    assert details.user


def test_finished_process_does_not_exist() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    details = inspect_process(child.pid)
    assert details.exists is False
    assert details.reason is not None and details.reason.startswith("NoSuchProcess")


def test_zombie_is_reported() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        details = inspect_process(child.pid)
        assert details.exists is True
        assert details.zombie is True
    finally:
        child.wait()
