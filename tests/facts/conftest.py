"""Fixtures for the fact tests: a fake NVML scenario collected at a fixed time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from gpudoctor.snapshot import Snapshot, collect_snapshot

FIXED_NOW = datetime(2024, 6, 3, 11, 45, 0, tzinfo=timezone.utc)


@pytest.fixture
def scenario() -> Callable[[str], Snapshot]:
    """Collect a fake NVML scenario by name at :data:`FIXED_NOW`."""
    return lambda name: collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": name}, now=FIXED_NOW)
