"""Checks on NVML and the GPUs themselves: NVML loads, the expected GPUs are there and
healthy, ``CUDA_VISIBLE_DEVICES`` names devices that exist, persistence mode (info).

NVML ignores ``CUDA_VISIBLE_DEVICES``: it enumerates every GPU the machine (or container)
has, which is exactly the list the variable indexes into.
"""

from __future__ import annotations

from collections import Counter

from gpudoctor.check.context import NO_GPU_STATUSES, CheckContext
from gpudoctor.check.model import CheckResult, Status
from gpudoctor.snapshot.model import GPU_LOST, GpuInfo

_NVML_FIXES = {
    "no_driver": (
        "Load the NVIDIA kernel module (sudo modprobe nvidia; see `dmesg | grep NVRM` for why "
        "it failed) or run the job on a GPU node."
    ),
    "library_not_found": (
        "Install the NVIDIA driver, or in a container expose the GPUs "
        "(docker run --gpus all, the NVIDIA Container Toolkit, or the Kubernetes device plugin)."
    ),
    "driver_library_mismatch": (
        "Reboot the node, or unload and reload the nvidia kernel modules, so that the kernel "
        "module matches the user-space driver libraries."
    ),
    "no_permission": (
        "Give the job access to /dev/nvidia* (the video/render group, or the container's "
        "device options)."
    ),
}
_NVML_FIX_DEFAULT = "Run nvidia-smi on the node to see the error; reinstall the driver if needed."


def check_nvml(ctx: CheckContext) -> CheckResult:
    """NVML initialises: a working NVIDIA driver is installed and loaded."""
    title = "NVML loads"
    driver = ctx.snapshot.driver
    if ctx.nvml_ok:
        seen = [f"driver {driver.driver_version or 'version unknown'}"]
        if driver.cuda_driver_version:
            seen.append(f"CUDA {driver.cuda_driver_version}")
        return CheckResult("nvml", title, Status.PASS, f"NVML loaded ({', '.join(seen)}).")
    message = driver.message or driver.error or driver.status
    if driver.status in NO_GPU_STATUSES and not ctx.options.require_gpu:
        return CheckResult(
            "nvml",
            title,
            Status.SKIP,
            f"No NVIDIA driver on this machine ({message}). GPU checks are skipped; pass "
            "--require-gpu to make this a failure.",
        )
    return CheckResult(
        "nvml",
        title,
        Status.FAIL,
        f"NVML cannot be used: {message}.",
        _NVML_FIXES.get(driver.status, _NVML_FIX_DEFAULT),
    )


def _describe(gpus: tuple[GpuInfo, ...]) -> str:
    names = Counter(g.name or "unknown GPU" for g in gpus)
    return ", ".join(f"{n}x {name}" for name, n in names.items())


def check_gpus(ctx: CheckContext) -> CheckResult:
    """NVML sees the GPUs the job expects (``--expect-gpus``), none lost or unreadable."""
    title = "GPUs present and healthy"
    options = ctx.options
    if not ctx.nvml_ok:
        return CheckResult("gpus", title, Status.SKIP, "NVML is not usable; see the nvml check.")
    all_gpus = ctx.snapshot.gpus
    usable = ctx.usable_gpus
    details = tuple(
        f"GPU {g.index}: {g.name or '?'} ({g.status})"
        + (f" {g.pci_bus_id}" if g.pci_bus_id else "")
        for g in all_gpus
    )
    broken = [g for g in all_gpus if g not in usable]
    problems: list[str] = []
    fixes: list[str] = []
    if broken:
        lost = [str(g.index) for g in broken if g.status == GPU_LOST]
        error = [str(g.index) for g in broken if g.status != GPU_LOST]
        if lost:
            problems.append(f"GPU {', '.join(lost)} fell off the bus (GpuIsLost)")
            fixes.append(
                "Drain the node and reset or reboot it (nvidia-smi -r, then a power cycle if "
                "that fails); check the kernel log for Xid 79."
            )
        if error:
            problems.append(f"GPU {', '.join(error)} could not be read")
            fixes.append("Run nvidia-smi -q on the node to see why the GPU does not answer.")
    if options.expect_gpus is not None and len(usable) != options.expect_gpus:
        problems.append(f"expected {options.expect_gpus} GPUs, NVML sees {len(usable)} usable")
        fixes.append(
            "Check the scheduler's GPU allocation and the container's --gpus / "
            "NVIDIA_VISIBLE_DEVICES, or adjust --expect-gpus."
        )
    if problems:
        return CheckResult(
            "gpus", title, Status.FAIL, "; ".join(problems) + ".", " ".join(fixes), details
        )
    if not usable:
        if options.require_gpu:
            return CheckResult(
                "gpus",
                title,
                Status.FAIL,
                "NVML loaded but sees no GPU.",
                "Check that the GPUs are allocated to this job or container.",
            )
        return CheckResult("gpus", title, Status.SKIP, "NVML loaded but sees no GPU.")
    return CheckResult(
        "gpus", title, Status.PASS, f"{len(usable)} GPU(s): {_describe(usable)}.", None, details
    )


