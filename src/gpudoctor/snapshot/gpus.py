"""Reading every GPU through an :class:`~gpudoctor.snapshot.nvml.NvmlSession`.

Each value comes from one NVML call; a failing call leaves its fields ``None`` and records
the reason in ``GpuInfo.unavailable``. Once a GPU answers ``GpuIsLost`` it is not asked
anything more (a lost GPU can take seconds per call) and every remaining field is marked
``GpuIsLost``; the other GPUs are read as usual.

Units: NVML gives power in milliwatts (converted to W), memory in bytes, clocks in MHz,
temperatures in °C. Equivalent ``nvidia-smi`` queries are listed in
:mod:`gpudoctor.facts.machine`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpudoctor.snapshot.model import GPU_ERROR, GPU_LOST, GPU_OK, GpuInfo, GpuProcess
from gpudoctor.snapshot.nvml import NvmlSession
from gpudoctor.snapshot.processes import ProcessInspector

#: Clock event ("throttle") reason bits, nvml.h ``nvmlClocksEventReason*``.
CLOCK_EVENT_REASONS: tuple[tuple[int, str], ...] = (
    (0x0001, "gpu_idle"),
    (0x0002, "applications_clocks_setting"),
    (0x0004, "sw_power_cap"),
    (0x0008, "hw_slowdown"),
    (0x0010, "sync_boost"),
    (0x0020, "sw_thermal_slowdown"),
    (0x0040, "hw_thermal_slowdown"),
    (0x0080, "hw_power_brake_slowdown"),
    (0x0100, "display_clock_setting"),
    (0x0200, "board_limit"),
    (0x0400, "reliability"),
)

COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}

_VALUE_NOT_AVAILABLE = (1 << 64) - 1
_GPU_IS_LOST = "GpuIsLost"
_OPTIONAL_FIELDS = tuple(
    f.name for f in dataclasses.fields(GpuInfo) if f.name not in ("index", "status", "unavailable")
)


def decode_clock_event_reasons(mask: int) -> tuple[str, ...]:
    """Names of the bits set in a clock-event-reasons mask (unknown bits as ``bit_0x...``)."""
    names = [name for bit, name in CLOCK_EVENT_REASONS if mask & bit]
    known = 0
    for bit, _name in CLOCK_EVENT_REASONS:
        known |= bit
    rest = mask & ~known
    bit = 1
    while rest:
        if rest & bit:
            names.append(f"bit_0x{bit:x}")
            rest &= ~bit
        bit <<= 1
    return tuple(names)


class _GpuReader:
    """Reads one GPU's values, remembering failures and stopping once the GPU is lost."""

    def __init__(self, session: NvmlSession, handle: Any) -> None:
        self.session = session
        self.handle = handle
        self.values: dict[str, Any] = {}
        self.unavailable: dict[str, str] = {}
        self.lost = False

    def call(self, fields: tuple[str, ...], function: str, *args: Any, **kwargs: Any) -> Any:
        if self.lost:
            reason: str | None = _GPU_IS_LOST
            value = None
        else:
            value, reason = self.session.call(function, self.handle, *args, **kwargs)
        if reason is not None:
            if reason == _GPU_IS_LOST:
                self.lost = True
            for name in fields:
                self.unavailable[name] = reason
            return None
        return value

    def set(self, name: str, value: Any) -> None:
        self.values[name] = value
        self.unavailable.pop(name, None)


def collect_gpus(
    session: NvmlSession, inspector: ProcessInspector
) -> tuple[tuple[GpuInfo, ...], str | None]:
    """Read all GPUs NVML reports; returns (GPUs, reason the count failed or None)."""
    count, reason = session.call("nvmlDeviceGetCount")
    if reason is not None or not isinstance(count, int):
        return (), reason or "Error: unexpected device count"
    return tuple(read_gpu(session, index, inspector) for index in range(count)), None


def read_gpu(session: NvmlSession, index: int, inspector: ProcessInspector) -> GpuInfo:
    """Read one GPU by index; never raises for NVML errors."""
    handle, reason = session.call("nvmlDeviceGetHandleByIndex", index)
    if reason is not None:
        return GpuInfo(
            index=index,
            status=GPU_LOST if reason == _GPU_IS_LOST else GPU_ERROR,
            unavailable=dict.fromkeys(_OPTIONAL_FIELDS, reason),
        )
    r = _GpuReader(session, handle)
    _identity(r)
    _memory(r)
    _utilisation_thermal_power(r)
    _clocks(r)
    _ecc(r)
    _pcie_modes(r)
    _processes(r, inspector)
    return GpuInfo(
        index=index,
        status=GPU_LOST if r.lost else GPU_OK,
        unavailable=dict(sorted(r.unavailable.items())),
        **r.values,
    )


