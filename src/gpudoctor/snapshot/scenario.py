"""Named machine scenarios: a whole simulated machine, so every command runs without a GPU.

A scenario is a YAML file in ``scenarios/`` beside this module. :class:`ScenarioSource`
serves it through the same :class:`~gpudoctor.snapshot.source.MachineSource` interface as
the live machine: NVML through the :class:`~gpudoctor.snapshot.scenario_nvml.FakeNvml` test
double (so the real GPU collector runs), and the host, the installed versions, the
environment variables and the kernel log straight from the file.

Policy: **a scenario fakes the whole machine.** Every section below is required (``host``,
``versions``, ``environment``, ``kernel_log``, and ``driver`` unless ``init_error`` says NVML
does not start), so nothing of the machine running gpudoctor leaks into a scenario's
snapshot — not its host name, ``/dev/shm``, installed packages nor ``CUDA_VISIBLE_DEVICES``
— and the snapshot's ``sources`` say that each part came ``from scenario <name>``.

Scenario file keys:

``description``
    What the scenario shows.
``init_error``
    ``{error: DriverNotLoaded, message: "..."}``: ``nvmlInit`` raises that error.
``driver``
    ``version`` (``"550.90.07"``), ``cuda_version`` (NVML's int, ``12040``), ``nvml_version``.
``gpu_defaults`` / ``gpus``
    Per-GPU raw NVML values, deep-merged over the defaults: ``name uuid serial pci_bus_id
    compute_capability [maj, min] memory {total used free reserved} utilization {gpu
    memory} temperature thresholds {shutdown slowdown gpu_max} power_usage_mw power_limit_mw
    clocks {sm mem} max_clocks {sm mem} clock_event_reasons ecc_mode [cur, pending]
    ecc_errors {volatile|aggregate: {corrected uncorrected}} retired_pages {single_bit
    double_bit pending} remapped_rows {correctable uncorrectable pending failure} pcie {gen
    max_gen width max_width} persistence_mode compute_mode mig_mode [cur, pending]
    processes [{pid, used_memory}]``; ``errors {nvmlFunction[:firstArg]: ErrorName}`` makes a
    call raise; ``lost: true`` makes every call on that GPU raise ``GpuIsLost``.
``processes``
    ``{pid: {user, name, cmdline: [...], exists, zombie}}``: what the process lookup reports.
``kernel_log``
    The kernel log lines (a list, possibly empty).
``host`` / ``versions``
    The host and versions records, with the keys of the JSON snapshot.
``environment``
    The GPU-related environment variables set on the machine (``{}`` for none).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from gpudoctor.errors import SnapshotError
from gpudoctor.snapshot.codec import record_from_dict
from gpudoctor.snapshot.kernel_reader import KernelLogReader, lines_reader
from gpudoctor.snapshot.model import HostInfo, SourceStatus, VersionsInfo
from gpudoctor.snapshot.nvml import InitResult, NvmlSession
from gpudoctor.snapshot.processes import ProcessDetails, ProcessInspector
from gpudoctor.snapshot.scenario_nvml import FakeNvml, UnknownScenarioError
from gpudoctor.yamlnodes import load_data

__all__ = [
    "ScenarioProcesses",
    "ScenarioSource",
    "UnknownScenarioError",
    "check_scenario",
    "load_scenario",
    "scenario_names",
]

_REQUIRED_KEYS = {"description", "host", "versions", "environment", "kernel_log"}
_SCENARIO_KEYS = _REQUIRED_KEYS | {"init_error", "driver", "gpu_defaults", "gpus", "processes"}
_GPU_KEYS = {
    "name", "uuid", "serial", "pci_bus_id", "compute_capability", "memory", "utilization",
    "temperature", "thresholds", "power_usage_mw", "power_limit_mw", "clocks", "max_clocks",
    "clock_event_reasons", "ecc_mode", "ecc_errors", "retired_pages", "remapped_rows", "pcie",
    "persistence_mode", "compute_mode", "mig_mode", "processes", "errors", "lost",
}  # fmt: skip


def _folder() -> Any:
    return resources.files("gpudoctor.snapshot").joinpath("scenarios")


def scenario_names() -> list[str]:
    """Names of the bundled scenarios, sorted."""
    return sorted(p.name[: -len(".yaml")] for p in _folder().iterdir() if p.name.endswith(".yaml"))


@cache
def _load_text(name: str) -> str:
    if name not in scenario_names():
        valid = ", ".join(scenario_names())
        raise UnknownScenarioError(f"unknown scenario {name!r}; valid names: {valid}")
    text: str = _folder().joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return text


def load_scenario(name: str) -> dict[str, Any]:
    """Load and check a bundled scenario; returns a fresh copy each call.

    Raises:
        UnknownScenarioError: unknown name (the message lists the valid ones), or a file
            with an unknown key or without a required section.
    """
    return check_scenario(name, load_data(_load_text(name), f"{name}.yaml"))


def check_scenario(name: str, data: object) -> dict[str, Any]:
    """Check a scenario's sections and merge its GPU defaults; returns a fresh copy.

    Raises:
        UnknownScenarioError: not a mapping, an unknown key, or a required section missing.
    """
    if not isinstance(data, dict):
        raise UnknownScenarioError(f"scenario {name!r} is not a mapping")
    data = copy.deepcopy(data)
    unknown = sorted(set(data) - _SCENARIO_KEYS)
    if unknown:
        raise UnknownScenarioError(f"scenario {name!r}: unknown keys {unknown}")
    required = _REQUIRED_KEYS | ({"driver"} if not data.get("init_error") else set())
    missing = sorted(required - set(data))
    if missing:
        raise UnknownScenarioError(
            f"scenario {name!r}: missing {missing} (a scenario describes the whole machine)"
        )
    defaults = data.get("gpu_defaults") or {}
    data["gpus"] = [_deep_merge(defaults, gpu) for gpu in data.get("gpus") or []]
    for index, gpu in enumerate(data["gpus"]):
        unknown = sorted(set(gpu) - _GPU_KEYS)
        if unknown:
            raise UnknownScenarioError(f"scenario {name!r}: gpus[{index}]: unknown keys {unknown}")
    return data


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


class ScenarioProcesses:
    """The process lookup for a scenario: details come from its ``processes`` map."""

    def __init__(self, processes: dict[Any, Any] | None) -> None:
        """Index the scenario's process table by integer pid."""
        self._table = {int(pid): info for pid, info in (processes or {}).items()}

    def __call__(self, pid: int) -> ProcessDetails:
        """Describe ``pid`` as the scenario says (unknown pids do not exist)."""
        info = self._table.get(pid)
        if info is None:
            return ProcessDetails(exists=False, reason="NoSuchProcess (not in scenario)")
        cmdline = info.get("cmdline")
        return ProcessDetails(
            exists=bool(info.get("exists", True)),
            zombie=bool(info.get("zombie", False)),
            name=info.get("name"),
            user=info.get("user"),
            cmdline=tuple(str(a) for a in cmdline) if cmdline is not None else None,
            reason=info.get("reason"),
        )


