"""GPU name → compute capability and product category.

Names come from NVML / ``nvidia-smi`` (``"NVIDIA H100 80GB HBM3"``, ``"Tesla K80"``,
``"NVIDIA GeForce RTX 5090"``). They are normalised (lower case, ``_`` → space, spaces
collapsed) and matched against the ordered patterns of ``gpu_compute_capability.yaml``;
the first match wins. Unknown names give ``None``, never a guess.
"""

from __future__ import annotations

import re

from gpudoctor.compat.model import GpuCategory, GpuEntry
from gpudoctor.compat.tables import gpu_table

__all__ = [
    "compute_capability_for_gpu",
    "gpu_category",
    "is_datacenter_gpu",
    "lookup_gpu",
    "normalise_gpu_name",
]

_SPACES = re.compile(r"\s+")


def normalise_gpu_name(name: str) -> str:
    """Lower-case, turn ``_`` into spaces, collapse whitespace and trim."""
    return _SPACES.sub(" ", name.replace("_", " ")).strip().lower()


def lookup_gpu(name: str) -> GpuEntry | None:
    """The table entry whose pattern first matches the GPU name, or ``None``."""
    normalised = normalise_gpu_name(name)
    if not normalised:
        return None
    for entry in gpu_table().gpus:
        if entry.pattern.search(normalised):
            return entry
    return None


def compute_capability_for_gpu(name: str) -> str | None:
    """Compute capability as ``"major.minor"`` (``"NVIDIA A100-SXM4-40GB"`` → ``"8.0"``).

    Returns ``None`` for names the table does not know.
    """
    entry = lookup_gpu(name)
    return entry.cc if entry is not None else None


def gpu_category(name: str) -> GpuCategory | None:
    """Datacenter, GeForce, workstation or Jetson; ``None`` for unknown names."""
    entry = lookup_gpu(name)
    return entry.category if entry is not None else None


def is_datacenter_gpu(name: str) -> bool | None:
    """Whether the GPU is an NVIDIA datacenter part; ``None`` for unknown names."""
    category = gpu_category(name)
    return None if category is None else category is GpuCategory.DATACENTER
