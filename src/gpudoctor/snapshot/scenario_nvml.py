"""The NVML test double: a stand-in for the ``pynvml`` module, fed by one scenario's data.

:class:`FakeNvml` exposes the ``pynvml`` names the collector uses (``nvmlInit``,
``nvmlDeviceGetCount``, ``nvmlDeviceGetMemoryInfo``..., the ``NVMLError`` class with its
``NVMLError_<Name>`` subclasses, and the ``NVML_*`` constants), so the real collector
(:mod:`gpudoctor.snapshot.gpus` through :class:`~gpudoctor.snapshot.nvml.NvmlSession`) runs
unchanged without a GPU. It knows nothing of files or environment variables: it serves the
``init_error``, ``driver`` and ``gpus`` sections of a scenario as loaded by
:mod:`gpudoctor.snapshot.scenario`, whose docstring documents their keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from gpudoctor.errors import GpudoctorError
from gpudoctor.snapshot.nvml import ERROR_NAMES

_ERROR_TEXT = {
    "NotSupported": "Not Supported",
    "NoPermission": "Insufficient Permissions",
    "DriverNotLoaded": "Driver Not Loaded",
    "LibraryNotFound": "NVML Shared Library Not Found",
    "FunctionNotFound": "Function Not Found",
    "GpuIsLost": "GPU is lost",
    "LibRmVersionMismatch": "RM has detected an NVML/RM version mismatch.",
    "Unknown": "Unknown Error",
}
_CODES = {name: code for code, name in ERROR_NAMES.items()}


class UnknownScenarioError(GpudoctorError):
    """A scenario that does not exist was asked for, or a scenario's data is invalid."""


class NVMLError(Exception):
    """Same contract as ``pynvml.NVMLError``: ``NVMLError(code)`` builds the subclass."""

    value: int
    _by_code: ClassVar[dict[int, type[NVMLError]]] = {}

    def __new__(cls, value: int, message: str | None = None) -> NVMLError:
        target = cls._by_code.get(value, cls) if cls is NVMLError else cls
        obj = Exception.__new__(target)
        obj.value = value
        return obj

    def __init__(self, value: int, message: str | None = None) -> None:
        super().__init__(value)
        self.value = value
        self.message = message

    def __str__(self) -> str:
        if self.message:
            return self.message
        name = ERROR_NAMES.get(self.value, "Unknown")
        return _ERROR_TEXT.get(name, name)


def _make_error_classes() -> dict[str, type[NVMLError]]:
    classes: dict[str, type[NVMLError]] = {}
    for code, name in ERROR_NAMES.items():
        cls = type(f"NVMLError_{name}", (NVMLError,), {})
        NVMLError._by_code[code] = cls
        classes[f"NVMLError_{name}"] = cls
    return classes


ERROR_CLASSES = _make_error_classes()


def nvml_error(name: str, message: str | None = None) -> NVMLError:
    """Build the fake error for a short name (``"NotSupported"``)."""
    if name not in _CODES:
        raise UnknownScenarioError(f"unknown NVML error name {name!r} in scenario")
    return NVMLError(_CODES[name], message)


@dataclass(frozen=True)
class _Struct:
    """Attribute bag mimicking the ctypes structures pynvml returns."""

    fields: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class FakeHandle:
    """A device handle: just the index."""

    index: int


