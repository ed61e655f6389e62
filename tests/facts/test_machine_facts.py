"""Snapshot facts: names, documentation, and the values each scenario must give."""

from __future__ import annotations

import keyword
from collections.abc import Callable

import pytest

from gpudoctor.facts.machine import FACT_NAMES, FACTS, snapshot_facts
from gpudoctor.snapshot import Snapshot
from gpudoctor.snapshot.model import DriverInfo

Collect = Callable[[str], Snapshot]

SCENARIOS = [
    "consumer-notsupported", "driver-mismatch", "ecc-remap-pending", "gpu-lost",
    "healthy-8xh100", "memory-held-by-other", "no-driver", "throttled-thermal",
]  # fmt: skip


def test_fact_names_are_unique_identifiers_with_a_declaration() -> None:
    assert len(FACT_NAMES) == len(set(FACT_NAMES)) > 60
    for spec in FACTS:
        assert spec.name.isidentifier() and not keyword.iskeyword(spec.name), spec.name
        assert spec.name == spec.name.lower()
        assert spec.source == "snapshot" and spec.doc and spec.type and spec.unit
    by_name = {spec.name: spec for spec in FACTS}
    assert by_name["max_gpu_temp_c"].unit == "°C"
    assert by_name["gpu_lost_count"].type == "int|None"
    assert "smi: temperature.gpu" in by_name["max_gpu_temp_c"].doc  # nvidia-smi equivalent


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_fact_present_with_a_flat_value(name: str, scenario: Collect) -> None:
    facts = snapshot_facts(scenario(name))
    assert list(facts) == list(FACT_NAMES)
    for key, value in facts.items():
        if isinstance(value, list):
            assert all(isinstance(v, int | str) for v in value), key
        else:
            assert value is None or isinstance(value, bool | int | float | str), key


def test_empty_snapshot_gives_none_and_empty_lists() -> None:
    facts = snapshot_facts(Snapshot(driver=DriverInfo(status="library_not_found")))
    assert facts["nvml_status"] == "library_not_found"
    assert facts["gpu_count"] is None
    assert facts["gpu_lost_count"] is None
    assert facts["thermal_slowdown_active"] is None
    assert facts["gpu_names"] == []
    assert facts["xid_codes"] == []
    assert facts["kernel_log_available"] is False
    assert facts["shm_total_bytes"] is None


def test_healthy(scenario: Collect) -> None:
    f = snapshot_facts(scenario("healthy-8xh100"))
    assert f["nvml_status"] == "ok"
    assert f["driver_version"] == "550.90.07"
    assert f["driver_cuda_version"] == "12.4"
    assert f["gpu_count"] == 8
    assert f["gpu_names"] == ["NVIDIA H100 80GB HBM3"] * 8
    assert f["gpu_compute_capabilities"] == ["9.0"]
    assert f["gpu_lost_count"] == 0
    assert f["max_gpu_temp_c"] == 36
    assert f["min_temp_margin_to_slowdown_c"] == 89 - 36
    assert f["thermal_slowdown_active"] is False
    assert f["power_brake_active"] is False
    assert f["hw_slowdown_active"] is False
    assert f["throttled_gpu_indices"] == []
    assert f["any_ecc_uncorrected_volatile"] is False
    assert f["remap_pending"] is False
    assert f["retired_pages_pending"] is None  # not supported on H100
    assert f["pcie_link_degraded"] is False
    assert f["persistence_mode_off_count"] == 0
    assert f["mig_enabled_count"] == 0
    assert f["gpu0_memory_used_fraction"] == round(1048576 / 85520809984, 6)
    assert f["gpu_process_count"] == 0
    assert f["other_process_gpu_memory_bytes"] == 0
    assert f["zombie_gpu_process_count"] == 0
    assert f["xid_codes"] == []
    assert f["kernel_oom_kill_count"] == 0
    assert f["torch_version"] == "2.4.1+cu121"
    assert f["torch_cuda_version"] == "12.1"
    assert f["cuda_runtime_versions"] == ["12.1"]
    assert f["max_cuda_runtime_version"] == "12.1"
    assert f["cuda_package_majors"] == [12]
    assert f["mixed_cuda_majors"] is False
    assert f["cudnn_version"] == "9.1.0.70"
    assert f["nccl_version"] == "2.20.5"
    assert f["shm_total_bytes"] == 1082092961792
    assert f["cgroup_memory_limit_bytes"] is None
    assert f["cgroup_oom_kill_count"] == 0
    assert f["ulimit_nofile_soft"] == 1048576
    assert f["host_ram_total_bytes"] == 2164185923584
    assert f["in_container"] is False
    assert f["cuda_visible_devices"] is None
    assert f["nccl_env_vars"] == ["NCCL_DEBUG", "NCCL_IB_HCA"]
    assert f["cuda_launch_blocking"] is False


