"""Every scenario runs through the real collector, gives the values its file says, and is the
whole machine: nothing of the machine running the tests shows through."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from gpudoctor.snapshot import (
    LiveSource,
    ScenarioSource,
    Snapshot,
    UnknownScenarioError,
    collect_snapshot,
    machine_source,
    scenario_names,
)
from gpudoctor.snapshot.scenario import load_scenario

ALL_SCENARIOS = [
    "consumer-notsupported",
    "driver-mismatch",
    "ecc-remap-pending",
    "gpu-lost",
    "healthy-8xh100",
    "memory-held-by-other",
    "no-driver",
    "throttled-thermal",
]


def test_bundled_scenarios_are_exactly_the_documented_ones() -> None:
    assert scenario_names() == ALL_SCENARIOS


@pytest.mark.parametrize("name", ALL_SCENARIOS)
def test_scenario_collects_and_round_trips(name: str, scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario(name)
    assert snap.driver.backend == f"fake:{name}"
    assert Snapshot.from_dict(snap.to_dict()) == snap
    text = snap.to_json()
    assert Snapshot.from_json(text) == snap
    assert Snapshot.from_json(text).to_json() == text  # stable text
    assert json.loads(text)["schema"] == "gpudoctor.snapshot/1"


def test_unknown_scenario_lists_valid_names() -> None:
    with pytest.raises(UnknownScenarioError) as info:
        collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": "healthy-9xh100"})
    message = str(info.value)
    assert "healthy-9xh100" in message
    for name in ALL_SCENARIOS:
        assert name in message


def test_healthy_8xh100(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("healthy-8xh100")
    assert snap.driver.status == "ok"
    assert snap.driver.driver_version == "550.90.07"
    assert snap.driver.cuda_driver_version == "12.4"
    assert snap.driver.nvml_version == "12.550.90.07"
    assert [g.index for g in snap.gpus] == list(range(8))
    assert [g.pci_bus_id for g in snap.gpus] == [
        "00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
        "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0",
    ]  # fmt: skip
    assert [g.temperature_c for g in snap.gpus] == [32, 34, 31, 35, 33, 36, 32, 34]
    g = snap.gpus[0]
    assert g.status == "ok" and not g.lost
    assert g.name == "NVIDIA H100 80GB HBM3"
    assert g.uuid == "GPU-4a1e5b2c-9d3f-6e7a-8b1c-2d3e4f5a6b70"
    assert g.serial == "1654922040101"
    assert g.compute_capability == "9.0"
    assert g.memory_total_bytes == 85520809984
    assert g.memory_reserved_bytes == 362807296
    assert g.memory_used_bytes == 1048576
    assert g.memory_free_bytes == 85520809984 - 362807296 - 1048576
    assert (g.utilization_gpu_pct, g.utilization_memory_pct) == (0, 0)
    assert (g.temperature_slowdown_c, g.temperature_shutdown_c) == (89, 92)
    assert g.temperature_max_operating_c == 87
    assert g.power_draw_w == 71.25
    assert g.power_limit_w == 700.0
    assert (g.clock_sm_mhz, g.clock_sm_max_mhz, g.clock_mem_mhz, g.clock_mem_max_mhz) == (
        345, 1980, 2619, 2619,
    )  # fmt: skip
    assert g.clock_event_reasons == 0x1
    assert g.clock_event_reason_names == ("gpu_idle",)
    assert g.ecc_mode_current is True and g.ecc_mode_pending is True
    assert (g.ecc_volatile_corrected, g.ecc_volatile_uncorrected) == (0, 0)
    assert (g.ecc_aggregate_corrected, g.ecc_aggregate_uncorrected) == (0, 0)
    assert g.remapped_rows_uncorrectable == 0
    assert g.remapped_rows_pending is False and g.remapped_rows_failure is False
    assert (g.pcie_link_gen_current, g.pcie_link_gen_max) == (5, 5)
    assert (g.pcie_link_width_current, g.pcie_link_width_max) == (16, 16)
    assert g.persistence_mode is True
    assert g.compute_mode == "default"
    assert g.mig_mode_current is False
    assert g.processes == ()
    # Hopper has no page retirement: those three fields are unsupported, nothing else is.
    assert g.retired_pages_single_bit is None
    assert g.unavailable == {
        "retired_pages_double_bit": "NotSupported",
        "retired_pages_pending": "NotSupported",
        "retired_pages_single_bit": "NotSupported",
    }
    assert snap.host.hostname == "dgx-h100-07"
    assert snap.versions.frameworks[0].version == "2.4.1+cu121"


def test_throttled_thermal(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("throttled-thermal")
    hot = snap.gpus[1]
    assert hot.temperature_c == 89 == hot.temperature_slowdown_c
    assert hot.clock_event_reasons == 0x48
    assert hot.clock_event_reason_names == ("hw_slowdown", "hw_thermal_slowdown")
    assert (hot.clock_sm_mhz, hot.clock_sm_max_mhz) == (1005, 1410)
    assert hot.power_draw_w == 196.7
    cool = snap.gpus[0]
    assert cool.clock_event_reasons == 0
    assert cool.clock_event_reason_names == ()
    (proc,) = cool.processes or ()
    assert proc.pid == 48211
    assert proc.used_memory_bytes == 70866960384
    assert proc.user == "mlops"
    assert proc.cmdline == (
        "python", "train.py", "--config", "configs/vit_l16.yaml", "--local_rank=0",
    )  # fmt: skip
    assert proc.exists is True and proc.zombie is False


def test_ecc_remap_pending(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("ecc-remap-pending")
    clean, bad = snap.gpus
    assert (clean.ecc_volatile_uncorrected, clean.remapped_rows_pending) == (0, False)
    assert bad.ecc_volatile_corrected == 14
    assert bad.ecc_volatile_uncorrected == 2
    assert bad.ecc_aggregate_corrected == 37
    assert bad.ecc_aggregate_uncorrected == 2
    assert bad.remapped_rows_correctable == 0
    assert bad.remapped_rows_uncorrectable == 1
    assert bad.remapped_rows_pending is True
    assert bad.remapped_rows_failure is False
    xids = [e for e in snap.kernel_log.events if e.kind == "xid"]
    assert [(e.xid, e.pci_bus, e.pid) for e in xids] == [
        (94, "0000:4e:00", 28117),
        (63, "0000:4e:00", 28117),
    ]
    assert xids[0].process_name == "python"
    assert xids[1].process_name is None


def test_gpu_lost_one_gpu_lost_others_fully_read(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("gpu-lost")
    assert snap.driver.status == "ok"
    assert [g.status for g in snap.gpus] == ["ok", "ok", "lost", "ok"]
    lost = snap.gpus[2]
    assert lost.lost
    assert lost.name is None and lost.memory_total_bytes is None and lost.processes is None
    assert set(lost.unavailable.values()) == {"GpuIsLost"}
    assert "name" in lost.unavailable and "processes" in lost.unavailable
    for gpu in (snap.gpus[0], snap.gpus[1], snap.gpus[3]):
        assert gpu.name == "NVIDIA A100-SXM4-80GB"
        assert gpu.memory_total_bytes == 85899345920
        assert gpu.temperature_c == 41
        assert gpu.processes == ()
        assert set(gpu.unavailable) == {
            "retired_pages_double_bit", "retired_pages_pending", "retired_pages_single_bit",
        }  # fmt: skip
    assert snap.gpus[3].pci_bus_id == "00000000:4E:00.0"
    assert [e.kind for e in snap.kernel_log.events] == ["nvrm", "xid", "nvrm", "nvrm"]
    xid = snap.kernel_log.events[1]
    assert (xid.xid, xid.pci_bus, xid.pid, xid.process_name) == (
        79, "0000:47:00", 51877, "pt_main_thread",
    )  # fmt: skip


def test_memory_held_by_other(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("memory-held-by-other")
    gpu0 = snap.gpus[0]
    assert gpu0.memory_total_bytes == 42949672960
    assert gpu0.memory_used_bytes == 40806383616
    (proc,) = gpu0.processes or ()
    assert proc.pid == 31337
    assert proc.used_memory_bytes == 40802189312
    assert proc.user == "bob"
    assert proc.name == "python"
    assert proc.cmdline is not None and proc.cmdline[:3] == (
        "/opt/conda/bin/python", "-m", "ipykernel_launcher",
    )  # fmt: skip
    assert proc.exists is True and proc.zombie is False
    assert snap.gpus[1].processes == ()
    assert snap.host.shm_total_bytes == 67108864
    assert snap.host.in_container is True
    assert snap.environment["CUDA_VISIBLE_DEVICES"] == "0"


def test_no_driver(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("no-driver")
    assert snap.driver.status == "no_driver"
    assert snap.driver.error == "DriverNotLoaded"
    assert snap.driver.message is not None
    assert snap.driver.message.startswith("Driver Not Loaded")
    assert snap.driver.driver_version is None
    assert snap.gpus == ()
    nvml_source = next(s for s in snap.sources if s.name == "nvml")
    assert nvml_source.ok is False


def test_driver_mismatch(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("driver-mismatch")
    assert snap.driver.status == "driver_library_mismatch"
    assert snap.driver.error == "LibRmVersionMismatch"
    assert snap.driver.message is not None
    assert "Driver/library version mismatch" in snap.driver.message
    assert "reboot" in snap.driver.message
    assert snap.gpus == ()
    assert snap.kernel_log.events[0].message == (
        "API mismatch: the client has the version 550.90.07, but"
    )


def test_consumer_notsupported(scenario: Callable[[str], Snapshot]) -> None:
    snap = scenario("consumer-notsupported")
    (g,) = snap.gpus
    assert g.status == "ok"
    assert g.name == "NVIDIA GeForce RTX 3090"
    assert g.compute_capability == "8.6"
    assert g.serial is None
    assert (g.temperature_slowdown_c, g.temperature_shutdown_c) == (95, 98)
    assert g.temperature_max_operating_c is None
    assert g.ecc_mode_current is None and g.ecc_volatile_uncorrected is None
    assert g.remapped_rows_pending is None and g.mig_mode_current is None
    assert g.persistence_mode is False
    assert (g.pcie_link_gen_current, g.pcie_link_gen_max) == (1, 4)
    assert g.unavailable == dict.fromkeys(
        [
            "ecc_aggregate_corrected", "ecc_aggregate_uncorrected", "ecc_mode_current",
            "ecc_mode_pending", "ecc_volatile_corrected", "ecc_volatile_uncorrected",
            "mig_mode_current", "mig_mode_pending", "remapped_rows_correctable",
            "remapped_rows_failure", "remapped_rows_pending", "remapped_rows_uncorrectable",
            "retired_pages_double_bit", "retired_pages_pending", "retired_pages_single_bit",
            "serial", "temperature_max_operating_c",
        ],
        "NotSupported",
    )  # fmt: skip


# --- the policy: a scenario is the whole machine --------------------------------------------


@pytest.mark.parametrize("name", ALL_SCENARIOS)
def test_every_part_of_a_scenario_snapshot_comes_from_the_scenario(name: str) -> None:
    # The caller's own GPU variables and host must not show through, nor be mixed in.
    env = {"GPUDOCTOR_FAKE_NVML": name, "CUDA_VISIBLE_DEVICES": "7", "NCCL_SOCKET_IFNAME": "lo"}
    snap = collect_snapshot(env=env)
    data = load_scenario(name)
    assert snap.environment == {str(k): str(v) for k, v in data["environment"].items()}
    assert "NCCL_SOCKET_IFNAME" not in snap.environment
    assert snap.host.hostname == data["host"]["hostname"]
    assert snap.versions.python_version == data["versions"]["python_version"]
    notes = {s.name: s.reason for s in snap.sources}
    for part in ("versions", "environment", "host"):
        assert notes[part] == f"from scenario {name}"
    assert "package metadata" not in notes
    assert [s.name for s in snap.sources if s.name.startswith("kernel_log:")] == [
        f"kernel_log:scenario:{name}"
    ]


def test_a_scenario_without_a_section_is_refused() -> None:
    complete = load_scenario("no-driver")
    for section in ("host", "versions", "environment", "kernel_log"):
        partial = {k: v for k, v in complete.items() if k != section}
        with pytest.raises(UnknownScenarioError, match=f"missing \\['{section}'\\]"):
            ScenarioSource("partial", partial)
    without_driver = {k: v for k, v in load_scenario("gpu-lost").items() if k != "driver"}
    with pytest.raises(UnknownScenarioError, match="missing \\['driver'\\]"):
        ScenarioSource("partial", without_driver)


def test_unknown_scenario_names_the_variable() -> None:
    with pytest.raises(UnknownScenarioError, match=r"^GPUDOCTOR_FAKE_NVML=nope: unknown scenario"):
        collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": "nope"})


def test_empty_variable_selects_this_machine() -> None:
    assert isinstance(machine_source({"GPUDOCTOR_FAKE_NVML": "  "}), LiveSource)
    assert isinstance(machine_source({"GPUDOCTOR_FAKE_NVML": "gpu-lost"}), ScenarioSource)
