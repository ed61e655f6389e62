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
* ``explain`` of a tenth of the log, plain and as Docker's JSON records (each line a
  ``{"log": ...}`` object, read through :mod:`gpudoctor.logs.records`);

and prints MB/s for both, their ratio, and gpudoctor's peak RSS for the full log and for a
tenth of it (flat memory means the two are close). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook, load_rulebook

_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]"}
"""RE2 escapes outside a bracket that GNU grep -E lacks (it has \\s, \\S, \\w, \\W, \\b)."""
_INSIDE = {"w": "[:alnum:]_", "d": "0-9", "s": "[:space:]", "t": "\t", "n": "", "r": ""}
"""RE2 escapes inside a bracket as POSIX bracket items (a line never holds a newline; the
negated classes \\S, \\W, \\D have no POSIX form inside a bracket and are left out)."""


FIXED_STRINGS = (
    "out of memory", "Traceback", "Killed", "NCCL", "Xid", "Segmentation fault", "CUDA error",
    "RuntimeError", "illegal memory access", "device-side assert", "cuDNN", "NaN", "Error",
)  # fmt: skip
"""The 13 fixed strings of the grep baseline."""


def ere(pattern: str) -> str:
    """An RE2 pattern approximated in POSIX ERE, as GNU ``grep -E`` reads it.

    Group syntax becomes a plain group, inline flags and lazy quantifiers are dropped (grep
    has neither), ``\\d`` becomes ``[0-9]``, and a bracket's escapes become POSIX bracket items
    (in POSIX a backslash inside a bracket is a literal: ``[\\w.\\-]`` is read as a range from
    ``\\`` and fails). An approximation for timing, not a translation that keeps meaning.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            out.append(_OUTSIDE.get(escaped, char + escaped))
            i += 2
        elif char == "[":
            bracket, i = _bracket(pattern, i)
            out.append(bracket)
        elif pattern.startswith("(?P<", i):
            i = pattern.index(">", i) + 1
            out.append("(")
        elif pattern.startswith("(?:", i):
            out.append("(")
            i += 3
        elif pattern.startswith("(?", i):
            flags_end = min(pattern.index(c, i) for c in ":)" if c in pattern[i:])
            if pattern[flags_end] == ":":  # a group with flags, (?i:...): a plain group
                out.append("(")
            i = flags_end + 1  # an inline flag, (?i): dropped
        elif char == "?" and out and out[-1] in ("*", "+", "?", "}"):
            i += 1  # lazy quantifier
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """The bracket expression at ``start`` in POSIX form, and the index after it."""
    i = start + 1
    negated = pattern.startswith("^", i)
    i += negated
    items: list[str] = []
    closing_bracket = hyphen = caret = False
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped in _INSIDE:
                items.append(_INSIDE[escaped])
            elif escaped == "]":
                closing_bracket = True
            elif escaped == "-":
                hyphen = True
            elif escaped == "^":
                caret = True
            elif escaped not in "SWD":
                items.append(escaped)
            i += 2
        elif char == "[" and pattern.startswith("[:", i):
            end = pattern.index(":]", i) + 2
            items.append(pattern[i:end])
            i = end
        elif char == "^":
            caret = True
            i += 1
        else:
            items.append(char)
            i += 1
        first = False
    body = ("]" if closing_bracket else "") + "".join(items) + ("^" if caret else "")
    body += "-" if hyphen else ""
    if not body:
        return ("." if negated else "[[:cntrl:]]"), i + 1
    return "[" + ("^" if negated else "") + body + "]", i + 1


def _timed_with_env(command: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one run of ``command`` with ``env`` (after one warm-up run)."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
    start = time.perf_counter()
    subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
    return time.perf_counter() - start


def _write_docker_records(plain: Path, records: Path) -> None:
    """``plain``'s lines as Docker's json-file driver stores them."""
    with plain.open("rb") as source, records.open("w", encoding="utf-8") as out:
        for raw in source:
            line = raw.decode("utf-8", "replace")
            out.write(json.dumps({"log": line, "stream": "stderr", "time": "2026-01-01T00:00:00Z"}))
            out.write("\n")


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
        print(f"gpudoctor from {measured_source()}")
        print(f"log: {mb:.0f} MB, {len(specs)} patterns from {len(book.rules)} rules")
        print(f"gpudoctor explain: {gd_time:.2f} s = {mb / gd_time:.0f} MB/s (exit {gd_code})")
        scan_time = _scan_seconds(book, log)
        print(f"scanner alone:     {scan_time:.2f} s = {mb / scan_time:.0f} MB/s")
        if have("grep"):
            # The C locale: grep matches bytes, as gpudoctor does (in a UTF-8 locale GNU grep's
            # matcher for hundreds of patterns slows to well under 1 MB/s).
            grep = ["env", "LC_ALL=C", "grep", "-E", "-c", "-f", str(patterns), str(log)]
            check = subprocess.run(grep, capture_output=True, text=True)
            if check.returncode > 1:
                sys.exit(f"grep refused the translated patterns: {check.stderr.strip()}")
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
        records = Path(tmp) / "small.jsonl"
        _write_docker_records(small, records)
        small_mb, records_mb = small.stat().st_size / 1e6, records.stat().st_size / 1e6
        plain_time, _ = run_timed([*gpudoctor_command(), "explain", "--format", "json", str(small)])
        json_time, _ = run_timed(
            [*gpudoctor_command(), "explain", "--format", "json", str(records)]
        )
        print(f"tenth, plain:        {plain_time:.2f} s = {small_mb / plain_time:.0f} MB/s")
        ratio = json_time / plain_time
        print(f"tenth, JSON records: {json_time:.2f} s = {records_mb / json_time:.0f} MB/s of "
              f"records ({records_mb:.0f} MB); {ratio:.2f}x the plain time")  # fmt: skip
        rss_full = peak_rss_of(command)
        rss_small = peak_rss_of([*gpudoctor_command(), "explain", "--format", "json", str(small)])
        print(f"peak RSS: {rss_full / 2**20:.0f} MiB on {mb:.0f} MB, "
              f"{rss_small / 2**20:.0f} MiB on {small.stat().st_size / 1e6:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
