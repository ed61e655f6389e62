"""The resident memory of a process tree, read from /proc, against psutil's reading of each."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from gpudoctor.runner.proctree import process_tree_rss

# Starts two grandchildren from a second thread that stays alive (as a data loader's may: a
# thread's children move to another thread of its process only when it ends); prints them.
_PARENT = """
import subprocess, sys, threading, time
kids = []
started = threading.Event()
def start():
    for _ in range(2):
        kids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))
    started.set()
    time.sleep(30)
threading.Thread(target=start, daemon=True).start()
started.wait()
print(" ".join(str(k.pid) for k in kids), flush=True)
time.sleep(30)
"""


def test_the_tree_is_every_descendant_even_those_forked_by_another_thread() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        grandchildren = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(grandchildren) == 2
        time.sleep(0.3)  # let the grandchildren finish starting: their memory settles
        members = [parent.pid, *grandchildren]
        expected = sum(psutil.Process(pid).memory_info().rss for pid in members)
        assert process_tree_rss(parent.pid) == expected
        assert expected > 3 * 5_000_000  # three Python interpreters, not one
    finally:
        for process in psutil.Process(parent.pid).children(recursive=True):
            process.kill()
        parent.kill()
        parent.wait()


def test_a_process_that_is_gone_has_no_tree() -> None:
    finished = subprocess.Popen(["true"])
    finished.wait()
    assert process_tree_rss(finished.pid) is None
