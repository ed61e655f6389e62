"""Plain-text summary of a snapshot, for people (``gpudoctor snapshot`` without ``-o``).

:func:`render_snapshot_text` is pure: the same snapshot and width always give the same text,
with no colour and no terminal queries. It ends with what could not be read and why,
grouped by reason so that a lost GPU or a GeForce card's unsupported fields stay short.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections import defaultdict

from gpudoctor.snapshot.model import GpuInfo, GpuProcess, Snapshot
from gpudoctor.units import format_size

# A GPU record with this many fields missing for one reason was not read at all.
_ALL_GPU_FIELDS = len(dataclasses.fields(GpuInfo)) - 3


def _size(value: int | None) -> str:
    return "?" if value is None else format_size(value)


def _val(value: object, suffix: str = "") -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}{suffix}"
    return f"{value}{suffix}"


def _yes(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


class _Out:
    def __init__(self, width: int) -> None:
        self.width = max(40, width)
        self.lines: list[str] = []

    def add(self, text: str, indent: int = 0) -> None:
        prefix = " " * indent
        self.lines.extend(
            textwrap.wrap(
                text,
                self.width,
                initial_indent=prefix,
                subsequent_indent=prefix + "    ",
                break_on_hyphens=False,
            )
            or [prefix]
        )

    def heading(self, text: str) -> None:
        self.add(text)


def render_snapshot_text(snapshot: Snapshot, width: int = 100) -> str:
    """Summarise ``snapshot`` as plain text wrapped at ``width`` columns."""
    out = _Out(width)
    host = snapshot.host
    out.heading(
        f"gpudoctor snapshot of {host.hostname or '?'}"
        f" at {snapshot.created_at or '?'} (gpudoctor {snapshot.gpudoctor_version or '?'})"
    )
    _driver(out, snapshot)
    _gpus(out, snapshot)
    _versions(out, snapshot)
    _host(out, snapshot)
    _kernel_log(out, snapshot)
    _unavailable(out, snapshot)
    return "\n".join(out.lines) + "\n"


def _driver(out: _Out, s: Snapshot) -> None:
    d = s.driver
    if d.status == "ok":
        out.heading(
            f"Driver: {_val(d.driver_version)}  CUDA (driver API) {_val(d.cuda_driver_version)}"
            f"  NVML {_val(d.nvml_version)}"
            + (f"  [{d.backend}]" if d.backend and d.backend != "nvml" else "")
        )
    else:
        out.heading(f"Driver: NVML unusable ({d.status})")
        if d.message:
            out.add(d.message, 2)


def _gpus(out: _Out, s: Snapshot) -> None:
    if not s.gpus:
        if s.driver.status == "ok":
            out.heading("GPUs: none found")
        return
    out.heading(f"GPUs ({len(s.gpus)}):")
    for gpu in s.gpus:
        _gpu(out, gpu)


def _gpu(out: _Out, g: GpuInfo) -> None:
    if g.status != "ok" and g.name is None:
        reason = next(iter(g.unavailable.values()), "unknown")
        out.add(f"[{g.index}] {g.status.upper()}: {reason}", 2)
        return
    head = f"[{g.index}] {g.name or '?'}  {g.pci_bus_id or '?'}  cc {g.compute_capability or '?'}"
    if g.status != "ok":
        head += f"  {g.status.upper()}"
    out.add(head, 2)
    memory = f"memory {_size(g.memory_used_bytes)} used of {_size(g.memory_total_bytes)}"
    if g.memory_reserved_bytes is not None:
        memory += f" (reserved {_size(g.memory_reserved_bytes)})"
    temp = f"{_val(g.temperature_c, ' C')}"
    if g.temperature_slowdown_c is not None:
        temp += (
            f" (slowdown {g.temperature_slowdown_c} C, shutdown {_val(g.temperature_shutdown_c)} C)"
        )
    out.add(
        f"{memory}; util {_val(g.utilization_gpu_pct, '%')}; {temp}; "
        f"power {_val(g.power_draw_w)} / {_val(g.power_limit_w)} W",
        6,
    )
    reasons = ", ".join(g.clock_event_reason_names) if g.clock_event_reason_names else "none"
    if g.clock_event_reason_names is None:
        reasons = "?"
    out.add(
        f"clocks SM {_val(g.clock_sm_mhz)}/{_val(g.clock_sm_max_mhz)} MHz, "
        f"mem {_val(g.clock_mem_mhz)}/{_val(g.clock_mem_max_mhz)} MHz; clock events: {reasons}",
        6,
    )
    out.add(
        f"ECC {_val(g.ecc_mode_current)}: volatile uncorrected {_val(g.ecc_volatile_uncorrected)}"
        f" corrected {_val(g.ecc_volatile_corrected)}, aggregate uncorrected"
        f" {_val(g.ecc_aggregate_uncorrected)}; remapped rows uncorrectable"
        f" {_val(g.remapped_rows_uncorrectable)} pending {_yes(g.remapped_rows_pending)}"
        f" failure {_yes(g.remapped_rows_failure)}; retired pages pending"
        f" {_yes(g.retired_pages_pending)}",
        6,
    )
    out.add(
        f"PCIe gen {_val(g.pcie_link_gen_current)}/{_val(g.pcie_link_gen_max)}"
        f" x{_val(g.pcie_link_width_current)}/x{_val(g.pcie_link_width_max)};"
        f" persistence {_val(g.persistence_mode)}; compute mode {_val(g.compute_mode)};"
        f" MIG {_val(g.mig_mode_current)}",
        6,
    )
    if g.processes is None:
        out.add("processes: ?", 6)
    elif not g.processes:
        out.add("processes: none", 6)
    else:
        for proc in g.processes:
            out.add(_process(proc), 6)


def _process(p: GpuProcess) -> str:
    state = ""
    if p.exists is False:
        state = " [gone]"
    elif p.zombie:
        state = " [zombie]"
    cmd = " ".join(p.cmdline) if p.cmdline else (p.name or "?")
    return f"process {p.pid}{state} user {p.user or '?'} holds {_size(p.used_memory_bytes)}: {cmd}"


def _versions(out: _Out, s: Snapshot) -> None:
    v = s.versions
    parts = [f"Python {_val(v.python_version)}"]
    for f in v.frameworks:
        build = (
            f"CUDA {f.cuda_version}"
            if f.cuda_version
            else ("CPU" if f.is_cuda_build is False else "CUDA ?")
        )
        parts.append(f"{f.name} {_val(f.version)} ({build})")
    out.add("Versions: " + "; ".join(parts))
    if v.cuda_packages:
        out.add("CUDA wheels: " + ", ".join(f"{p.name} {p.version}" for p in v.cuda_packages), 2)
    if s.environment:
        out.add("Environment: " + " ".join(f"{k}={val}" for k, val in s.environment.items()), 2)


def _host(out: _Out, s: Snapshot) -> None:
    h = s.host
    out.add(
        f"Host: {_val(h.os_name)}, kernel {_val(h.kernel)}, {_val(h.cpu_count)} CPUs, "
        f"RAM {_size(h.ram_available_bytes)} available of {_size(h.ram_total_bytes)}, "
        f"swap {_size(h.swap_total_bytes)}"
    )
    limit = _size(h.cgroup_memory_limit_bytes) if h.cgroup_memory_limit_bytes else "none"
    container = f"yes ({h.container_runtime})" if h.in_container else _yes(h.in_container)
    out.add(
        f"/dev/shm {_size(h.shm_free_bytes)} free of {_size(h.shm_total_bytes)}; "
        f"cgroup v{_val(h.cgroup_version)} memory limit {limit}, usage "
        f"{_size(h.cgroup_memory_usage_bytes)}, oom_kill {_val(h.cgroup_oom_kill_count)}; "
        f"open files {_val(h.ulimit_nofile_soft)}/{_val(h.ulimit_nofile_hard)}; "
        f"container {container}",
        2,
    )


def _kernel_log(out: _Out, s: Snapshot) -> None:
    log = s.kernel_log
    if log.source is None:
        out.heading("Kernel log: not readable")
        return
    shown = [e for e in log.events if e.kind != "nvrm" or e.pci_bus or "mismatch" in e.line]
    out.heading(f"Kernel log ({log.source}): {len(log.events)} event(s)")
    for event in shown[-10:]:
        if event.kind == "xid":
            who = f" pid {event.pid}" if event.pid is not None else ""
            who += f" ({event.process_name})" if event.process_name else ""
            text = f"Xid {event.xid} on {event.pci_bus}{who}: {event.message or ''}"
        elif event.kind.startswith("oom_kill"):
            text = f"OOM kill of pid {event.pid} ({event.process_name or '?'})"
            if event.constraint:
                text += f" [{event.constraint}]"
        else:
            text = f"NVRM: {event.message or event.line}"
        out.add(text, 2)


_NOT_A_FAILURE = frozenset({"NoLimit"})
"""Reasons that record an answer, not a failure to read ("no memory limit" is shown as such)."""


def _unavailable(out: _Out, s: Snapshot) -> None:
    groups: list[tuple[str, dict[str, str]]] = [("driver", s.driver.unavailable)]
    groups += [(f"gpu {g.index}", g.unavailable) for g in s.gpus]
    groups += [
        (f"gpu {g.index} pid {p.pid}", p.unavailable) for g in s.gpus for p in g.processes or ()
    ]
    groups += [
        ("versions", s.versions.unavailable),
        ("host", s.host.unavailable),
        ("kernel log", s.kernel_log.unavailable),
    ]
    lines: list[str] = []
    for owner, fields in groups:
        by_reason: dict[str, list[str]] = defaultdict(list)
        for name, reason in fields.items():
            if reason in _NOT_A_FAILURE:
                continue
            by_reason[reason].append(name)
        for reason, names in by_reason.items():
            listed = "all fields" if len(names) >= _ALL_GPU_FIELDS else ", ".join(names)
            lines.append(f"{owner}: {reason}: {listed}")
    failed = [src for src in s.sources if not src.ok]
    for src in failed:
        lines.append(f"source {src.name}: {src.reason or 'failed'}")
    if not lines:
        return
    out.heading("Not read:")
    for line in lines:
        out.add(line, 2)
