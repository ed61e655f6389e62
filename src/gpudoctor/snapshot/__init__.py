"""The machine snapshot: collect it (NVML, host, versions, kernel log), save and load it.

Public API::

    from gpudoctor.snapshot import collect_snapshot, load_snapshot, Snapshot

A snapshot is collected from a :class:`MachineSource`: this machine (:class:`LiveSource`) or
a named scenario (``ScenarioSource``, chosen by ``GPUDOCTOR_FAKE_NVML``).

Its facts for rules are made by :mod:`gpudoctor.facts.machine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.snapshot.codec import MAX_SNAPSHOT_BYTES
from gpudoctor.snapshot.collect import FAKE_NVML_ENV, collect_snapshot
from gpudoctor.snapshot.model import (
    SCHEMA,
    CudaPackage,
    DriverInfo,
    FrameworkInfo,
    GpuInfo,
    GpuProcess,
    HostInfo,
    KernelEvent,
    KernelLogInfo,
    Snapshot,
    SourceStatus,
    VersionsInfo,
    load_snapshot,
)
from gpudoctor.snapshot.source import LiveSource, MachineSource, machine_source

__all__ = [
    "FAKE_NVML_ENV",
    "MAX_SNAPSHOT_BYTES",
    "SCHEMA",
    "CudaPackage",
    "DriverInfo",
    "FrameworkInfo",
    "GpuInfo",
    "GpuProcess",
    "HostInfo",
    "KernelEvent",
    "KernelLogInfo",
    "LiveSource",
    "MachineSource",
    "ScenarioSource",
    "Snapshot",
    "SourceStatus",
    "UnknownScenarioError",
    "VersionsInfo",
    "collect_snapshot",
    "load_snapshot",
    "machine_source",
    "scenario_names",
]

if TYPE_CHECKING:
    from gpudoctor.snapshot.scenario import ScenarioSource, UnknownScenarioError, scenario_names

_SCENARIO_NAMES = ("ScenarioSource", "UnknownScenarioError", "scenario_names")


def __getattr__(name: str) -> object:
    # The scenarios (and the YAML parser they need) load only when asked for: a real run never
    # needs them, and they would cost every command's start-up.
    if name in _SCENARIO_NAMES:
        from gpudoctor.snapshot import scenario

        return getattr(scenario, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
