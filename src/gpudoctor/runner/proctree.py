"""The resident memory of a job's whole process tree, at a cost that does not grow with the host.

Finding a process's descendants the portable way (:mod:`psutil`) reads the parent of every
process on the machine: on a shared node with thousands of processes that alone would cost
the sampler several percent of a core every second. On Linux each thread's
``/proc/PID/task/TID/children`` lists the children it forked, so the tree is walked down
from its root, reading only its own members (their ``statm`` for the resident size). Where
those files do not exist (another system, a kernel built without them), :mod:`psutil` is used.
"""

from __future__ import annotations

import os

import psutil

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def process_tree_rss(pid: int) -> int | None:
    """Resident memory of ``pid`` and all its descendants, in bytes (``None`` once gone)."""
    if os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return _walk_proc(pid)
    return _with_psutil(pid)


def _walk_proc(root: int) -> int | None:
    total = 0
    seen: set[int] = set()
    pending = [root]
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        rss = _rss(pid)
        if rss is None:
            if pid == root:
                return None
            continue  # ended between being listed and being read
        total += rss
        pending.extend(_children(pid))
    return total


def _rss(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    """The pids forked by any thread of ``pid`` (a DataLoader may start workers anywhere)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as children:
                found.extend(int(child) for child in children.read().split())
        except (OSError, ValueError):
            continue
    return found


def _with_psutil(pid: int) -> int | None:
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return total
