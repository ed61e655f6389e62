"""Test-wide settings and fixtures.

The rule cache goes to a temporary folder, never the user's, and a ``GPUDOCTOR_FAKE_NVML``
set in the caller's shell is dropped so that "live" tests see this machine. The ``scenario``
fixture collects a bundled machine scenario at a fixed time (the suite runs with
``--import-mode=importlib``, so helpers are offered as fixtures rather than imported).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone

import pytest

_CACHE = tempfile.mkdtemp(prefix="gpudoctor-test-cache-")
os.environ["GPUDOCTOR_CACHE_DIR"] = _CACHE
os.environ.pop("GPUDOCTOR_NO_CACHE", None)
os.environ.pop("GPUDOCTOR_FAKE_NVML", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the suite's rule cache folder once the run is over."""
    shutil.rmtree(_CACHE, ignore_errors=True)


from gpudoctor.snapshot import ScenarioSource, Snapshot, collect_snapshot  # noqa: E402

FIXED_NOW = datetime(2024, 6, 3, 11, 45, 0, tzinfo=timezone.utc)

CollectScenario = Callable[[str], Snapshot]


def collect_scenario(name: str) -> Snapshot:
    """Collect the bundled scenario ``name`` at :data:`FIXED_NOW`."""
    return collect_snapshot(source=ScenarioSource(name), now=FIXED_NOW)


@pytest.fixture
def scenario() -> CollectScenario:
    """``scenario("gpu-lost")`` → that scenario's snapshot, collected at :data:`FIXED_NOW`."""
    return collect_scenario
