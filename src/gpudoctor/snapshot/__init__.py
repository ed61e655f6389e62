"""The machine snapshot: collect it (NVML, host, versions, kernel log), save and load it.

Public API::

    from gpudoctor.snapshot import collect_snapshot, load_snapshot, Snapshot, snapshot_facts
"""

from __future__ import annotations

from gpudoctor.snapshot.collect import FAKE_NVML_ENV, collect_snapshot
from gpudoctor.snapshot.facts import FACT_NAMES, snapshot_facts
from gpudoctor.snapshot.fake_nvml import UnknownScenarioError, scenario_names
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

__all__ = [
    "FACT_NAMES",
    "FAKE_NVML_ENV",
    "SCHEMA",
    "CudaPackage",
    "DriverInfo",
    "FrameworkInfo",
    "GpuInfo",
    "GpuProcess",
    "HostInfo",
    "KernelEvent",
    "KernelLogInfo",
    "Snapshot",
    "SourceStatus",
    "UnknownScenarioError",
    "VersionsInfo",
    "collect_snapshot",
    "load_snapshot",
    "scenario_names",
    "snapshot_facts",
]
