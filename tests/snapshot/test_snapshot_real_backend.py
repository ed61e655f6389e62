"""The real pynvml backend on a machine without an NVIDIA driver gives a normal snapshot."""

from __future__ import annotations

import ctypes.util
from pathlib import Path

import pytest

from gpudoctor.facts.machine import snapshot_facts
from gpudoctor.render.snapshot_text import render_snapshot_text
from gpudoctor.snapshot import LiveSource, collect_snapshot
from gpudoctor.snapshot.kernel_reader import lines_reader

pytestmark = pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="an NVIDIA driver is installed"
)


def test_no_driver_machine_gives_clear_status(tmp_path: Path) -> None:
    snap = collect_snapshot(source=LiveSource(env={}, kernel_log_readers=[lines_reader("t", [])]))
    assert snap.driver.status == "library_not_found"
    assert snap.driver.error == "LibraryNotFound"
    assert snap.driver.message is not None
    assert "libnvidia-ml.so.1" in snap.driver.message
    assert "no NVIDIA driver" in snap.driver.message
    assert snap.driver.backend == "nvml"
    assert snap.gpus == ()
    assert snapshot_facts(snap)["nvml_status"] == "library_not_found"
    assert "NVML unusable (library_not_found)" in render_snapshot_text(snap)
    nvml = next(s for s in snap.sources if s.name == "nvml")
    assert nvml.ok is False


def test_empty_fake_variable_means_real_backend() -> None:
    snap = collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": ""}, read_kernel_log=False)
    assert snap.driver.backend == "nvml"