class ScenarioSource:
    """A whole simulated machine read from one bundled scenario (see the module docstring)."""

    def __init__(self, name: str, data: dict[str, Any] | None = None) -> None:
        """Serve the bundled scenario ``name``, or ``data`` shaped like a scenario file (tests).

        Raises:
            UnknownScenarioError: no bundled scenario has that name, or its file is invalid.
        """
        self.name = name
        self.data = check_scenario(name, data) if data is not None else load_scenario(name)
        self._note = f"from scenario {name}"

    @property
    def label(self) -> str:
        """``scenario:<name>``."""
        return f"scenario:{self.name}"

    def nvml(self) -> tuple[NvmlSession | None, InitResult | None]:
        """A session on the fake NVML serving this scenario's driver and GPUs."""
        return NvmlSession(FakeNvml(self.data, self.name), f"fake:{self.name}"), None

    def process_inspector(self) -> ProcessInspector:
        """The scenario's process table."""
        return ScenarioProcesses(self.data.get("processes"))

    def versions(self) -> tuple[VersionsInfo, list[SourceStatus]]:
        """The scenario's ``versions`` section."""
        return self._record(VersionsInfo, "versions"), [SourceStatus("versions", True, self._note)]

    def host(self) -> tuple[HostInfo, list[SourceStatus]]:
        """The scenario's ``host`` section."""
        return self._record(HostInfo, "host"), [SourceStatus("host", True, self._note)]

    def environment(self) -> tuple[dict[str, str], list[SourceStatus]]:
        """The scenario's ``environment`` section (the user's own variables are not read)."""
        env = {str(k): str(v) for k, v in (self.data.get("environment") or {}).items()}
        return dict(sorted(env.items())), [SourceStatus("environment", True, self._note)]

    def kernel_log_readers(self) -> Sequence[KernelLogReader]:
        """One reader returning the scenario's ``kernel_log`` lines."""
        return [lines_reader(self.label, [str(x) for x in self.data.get("kernel_log") or []])]

    def boot_time(self) -> datetime | None:
        """Unknown: scenario kernel log lines are never filtered by time."""
        return None

    def _record(self, cls: type[Any], key: str) -> Any:
        try:
            return record_from_dict(cls, self.data.get(key) or {}, key)
        except SnapshotError as exc:
            raise UnknownScenarioError(f"scenario {self.name!r}: {exc}") from None
