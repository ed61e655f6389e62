"""Shared fixtures for the ``gpudoctor check`` tests: the recorded snapshots and a runner.

The suite runs with ``--import-mode=importlib``, so helpers are offered as fixtures rather
than imported by module name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.check import CheckOptions, CheckReport, CheckSource, run_checks
from gpudoctor.snapshot import load_snapshot

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"

RunFixture = Callable[..., CheckReport]


def run_fixture(name: str, **options: object) -> CheckReport:
    """Run every check on ``fixtures/<name>.json`` (a snapshot from "another node")."""
    snapshot = load_snapshot(FIXTURES / f"{name}.json")
    source = CheckSource("snapshot", f"{name}.json", snapshot.host.hostname)
    return run_checks(snapshot, CheckOptions(**options), source=source)  # type: ignore[arg-type]


@pytest.fixture
def run() -> RunFixture:
    """``run("driver550-cu124", require_gpu=True)`` → the check report."""
    return run_fixture


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of recorded snapshots."""
    return FIXTURES


@pytest.fixture
def golden_dir() -> Path:
    """The folder of golden outputs."""
    return GOLDEN
