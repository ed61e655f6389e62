"""The checked-in snapshot fixtures load, and still match what their scenario produces.

If this fails after a deliberate change, run ``python tests/snapshot/make_fixtures.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from gpudoctor.snapshot import Snapshot, load_snapshot

FIXTURE_SCENARIOS = ["healthy-8xh100", "gpu-lost", "memory-held-by-other"]


@pytest.mark.parametrize("name", FIXTURE_SCENARIOS)
def test_fixture_matches_scenario(
    name: str, fixtures_dir: Path, scenario: Callable[[str], Snapshot]
) -> None:
    stored = load_snapshot(fixtures_dir / f"{name}.json")
    fresh = scenario(name)
    # The version stamp changes with every release; everything else must match.
    fresh = dataclasses.replace(fresh, gpudoctor_version=stored.gpudoctor_version)
    assert stored == fresh
    assert (fixtures_dir / f"{name}.json").read_text(encoding="utf-8") == fresh.to_json()


def test_gpu_lost_fixture_content(fixtures_dir: Path) -> None:
    snap = load_snapshot(fixtures_dir / "gpu-lost.json")
    assert snap.created_at == "2024-06-03T11:45:00+00:00"
    assert [g.status for g in snap.gpus] == ["ok", "ok", "lost", "ok"]
    assert snap.host.hostname == "gpu-node-12"
