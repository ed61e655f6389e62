"""Fuzzing of what reads other people's text: ``explain``'s reading and scanning path, and the
rule loader.

Usage: ``python bench/fuzz.py [--seconds 20] [--target explain|rules|all] [--seed N]``.

A time-budgeted, coverage-guided loop: inputs start from a seed corpus (``examples/logs`` and
``rules/``), are mutated (bytes flipped, inserted, deleted and spliced; lines repeated; whole
inputs compressed, truncated or re-encoded), and an input that reaches a line of gpudoctor's
code no earlier input reached joins the corpus. Coverage comes from ``sys.monitoring`` on
Python 3.12+ and from ``sys.settrace`` before. Any exception that escapes the target is a
finding: it is printed with its input (saved under ``--out``) and the exit code is 1.
Executions per second are printed for each target. It runs for a short budget in the tests
and for as long as asked on demand.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import io
import lzma
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from gpudoctor.errors import RuleErrors
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import PatternHits
from gpudoctor.pipeline import make_scanner
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.loader import load_rules

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = str(ROOT / "src" / "gpudoctor")
MAX_INPUT = 64 << 10


def _explain_target() -> Callable[[bytes], None]:
    scanner_factory = make_scanner
    book = load_rulebook()

    scanner = scanner_factory(book)  # compiling the pattern set once: it is the slow part

    def run(data: bytes) -> None:
        scanner.hits = {key: PatternHits() for key in scanner.hits}
        stats = InputStats(name="fuzz")
        scanner.scan(read_blocks(io.BytesIO(data), stats))
        assert stats.lines >= 0 and stats.bytes_read >= 0

    return run


def _rules_target(tmp: Path) -> Callable[[bytes], None]:
    rule_dir = tmp / "rules"
    rule_dir.mkdir()
    path = rule_dir / "fuzzed-rule.yaml"

    def run(data: bytes) -> None:
        path.write_bytes(data)
        # Rejected with located errors is what the loader is for; anything else is a finding.
        with contextlib.suppress(RuleErrors):
            load_rules([rule_dir])

    return run


def _seeds(target: str) -> list[bytes]:
    if target == "explain":
        files = sorted(p for p in (ROOT / "examples" / "logs").rglob("*") if p.is_file())
    else:
        files = sorted((ROOT / "rules").glob("*.yaml"))
    return [p.read_bytes()[:MAX_INPUT] for p in files] or [b""]


def mutate(data: bytes, corpus: list[bytes], rng: random.Random) -> bytes:
    """One random change (or a few) to ``data``."""
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        op = rng.randrange(11)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        elif op == 2:
            del buf[pos : pos + rng.randrange(1, 64)]
        elif op == 3:
            other = rng.choice(corpus)
            start = rng.randrange(len(other) + 1)
            buf[pos:pos] = other[start : start + rng.randrange(1, 512)]
        elif op == 4:
            buf[pos:pos] = rng.choice(
                [b"\r", b"\n", b"\r\n", b"\x00", b"\x1b[31m", b"\xff\xfe", b"\xef\xbb\xbf", b"\t"]
            ) * rng.randrange(1, 40)
        elif op == 5:
            end = buf.find(b"\n", pos)
            line = bytes(buf[pos : end + 1 if end >= 0 else len(buf)])
            buf[pos:pos] = line * rng.randrange(1, 20)
        elif op == 6:
            pack = rng.choice((gzip.compress, bz2.compress, lzma.compress))
            buf = bytearray(pack(bytes(buf)))
        elif op == 7 and len(buf) > 1:
            buf = buf[: rng.randrange(1, len(buf))]
        elif op == 8:
            text = bytes(buf).decode("utf-8", "replace")
            buf = bytearray(text.encode(rng.choice(("utf-16", "utf-16-le", "utf-32"))))
        elif op == 9:
            buf = bytearray(bytes(buf) + rng.choice(corpus))
        elif op == 10 and buf:
            buf[min(pos, len(buf) - 1)] = rng.choice(b":-{}[]'\"&*!|>%@`#\n ")
    return bytes(buf[:MAX_INPUT])


class Coverage:
    """Lines of gpudoctor's own code reached while running one input."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, int]] = set()
        self._now: set[tuple[str, int]] = set()

    def _trace(self, frame, event, arg):  # type: ignore[no-untyped-def]
        if not frame.f_code.co_filename.startswith(PACKAGE):
            return None
        if event == "line":
            self._now.add((frame.f_code.co_filename, frame.f_lineno))
        return self._trace

    def run(self, target: Callable[[bytes], None], data: bytes) -> bool:
        """Run ``target`` on ``data``; whether it reached a line never reached before."""
        self._now = set()
        sys.settrace(self._trace)
        try:
            target(data)
        finally:
            sys.settrace(None)
        new = not self._now <= self.seen
        self.seen |= self._now
        return new


def fuzz(
    name: str, target: Callable[[bytes], None], seconds: float, rng: random.Random, out: Path
) -> tuple[int, int, list[str]]:
    """Fuzz one target for ``seconds``; returns executions, corpus size and findings."""
    corpus = _seeds(name)
    coverage = Coverage()
    findings: list[str] = []
    for seed in corpus:
        coverage.run(target, seed)
    runs = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = mutate(rng.choice(corpus), corpus, rng)
        runs += 1
        try:
            # Tracing costs about 10x: trace one input in four, run the others plain.
            if runs % 4 == 0:
                if coverage.run(target, data):
                    corpus.append(data)
            else:
                target(data)
        except Exception as exc:
            key = f"{type(exc).__name__}: {exc}"[:200]
            if key not in findings:
                findings.append(key)
                out.mkdir(parents=True, exist_ok=True)
                saved = out / f"{name}-{len(findings)}.bin"
                saved.write_bytes(data)
                print(f"FINDING in {name}: {key} (input saved to {saved})", file=sys.stderr)
                traceback.print_exc()
    return runs, len(corpus), findings


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, fuzz, print executions per second and findings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20, help="budget per target")
    parser.add_argument("--target", choices=("explain", "rules", "all"), default="all")
    parser.add_argument("--seed", type=int, default=None, help="random seed (to replay a run)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    names = ["explain", "rules"] if args.target == "all" else [args.target]
    found = 0
    with tempfile.TemporaryDirectory() as tmp:
        targets = {"explain": _explain_target, "rules": lambda: _rules_target(Path(tmp))}
        for name in names:
            runs, size, findings = fuzz(name, targets[name](), args.seconds, rng, args.out)
            print(
                f"{name}: {runs} runs in {args.seconds:.0f} s = {runs / args.seconds:.0f}/s, "
                f"corpus {size}, findings {len(findings)} (seed {seed})"
            )
            found += len(findings)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