def _visible_entry_matches(entry: str, gpus: tuple[GpuInfo, ...]) -> bool:
    if entry.isdigit():
        return any(g.index == int(entry) for g in gpus)
    if entry.startswith("MIG-"):
        # MIG instance UUIDs are not in the snapshot: accept them rather than guess.
        return True
    # CUDA accepts GPU UUIDs and any unique prefix of them ("GPU-4a1e").
    wanted = entry if entry.startswith("GPU-") else f"GPU-{entry}"
    return sum(1 for g in gpus if g.uuid and g.uuid.startswith(wanted)) == 1


def check_cuda_visible_devices(ctx: CheckContext) -> CheckResult:
    """``CUDA_VISIBLE_DEVICES`` names only GPUs that exist."""
    check_id, title = "cuda-visible-devices", "CUDA_VISIBLE_DEVICES names existing GPUs"
    value = ctx.snapshot.environment.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return CheckResult(check_id, title, Status.PASS, "CUDA_VISIBLE_DEVICES is not set.")
    skip = ctx.gpu_skip_reason()
    if skip is not None:
        return CheckResult(check_id, title, Status.SKIP, f"{skip}; cannot compare with it.")
    entries = [e.strip() for e in value.split(",")]
    if value.strip() == "" or entries[0] in ("-1", "NoDevFiles"):
        return CheckResult(
            check_id,
            title,
            Status.FAIL,
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU: the job will see no CUDA device "
            "(cudaErrorNoDevice, 100).",
            "Unset CUDA_VISIBLE_DEVICES, or set it to the GPU indices or UUIDs to use.",
        )
    gpus = ctx.snapshot.gpus
    bad = [e for e in entries if not _visible_entry_matches(e, gpus)]
    if not bad:
        return CheckResult(
            check_id,
            title,
            Status.PASS,
            f"CUDA_VISIBLE_DEVICES={value} names {len(entries)} existing GPU(s).",
        )
    first_bad = entries.index(bad[0])
    kept = entries[:first_bad]
    effect = (
        f"CUDA stops at the first invalid entry, so the job sees only {', '.join(kept)}"
        if kept
        else "CUDA stops at the first invalid entry, so the job sees no GPU "
        "(cudaErrorNoDevice, 100)"
    )
    indices = ", ".join(str(g.index) for g in gpus)
    return CheckResult(
        check_id,
        title,
        Status.FAIL,
        f"CUDA_VISIBLE_DEVICES={value} names {', '.join(bad)}, which NVML does not see "
        f"(GPUs here: {indices}). {effect}.",
        "Set CUDA_VISIBLE_DEVICES to indices below the GPU count or to the UUIDs that "
        "`nvidia-smi -L` prints (let the scheduler set it where it does).",
    )


def check_persistence(ctx: CheckContext) -> CheckResult:
    """Persistence mode (information only: never fails or warns)."""
    check_id, title = "persistence-mode", "Persistence mode (info)"
    skip = ctx.gpu_skip_reason()
    if skip is not None:
        return CheckResult(check_id, title, Status.SKIP, f"{skip}.")
    gpus = ctx.usable_gpus
    off = [str(g.index) for g in gpus if g.persistence_mode is False]
    unknown = [g for g in gpus if g.persistence_mode is None]
    if len(unknown) == len(gpus):
        return CheckResult(
            check_id, title, Status.SKIP, "NVML did not report persistence mode (Windows?)."
        )
    if not off:
        return CheckResult(check_id, title, Status.PASS, "Persistence mode is on.")
    return CheckResult(
        check_id,
        title,
        Status.PASS,
        f"Persistence mode is off on GPU {', '.join(off)}: the driver tears the GPU state down "
        "when no process uses it, so every job start pays a few seconds of initialisation.",
        "Enable it with `sudo nvidia-smi -pm 1` or the nvidia-persistenced service "
        "(information only; not a failure).",
    )
