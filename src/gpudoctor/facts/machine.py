"""Snapshot facts: the flat, named values that rule conditions test.

:func:`snapshot_facts` turns a :class:`~gpudoctor.snapshot.model.Snapshot` into a dict whose
keys are snake_case identifiers usable as variables in condition expressions
(``gpu_lost_count > 0 and driver_version != None``). Every key below is always present;
a value that is unknown (not collected, not supported, NVML unusable) is ``None``, so
conditions can test ``x != None``. Aggregates over GPUs ignore GPUs whose value is unknown
and are ``None`` when no GPU reported it. Lists are sorted and never ``None``.

The facts are declared in :data:`FACTS` (name, type, unit, meaning); a meaning ends with
``↳`` and the nvidia-smi equivalent where there is one: "smi: X" means ``nvidia-smi
--query-gpu=X --format=csv``; "smi compute-apps: X" and "smi remapped-rows: X" mean
``--query-compute-apps=X`` and ``--query-remapped-rows=X``. ``gpudoctor rules facts``
lists them with every other source's facts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar, Union

from gpudoctor.facts.spec import FactSpec
from gpudoctor.snapshot.model import GPU_ERROR, GpuInfo, Snapshot
from gpudoctor.version_numbers import parse_version

FactValue = Union[bool, int, float, str, None, list[int], list[str]]  # noqa: UP007

_THERMAL = {"hw_thermal_slowdown", "sw_thermal_slowdown"}
_THROTTLE = {"hw_thermal_slowdown", "sw_thermal_slowdown", "hw_slowdown", "hw_power_brake_slowdown"}


def _any(values: Iterable[bool | None]) -> bool | None:
    known = [v for v in values if v is not None]
    return any(known) if known else None


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


_N = TypeVar("_N", int, float)


def _max(values: Iterable[_N | None]) -> _N | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _count(gpus: Iterable[GpuInfo], test: Iterable[bool | None]) -> int | None:
    known = [v for v in test if v is not None]
    return sum(1 for v in known if v) if known else None


def _fraction(part: int | None, whole: int | None) -> float | None:
    if part is None or not whole:
        return None
    return round(part / whole, 6)


def _reasons(gpu: GpuInfo, names: set[str]) -> bool | None:
    if gpu.clock_event_reason_names is None:
        return None
    return bool(names & set(gpu.clock_event_reason_names))


def snapshot_facts(snapshot: Snapshot) -> dict[str, FactValue]:
    """Flatten a snapshot into the named facts declared in :data:`FACTS`."""
    facts: dict[str, FactValue] = {}
    facts.update(_driver_facts(snapshot))
    facts.update(_gpu_facts(snapshot))
    facts.update(_host_facts(snapshot))
    facts.update(_kernel_facts(snapshot))
    facts.update(_version_facts(snapshot))
    facts.update(_env_facts(snapshot))
    return facts


def _driver_facts(s: Snapshot) -> dict[str, FactValue]:
    return {
        "nvml_status": s.driver.status,
        "nvml_error": s.driver.error,
        "driver_version": s.driver.driver_version,
        "driver_cuda_version": s.driver.cuda_driver_version,
    }


def _gpu_facts(s: Snapshot) -> dict[str, FactValue]:
    nvml_ok = s.driver.status == "ok"
    gpus = s.gpus
    read = [g for g in gpus if g.status != GPU_ERROR and not g.lost]
    processes = [(g, p) for g in gpus for p in (g.processes or ())]
    any_processes_known = any(g.processes is not None for g in gpus)
    margins = [
        g.temperature_slowdown_c - g.temperature_c
        for g in read
        if g.temperature_slowdown_c is not None and g.temperature_c is not None
    ]
    gpu0 = next((g for g in gpus if g.index == 0), None)
    throttled = [g.index for g in read if _reasons(g, _THROTTLE)]
    return {
        "gpu_count": len(gpus) if nvml_ok and "gpus" not in s.driver.unavailable else None,
        "gpu_names": [g.name for g in gpus if g.name is not None],
        "gpu_compute_capabilities": sorted(
            {g.compute_capability for g in gpus if g.compute_capability is not None},
            key=lambda cc: tuple(int(p) for p in cc.split(".")),
        ),
        "gpu_lost_count": sum(1 for g in gpus if g.lost) if nvml_ok else None,
        "lost_gpu_indices": [g.index for g in gpus if g.lost],
        "gpu_error_count": sum(1 for g in gpus if g.status == GPU_ERROR) if nvml_ok else None,
        "max_gpu_temp_c": _max(g.temperature_c for g in read),
        "min_temp_margin_to_slowdown_c": min(margins) if margins else None,
        "thermal_slowdown_active": _any(_reasons(g, _THERMAL) for g in read),
        "hw_slowdown_active": _any(_reasons(g, {"hw_slowdown"}) for g in read),
        "power_brake_active": _any(_reasons(g, {"hw_power_brake_slowdown"}) for g in read),
        "sw_power_cap_active": _any(_reasons(g, {"sw_power_cap"}) for g in read),
        "throttled_gpu_indices": throttled,
        "max_power_draw_fraction": _max(
            round(g.power_draw_w / g.power_limit_w, 6)
            for g in read
            if g.power_draw_w is not None and g.power_limit_w
        ),
        "any_ecc_uncorrected_volatile": _any(
            None if g.ecc_volatile_uncorrected is None else g.ecc_volatile_uncorrected > 0
            for g in read
        ),
        "ecc_uncorrected_volatile_total": _sum(g.ecc_volatile_uncorrected for g in read),
        "ecc_uncorrected_aggregate_total": _sum(g.ecc_aggregate_uncorrected for g in read),
        "ecc_corrected_volatile_total": _sum(g.ecc_volatile_corrected for g in read),
        "ecc_disabled_count": _count(
            read, (None if g.ecc_mode_current is None else not g.ecc_mode_current for g in read)
        ),
        "remap_pending": _any(g.remapped_rows_pending for g in read),
        "remap_failure": _any(g.remapped_rows_failure for g in read),
        "remapped_rows_uncorrectable_total": _sum(g.remapped_rows_uncorrectable for g in read),
        "retired_pages_pending": _any(g.retired_pages_pending for g in read),
        "retired_pages_total": _sum(
            None
            if g.retired_pages_single_bit is None and g.retired_pages_double_bit is None
            else (g.retired_pages_single_bit or 0) + (g.retired_pages_double_bit or 0)
            for g in read
        ),
        "pcie_link_degraded": _any(
            None
            if g.pcie_link_width_current is None or g.pcie_link_width_max is None
            else g.pcie_link_width_current < g.pcie_link_width_max
            for g in read
        ),
        "pcie_gen_below_max_count": _count(
            read,
            (
                None
                if g.pcie_link_gen_current is None or g.pcie_link_gen_max is None
                else g.pcie_link_gen_current < g.pcie_link_gen_max
                for g in read
            ),
        ),
        "persistence_mode_off_count": _count(
            read, (None if g.persistence_mode is None else not g.persistence_mode for g in read)
        ),
        "compute_mode_restricted_count": _count(
            read,
            (None if g.compute_mode is None else g.compute_mode != "default" for g in read),
        ),
        "mig_enabled_count": _count(read, (g.mig_mode_current for g in read)),
        "gpu0_memory_used_fraction": (
            _fraction(gpu0.memory_used_bytes, gpu0.memory_total_bytes) if gpu0 else None
        ),
        "max_gpu_memory_used_fraction": _max(
            _fraction(g.memory_used_bytes, g.memory_total_bytes) for g in read
        ),
        "gpu_process_count": len(processes) if any_processes_known else None,
        "gpu_process_pids": sorted({p.pid for _g, p in processes}),
        "other_process_gpu_memory_bytes": (
            sum(p.used_memory_bytes or 0 for _g, p in processes) if any_processes_known else None
        ),
        "max_other_process_memory_fraction": (
            _max(_fraction(p.used_memory_bytes, g.memory_total_bytes) for g, p in processes)
            if processes
            else (0.0 if any_processes_known else None)
        ),
        "zombie_gpu_process_count": (
            sum(1 for _g, p in processes if p.zombie or p.exists is False)
            if any_processes_known
            else None
        ),
    }


def _host_facts(s: Snapshot) -> dict[str, FactValue]:
    h = s.host
    return {
        "host_ram_total_bytes": h.ram_total_bytes,
        "host_ram_available_bytes": h.ram_available_bytes,
        "swap_total_bytes": h.swap_total_bytes,
        "cpu_count": h.cpu_count,
        "shm_total_bytes": h.shm_total_bytes,
        "shm_free_bytes": h.shm_free_bytes,
        "shm_used_bytes": h.shm_used_bytes,
        "cgroup_version": h.cgroup_version,
        "cgroup_memory_limit_bytes": h.cgroup_memory_limit_bytes,
        "cgroup_memory_usage_bytes": h.cgroup_memory_usage_bytes,
        "cgroup_oom_kill_count": h.cgroup_oom_kill_count,
        "ulimit_nofile_soft": h.ulimit_nofile_soft,
        "ulimit_nofile_hard": h.ulimit_nofile_hard,
        "in_container": h.in_container,
        "container_runtime": h.container_runtime,
    }


def _kernel_facts(s: Snapshot) -> dict[str, FactValue]:
    log = s.kernel_log
    xids = [e for e in log.events if e.kind == "xid" and e.xid is not None]
    kills = [e for e in log.events if e.kind in ("oom_kill", "oom_kill_info")]
    killed: dict[object, str | None] = {}
    for event in kills:
        killed.setdefault(event.pid if event.pid is not None else id(event), event.process_name)
    fallen = any(e.xid == 79 for e in xids) or any(
        e.kind == "nvrm" and "fallen off the bus" in (e.message or "") for e in log.events
    )
    return {
        "kernel_log_available": log.source is not None,
        "kernel_log_source": log.source,
        "xid_codes": sorted({e.xid for e in xids if e.xid is not None}),
        "xid_event_count": len(xids),
        "gpu_fallen_off_bus": fallen,
        "nvrm_api_mismatch": any(
            e.kind == "nvrm" and (e.message or "").startswith("API mismatch") for e in log.events
        ),
        "kernel_oom_kill_count": len(killed),
        "kernel_oom_killed_names": sorted({n for n in killed.values() if n}),
        "kernel_cgroup_oom_kill": any(e.constraint == "CONSTRAINT_MEMCG" for e in kills),
    }


def _version_key(text: str) -> tuple[int, ...]:
    version = parse_version(text)
    return version.parts if version is not None else (0,)


def _major_minor(text: str | None) -> str | None:
    version = parse_version(text or "")
    if version is None:
        return None
    return f"{version.major}.{version.minor}"


def _version_facts(s: Snapshot) -> dict[str, FactValue]:
    frameworks = {f.name: f for f in s.versions.frameworks}
    torch = frameworks.get("torch")
    tf = frameworks.get("tensorflow")
    jax = frameworks.get("jax")
    cupy = frameworks.get("cupy")
    runtimes: set[str] = set()
    for framework in (torch, tf):
        if framework is not None and (mm := _major_minor(framework.cuda_version)):
            runtimes.add(mm)
    packages = s.versions.cuda_packages
    for package in packages:
        if package.component == "cuda-runtime" and (mm := _major_minor(package.version)):
            runtimes.add(mm)
    ordered = sorted(runtimes, key=_version_key)
    majors = sorted({p.cuda_major for p in packages if p.cuda_major is not None})
    cudnn = next((p.version for p in packages if p.component == "cudnn"), None)
    nccl = next((p.version for p in packages if p.component == "nccl"), None)
    jax_major = parse_version(jax.cuda_version or "") if jax is not None else None
    return {
        "python_version": s.versions.python_version,
        "torch_version": torch.version if torch else None,
        "torch_cuda_version": torch.cuda_version if torch else None,
        "torch_is_cuda_build": torch.is_cuda_build if torch else None,
        "tensorflow_version": tf.version if tf else None,
        "tensorflow_cuda_version": tf.cuda_version if tf else None,
        "jax_version": jax.version if jax else None,
        "jax_cuda_major": jax_major.major if jax_major is not None else None,
        "cupy_cuda_version": cupy.cuda_version if cupy else None,
        "cuda_runtime_versions": ordered,
        "max_cuda_runtime_version": ordered[-1] if ordered else None,
        "cuda_package_majors": majors,
        "mixed_cuda_majors": len(majors) > 1,
        "cudnn_version": cudnn,
        "nccl_version": nccl,
    }


def _env_facts(s: Snapshot) -> dict[str, FactValue]:
    env = s.environment
    return {
        "cuda_visible_devices": env.get("CUDA_VISIBLE_DEVICES"),
        "pytorch_cuda_alloc_conf": env.get(
            "PYTORCH_CUDA_ALLOC_CONF", env.get("PYTORCH_ALLOC_CONF")
        ),
        "cuda_launch_blocking": env.get("CUDA_LAUNCH_BLOCKING", "").strip() == "1",
        "nccl_env_vars": sorted(k for k in env if k.startswith(("NCCL_", "TORCH_NCCL_"))),
    }


SOURCE = "snapshot"


def _fact(name: str, type_: str, unit: str, meaning: str, smi: str = "") -> FactSpec:
    """A snapshot fact; ``smi`` is how nvidia-smi (or a shell command) shows the same value."""
    return FactSpec(name, type_, unit, SOURCE, f"{meaning} ↳ {smi}" if smi else meaning)


FACTS: tuple[FactSpec, ...] = (
    _fact(
        "nvml_status",
        "str",
        "-",
        "ok, no_driver, library_not_found, driver_library_mismatch, no_permission, error",
        "``nvidia-smi`` (its error message)",
    ),
    _fact(
        "nvml_error",
        "str|None",
        "-",
        "NVML error name when status is not ok (DriverNotLoaded...)",
    ),
    _fact(
        "driver_version",
        "str|None",
        "-",
        'driver version ("550.90.07")',
        "smi: driver_version",
    ),
    _fact(
        "driver_cuda_version",
        "str|None",
        "-",
        'highest CUDA the driver supports ("12.4")',
        '``nvidia-smi`` banner "CUDA Version"',
    ),
    _fact(
        "gpu_count",
        "int|None",
        "-",
        "GPUs NVML enumerates (None: NVML unusable)",
        "``nvidia-smi -L``",
    ),
    _fact(
        "gpu_names",
        "list[str]",
        "-",
        "GPU product names, index order",
        "smi: name",
    ),
    _fact(
        "gpu_compute_capabilities",
        "list[str]",
        "-",
        'distinct compute capabilities ("8.0")',
        "smi: compute_cap",
    ),
    _fact(
        "gpu_lost_count",
        "int|None",
        "-",
        "GPUs answering GpuIsLost (fell off the bus)",
        '``nvidia-smi`` "GPU is lost"',
    ),
    _fact(
        "lost_gpu_indices",
        "list[int]",
        "-",
        "indices of lost GPUs",
    ),
    _fact(
        "gpu_error_count",
        "int|None",
        "-",
        "GPUs whose handle could not be obtained (not lost)",
        '``nvidia-smi`` "Unable to determine the device handle"',
    ),
    _fact(
        "max_gpu_temp_c",
        "int|None",
        "°C",
        "hottest GPU temperature",
        "smi: temperature.gpu",
    ),
    _fact(
        "min_temp_margin_to_slowdown_c",
        "int|None",
        "°C",
        "smallest (slowdown threshold - temperature)",
        "``nvidia-smi -q -d TEMPERATURE``",
    ),
    _fact(
        "thermal_slowdown_active",
        "bool|None",
        "-",
        "some GPU has HW or SW thermal slowdown active",
        "smi: clocks_event_reasons.hw_thermal_slowdown, clocks_event_reasons.sw_thermal_slowdown",
    ),
    _fact(
        "hw_slowdown_active",
        "bool|None",
        "-",
        "some GPU has the HW slowdown bit (thermal or power brake)",
        "smi: clocks_event_reasons.hw_slowdown",
    ),
    _fact(
        "power_brake_active",
        "bool|None",
        "-",
        "some GPU has HW power brake slowdown active",
        "smi: clocks_event_reasons.hw_power_brake_slowdown",
    ),
    _fact(
        "sw_power_cap_active",
        "bool|None",
        "-",
        "some GPU is held at its software power cap",
        "smi: clocks_event_reasons.sw_power_cap",
    ),
    _fact(
        "throttled_gpu_indices",
        "list[int]",
        "-",
        "GPUs with thermal / HW slowdown / power brake active",
        "``nvidia-smi -q -d PERFORMANCE``",
    ),
    _fact(
        "max_power_draw_fraction",
        "float|None",
        "ratio",
        "highest power draw / enforced limit",
        "smi: power.draw,enforced.power.limit",
    ),
    _fact(
        "any_ecc_uncorrected_volatile",
        "bool|None",
        "-",
        "some GPU has volatile uncorrected ECC errors",
        "smi: ecc.errors.uncorrected.volatile.total",
    ),
    _fact(
        "ecc_uncorrected_volatile_total",
        "int|None",
        "errors",
        "sum of volatile uncorrected ECC errors",
        "smi: ecc.errors.uncorrected.volatile.total",
    ),
    _fact(
        "ecc_uncorrected_aggregate_total",
        "int|None",
        "errors",
        "sum of lifetime uncorrected ECC errors",
        "smi: ecc.errors.uncorrected.aggregate.total",
    ),
    _fact(
        "ecc_corrected_volatile_total",
        "int|None",
        "errors",
        "sum of volatile corrected ECC errors",
        "smi: ecc.errors.corrected.volatile.total",
    ),
    _fact(
        "ecc_disabled_count",
        "int|None",
        "-",
        "GPUs supporting ECC with ECC switched off",
        "smi: ecc.mode.current",
    ),
    _fact(
        "remap_pending",
        "bool|None",
        "-",
        "some GPU has a row remap waiting for a GPU reset",
        "smi remapped-rows: remapped_rows.pending",
    ),
    _fact(
        "remap_failure",
        "bool|None",
        "-",
        "some GPU failed to remap a row (RMA candidate)",
        "smi remapped-rows: remapped_rows.failure",
    ),
    _fact(
        "remapped_rows_uncorrectable_total",
        "int|None",
        "rows",
        "rows remapped for uncorrectable errors",
        "smi remapped-rows: remapped_rows.uncorrectable",
    ),
    _fact(
        "retired_pages_pending",
        "bool|None",
        "-",
        "some GPU has a page retirement waiting for a reboot",
        "smi: retired_pages.pending",
    ),
    _fact(
        "retired_pages_total",
        "int|None",
        "pages",
        "retired pages (single + double bit), pre-Ampere GPUs",
        "smi: retired_pages.sbe,retired_pages.dbe",
    ),
    _fact(
        "pcie_link_degraded",
        "bool|None",
        "-",
        "some GPU's PCIe link width is below its maximum",
        "smi: pcie.link.width.current,pcie.link.width.max",
    ),
    _fact(
        "pcie_gen_below_max_count",
        "int|None",
        "-",
        "GPUs whose current PCIe gen is below max (normal at idle)",
        "smi: pcie.link.gen.current,pcie.link.gen.max",
    ),
    _fact(
        "persistence_mode_off_count",
        "int|None",
        "-",
        "GPUs with persistence mode off",
        "smi: persistence_mode",
    ),
    _fact(
        "compute_mode_restricted_count",
        "int|None",
        "-",
        "GPUs in exclusive-process/prohibited compute mode",
        "smi: compute_mode",
    ),
    _fact(
        "mig_enabled_count",
        "int|None",
        "-",
        "GPUs with MIG mode enabled",
        "smi: mig.mode.current",
    ),
    _fact(
        "gpu0_memory_used_fraction",
        "float|None",
        "ratio",
        "GPU 0 memory used / total",
        "smi: memory.used,memory.total (with -i 0)",
    ),
    _fact(
        "max_gpu_memory_used_fraction",
        "float|None",
        "ratio",
        "highest memory used / total over GPUs",
        "smi: memory.used,memory.total",
    ),
    _fact(
        "gpu_process_count",
        "int|None",
        "-",
        "processes NVML lists on any GPU after the crash",
        "smi compute-apps: pid",
    ),
    _fact(
        "gpu_process_pids",
        "list[int]",
        "-",
        "their pids (host pid namespace)",
        "smi compute-apps: pid",
    ),
    _fact(
        "other_process_gpu_memory_bytes",
        "int|None",
        "bytes",
        "GPU memory still held by listed processes (gpudoctor itself never holds any)",
        "smi compute-apps: pid,used_memory",
    ),
    _fact(
        "max_other_process_memory_fraction",
        "float|None",
        "ratio",
        "largest single process's memory / its GPU's total",
        "smi compute-apps: pid,used_memory",
    ),
    _fact(
        "zombie_gpu_process_count",
        "int|None",
        "-",
        "listed processes that are zombies or no longer exist",
        "``nvidia-smi`` + ``ps -o stat= -p PID``",
    ),
    _fact(
        "host_ram_total_bytes",
        "int|None",
        "bytes",
        "MemTotal",
        "``free -b``",
    ),
    _fact(
        "host_ram_available_bytes",
        "int|None",
        "bytes",
        "MemAvailable",
        "``free -b``",
    ),
    _fact(
        "swap_total_bytes",
        "int|None",
        "bytes",
        "SwapTotal",
        "``free -b``",
    ),
    _fact(
        "cpu_count",
        "int|None",
        "-",
        "CPUs this process may run on",
        "``nproc``",
    ),
    _fact(
        "shm_total_bytes",
        "int|None",
        "bytes",
        "size of /dev/shm",
        "``df -B1 /dev/shm``",
    ),
    _fact(
        "shm_free_bytes",
        "int|None",
        "bytes",
        "free space in /dev/shm",
        "``df -B1 /dev/shm``",
    ),
    _fact(
        "shm_used_bytes",
        "int|None",
        "bytes",
        "used space in /dev/shm",
        "``df -B1 /dev/shm``",
    ),
    _fact(
        "cgroup_version",
        "int|None",
        "-",
        "1 or 2",
        "``stat -fc %T /sys/fs/cgroup``",
    ),
    _fact(
        "cgroup_memory_limit_bytes",
        "int|None",
        "bytes",
        "cgroup memory limit (None: no limit or unknown)",
        "``cat /sys/fs/cgroup/memory.max``",
    ),
    _fact(
        "cgroup_memory_usage_bytes",
        "int|None",
        "bytes",
        "cgroup memory usage",
        "``cat /sys/fs/cgroup/memory.current``",
    ),
    _fact(
        "cgroup_oom_kill_count",
        "int|None",
        "kills",
        "OOM kills in this cgroup",
        "``grep oom_kill .../memory.events``",
    ),
    _fact(
        "ulimit_nofile_soft",
        "int|None",
        "files",
        "soft open-files limit (None: unlimited or unknown)",
        "``ulimit -Sn``",
    ),
    _fact(
        "ulimit_nofile_hard",
        "int|None",
        "files",
        "hard open-files limit",
        "``ulimit -Hn``",
    ),
    _fact(
        "in_container",
        "bool|None",
        "-",
        "running inside a container",
        "``ls /.dockerenv /run/.containerenv``",
    ),
    _fact(
        "container_runtime",
        "str|None",
        "-",
        "docker, podman, kubernetes, containerd, lxc...",
    ),
    _fact(
        "kernel_log_available",
        "bool",
        "-",
        "some kernel log source could be read",
        "``dmesg``",
    ),
    _fact(
        "kernel_log_source",
        "str|None",
        "-",
        "which one (dmesg, journalctl, /var/log/kern.log)",
    ),
    _fact(
        "xid_codes",
        "list[int]",
        "-",
        "distinct Xid numbers in the kernel log window",
        "``dmesg | grep Xid``",
    ),
    _fact(
        "xid_event_count",
        "int",
        "-",
        "Xid lines in the window",
        "``dmesg | grep -c Xid``",
    ),
    _fact(
        "gpu_fallen_off_bus",
        "bool",
        "-",
        'Xid 79 or "GPU has fallen off the bus" was logged',
        "``dmesg | grep 'fallen off the bus'``",
    ),
    _fact(
        "nvrm_api_mismatch",
        "bool",
        "-",
        'the kernel logged "NVRM: API mismatch" (driver/library)',
        "``dmesg | grep 'API mismatch'``",
    ),
    _fact(
        "kernel_oom_kill_count",
        "int",
        "kills",
        "distinct processes killed by the OOM killer in the window",
        "``dmesg | grep -i 'killed process'``",
    ),
    _fact(
        "kernel_oom_killed_names",
        "list[str]",
        "-",
        "their process names",
        "``dmesg | grep -i 'killed process'``",
    ),
    _fact(
        "kernel_cgroup_oom_kill",
        "bool",
        "-",
        "an OOM kill was a cgroup (container/job limit) OOM",
        "``dmesg | grep 'Memory cgroup out'``",
    ),
    _fact(
        "python_version",
        "str|None",
        "-",
        "Python of the environment gpudoctor inspected",
        "``python -V``",
    ),
    _fact(
        "torch_version",
        "str|None",
        "-",
        'torch version ("2.4.1+cu121")',
        "``python -c 'import torch; print(torch.__version__)'``",
    ),
    _fact(
        "torch_cuda_version",
        "str|None",
        "-",
        'CUDA torch was built for ("12.1"; None for CPU builds)',
        "``torch.version.cuda``",
    ),
    _fact(
        "torch_is_cuda_build",
        "bool|None",
        "-",
        "torch is a CUDA build",
        "``torch.version.cuda is not None``",
    ),
    _fact(
        "tensorflow_version",
        "str|None",
        "-",
        "TensorFlow version",
        "``pip show tensorflow``",
    ),
    _fact(
        "tensorflow_cuda_version",
        "str|None",
        "-",
        "CUDA TensorFlow was built for",
        "``tf.sysconfig.get_build_info()``",
    ),
    _fact(
        "jax_version",
        "str|None",
        "-",
        "jax version",
        "``pip show jax``",
    ),
    _fact(
        "jax_cuda_major",
        "int|None",
        "-",
        "CUDA major of the installed JAX CUDA plugin",
        "``pip list | grep jax-cuda``",
    ),
    _fact(
        "cupy_cuda_version",
        "str|None",
        "-",
        'CUDA of the installed CuPy wheel ("12" for cupy-cuda12x)',
        "``pip list | grep cupy``",
    ),
    _fact(
        "cuda_runtime_versions",
        "list[str]",
        "-",
        "CUDA runtimes the frameworks / runtime wheels ship (major.minor, ascending)",
        "``pip list | grep nvidia-cuda-runtime``",
    ),
    _fact(
        "max_cuda_runtime_version",
        "str|None",
        "-",
        "newest of those",
    ),
    _fact(
        "cuda_package_majors",
        "list[int]",
        "-",
        "CUDA majors of the installed nvidia-* wheels",
        "``pip list | grep nvidia-``",
    ),
    _fact(
        "mixed_cuda_majors",
        "bool",
        "-",
        "nvidia-* wheels of more than one CUDA major are installed",
        "``pip list | grep -- -cu1``",
    ),
    _fact(
        "cudnn_version",
        "str|None",
        "-",
        "version of the installed nvidia-cudnn wheel",
        "``pip show nvidia-cudnn-cu12``",
    ),
    _fact(
        "nccl_version",
        "str|None",
        "-",
        "version of the installed nvidia-nccl wheel",
        "``pip show nvidia-nccl-cu12``",
    ),
    _fact(
        "cuda_visible_devices",
        "str|None",
        "-",
        "CUDA_VISIBLE_DEVICES",
        "``echo $CUDA_VISIBLE_DEVICES``",
    ),
    _fact(
        "pytorch_cuda_alloc_conf",
        "str|None",
        "-",
        "PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF)",
        "``echo $PYTORCH_CUDA_ALLOC_CONF``",
    ),
    _fact(
        "cuda_launch_blocking",
        "bool",
        "-",
        "CUDA_LAUNCH_BLOCKING=1",
        "``echo $CUDA_LAUNCH_BLOCKING``",
    ),
    _fact(
        "nccl_env_vars",
        "list[str]",
        "-",
        "names of NCCL_* / TORCH_NCCL_* variables set",
        "``env | grep NCCL_``",
    ),
)
"""Every fact :func:`snapshot_facts` returns (all always present), in documentation order."""

FACT_NAMES: tuple[str, ...] = tuple(spec.name for spec in FACTS)
"""Their names, in the same order."""
