"""Versioned CUDA compatibility data and the pure verdicts computed from it.

The data lives in ``data/*.yaml`` (shipped in the wheel), each table with a name, a
date-like version and its sources (:func:`table_versions`, shown by ``--explain-data``).
The verdict functions are pure (their only input besides their arguments is the bundled
tables) and return a plain value or a frozen result with a status, a ``reason`` and a
``fix``. They live in small modules by topic — :mod:`.driver` (driver vs. CUDA runtime),
:mod:`.archs` (compiled architectures vs. compute capability), :mod:`.gpus` and
:mod:`.forward` (GPU identity, forward compatibility), :mod:`.frameworks` (PyTorch,
TensorFlow, JAX builds), :mod:`.packages` (CUDA majors mixed in one environment) — and are
all exported here. :mod:`gpudoctor.facts.compat` turns them into the flat facts rules test.
"""

from __future__ import annotations

from gpudoctor.compat._fields import CompatDataError
from gpudoctor.compat.archs import (
    ArchList,
    ArchStatus,
    ArchSupport,
    ComputeCapability,
    arch_supported,
    parse_compute_capability,
)
from gpudoctor.compat.driver import (
    RuntimeStatus,
    RuntimeSupport,
    driver_supports_runtime,
    max_cuda_for_driver,
    minimum_driver_for,
    minor_compat_floor,
)
from gpudoctor.compat.forward import (
    CompatPackageStatus,
    compat_package_status,
    forward_compat_possible,
)
from gpudoctor.compat.frameworks import (
    flavour_cuda_version,
    flavour_for_cuda,
    jax_plugin_for,
    tf_build_for,
    torch_builds_supporting,
    torch_compiled_archs,
    torch_cuda_flavour,
    torch_release,
)
from gpudoctor.compat.gpus import (
    compute_capability_for_gpu,
    gpu_category,
    is_datacenter_gpu,
    lookup_gpu,
)
from gpudoctor.compat.packages import CudaMajorConflict, cuda_major_conflicts
from gpudoctor.compat.tables import load_all_tables, table_versions

__all__ = [
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
