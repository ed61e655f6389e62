"""Scanner throughput: ``gpudoctor explain`` on a large realistic log, next to grep.

Usage: ``python bench/throughput.py [--mb 200] [--baseline OLD/src]``. Generates a training
log of about the given size (ending in an out-of-memory crash), then times, in the same run:

* ``gpudoctor explain --format json LOG`` (the whole command: start, rule loading, scan, report);
* the scanner alone, in this process (reading, cleaning and matching, without start-up);
* ``LC_ALL=C grep -E -c -f PATTERNS LOG`` over the rule pack's patterns translated to ERE
  (the baseline);
* ``LC_ALL=C grep -E -c`` with :data:`FIXED_STRINGS`, 13 fixed failure signatures (the
  baseline of issue #12: what a user's own grep for errors costs);
* with ``--baseline OLD/src``, ``explain`` of another source tree on the same log;

and prints MB/s for both, their ratio, and gpudoctor's peak RSS for the full log and for a
tenth of it (flat memory means the two are close). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import gpudoctor_command, have, peak_rss_of, run_timed, write_training_log
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook, load_rulebook

_ERE_REWRITES = [
    (re.compile(r"\(\?P<\w+>"), "("),
    (re.compile(r"\(\?:"), "("),
    (re.compile(r"\(\?i\)"), ""),
    (re.compile(r"\\d"), "[0-9]"),
    (re.compile(r"([*+?}])\?"), r"\1"),
]


FIXED_STRINGS = (
    "out of memory", "Traceback", "Killed", "NCCL", "Xid", "Segmentation fault", "CUDA error",
    "RuntimeError", "illegal memory access", "device-side assert", "cuDNN", "NaN", "Error",
)  # fmt: skip
"""The 13 fixed strings of the grep baseline."""


def ere(pattern: str) -> str:
    """An RE2 pattern approximated in POSIX ERE (GNU grep accepts \\s, \\S, \\w, \\b)."""
    for regex, replacement in _ERE_REWRITES:
        pattern = regex.sub(replacement, pattern)
    return pattern


def _timed_with_env(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run of ``command`` with ``env`` (after one warm-up run)."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
    start = time.perf_counter()
    subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
    return time.perf_counter() - start


def _scan_seconds(book: RuleBook, log: Path, repeat: int = 3) -> float:
    """Median seconds for the scanner alone over ``log``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        scan_logs([LogInput(log.name, lambda: open(log, "rb"))], make_scanner(book))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Generate the log, run both tools, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="log size in MB (default 200)")
    parser.add_argument(
        "--baseline", type=Path, metavar="SRC", help="also time another source tree's explain"
    )
    args = parser.parse_args()
    book = load_rulebook()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "train.log"
        small = Path(tmp) / "small.log"
        size = write_training_log(log, args.mb * 1_000_000)
        write_training_log(small, args.mb * 100_000)
        patterns = Path(tmp) / "patterns.ere"
        specs = [p for rule in book.rules for p in rule.patterns]
        patterns.write_text("\n".join(ere(p.regex) for p in specs) + "\n")
        mb = size / 1e6
        command = [*gpudoctor_command(), "explain", "--format", "json", str(log)]
        gd_time, gd_code = run_timed(command)
        print(f"log: {mb:.0f} MB, {len(specs)} patterns from {len(book.rules)} rules")
        print(f"gpudoctor explain: {gd_time:.2f} s = {mb / gd_time:.0f} MB/s (exit {gd_code})")
        scan_time = _scan_seconds(book, log)
        print(f"scanner alone:     {scan_time:.2f} s = {mb / scan_time:.0f} MB/s")
        if have("grep"):
            # The C locale: grep matches bytes, as gpudoctor does (in a UTF-8 locale GNU grep's
            # matcher for hundreds of patterns slows to well under 1 MB/s).
            grep = ["env", "LC_ALL=C", "grep", "-E", "-c", "-f", str(patterns), str(log)]
            check = subprocess.run(grep, capture_output=True, text=True)
            grep_time, _ = run_timed(grep, pipe=True)
            print(f"grep -E -f:        {grep_time:.2f} s = {mb / grep_time:.0f} MB/s "
                  f"({check.stdout.strip()} matching lines)")  # fmt: skip
            print(f"ratio gpudoctor/grep throughput: {grep_time / gd_time:.2f}x")
            fixed = ["env", "LC_ALL=C", "grep", "-E", "-c", "|".join(FIXED_STRINGS), str(log)]
            fixed_time, _ = run_timed(fixed, 3, pipe=True)
            ratio = fixed_time / gd_time
            print(f"grep -E, {len(FIXED_STRINGS)} fixed strings: {fixed_time:.2f} s = "
                  f"{mb / fixed_time:.0f} MB/s; gpudoctor/grep: {ratio:.2f}x")  # fmt: skip
        if args.baseline is not None:
            old = [sys.executable, "-m", "gpudoctor", "explain", "--format", "json", str(log)]
            env = {**os.environ, "PYTHONPATH": str(args.baseline)}
            run_timed_env = _timed_with_env(old, env)
            print(f"baseline explain:  {run_timed_env:.2f} s = {mb / run_timed_env:.0f} MB/s")
        rss_full = peak_rss_of(command)
        rss_small = peak_rss_of([*gpudoctor_command(), "explain", "--format", "json", str(small)])
        print(f"peak RSS: {rss_full / 2**20:.0f} MiB on {mb:.0f} MB, "
              f"{rss_small / 2**20:.0f} MiB on {small.stat().st_size / 1e6:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
