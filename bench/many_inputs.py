"""Many inputs: ``gpudoctor explain`` of a directory of rank logs, by number of ranks.

Usage: ``python bench/many_inputs.py [--ranks 64 256 1024] [--mb 1]``. Writes, for the largest
number of ranks, one log per rank of about ``--mb`` MB (training lines; rank 3 ends in a CUDA
out-of-memory error, every other rank in an NCCL watchdog timeout), then times ``explain``
of the first N of them for each N, in the same run:

* on every CPU this process may use (several logs are scanned in parallel processes);
* pinned to one CPU with ``taskset -c 0`` (the serial scanner: the baseline), when taskset
  exists;

and prints seconds, seconds per rank, MB/s and the peak RSS of each. Linear growth means the
seconds per rank stay about the same as N grows; flat memory means the peak RSS does.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from _common import (
    gpudoctor_command,
    have,
    measured_source,
    peak_rss_of,
    run_timed,
    write_training_log,
)

BODIES = 8
"""Distinct generated logs, copied round the ranks (writing 1,024 distinct ones takes long)."""

OOM_RANK = 3

_OOM_TAIL = (
    "[rank{rank}]:Traceback (most recent call last):\n"
    '[rank{rank}]:  File "/srv/job/train.py", line 140, in <module>\n'
    "[rank{rank}]:    loss.backward()\n"
    "[rank{rank}]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU "
    "{rank} has a total capacity of 79.15 GiB of which 610.00 MiB is free. Including non-PyTorch "
    "memory, this process has 78.53 GiB memory in use.\n"
)
_TIMEOUT_TAIL = (
    "[rank{rank}]:[E1126 10:14:{second:02d}.000000 {pid} ProcessGroupNCCL.cpp:632] [Rank {rank}] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5120, OpType=ALLREDUCE, "
    "NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600071 milliseconds before "
    "timing out.\n"
)


def write_ranks(folder: Path, ranks: int, mb: float) -> int:
    """One log per rank in ``folder``; returns their total size in bytes."""
    bodies = []
    for seed in range(BODIES):
        body = folder / f".body{seed}"
        write_training_log(body, int(mb * 1_000_000), seed=seed, tail="")
        bodies.append(body.read_bytes())
        body.unlink()
    total = 0
    for rank in range(ranks):
        tail = _OOM_TAIL if rank == OOM_RANK else _TIMEOUT_TAIL
        text = tail.format(rank=rank, second=rank % 60, pid=4000 + rank)
        data = bodies[rank % BODIES] + text.encode()
        (folder / f"rank{rank:04d}.log").write_bytes(data)
        total += len(data)
    return total


def main() -> None:
    """Write the logs, time explain for each number of ranks, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--mb", type=float, default=1.0, help="size of each rank log in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        every = Path(tmp) / "all"
        every.mkdir()
        write_ranks(every, max(args.ranks), args.mb)
        logs = sorted(every.glob("rank*.log"))
        pinned = have("taskset")
        print(f"gpudoctor from {measured_source()}")
        print(f"{'ranks':>6} {'MB':>7} {'all CPUs':>18} {'one CPU':>18} {'peak RSS':>9}")
        for ranks in sorted(args.ranks):
            folder = Path(tmp) / f"n{ranks}"
            folder.mkdir()
            for log in logs[:ranks]:
                shutil.copyfile(log, folder / log.name)
            mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
            command = [*gpudoctor_command(), "explain", "--format", "json", str(folder)]
            run_timed(command)  # warm the file-system and rule caches
            start = time.perf_counter()
            run_timed(command)
            wall = time.perf_counter() - start
            one = run_timed(["taskset", "-c", "0", *command])[0] if pinned else float("nan")
            rss = peak_rss_of(command) / 2**20
            print(f"{ranks:>6} {mb:>7.0f} {wall:>6.2f} s {wall / ranks * 1000:>5.1f} ms/rank"
                  f" {one:>6.2f} s {one / ranks * 1000:>5.1f} ms/rank {rss:>6.0f} MiB")  # fmt: skip
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
