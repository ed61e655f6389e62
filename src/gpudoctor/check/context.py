"""What every check reads: the snapshot, the caller's options, and (live only) the disk.

A check is a plain function from :class:`CheckContext` to
:class:`~gpudoctor.check.model.CheckResult`. The context also answers the questions many
checks share — is NVML usable, which GPUs are usable, which OS the driver numbers follow —
so that every GPU check skips for the same reason in the same words.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpudoctor.check.model import CheckOptions
from gpudoctor.check.visible import VisibleDevices, visible_devices
from gpudoctor.snapshot.model import GPU_OK, NVML_OK, GpuInfo, Snapshot

#: Lists the file names in a directory; ``None`` when it cannot be read.
ListDir = Callable[[str], Sequence[str] | None]

#: NVML statuses that mean "this machine has no (working) NVIDIA driver at all", which is
#: a skip on a CPU-only machine unless GPUs were asked for (``--require-gpu``,
#: ``--expect-gpus N``). Other failures mean a driver is there but broken, which always fails.
NO_GPU_STATUSES = frozenset({"no_driver", "library_not_found"})


def list_dir(path: str) -> Sequence[str] | None:
    """The entry names of ``path`` on this machine, ``None`` if it is not a readable folder."""
    try:
        return os.listdir(path)
    except OSError:
        return None


@dataclass(frozen=True)
class CheckContext:
    """The inputs of one check run.

    Attributes:
        snapshot: the machine facts (collected live or loaded from a file).
        options: what the caller expects (``--require-gpu``, ``--expect-gpus`` ...).
        list_dir: reads folders on the machine the snapshot describes; ``None`` for a
            snapshot from another node, whose disk cannot be seen.
    """

    snapshot: Snapshot
    options: CheckOptions
    list_dir: ListDir | None = None

    @property
    def nvml_ok(self) -> bool:
        """NVML initialised."""
        return self.snapshot.driver.status == NVML_OK

    @property
    def usable_gpus(self) -> tuple[GpuInfo, ...]:
        """GPUs NVML could read (not lost, not in error)."""
        return tuple(g for g in self.snapshot.gpus if g.status == GPU_OK)

    def gpu_skip_reason(self) -> str | None:
        """Why GPU checks cannot run (no NVML, no usable GPU), or ``None`` if they can."""
        driver = self.snapshot.driver
        if not self.nvml_ok:
            return f"NVML is not usable ({driver.error or driver.status})"
        if not self.usable_gpus:
            return "NVML sees no usable GPU"
        return None

    @property
    def os(self) -> str:
        """``"windows"`` when the snapshot's OS says so, else ``"linux"``."""
        name = (self.snapshot.host.os_name or "").lower()
        return "windows" if name.startswith("win") or "windows" in name else "linux"

    @property
    def gpus_required(self) -> bool:
        """The caller asked for GPUs (``--require-gpu``, or ``--expect-gpus`` above 0)."""
        return self.options.require_gpu or (self.options.expect_gpus or 0) > 0

    @property
    def visible(self) -> VisibleDevices:
        """The GPUs the job will see once ``CUDA_VISIBLE_DEVICES`` is applied."""
        value = self.snapshot.environment.get("CUDA_VISIBLE_DEVICES")
        return visible_devices(value, self.snapshot.gpus)
