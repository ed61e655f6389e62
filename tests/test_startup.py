"""Start-up: what a short ``gpudoctor explain`` loads when the rule cache is warm.

Times are measured by bench/startup.py, not asserted here (they depend on the machine); what
is asserted is that the hot path keeps away from the modules that made it slow, in a fresh
interpreter as the console script starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

OOM_LOG = Path(__file__).parents[1] / "examples" / "logs" / "pytorch-oom.log"
NOT_ON_THE_HOT_PATH = (
    "yaml",  # rules come from the cache
    "pickle",  # never used at all
    "hashlib",  # the cache's MAC uses _blake2 directly
    "rich",
    "psutil",  # snapshot collectors: explain without --snapshot needs none
    "pynvml",
    "gpudoctor.rulebook.loader",
    "gpudoctor.snapshot",
    "shutil",  # imports bz2 and lzma: the terminal width is read without it
)

_PROBE = """
import json, sys
sys.argv = ["gpudoctor", "explain", sys.argv[1]]
from gpudoctor.cli.app import run
try:
    run()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_explain_with_a_warm_cache_skips_heavy_modules(tmp_path: Path) -> None:
    env = {**os.environ, "GPUDOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for _ in range(2):  # the first run fills the cache
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, str(OOM_LOG)], env=env, capture_output=True, text=True
        )
        runs.append(json.loads(done.stderr.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["code"] == warm["code"] == 0
    assert "yaml" in cold["modules"]  # the probe does see a miss
    assert [m for m in NOT_ON_THE_HOT_PATH if m in warm["modules"]] == []