class FakeNvml:
    """A stand-in for the ``pynvml`` module, driven by one scenario."""

    SHUTDOWN_AT_EXIT = False
    NVMLError = NVMLError
    NVML_TEMPERATURE_GPU = 0
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
    NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2
    NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3
    NVML_CLOCK_GRAPHICS = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
    NVML_VOLATILE_ECC = 0
    NVML_AGGREGATE_ECC = 1
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
    NVML_FEATURE_DISABLED = 0
    NVML_FEATURE_ENABLED = 1
    NVML_ERROR_NOT_SUPPORTED = 3
    NVML_ERROR_NO_PERMISSION = 4
    NVML_ERROR_DRIVER_NOT_LOADED = 9
    NVML_ERROR_LIBRARY_NOT_FOUND = 12
    NVML_ERROR_FUNCTION_NOT_FOUND = 13
    NVML_ERROR_GPU_IS_LOST = 15
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
    NVML_ERROR_UNKNOWN = 999
    nvmlMemory_v2 = 0x02000028

    def __init__(self, scenario: dict[str, Any], name: str = "custom") -> None:
        """Serve ``scenario`` (as returned by :func:`gpudoctor.snapshot.scenario.load_scenario`)."""
        self.name = name
        self.scenario = scenario
        self.gpus: list[dict[str, Any]] = list(scenario.get("gpus") or [])
        self.initialised = False
        for cls_name, cls in ERROR_CLASSES.items():
            setattr(self, cls_name, cls)

    # -- system -------------------------------------------------------------------------
    def nvmlInit(self) -> None:
        error = self.scenario.get("init_error")
        if error:
            raise nvml_error(str(error["error"]), error.get("message"))
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False

    def _driver(self, key: str) -> Any:
        self._need_init()
        value = (self.scenario.get("driver") or {}).get(key)
        if value is None:
            raise nvml_error("NotSupported")
        return value

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self._driver("version"))

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self._driver("cuda_version"))

    def nvmlSystemGetNVMLVersion(self) -> str:
        return str(self._driver("nvml_version"))

    def nvmlDeviceGetCount(self) -> int:
        self._need_init()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeHandle:
        self._need_init()
        if not 0 <= index < len(self.gpus):
            raise nvml_error("InvalidArgument")
        self._check(index, "nvmlDeviceGetHandleByIndex", None)
        return FakeHandle(index)

    # -- device -------------------------------------------------------------------------
    def _need_init(self) -> None:
        if not self.initialised:
            raise nvml_error("Uninitialized")

    def _check(self, index: int, function: str, arg: Any) -> dict[str, Any]:
        gpu = self.gpus[index]
        if gpu.get("lost"):
            raise nvml_error("GpuIsLost")
        errors = gpu.get("errors") or {}
        name = errors.get(f"{function}:{arg}") or errors.get(function)
        if name:
            raise nvml_error(str(name))
        return gpu

    def _get(self, handle: FakeHandle, function: str, *path: str, arg: Any = None) -> Any:
        self._need_init()
        value: Any = self._check(handle.index, function, arg)
        for key in path:
            if not isinstance(value, dict) or value.get(key) is None:
                raise nvml_error("NotSupported")
            value = value[key]
        return value

    def nvmlDeviceGetName(self, handle: FakeHandle) -> str:
        return str(self._get(handle, "nvmlDeviceGetName", "name"))

    def nvmlDeviceGetUUID(self, handle: FakeHandle) -> str:
        return str(self._get(handle, "nvmlDeviceGetUUID", "uuid"))

    def nvmlDeviceGetSerial(self, handle: FakeHandle) -> str:
        return str(self._get(handle, "nvmlDeviceGetSerial", "serial"))

    def nvmlDeviceGetPciInfo(self, handle: FakeHandle) -> _Struct:
        return _Struct({"busId": str(self._get(handle, "nvmlDeviceGetPciInfo", "pci_bus_id"))})

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeHandle) -> tuple[int, int]:
        major, minor = self._get(handle, "nvmlDeviceGetCudaComputeCapability", "compute_capability")
        return int(major), int(minor)

    def nvmlDeviceGetMemoryInfo(self, handle: FakeHandle, version: int | None = None) -> _Struct:
        mem = self._get(handle, "nvmlDeviceGetMemoryInfo", "memory", arg=version)
        total, used = int(mem["total"]), int(mem["used"])
        reserved = int(mem.get("reserved", 0))
        free = int(mem.get("free", total - used - reserved))
        if version is None:
            # v1 counts the reserved memory as used, like the real driver.
            return _Struct({"total": total, "used": used + reserved, "free": free})
        return _Struct({"total": total, "used": used, "free": free, "reserved": reserved})

    def nvmlDeviceGetUtilizationRates(self, handle: FakeHandle) -> _Struct:
        util = self._get(handle, "nvmlDeviceGetUtilizationRates", "utilization")
        return _Struct({"gpu": int(util["gpu"]), "memory": int(util["memory"])})

    def nvmlDeviceGetTemperature(self, handle: FakeHandle, sensor: int) -> int:
        return int(self._get(handle, "nvmlDeviceGetTemperature", "temperature", arg=sensor))

    def nvmlDeviceGetTemperatureThreshold(self, handle: FakeHandle, threshold: int) -> int:
        key = {0: "shutdown", 1: "slowdown", 2: "mem_max", 3: "gpu_max"}.get(threshold, "?")
        return int(
            self._get(handle, "nvmlDeviceGetTemperatureThreshold", "thresholds", key, arg=threshold)
        )

    def nvmlDeviceGetPowerUsage(self, handle: FakeHandle) -> int:
        return int(self._get(handle, "nvmlDeviceGetPowerUsage", "power_usage_mw"))

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: FakeHandle) -> int:
        return int(self._get(handle, "nvmlDeviceGetEnforcedPowerLimit", "power_limit_mw"))

    def _clock(self, handle: FakeHandle, function: str, key: str, clock: int) -> int:
        name = {0: "graphics", 1: "sm", 2: "mem"}.get(clock, "?")
        return int(self._get(handle, function, key, name, arg=clock))

    def nvmlDeviceGetClockInfo(self, handle: FakeHandle, clock: int) -> int:
        return self._clock(handle, "nvmlDeviceGetClockInfo", "clocks", clock)

    def nvmlDeviceGetMaxClockInfo(self, handle: FakeHandle, clock: int) -> int:
        return self._clock(handle, "nvmlDeviceGetMaxClockInfo", "max_clocks", clock)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeHandle) -> int:
        return int(
            self._get(handle, "nvmlDeviceGetCurrentClocksEventReasons", "clock_event_reasons")
        )

    def nvmlDeviceGetEccMode(self, handle: FakeHandle) -> list[int]:
        current, pending = self._get(handle, "nvmlDeviceGetEccMode", "ecc_mode")
        return [int(current), int(pending)]

    def nvmlDeviceGetTotalEccErrors(
        self, handle: FakeHandle, error_type: int, counter_type: int
    ) -> int:
        counter = {0: "volatile", 1: "aggregate"}.get(counter_type, "?")
        kind = {0: "corrected", 1: "uncorrected"}.get(error_type, "?")
        return int(
            self._get(handle, "nvmlDeviceGetTotalEccErrors", "ecc_errors", counter, kind,
                      arg=error_type)
        )  # fmt: skip

    def nvmlDeviceGetRetiredPages(self, handle: FakeHandle, cause: int) -> list[int]:
        key = {0: "single_bit", 1: "double_bit"}.get(cause, "?")
        count = int(self._get(handle, "nvmlDeviceGetRetiredPages", "retired_pages", key, arg=cause))
        return [0x1000 * (n + 1) for n in range(count)]

    def nvmlDeviceGetRetiredPagesPendingStatus(self, handle: FakeHandle) -> int:
        pending = self._get(
            handle, "nvmlDeviceGetRetiredPagesPendingStatus", "retired_pages", "pending"
        )
        return 1 if pending else 0

    def nvmlDeviceGetRemappedRows(self, handle: FakeHandle) -> tuple[int, int, int, int]:
        rows = self._get(handle, "nvmlDeviceGetRemappedRows", "remapped_rows")
        return (
            int(rows.get("correctable", 0)),
            int(rows.get("uncorrectable", 0)),
            1 if rows.get("pending") else 0,
            1 if rows.get("failure") else 0,
        )

    def _pcie(self, handle: FakeHandle, function: str, key: str) -> int:
        return int(self._get(handle, function, "pcie", key))

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return self._pcie(handle, "nvmlDeviceGetCurrPcieLinkGeneration", "gen")

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return self._pcie(handle, "nvmlDeviceGetMaxPcieLinkGeneration", "max_gen")

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: FakeHandle) -> int:
        return self._pcie(handle, "nvmlDeviceGetCurrPcieLinkWidth", "width")

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: FakeHandle) -> int:
        return self._pcie(handle, "nvmlDeviceGetMaxPcieLinkWidth", "max_width")

    def nvmlDeviceGetPersistenceMode(self, handle: FakeHandle) -> int:
        return 1 if self._get(handle, "nvmlDeviceGetPersistenceMode", "persistence_mode") else 0

    def nvmlDeviceGetComputeMode(self, handle: FakeHandle) -> int:
        return int(self._get(handle, "nvmlDeviceGetComputeMode", "compute_mode"))

    def nvmlDeviceGetMigMode(self, handle: FakeHandle) -> list[int]:
        current, pending = self._get(handle, "nvmlDeviceGetMigMode", "mig_mode")
        return [int(current), int(pending)]

    def nvmlDeviceGetComputeRunningProcesses(self, handle: FakeHandle) -> list[_Struct]:
        procs = self._get(handle, "nvmlDeviceGetComputeRunningProcesses")
        return [
            _Struct({"pid": int(p["pid"]), "usedGpuMemory": p.get("used_memory")})
            for p in procs.get("processes") or []
        ]
