"""Start-up cost: ``gpudoctor explain`` on a 5 KB log next to the bare interpreter start.

Usage: ``python bench/startup.py [--repeat 15]``. Times, in the same run and with the same
interpreter, ``python -c pass`` and ``gpudoctor explain small.log`` (median of the repeats), and
prints both and their ratio. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _common import gpudoctor_command, run_timed, write_training_log


def main() -> None:
    """Run both commands repeatedly and print the medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "small.log"
        write_training_log(log, 5_000)
        bare, _ = run_timed([sys.executable, "-c", "pass"], args.repeat)
        explain, code = run_timed([*gpudoctor_command(), "explain", str(log)], args.repeat)
        print(f"python -c pass:          {bare * 1000:6.1f} ms")
        print(f"gpudoctor explain (5 KB): {explain * 1000:6.1f} ms (exit {code})")
        print(f"ratio: {explain / bare:.1f}x the bare interpreter start")


if __name__ == "__main__":
    main()