def read_telemetry(session: NvmlSession, index: int) -> GpuInfo:
    """What changes while a job runs, for one GPU: memory, utilisation, temperature, power,
    clocks and clock event reasons (the ``gpudoctor run`` sampler). Never raises for NVML
    errors; identity, ECC, PCIe and processes are not read."""
    handle, reason = session.call("nvmlDeviceGetHandleByIndex", index)
    if reason is not None:
        return GpuInfo(index=index, status=GPU_LOST if reason == _GPU_IS_LOST else GPU_ERROR)
    r = _GpuReader(session, handle)
    _memory(r)
    _utilisation_thermal_power(r)
    _clocks(r)
    return GpuInfo(
        index=index,
        status=GPU_LOST if r.lost else GPU_OK,
        unavailable=dict(sorted(r.unavailable.items())),
        **r.values,
    )


def _identity(r: _GpuReader) -> None:
    for name, function in (
        ("name", "nvmlDeviceGetName"),
        ("uuid", "nvmlDeviceGetUUID"),
        ("serial", "nvmlDeviceGetSerial"),
    ):
        value = r.call((name,), function)
        if value is not None:
            r.set(name, str(value))
    pci = r.call(("pci_bus_id",), "nvmlDeviceGetPciInfo")
    if pci is not None:
        bus = getattr(pci, "busId", None)
        if isinstance(bus, bytes):
            bus = bus.decode("ascii", "replace")
        if isinstance(bus, str):
            r.set("pci_bus_id", bus)
    cc = r.call(("compute_capability",), "nvmlDeviceGetCudaComputeCapability")
    if cc is not None:
        major, minor = cc
        r.set("compute_capability", f"{int(major)}.{int(minor)}")


def _memory(r: _GpuReader) -> None:
    fields = ("memory_total_bytes", "memory_used_bytes", "memory_free_bytes")
    v2 = getattr(r.session.lib, "nvmlMemory_v2", None)
    info = None
    if v2 is not None and not r.lost:
        info = r.call((*fields, "memory_reserved_bytes"), "nvmlDeviceGetMemoryInfo", version=v2)
    if info is None and not r.lost:
        # Drivers before R515 (or old bindings) only have the v1 structure.
        info = r.call(fields, "nvmlDeviceGetMemoryInfo")
        if info is not None:
            r.unavailable["memory_reserved_bytes"] = "NotSupported (memory info v1 only)"
    if info is None:
        return
    r.set("memory_total_bytes", int(info.total))
    r.set("memory_used_bytes", int(info.used))
    r.set("memory_free_bytes", int(info.free))
    reserved = getattr(info, "reserved", None)
    if isinstance(reserved, int):
        r.set("memory_reserved_bytes", reserved)


