"""The snapshot record: a typed, frozen, JSON round-trippable picture of a machine.

A :class:`Snapshot` holds what gpudoctor could learn about the GPUs (through NVML), the
driver, the installed CUDA runtimes, the host, and the kernel log, at one moment. Every
value that could not be read is ``None`` and its record's ``unavailable`` mapping says why
(``{"power_draw_w": "NotSupported"}``). The record is plain data: collectors build it,
:mod:`gpudoctor.facts.machine` flattens it, renderers print it.

Serialisation is :mod:`gpudoctor.snapshot.codec`, generic over the dataclasses below:
:meth:`Snapshot.to_dict` gives JSON types only, :meth:`Snapshot.from_dict` checks every
value's type against the field annotations and raises
:class:`~gpudoctor.errors.SnapshotError` naming the offending path. The schema id is
``gpudoctor.snapshot/<major>``; a newer major is refused, unknown keys (added by a newer
minor) are ignored, and missing optional keys take their defaults.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudoctor.errors import SnapshotError
from gpudoctor.snapshot.codec import (
    PATTERN,
    kind,
    parse_json,
    read_json_file,
    record_from_dict,
    to_jsonable,
)

SCHEMA = "gpudoctor.snapshot/1"
SCHEMA_MAJOR = 1
_SCHEMA_RE = re.compile(r"^gpudoctor\.snapshot/(?P<major>\d+)(?:\.(?P<minor>\d+))?$")

# NVML overall status values (DriverInfo.status).
NVML_OK = "ok"
NVML_NO_DRIVER = "no_driver"
NVML_LIBRARY_NOT_FOUND = "library_not_found"
NVML_DRIVER_LIBRARY_MISMATCH = "driver_library_mismatch"
NVML_NO_PERMISSION = "no_permission"
NVML_ERROR = "error"

# GPU status values (GpuInfo.status).
GPU_OK = "ok"
GPU_LOST = "lost"
GPU_ERROR = "error"


@dataclass(frozen=True)
class GpuProcess:
    """A process NVML lists as holding a context (and memory) on a GPU."""

    pid: int
    used_memory_bytes: int | None = None
    name: str | None = None
    user: str | None = None
    cmdline: tuple[str, ...] | None = None
    exists: bool | None = None
    zombie: bool | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GpuInfo:
    """Everything read from one GPU; ``status`` is ``ok``, ``lost`` or ``error``.

    Units are in the field names: bytes, percent (``_pct``), degrees Celsius (``_c``),
    watts (``_w``), MHz (``_mhz``). Booleans stand for NVML's enabled/disabled features.
    """

    index: int
    status: str = GPU_OK
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    pci_bus_id: str | None = None
    compute_capability: str | None = field(default=None, metadata={PATTERN: r"\d{1,2}\.\d{1,2}"})
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    memory_free_bytes: int | None = None
    memory_reserved_bytes: int | None = None
    utilization_gpu_pct: int | None = None
    utilization_memory_pct: int | None = None
    temperature_c: int | None = None
    temperature_slowdown_c: int | None = None
    temperature_shutdown_c: int | None = None
    temperature_max_operating_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    clock_sm_mhz: int | None = None
    clock_mem_mhz: int | None = None
    clock_sm_max_mhz: int | None = None
    clock_mem_max_mhz: int | None = None
    clock_event_reasons: int | None = None
    clock_event_reason_names: tuple[str, ...] | None = None
    ecc_mode_current: bool | None = None
    ecc_mode_pending: bool | None = None
    ecc_volatile_corrected: int | None = None
    ecc_volatile_uncorrected: int | None = None
    ecc_aggregate_corrected: int | None = None
    ecc_aggregate_uncorrected: int | None = None
    retired_pages_single_bit: int | None = None
    retired_pages_double_bit: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    pcie_link_gen_current: int | None = None
    pcie_link_gen_max: int | None = None
    pcie_link_width_current: int | None = None
    pcie_link_width_max: int | None = None
    persistence_mode: bool | None = None
    compute_mode: str | None = None
    mig_mode_current: bool | None = None
    mig_mode_pending: bool | None = None
    processes: tuple[GpuProcess, ...] | None = None
    unavailable: dict[str, str] = field(default_factory=dict)

    @property
    def lost(self) -> bool:
        """True when the GPU answered ``GpuIsLost`` (it fell off the bus)."""
        return self.status == GPU_LOST


@dataclass(frozen=True)
class DriverInfo:
    """The NVIDIA driver as NVML reports it, and whether NVML could be used at all.

    ``status`` is one of ``ok``, ``no_driver``, ``library_not_found``,
    ``driver_library_mismatch``, ``no_permission``, ``error``; ``error`` holds the NVML
    error name (``"DriverNotLoaded"``) and ``message`` NVML's text plus an explanation.
    """

    status: str
    error: str | None = None
    message: str | None = None
    backend: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_version: str | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FrameworkInfo:
    """A deep-learning framework found installed, read without importing it.

    ``name`` is ``torch``, ``tensorflow``, ``jax`` or ``cupy``; ``cuda_version`` is the
    CUDA runtime it was built for (``"12.1"``), ``None`` for a CPU build or when unknown.
    """

    name: str
    version: str | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    is_cuda_build: bool | None = None
    compute_capabilities: tuple[str, ...] | None = None
    distribution: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class CudaPackage:
    """An installed NVIDIA CUDA wheel (``nvidia-cuda-runtime-cu12`` 12.1.105 ...).

    ``component`` is the library without the CUDA suffix (``cuda-runtime``, ``cudnn``,
    ``nccl``, ``cublas``...); ``cuda_major`` comes from the ``-cuNN`` suffix, or from the
    version for the suffix-less CUDA 13 toolkit wheels.
    """

    name: str
    version: str
    component: str
    cuda_major: int | None = None


@dataclass(frozen=True)
class VersionsInfo:
    """Python and the CUDA user-space that installed packages ship."""

    python_version: str | None = None
    frameworks: tuple[FrameworkInfo, ...] = ()
    cuda_packages: tuple[CudaPackage, ...] = ()
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HostInfo:
    """The host (or container) the job ran on: memory, shared memory, cgroup, limits."""

    hostname: str | None = None
    kernel: str | None = None
    os_name: str | None = None
    cpu_count: int | None = None
    ram_total_bytes: int | None = None
    ram_available_bytes: int | None = None
    swap_total_bytes: int | None = None
    swap_free_bytes: int | None = None
    shm_total_bytes: int | None = None
    shm_used_bytes: int | None = None
    shm_free_bytes: int | None = None
    cgroup_version: int | None = None
    cgroup_memory_limit_bytes: int | None = None
    cgroup_memory_usage_bytes: int | None = None
    cgroup_oom_kill_count: int | None = None
    ulimit_nofile_soft: int | None = None
    ulimit_nofile_hard: int | None = None
    in_container: bool | None = None
    container_runtime: str | None = None
    container_evidence: tuple[str, ...] = ()
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelEvent:
    """One interesting kernel log line: ``kind`` is ``xid``, ``nvrm``, ``oom_kill`` or
    ``oom_kill_info`` (the ``oom-kill:constraint=...`` summary line)."""

    kind: str
    line: str
    timestamp: str | None = None
    xid: int | None = None
    pci_bus: str | None = None
    pid: int | None = None
    process_name: str | None = None
    constraint: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class KernelLogInfo:
    """Events parsed from the kernel log; ``source`` is where they came from."""

    source: str | None = None
    since_seconds: float | None = None
    events: tuple[KernelEvent, ...] = ()
    truncated: bool = False
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceStatus:
    """Whether one source (``nvml``, ``dmesg``, ``/proc/meminfo``...) could be read."""

    name: str
    ok: bool
    reason: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """A whole-machine snapshot; see the module docstring for the conventions."""

    driver: DriverInfo
    created_at: str | None = None
    gpudoctor_version: str | None = None
    gpus: tuple[GpuInfo, ...] = ()
    versions: VersionsInfo = field(default_factory=VersionsInfo)
    environment: dict[str, str] = field(default_factory=dict)
    host: HostInfo = field(default_factory=HostInfo)
    kernel_log: KernelLogInfo = field(default_factory=KernelLogInfo)
    sources: tuple[SourceStatus, ...] = ()
    schema: str = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        """Return the snapshot as JSON-compatible dicts, lists and scalars."""
        result = to_jsonable(self)
        assert isinstance(result, dict)
        # The schema id goes first so a reader sees it at the top of the file.
        return {"schema": result.pop("schema"), **result}

    def to_json(self, *, indent: int | None = 2) -> str:
        """Return the snapshot as JSON text (stable: same snapshot, same text)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: object) -> Snapshot:
        """Build a snapshot from :meth:`to_dict` output.

        Raises:
            SnapshotError: the data is not a snapshot, is from a newer major schema, or a
                value has the wrong type (the message names the path, e.g. ``gpus[2].index``).
        """
        if not isinstance(data, dict):
            raise SnapshotError(
                f"not a gpudoctor snapshot: expected a JSON object, got {kind(data)}"
            )
        check_schema(data.get("schema"))
        return dataclasses.replace(record_from_dict(cls, data), schema=SCHEMA)

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        """Parse JSON text written by :meth:`to_json`.

        Raises:
            SnapshotError: invalid JSON (``NaN`` included) or an invalid snapshot.
        """
        return cls.from_dict(parse_json(text))


