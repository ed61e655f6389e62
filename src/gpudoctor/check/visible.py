"""Which GPUs a job will see: ``CUDA_VISIBLE_DEVICES`` applied to the GPUs NVML lists.

NVML ignores ``CUDA_VISIBLE_DEVICES`` and lists every GPU of the machine (or container); the
CUDA runtime in the job enumerates only the devices the variable names. CUDA reads the
comma-separated entries in order — a device index, a GPU UUID or any unique prefix of one
(``GPU-4a1e``, or without ``GPU-``), a MIG device UUID (``MIG-...``) — and stops at the first
entry that names no device: ``-1``, an index past the last GPU, an unknown UUID; an empty
value hides every GPU. A GPU named twice is one device.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.snapshot.model import GpuInfo

#: Values some schedulers set to hide every GPU.
HIDE_ALL = ("", "-1", "NoDevFiles", "none")


@dataclass(frozen=True)
class VisibleDevices:
    """What ``CUDA_VISIBLE_DEVICES`` leaves the job.

    Attributes:
        value: the variable (``None`` when unset: every GPU is visible).
        indices: NVML indices of the GPUs the job sees, in the order it sees them.
        mig: MIG device entries (their UUIDs are not in the snapshot, so taken on trust).
        invalid: the first entry that names no device, where CUDA stops; ``None`` if none.
        kept: the entries before ``invalid``.
    """

    value: str | None
    indices: tuple[int, ...]
    mig: tuple[str, ...] = ()
    invalid: str | None = None
    kept: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """How many CUDA devices the job sees."""
        return len(self.indices) + len(self.mig)

    @property
    def restricted(self) -> bool:
        """True when the variable is set (even to every GPU)."""
        return self.value is not None


def _match(entry: str, gpus: tuple[GpuInfo, ...]) -> int | None:
    if entry.lstrip("-").isdigit():
        index = int(entry)
        return index if any(g.index == index for g in gpus) else None
    wanted = entry if entry.startswith("GPU-") else f"GPU-{entry}"
    found = [g.index for g in gpus if g.uuid and g.uuid.startswith(wanted)]
    return found[0] if len(found) == 1 else None


def visible_devices(value: str | None, gpus: tuple[GpuInfo, ...]) -> VisibleDevices:
    """Apply ``CUDA_VISIBLE_DEVICES`` (``value``) to the GPUs NVML lists."""
    if value is None:
        return VisibleDevices(None, tuple(g.index for g in gpus))
    entries = [e.strip() for e in value.split(",")]
    indices: list[int] = []
    mig: list[str] = []
    for position, entry in enumerate(entries):
        if entry.startswith("MIG-"):
            mig.append(entry)
            continue
        index = None if entry in HIDE_ALL else _match(entry, gpus)
        if index is None:
            return VisibleDevices(
                value, tuple(indices), tuple(mig), entry, tuple(entries[:position])
            )
        if index not in indices:
            indices.append(index)
    return VisibleDevices(value, tuple(indices), tuple(mig), None, tuple(entries))
