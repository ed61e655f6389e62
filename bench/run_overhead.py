"""Cost of ``gpudoctor run``: a child printing 100 MB, bare and wrapped; the cost while idle.

Usage: ``python bench/run_overhead.py [--megabytes 100] [--repeat 5] [--also SRC]``
(``--also``: time too the ``gpudoctor run`` of another source tree, e.g. an older commit's
``src`` from ``git archive``, through ``PYTHONPATH``). Everything is
measured in the same run, the variants in turns (the machine may be shared: medians of the
repeats, and CPU seconds, which vary less than wall time):

* the child, a Python loop printing 100 MB of 89-byte lines as a chatty job would, run

  1. bare with its output to /dev/null: the floor, which no wrapper that sees the output
     can reach: writing to /dev/null copies nothing, while anything that reads a job's
     output (a wrapper, ``| tee``, a log collector) gets it through a pipe, and a pipe costs
     the *writer* a copy and a page for every 4 KiB it writes;
  2. bare with its output to a pipe drained by a minimal reader (a second Python process
     that enlarges the pipe to 1 MiB as gpudoctor does, reads it whole, pauses 2 ms after
     a read that found it less than half full, and throws the data away): **the bare
     job**, the fair baseline: the cheapest way to see a job's output, so what remains
     above it is gpudoctor's own cost (target <= 10 %);
  3. bare with its output through ``| cat``: a plain shell pipeline, for reference;
  4. under ``gpudoctor run --interval 1``, output to /dev/null (gpudoctor's own start,
     sampler and exit included);

  with the overhead of 4 over 2 (and over 1 and 3); the fixed cost of wrapping a job that
  does nothing (``-- python -c pass``) is shown apart;
* the child printing 20 MB to a terminal (a pseudo-terminal drained by a thread here), bare
  and under ``gpudoctor run`` (which then gives the job a pseudo-terminal of its own and
  copies from it: a second terminal layer, read a few kilobytes at a time);
* gpudoctor's own CPU while the job prints nothing (a child sleeping 5 s, ``run_job`` in
  this process with the ``healthy-8xh100`` scenario's 8 GPUs sampled every second): the
  sampler and the looks at the job's pipes, as a share of one core (target < 1 %);
* the sampler's CPU time per sample, with ``time.thread_time`` over 20 samples (8 GPUs,
  the tree of a sleeping Python process, host memory), as a share of one core at 1 s
  intervals; then again with 1,000 idle processes added to the host (a shared node), and,
  for comparison, with the tree found through psutil (which reads every process on the
  host) as before.

Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import psutil

from _common import gpudoctor_command

CHILD = (
    "line = 'x' * 60\n"
    "for step in range({lines}):\n"
    "    print(f'step {{step:>10}} loss 0.1234 {{line}}')\n"
)
MINIMAL_READER = (
    "import fcntl, os, time\n"
    "size = fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 1 << 20)\n"
    "while True:\n"
    "    data = os.read(0, size)\n"
    "    if not data:\n"
    "        break\n"
    "    if len(data) < size // 2:\n"
    "        time.sleep(0.002)\n"
)
"""Reads standard input and throws it away: the cheapest way to see a job's output."""

CROWD = 1000
"""Idle processes added to the host to show what the sampler's cost depends on."""
Measure = tuple[float, float]  # (wall seconds, CPU seconds of every process started)


def _measured(run: Callable[[], None]) -> Measure:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def _to_devnull(command: list[str], env: dict[str, str] | None = None) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env
        )

    return run


def _piped(command: list[str], reader: list[str]) -> Callable[[], None]:
    """``command | reader > /dev/null``."""

    def run() -> None:
        with open(os.devnull, "wb") as sink:
            child = subprocess.Popen(command, stdout=subprocess.PIPE)
            drain = subprocess.Popen(reader, stdin=child.stdout, stdout=sink)
            assert child.stdout is not None
            child.stdout.close()
            child.wait()
            drain.wait()

    return run


