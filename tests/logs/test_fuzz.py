"""The fuzz target of explain's reading and scanning path runs clean for a short budget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[2] / "bench" / "fuzz.py"


def test_explain_fuzz_target_finds_nothing_in_a_short_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(FUZZ),
            "--seconds",
            "3",
            "--target",
            "explain",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "explain:" in done.stdout and "findings 0" in done.stdout
    assert not list(tmp_path.iterdir())
