"""Cost of ``gpudoctor run``: a child printing 100 MB, bare and wrapped; the sampler's CPU.

Usage: ``python bench/run_overhead.py [--megabytes 100] [--repeat 3]``. In the same run:

* the child (a Python loop printing 100 MB of 89-byte lines, as a chatty job would) run bare and
  through ``| cat`` (any capture of output goes through a pipe) and under ``gpudoctor run
  --interval 1``, in turns, output to /dev/null either way, the median of
  the repeats and the overhead of the wrapped run over the bare one (target <= 10 %); the
  wrapped run includes gpudoctor's own start, also shown alone (``-- python -c pass``);
* the sampler's CPU time per sample, measured with ``time.thread_time`` over 20 samples of
  this process's tree through the ``healthy-8xh100`` scenario's NVML (8 GPUs), as a share of
  one core at 1 s intervals (target < 1 %).

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from _common import gpudoctor_command

CHILD = (
    "line = 'x' * 60\n"
    "for step in range({lines}):\n"
    "    print(f'step {{step:>10}} loss 0.1234 {{line}}')\n"
)


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def _timed_through_cat(command: list[str]) -> float:
    """``command | cat > /dev/null``: the output goes through a pipe, as any capture's does."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(command, stdout=subprocess.PIPE)
        cat = subprocess.Popen(["cat"], stdin=child.stdout, stdout=sink)
        assert child.stdout is not None
        child.stdout.close()
        child.wait()
        cat.wait()
    return time.perf_counter() - start


def output_overhead(megabytes: int, repeat: int) -> tuple[float, float, float]:
    """Median seconds of the child bare, bare through ``| cat``, and under ``gpudoctor run``."""
    child = [sys.executable, "-c", CHILD.format(lines=megabytes * 1_000_000 // 89)]
    wrapped = [*gpudoctor_command(), "run", "--interval", "1", "--", *child]
    bare_times, piped_times, wrapped_times = [], [], []
    for _ in range(repeat):
        bare_times.append(_timed(child))
        piped_times.append(_timed_through_cat(child))
        wrapped_times.append(_timed(wrapped))
    return (
        statistics.median(bare_times),
        statistics.median(piped_times),
        statistics.median(wrapped_times),
    )


def sampler_cost(samples: int = 20) -> float:
    """CPU seconds of one sample (8 scenario GPUs, this process's tree, host memory)."""
    from gpudoctor.runner.sampler import Sampler, open_gpu_probe

    probe, reason = open_gpu_probe({"GPUDOCTOR_FAKE_NVML": "healthy-8xh100"})
    if probe is None:
        raise SystemExit(f"no probe: {reason}")
    sampler = Sampler(os.getpid(), 1.0, probe)
    sampler.sample_once()  # first call imports and initialises
    start = time.thread_time()
    for _ in range(samples):
        sampler.sample_once()
    return (time.thread_time() - start) / samples


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bare, piped, wrapped = output_overhead(args.megabytes, args.repeat)
    print(f"child printing {args.megabytes} MB, median of {args.repeat}:")
    print(f"  bare to /dev/null      {bare:7.3f} s")
    print(f"  bare | cat >/dev/null  {piped:7.3f} s")
    print(
        f"  gpudoctor run          {wrapped:7.3f} s   overhead {100 * (wrapped / bare - 1):+.1f} % "
        f"over bare, {100 * (wrapped / piped - 1):+.1f} % over | cat"
    )
    empty = [sys.executable, "-c", "pass"]
    start_bare = statistics.median(_timed(empty) for _ in range(args.repeat))
    start_run = statistics.median(
        _timed([*gpudoctor_command(), "run", "--", *empty]) for _ in range(args.repeat)
    )
    print(
        f"  (fixed cost: python -c pass {start_bare:.3f} s, under gpudoctor run {start_run:.3f} s)"
    )
    per_sample = sampler_cost()
    print(
        f"sampler: {1000 * per_sample:.2f} ms CPU per sample (8 GPUs, fake NVML) = "
        f"{100 * per_sample:.2f} % of one core at 1 s intervals"
    )


if __name__ == "__main__":
    main()