def _in_terminal(command: list[str]) -> Callable[[], None]:
    """``command`` with its output on a new pseudo-terminal, drained as a terminal would."""

    def run() -> None:
        master, slave = pty.openpty()
        drain = threading.Thread(target=_drain, args=(master,))
        drain.start()
        try:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        finally:
            os.close(slave)
            drain.join()
            os.close(master)

    return run


def _drain(fd: int) -> None:
    with contextlib.suppress(OSError):  # EIO: the terminal's other end is closed
        while os.read(fd, 65536):
            pass


def terminal_overhead(megabytes: int, repeat: int) -> dict[str, list[Measure]]:
    """The child printing to a terminal, bare and under ``gpudoctor run``, in turns."""
    child = [sys.executable, "-c", CHILD.format(lines=megabytes * 1_000_000 // 89)]
    variants = {
        "bare, to a terminal": _in_terminal(child),
        "gpudoctor run, to it": _in_terminal([*gpudoctor_command(), "run", "--", *child]),
    }
    measures: dict[str, list[Measure]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            measures[name].append(_measured(run))
    return measures


def output_overhead(megabytes: int, repeat: int, also: str | None) -> dict[str, list[Measure]]:
    """Each variant's (wall, CPU) measures, the variants run in turns ``repeat`` times."""
    child = [sys.executable, "-c", CHILD.format(lines=megabytes * 1_000_000 // 89)]
    wrapped = [*gpudoctor_command(), "run", "--interval", "1", "--", *child]
    variants = {
        "bare > /dev/null": _to_devnull(child),
        "bare | minimal reader": _piped(child, [sys.executable, "-c", MINIMAL_READER]),
        "bare | cat": _piped(child, ["cat"]),
        "gpudoctor run": _to_devnull(wrapped),
    }
    if also:
        env = {**os.environ, "PYTHONPATH": also}
        variants["gpudoctor run (--also)"] = _to_devnull(wrapped, env)
    measures: dict[str, list[Measure]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            measures[name].append(_measured(run))
    return measures


def idle_cost(seconds: float = 5.0) -> tuple[float, int]:
    """(share of one core gpudoctor uses while its job prints nothing, samples taken)."""
    from gpudoctor.runner.job import JobSettings, run_job

    child = [sys.executable, "-c", f"import time; time.sleep({seconds})"]
    env = {**os.environ, "GPUDOCTOR_FAKE_NVML": "healthy-8xh100"}
    with open(os.devnull, "wb") as sink:
        quick = [sys.executable, "-c", "pass"]  # first: imports and the scenario's loading
        run_job(quick, JobSettings(interval=1.0), env=env, out_fds=(sink.fileno(),) * 2)
        before = time.process_time()
        outcome = run_job(
            child, JobSettings(interval=1.0), env=env, out_fds=(sink.fileno(), sink.fileno())
        )
        cpu = time.process_time() - before
    ended = outcome.exit
    return cpu / (ended.ended_at - ended.started_at), outcome.timeline.count


def sampler_cost(
    pid: int, samples: int = 20, tree_rss: Callable[[int], int | None] | None = None
) -> float:
    """CPU seconds of one sample (8 scenario GPUs, the tree of ``pid``, host memory)."""
    from gpudoctor.runner.sampler import Sampler, open_gpu_probe

    probe, reason = open_gpu_probe({"GPUDOCTOR_FAKE_NVML": "healthy-8xh100"})
    if probe is None:
        raise SystemExit(f"no probe: {reason}")
    if tree_rss is None:
        sampler = Sampler(pid, 1.0, probe)
    else:
        sampler = Sampler(pid, 1.0, probe, tree_rss=tree_rss)
    sampler.sample_once()  # first call imports and initialises
    start = time.thread_time()
    for _ in range(samples):
        sampler.sample_once()
    return (time.thread_time() - start) / samples


@contextlib.contextmanager
def crowd(count: int) -> Iterator[None]:
    """``count`` more idle processes on the host (a shared node's) while inside."""
    idle = [
        subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for process in idle:
            process.kill()
        for process in idle:
            process.wait()


def _median(values: list[Measure], index: int) -> float:
    return statistics.median(v[index] for v in values)


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--terminal-megabytes", type=int, default=20)
    parser.add_argument("--also", metavar="SRC", help="another source tree to time too")
    args = parser.parse_args()
    measures = output_overhead(args.megabytes, args.repeat, args.also)
    print(
        f"child printing {args.megabytes} MB, median of {args.repeat} (wall, CPU of all; "
        "the fastest round's wall, which other work on the machine disturbs least):"
    )
    for name, values in measures.items():
        fastest = min(v[0] for v in values)
        print(
            f"  {name:<24} {_median(values, 0):7.3f} s  CPU {_median(values, 1):6.3f} s  "
            f"fastest {fastest:7.3f} s"
        )
    for name, values in measures.items():
        if not name.startswith("gpudoctor run"):
            continue
        print(f"{name} against:")
        for base, base_values in measures.items():
            if base.startswith("bare"):
                wall = 100 * (_median(values, 0) / _median(base_values, 0) - 1)
                cpu = 100 * (_median(values, 1) / _median(base_values, 1) - 1)
                fastest = 100 * (min(v[0] for v in values) / min(v[0] for v in base_values) - 1)
                print(
                    f"  {base:<24} {wall:+6.1f} % wall  {cpu:+6.1f} % CPU  "
                    f"{fastest:+6.1f} % fastest"
                )
    print("(the bare job: bare | minimal reader; target <= +10 % wall over it)")
    if args.also:
        print(f"(--also: {args.also})")
    empty = [sys.executable, "-c", "pass"]
    start_bare = statistics.median(_measured(_to_devnull(empty))[0] for _ in range(args.repeat))
    start_run = statistics.median(
        _measured(_to_devnull([*gpudoctor_command(), "run", "--", *empty]))[0]
        for _ in range(args.repeat)
    )
    print(f"fixed cost: python -c pass {start_bare:.3f} s, under gpudoctor run {start_run:.3f} s")
    terminal = terminal_overhead(args.terminal_megabytes, args.repeat)
    print(f"child printing {args.terminal_megabytes} MB to a terminal, median of {args.repeat}:")
    for name, values in terminal.items():
        print(f"  {name:<24} {_median(values, 0):7.3f} s  CPU {_median(values, 1):6.3f} s")
    bare, wrapped = terminal.values()
    print(f"  gpudoctor run: {100 * (_median(wrapped, 0) / _median(bare, 0) - 1):+.1f} % wall")
    share, count = idle_cost()
    print(
        f"idle: gpudoctor uses {100 * share:.2f} % of one core while its job prints nothing "
        f"({count} samples of 8 GPUs at 1 s intervals, fake NVML)"
    )
    from gpudoctor.runner.proctree import _with_psutil

    # The job: a Python process (the crowd below must not be part of its tree).
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        processes = len(psutil.pids())
        per_sample = sampler_cost(job.pid)
        with crowd(CROWD):
            crowded = sampler_cost(job.pid)
            by_psutil = sampler_cost(job.pid, tree_rss=_with_psutil)
    finally:
        job.kill()
        job.wait()
    print(
        f"sampler: {1000 * per_sample:.2f} ms CPU per sample (8 GPUs, fake NVML, {processes} "
        f"processes on the host) = {100 * per_sample:.2f} % of one core at 1 s intervals"
    )
    print(
        f"  with {CROWD} more idle processes: {1000 * crowded:.2f} ms = {100 * crowded:.2f} %; "
        f"finding the tree through psutil instead (as before): {1000 * by_psutil:.2f} ms = "
        f"{100 * by_psutil:.2f} %"
    )


if __name__ == "__main__":
    main()
