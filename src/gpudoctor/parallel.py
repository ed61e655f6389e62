"""Running one function over several items in forked worker processes, in order.

Scanning is CPU-bound Python and RE2 work that holds the GIL, so several logs are scanned in
processes, not threads. Workers are forked (Linux), so that the function and the items (logs
that open files, a compiled rule book) are inherited rather than pickled; only results travel
back. Where forking is not safe or not available (another OS, other threads running, one
CPU), everything runs in this process, in order, with the same results.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

_task: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""The function and items of the map in progress, inherited by the forked workers."""


def usable_cpus() -> int:
    """How many CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def can_fork_workers() -> bool:
    """Whether work can go to forked processes here: Linux, several CPUs, no other thread
    (a thread holding a lock at the fork would leave the child stuck on it)."""
    return sys.platform == "linux" and usable_cpus() > 1 and threading.active_count() == 1


def map_in_processes(
    function: Callable[[_Item], _Result], items: Sequence[_Item], workers: int
) -> list[_Result]:
    """``[function(item) for item in items]``, computed by up to ``workers`` forked
    processes when :func:`can_fork_workers`, else in this process.

    A worker that dies (the kernel's OOM killer on the loaded node being diagnosed) does not
    hang the run: the items are then computed again in this process.
    """
    if workers < 2 or len(items) < 2 or not can_fork_workers():
        return [function(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _task
    _task = (function, items)
    try:
        context = multiprocessing.get_context("fork")
        # Workers are forked at the first submit, after _task is set: they inherit it.
        with ProcessPoolExecutor(min(workers, len(items)), mp_context=context) as pool:
            return list(pool.map(_run_one, range(len(items))))
    except BrokenProcessPool:
        return [function(item) for item in items]
    finally:
        _task = None


def _run_one(index: int) -> Any:
    assert _task is not None, "called outside map_in_processes"
    function, items = _task
    return function(items[index])


def contiguous_groups(sizes: Sequence[int], groups: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges cutting ``sizes`` into at most ``groups`` consecutive runs of
    about equal total size (every run holds at least one item)."""
    count = len(sizes)
    groups = max(1, min(groups, count))
    if not any(sizes):  # sizes unknown: as many items in each run
        sizes = [1] * count
    total = sum(sizes)
    bounds: list[tuple[int, int]] = []
    start = 0
    running = 0
    for index, size in enumerate(sizes):
        running += size
        left = groups - len(bounds) - 1  # runs still to make after this one
        items_after = count - index - 1
        full = running * groups >= total * (len(bounds) + 1)
        if left and (full or items_after == left) and index + 1 > start:
            bounds.append((start, index + 1))
            start = index + 1
    if start < count:
        bounds.append((start, count))
    return bounds
