"""Shared fixtures for the snapshot tests: collect a fake scenario deterministically.

The suite runs with ``--import-mode=importlib``, so helpers are offered as fixtures rather
than imported by module name.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gpudoctor.snapshot import Snapshot, collect_snapshot

FIXED_NOW = datetime(2024, 6, 3, 11, 45, 0, tzinfo=timezone.utc)
FIXTURES = Path(__file__).parent / "fixtures"


def collect_scenario(name: str) -> Snapshot:
    """Collect with the fake NVML scenario ``name`` at a fixed time."""
    return collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": name}, now=FIXED_NOW)


CollectScenario = Callable[[str], Snapshot]


@pytest.fixture
def scenario() -> CollectScenario:
    """Collect a fake NVML scenario by name at :data:`FIXED_NOW`."""
    return collect_scenario


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of checked-in snapshot fixtures."""
    return FIXTURES
