"""Forward compatibility: running a newer CUDA major through the ``cuda-compat`` package.

The compat package swaps only the user-mode ``libcuda``; NVIDIA supports it on datacenter
GPUs, select NGC-Server-Ready RTX SKUs and Jetson, and only on some installed driver
branches (the matrix in ``forward_compat.yaml``). On a GeForce card it fails with 804
("forward compatibility was attempted on non supported HW").
"""

from __future__ import annotations

from enum import Enum

from gpudoctor.compat.gpus import gpu_category
from gpudoctor.compat.tables import forward_compat_table
from gpudoctor.version_numbers import Version

__all__ = ["CompatPackageStatus", "compat_package_status", "forward_compat_possible"]


class CompatPackageStatus(str, Enum):
    """Whether a ``cuda-compat-X-Y`` package may be used on an installed driver."""

    COMPATIBLE = "compatible"
    NOT_NEEDED = "not_needed"
    UNSUPPORTED = "unsupported"
    UNKNOWN = "unknown"


def forward_compat_possible(gpu_name: str) -> bool | None:
    """Whether forward compatibility (``cuda-compat``) can work on this GPU at all.

    True for datacenter and Jetson GPUs, False for GeForce/TITAN (error 804), ``None``
    for workstation cards (only unnamed NGC-Server-Ready SKUs are supported) and for
    unknown names.
    """
    category = gpu_category(gpu_name)
    if category is None:
        return None
    table = forward_compat_table()
    if category in table.supported_categories:
        return True
    if category in table.unsupported_categories:
        return False
    return None


def compat_package_status(package_cuda: Version, driver: Version) -> CompatPackageStatus:
    """Whether ``cuda-compat-<major>-<minor>`` is supported on the installed driver's branch.

    ``package_cuda`` is the CUDA version of the package (``Version("12.8")``); ``driver``
    the installed kernel driver. Branches missing from NVIDIA's matrix (end-of-life and
    new-feature branches) are UNSUPPORTED targets; packages the matrix does not list are
    UNKNOWN.
    """
    table = forward_compat_table()
    wanted = Version(f"{package_cuda.major}.{package_cuda.minor}")
    for package in table.packages:
        if package.cuda == wanted:
            if driver.major in package.not_needed:
                return CompatPackageStatus.NOT_NEEDED
            if driver.major in package.compatible:
                return CompatPackageStatus.COMPATIBLE
            if driver.major in table.base_branches or driver.major < max(table.base_branches):
                return CompatPackageStatus.UNSUPPORTED
            return CompatPackageStatus.UNKNOWN
    return CompatPackageStatus.UNKNOWN
