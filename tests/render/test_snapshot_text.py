"""Plain-text snapshot summary: golden output at a fixed width, and what-was-not-read."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.render.snapshot_text import render_snapshot_text
from gpudoctor.snapshot import Snapshot, load_snapshot
from gpudoctor.snapshot.model import DriverInfo, KernelLogInfo, SourceStatus

SNAPSHOT_FIXTURES = Path(__file__).parent.parent / "snapshot" / "fixtures"


def _fixture(name: str) -> Snapshot:
    return load_snapshot(SNAPSHOT_FIXTURES / f"{name}.json")


def test_gpu_lost_golden() -> None:
    text = render_snapshot_text(_fixture("gpu-lost"), width=100)
    golden = SNAPSHOT_FIXTURES / "gpu-lost.render.txt"
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["healthy-8xh100", "gpu-lost", "memory-held-by-other"])
@pytest.mark.parametrize("width", [60, 100])
def test_lines_fit_the_width(name: str, width: int) -> None:
    text = render_snapshot_text(_fixture(name), width=width)
    too_long = [line for line in text.splitlines() if len(line) > width]
    # Only unbreakable words (long paths) may overflow.
    assert all(" " not in line.strip() for line in too_long), too_long


def test_memory_held_by_other_shows_the_process() -> None:
    text = render_snapshot_text(_fixture("memory-held-by-other"))
    assert (
        "process 31337 user bob holds 38.00 GiB: /opt/conda/bin/python -m ipykernel_launcher"
        in (text.replace("\n      ", " "))
    )
    assert "/dev/shm 64.00 MiB free of 64.00 MiB" in text


def test_unreadable_parts_are_listed_with_reasons() -> None:
    snap = Snapshot(
        driver=DriverInfo(
            status="no_driver",
            error="DriverNotLoaded",
            message="Driver Not Loaded: the NVIDIA kernel module is not loaded",
        ),
        kernel_log=KernelLogInfo(unavailable={"events": "no kernel log source could be read"}),
        sources=(SourceStatus("kernel_log:dmesg", False, "Operation not permitted"),),
    )
    text = render_snapshot_text(snap)
    assert "Driver: NVML unusable (no_driver)" in text
    assert "Driver Not Loaded: the NVIDIA kernel module is not loaded" in text
    assert "Kernel log: not readable" in text
    assert "Not read:" in text
    assert "source kernel_log:dmesg: Operation not permitted" in text
    assert "kernel log: no kernel log source could be read: events" in text