def test_throttled_thermal(scenario: Collect) -> None:
    f = snapshot_facts(scenario("throttled-thermal"))
    assert f["thermal_slowdown_active"] is True
    assert f["hw_slowdown_active"] is True
    assert f["power_brake_active"] is False
    assert f["sw_power_cap_active"] is False
    assert f["throttled_gpu_indices"] == [1]
    assert f["max_gpu_temp_c"] == 89
    assert f["min_temp_margin_to_slowdown_c"] == 0
    assert f["max_power_draw_fraction"] == round(281.4 / 300.0, 6)
    assert f["gpu_process_count"] == 2
    assert f["gpu_process_pids"] == [48211, 48212]


def test_ecc_remap_pending(scenario: Collect) -> None:
    f = snapshot_facts(scenario("ecc-remap-pending"))
    assert f["any_ecc_uncorrected_volatile"] is True
    assert f["ecc_uncorrected_volatile_total"] == 2
    assert f["ecc_uncorrected_aggregate_total"] == 2
    assert f["ecc_corrected_volatile_total"] == 14
    assert f["remap_pending"] is True
    assert f["remap_failure"] is False
    assert f["remapped_rows_uncorrectable_total"] == 1
    assert f["xid_codes"] == [63, 94]
    assert f["xid_event_count"] == 2
    assert f["gpu_fallen_off_bus"] is False


def test_gpu_lost(scenario: Collect) -> None:
    f = snapshot_facts(scenario("gpu-lost"))
    assert f["gpu_count"] == 4
    assert f["gpu_lost_count"] == 1
    assert f["lost_gpu_indices"] == [2]
    assert f["gpu_error_count"] == 0
    assert f["gpu_names"] == ["NVIDIA A100-SXM4-80GB"] * 3
    assert f["max_gpu_temp_c"] == 41
    assert f["remap_pending"] is False
    assert f["xid_codes"] == [79]
    assert f["gpu_fallen_off_bus"] is True
    assert f["driver_version"] == "535.129.03"
    assert f["cuda_visible_devices"] == "0,1,2,3"


def test_memory_held_by_other(scenario: Collect) -> None:
    f = snapshot_facts(scenario("memory-held-by-other"))
    assert f["gpu0_memory_used_fraction"] == round(40806383616 / 42949672960, 6)
    assert f["other_process_gpu_memory_bytes"] == 40802189312
    assert f["max_other_process_memory_fraction"] == 0.95
    assert f["gpu_process_pids"] == [31337]
    assert f["zombie_gpu_process_count"] == 0
    assert f["shm_total_bytes"] == 67108864
    assert f["shm_free_bytes"] == 67108864
    assert f["cgroup_memory_limit_bytes"] == 68719476736
    assert f["in_container"] is True
    assert f["container_runtime"] == "docker"
    assert f["pytorch_cuda_alloc_conf"] == "expandable_segments:True"


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [
        ("no-driver", "no_driver", "DriverNotLoaded"),
        ("driver-mismatch", "driver_library_mismatch", "LibRmVersionMismatch"),
    ],
)
def test_nvml_unusable(name: str, status: str, error: str, scenario: Collect) -> None:
    f = snapshot_facts(scenario(name))
    assert f["nvml_status"] == status
    assert f["nvml_error"] == error
    assert f["driver_version"] is None
    assert f["gpu_count"] is None
    assert f["gpu_lost_count"] is None
    assert f["thermal_slowdown_active"] is None
    assert f["gpu_process_count"] is None


def test_driver_mismatch_kernel_log(scenario: Collect) -> None:
    assert snapshot_facts(scenario("driver-mismatch"))["nvrm_api_mismatch"] is True


def test_consumer_notsupported(scenario: Collect) -> None:
    f = snapshot_facts(scenario("consumer-notsupported"))
    assert f["any_ecc_uncorrected_volatile"] is None
    assert f["remap_pending"] is None
    assert f["ecc_disabled_count"] is None
    assert f["mig_enabled_count"] is None
    assert f["persistence_mode_off_count"] == 1
    assert f["pcie_link_degraded"] is False  # x16 of x16; gen 1 of 4 is idle power saving
    assert f["pcie_gen_below_max_count"] == 1
    assert f["gpu_compute_capabilities"] == ["8.6"]
    assert f["thermal_slowdown_active"] is False
