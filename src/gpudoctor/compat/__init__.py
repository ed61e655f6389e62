"""Versioned CUDA compatibility data and the pure verdicts computed from it.

The data lives in ``data/*.yaml`` (shipped in the wheel), each table with a name, a
date-like version and its sources (:func:`table_versions`, shown by ``--explain-data``).
:mod:`.verdicts` holds the verdict functions; :func:`compat_facts` turns raw snapshot
facts into the flat facts rule conditions test.
"""

from __future__ import annotations

from gpudoctor.compat._fields import CompatDataError
from gpudoctor.compat.facts import COMPAT_FACT_NAMES, compat_facts
from gpudoctor.compat.tables import load_all_tables, table_versions
from gpudoctor.compat.verdicts import (
    ArchList,
    ArchStatus,
    ArchSupport,
    CompatPackageStatus,
    ComputeCapability,
    CudaMajorConflict,
    RuntimeStatus,
    RuntimeSupport,
    arch_supported,
    compat_package_status,
    compute_capability_for_gpu,
    cuda_major_conflicts,
    driver_supports_runtime,
    flavour_cuda_version,
    flavour_for_cuda,
    forward_compat_possible,
    gpu_category,
    is_datacenter_gpu,
    jax_plugin_for,
    lookup_gpu,
    max_cuda_for_driver,
    minimum_driver_for,
    minor_compat_floor,
    parse_compute_capability,
    tf_build_for,
    torch_builds_supporting,
    torch_compiled_archs,
    torch_cuda_flavour,
    torch_release,
)

__all__ = [
    "COMPAT_FACT_NAMES",
    "ArchList",
    "ArchStatus",
    "ArchSupport",
    "CompatDataError",
    "CompatPackageStatus",
    "ComputeCapability",
    "CudaMajorConflict",
    "RuntimeStatus",
    "RuntimeSupport",
    "arch_supported",
    "compat_facts",
    "compat_package_status",
    "compute_capability_for_gpu",
    "cuda_major_conflicts",
    "driver_supports_runtime",
    "flavour_cuda_version",
    "flavour_for_cuda",
    "forward_compat_possible",
    "gpu_category",
    "is_datacenter_gpu",
    "jax_plugin_for",
    "load_all_tables",
    "lookup_gpu",
    "max_cuda_for_driver",
    "minimum_driver_for",
    "minor_compat_floor",
    "parse_compute_capability",
    "table_versions",
    "tf_build_for",
    "torch_builds_supporting",
    "torch_compiled_archs",
    "torch_cuda_flavour",
    "torch_release",
]
