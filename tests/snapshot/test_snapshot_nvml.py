"""The NVML choke point: error mapping, once-only init, lost GPUs, API fallbacks."""

from __future__ import annotations

from typing import Any

import pytest

from gpudoctor.snapshot.gpus import decode_clock_event_reasons, read_gpu
from gpudoctor.snapshot.nvml import NvmlSession, error_name, load_pynvml
from gpudoctor.snapshot.processes import ProcessDetails
from gpudoctor.snapshot.scenario import UnknownScenarioError, load_scenario
from gpudoctor.snapshot.scenario_nvml import FakeNvml


def _no_process(pid: int) -> ProcessDetails:
    return ProcessDetails(exists=False, reason="test")


def _one_gpu(**overrides: Any) -> dict[str, Any]:
    scenario = load_scenario("healthy-8xh100")
    gpu = {**scenario["gpus"][0], **overrides}
    return {"description": "test", "driver": scenario["driver"], "gpus": [gpu]}


@pytest.mark.parametrize(
    ("code", "name"),
    [(3, "NotSupported"), (4, "NoPermission"), (9, "DriverNotLoaded"), (12, "LibraryNotFound"),
     (15, "GpuIsLost"), (18, "LibRmVersionMismatch"), (999, "Unknown")],
)  # fmt: skip
def test_error_names_from_the_real_binding(code: int, name: str) -> None:
    pynvml, reason = load_pynvml()
    assert pynvml is not None, reason
    assert error_name(pynvml.NVMLError(code)) == name


def test_real_binding_without_init_gives_reason_not_exception() -> None:
    pynvml, _ = load_pynvml()
    session = NvmlSession(pynvml, "nvml")
    value, reason = session.call("nvmlDeviceGetCount")
    assert value is None
    assert reason in {"Uninitialized", "LibraryNotFound"}
    assert session.call("nvmlNoSuchFunction") == (None, "FunctionNotFound")


def test_init_runs_once_per_binding() -> None:
    class Counting(FakeNvml):
        calls = 0

        def nvmlInit(self) -> None:
            Counting.calls += 1
            super().nvmlInit()

    lib = Counting(_one_gpu())
    assert NvmlSession(lib, "a").init().status == "ok"
    assert NvmlSession(lib, "b").init().status == "ok"
    assert Counting.calls == 1


def test_gpu_lost_midway_stops_querying_and_keeps_what_was_read() -> None:
    lib = FakeNvml(_one_gpu(errors={"nvmlDeviceGetMemoryInfo": "GpuIsLost"}))
    session = NvmlSession(lib, "t")
    session.init()
    asked: list[str] = []
    original = session.call

    def spy(function: str, *args: Any, **kwargs: Any) -> tuple[Any, str | None]:
        asked.append(function)
        return original(function, *args, **kwargs)

    session.call = spy  # type: ignore[method-assign]
    gpu = read_gpu(session, 0, _no_process)
    assert gpu.status == "lost"
    assert gpu.name == "NVIDIA H100 80GB HBM3"  # read before the GPU was lost
    assert gpu.memory_total_bytes is None
    assert gpu.unavailable["memory_total_bytes"] == "GpuIsLost"
    assert gpu.unavailable["temperature_c"] == "GpuIsLost"
    assert gpu.unavailable["processes"] == "GpuIsLost"
    assert "nvmlDeviceGetTemperature" not in asked


def test_memory_info_falls_back_to_v1() -> None:
    lib = FakeNvml(_one_gpu(errors={"nvmlDeviceGetMemoryInfo:33554472": "FunctionNotFound"}))
    session = NvmlSession(lib, "t")
    session.init()
    gpu = read_gpu(session, 0, _no_process)
    assert gpu.memory_total_bytes == 85520809984
    assert gpu.memory_used_bytes == 1048576 + 362807296  # v1 counts reserved as used
    assert gpu.memory_reserved_bytes is None
    assert gpu.unavailable["memory_reserved_bytes"].startswith("NotSupported")


def test_process_seam_reports_gone_processes() -> None:
    lib = FakeNvml(_one_gpu(processes=[{"pid": 999, "used_memory": 1024}]))
    session = NvmlSession(lib, "t")
    session.init()
    gpu = read_gpu(session, 0, _no_process)
    (proc,) = gpu.processes or ()
    assert (proc.pid, proc.used_memory_bytes, proc.exists) == (999, 1024, False)
    assert proc.unavailable["user"] == "test"


def test_handle_failure_other_than_lost_is_error_status() -> None:
    lib = FakeNvml(_one_gpu(errors={"nvmlDeviceGetHandleByIndex": "Unknown"}))
    session = NvmlSession(lib, "t")
    session.init()
    gpu = read_gpu(session, 0, _no_process)
    assert gpu.status == "error"
    assert gpu.unavailable["name"] == "Unknown"


def test_clock_event_reason_decoding() -> None:
    assert decode_clock_event_reasons(0) == ()
    assert decode_clock_event_reasons(0x84) == ("sw_power_cap", "hw_power_brake_slowdown")
    assert decode_clock_event_reasons(0x40 | 0x1000) == ("hw_thermal_slowdown", "bit_0x1000")


def test_unknown_scenario_name() -> None:
    with pytest.raises(UnknownScenarioError, match="valid names: consumer-notsupported"):
        load_scenario("nope")