def _utilisation_thermal_power(r: _GpuReader) -> None:
    util = r.call(
        ("utilization_gpu_pct", "utilization_memory_pct"), "nvmlDeviceGetUtilizationRates"
    )
    if util is not None:
        r.set("utilization_gpu_pct", int(util.gpu))
        r.set("utilization_memory_pct", int(util.memory))
    sensor = r.session.constant("NVML_TEMPERATURE_GPU", 0)
    temp = r.call(("temperature_c",), "nvmlDeviceGetTemperature", sensor)
    if temp is not None:
        r.set("temperature_c", int(temp))
    for name, const, default in (
        ("temperature_slowdown_c", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1),
        ("temperature_shutdown_c", "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 0),
        ("temperature_max_operating_c", "NVML_TEMPERATURE_THRESHOLD_GPU_MAX", 3),
    ):
        value = r.call(
            (name,), "nvmlDeviceGetTemperatureThreshold", r.session.constant(const, default)
        )
        if value is not None:
            r.set(name, int(value))
    for name, function in (
        ("power_draw_w", "nvmlDeviceGetPowerUsage"),
        ("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit"),
    ):
        milliwatts = r.call((name,), function)
        if milliwatts is not None:
            r.set(name, round(int(milliwatts) / 1000.0, 3))


def _clocks(r: _GpuReader) -> None:
    sm = r.session.constant("NVML_CLOCK_SM", 1)
    mem = r.session.constant("NVML_CLOCK_MEM", 2)
    for name, function, clock in (
        ("clock_sm_mhz", "nvmlDeviceGetClockInfo", sm),
        ("clock_mem_mhz", "nvmlDeviceGetClockInfo", mem),
        ("clock_sm_max_mhz", "nvmlDeviceGetMaxClockInfo", sm),
        ("clock_mem_max_mhz", "nvmlDeviceGetMaxClockInfo", mem),
    ):
        value = r.call((name,), function, clock)
        if value is not None:
            r.set(name, int(value))
    function = (
        "nvmlDeviceGetCurrentClocksEventReasons"
        if r.session.has("nvmlDeviceGetCurrentClocksEventReasons")
        else "nvmlDeviceGetCurrentClocksThrottleReasons"
    )
    mask = r.call(("clock_event_reasons", "clock_event_reason_names"), function)
    if mask is not None:
        r.set("clock_event_reasons", int(mask))
        r.set("clock_event_reason_names", decode_clock_event_reasons(int(mask)))


def _ecc(r: _GpuReader) -> None:
    mode = r.call(("ecc_mode_current", "ecc_mode_pending"), "nvmlDeviceGetEccMode")
    if mode is not None:
        current, pending = mode
        r.set("ecc_mode_current", bool(current))
        r.set("ecc_mode_pending", bool(pending))
    corrected = r.session.constant("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0)
    uncorrected = r.session.constant("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    volatile = r.session.constant("NVML_VOLATILE_ECC", 0)
    aggregate = r.session.constant("NVML_AGGREGATE_ECC", 1)
    for name, error_type, counter in (
        ("ecc_volatile_corrected", corrected, volatile),
        ("ecc_volatile_uncorrected", uncorrected, volatile),
        ("ecc_aggregate_corrected", corrected, aggregate),
        ("ecc_aggregate_uncorrected", uncorrected, aggregate),
    ):
        value = r.call((name,), "nvmlDeviceGetTotalEccErrors", error_type, counter)
        if value is not None:
            r.set(name, int(value))
    for name, cause in (
        (
            "retired_pages_single_bit",
            r.session.constant("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0),
        ),
        (
            "retired_pages_double_bit",
            r.session.constant("NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1),
        ),
    ):
        pages = r.call((name,), "nvmlDeviceGetRetiredPages", cause)
        if pages is not None:
            r.set(name, len(pages))
    pending = r.call(("retired_pages_pending",), "nvmlDeviceGetRetiredPagesPendingStatus")
    if pending is not None:
        r.set("retired_pages_pending", bool(pending))
    rows = r.call(
        (
            "remapped_rows_correctable",
            "remapped_rows_uncorrectable",
            "remapped_rows_pending",
            "remapped_rows_failure",
        ),
        "nvmlDeviceGetRemappedRows",
    )
    if rows is not None:
        corr, unc, is_pending, failure = rows
        r.set("remapped_rows_correctable", int(corr))
        r.set("remapped_rows_uncorrectable", int(unc))
        r.set("remapped_rows_pending", bool(is_pending))
        r.set("remapped_rows_failure", bool(failure))


def _pcie_modes(r: _GpuReader) -> None:
    for name, function in (
        ("pcie_link_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
        ("pcie_link_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
        ("pcie_link_width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
        ("pcie_link_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
    ):
        value = r.call((name,), function)
        if value is not None:
            r.set(name, int(value))
    persistence = r.call(("persistence_mode",), "nvmlDeviceGetPersistenceMode")
    if persistence is not None:
        r.set("persistence_mode", bool(persistence))
    compute = r.call(("compute_mode",), "nvmlDeviceGetComputeMode")
    if compute is not None:
        r.set("compute_mode", COMPUTE_MODES.get(int(compute), f"unknown_{int(compute)}"))
    mig = r.call(("mig_mode_current", "mig_mode_pending"), "nvmlDeviceGetMigMode")
    if mig is not None:
        current, pending = mig
        r.set("mig_mode_current", bool(current))
        r.set("mig_mode_pending", bool(pending))


def _processes(r: _GpuReader, inspector: ProcessInspector) -> None:
    procs = r.call(("processes",), "nvmlDeviceGetComputeRunningProcesses")
    if procs is None and r.unavailable.get("processes") == "FunctionNotFound":
        # Drivers older than 510.39 lack the _v3 entry point the current binding uses.
        procs = r.call(("processes",), "nvmlDeviceGetComputeRunningProcesses_v2")
    if procs is None:
        return
    result: list[GpuProcess] = []
    for proc in procs:
        pid = int(proc.pid)
        used = getattr(proc, "usedGpuMemory", None)
        used_bytes = int(used) if isinstance(used, int) and used != _VALUE_NOT_AVAILABLE else None
        details = inspector(pid)
        unavailable: dict[str, str] = {}
        if used_bytes is None:
            unavailable["used_memory_bytes"] = "NotAvailable"
        if details.reason is not None:
            for name in ("user", "cmdline", "name", "exists", "zombie"):
                if getattr(details, name) is None:
                    unavailable[name] = details.reason
        result.append(
            GpuProcess(
                pid=pid,
                used_memory_bytes=used_bytes,
                name=details.name,
                user=details.user,
                cmdline=details.cmdline,
                exists=details.exists,
                zombie=details.zombie,
                unavailable=unavailable,
            )
        )
    r.set("processes", tuple(sorted(result, key=lambda p: p.pid)))
