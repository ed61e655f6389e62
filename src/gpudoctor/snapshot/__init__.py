"""The machine snapshot: collect it (NVML, host, versions, kernel log), save and load it.

Public API::

    from gpudoctor.snapshot import collect_snapshot, load_snapshot, Snapshot

Its facts for rules are made by :mod:`gpudoctor.facts.machine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

__all__ = [
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
]

if TYPE_CHECKING:
    from gpudoctor.snapshot.fake_nvml import UnknownScenarioError, scenario_names

_FAKE_NVML_NAMES = ("UnknownScenarioError", "scenario_names")


def __getattr__(name: str) -> object:
    # The fake NVML (and the YAML parser it needs) loads only when asked for: a real run never
    # needs it, and it would cost every command's start-up.
    if name in _FAKE_NVML_NAMES:
        from gpudoctor.snapshot import fake_nvml

        return getattr(fake_nvml, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