def check_schema(schema: object) -> None:
    """Accept ``gpudoctor.snapshot/1`` (any minor); refuse anything else with a clear reason.

    Raises:
        SnapshotError: missing, foreign or newer-major schema id.
    """
    if schema is None:
        raise SnapshotError('not a gpudoctor snapshot: the "schema" key is missing')
    if not isinstance(schema, str) or (match := _SCHEMA_RE.match(schema)) is None:
        raise SnapshotError(f"not a gpudoctor snapshot: schema is {schema!r}, expected {SCHEMA!r}")
    major = int(match.group("major"))
    if major > SCHEMA_MAJOR:
        raise SnapshotError(
            f"this snapshot uses schema {schema!r}, written by a newer gpudoctor; this version "
            f"reads {SCHEMA!r}: upgrade gpudoctor from its source repository to read it "
            "(the gpudoctor package on PyPI is an unrelated project)"
        )
    if major < 1:
        raise SnapshotError(f"unsupported snapshot schema {schema!r}, expected {SCHEMA!r}")


def load_snapshot(path: str | Path) -> Snapshot:
    """Read a snapshot JSON file (at most :data:`~gpudoctor.snapshot.codec.MAX_SNAPSHOT_BYTES`).

    Raises:
        SnapshotError: the file cannot be read or does not hold a valid snapshot; the
            message starts with the path.
    """
    data = read_json_file(path)
    try:
        return Snapshot.from_dict(data)
    except SnapshotError as exc:
        raise SnapshotError(f"{path}: {exc}") from None
