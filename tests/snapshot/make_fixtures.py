"""Regenerate the checked-in snapshot fixtures from fake NVML scenarios.

Run ``python tests/snapshot/make_fixtures.py`` after changing a scenario or the model, then
review the diff. ``test_snapshot_fixtures.py`` fails while the files are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from conftest import collect_scenario

FIXTURES = Path(__file__).parent / "fixtures"

#: Scenarios recorded as fixtures (every scenario describes a whole machine, so the files do
#: not depend on the machine that generated them).
FIXTURE_SCENARIOS = ("healthy-8xh100", "gpu-lost", "memory-held-by-other")


def main() -> None:
    """Write ``fixtures/<scenario>.json`` for every fixture scenario."""
    for name in FIXTURE_SCENARIOS:
        path = FIXTURES / f"{name}.json"
        path.write_text(collect_scenario(name).to_json(), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
