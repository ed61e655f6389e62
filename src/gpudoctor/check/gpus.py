"""Checks on NVML and the GPUs themselves: NVML loads, the expected GPUs are there and
readable, ``CUDA_VISIBLE_DEVICES`` names devices that exist, persistence mode (info).

NVML ignores ``CUDA_VISIBLE_DEVICES``: it enumerates every GPU the machine (or container)
has, which is exactly the list the variable indexes into. The GPUs a job will see are that
list with the variable applied (:mod:`gpudoctor.check.visible`); ``--expect-gpus`` counts
those. Asking for GPUs (``--require-gpu``, ``--expect-gpus N``) is never satisfied by a skip.
"""

from __future__ import annotations

from collections import Counter

from gpudoctor.check.context import NO_GPU_STATUSES, CheckContext
from gpudoctor.check.model import CheckResult, Status
from gpudoctor.check.visible import HIDE_ALL, visible_devices
from gpudoctor.snapshot.model import GPU_LOST, GpuInfo
from gpudoctor.wording import count_of

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
    if driver.status in NO_GPU_STATUSES and not ctx.gpus_required:
        return CheckResult(
            "nvml",
            title,
            Status.SKIP,
            f"No NVIDIA driver on this machine ({message}). GPU checks are skipped; pass "
            "--require-gpu (or --expect-gpus N) to make this a failure.",
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


def _seen(ctx: CheckContext, usable_visible: int) -> str:
    """``8 GPU(s)`` or ``2 of 8 GPUs visible to the job (CUDA_VISIBLE_DEVICES=0,1)``."""
    visible = ctx.visible
    if not visible.restricted:
        return f"{usable_visible} GPU(s)"
    return (
        f"{usable_visible} of {len(ctx.usable_gpus)} GPUs visible to the job "
        f"(CUDA_VISIBLE_DEVICES={visible.value})"
    )


def check_gpus(ctx: CheckContext) -> CheckResult:
    """The job sees the GPUs it expects (``--expect-gpus``), none lost or unreadable."""
    title = "GPUs present and healthy"
    options = ctx.options
    if not ctx.nvml_ok:
        if ctx.gpus_required:
            wanted = (
                f"expected {count_of(options.expect_gpus, 'GPU')}"
                if options.expect_gpus
                else "a GPU is required (--require-gpu)"
            )
            return CheckResult(
                "gpus",
                title,
                Status.FAIL,
                f"{wanted}, but NVML cannot be used, so the job would see none; see the nvml "
                "check.",
                "Run the job on a node with a working NVIDIA driver and GPUs allocated to it.",
            )
        if options.expect_gpus == 0:
            return CheckResult("gpus", title, Status.PASS, "No GPU, as expected.")
        return CheckResult("gpus", title, Status.SKIP, "NVML is not usable; see the nvml check.")
    all_gpus = ctx.snapshot.gpus
    usable = ctx.usable_gpus
    visible = ctx.visible
    shown = [g for g in usable if g.index in visible.indices]
    count = len(shown) + len(visible.mig)
    details = tuple(
        f"GPU {g.index}: {g.name or '?'} ({g.status})"
        + (f" {g.pci_bus_id}" if g.pci_bus_id else "")
        + ("" if g.index in visible.indices else ", hidden by CUDA_VISIBLE_DEVICES")
        for g in all_gpus
    ) + tuple(f"{m}: MIG device (not checked)" for m in visible.mig)
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
    if options.expect_gpus is not None and count != options.expect_gpus:
        problems.append(
            f"expected {count_of(options.expect_gpus, 'GPU')}, the job would see {count}"
        )
        fixes.append(
            "Check the scheduler's GPU allocation, CUDA_VISIBLE_DEVICES and the container's "
            "--gpus / NVIDIA_VISIBLE_DEVICES, or adjust --expect-gpus."
        )
    if problems:
        reason = "; ".join(problems) + f" ({_seen(ctx, count)})."
        return CheckResult("gpus", title, Status.FAIL, reason, " ".join(fixes), details)
    if not usable:
        if ctx.gpus_required:
            return CheckResult(
                "gpus",
                title,
                Status.FAIL,
                "NVML loaded but sees no GPU.",
                "Check that the GPUs are allocated to this job or container.",
            )
        return CheckResult("gpus", title, Status.SKIP, "NVML loaded but sees no GPU.")
    if count == 0:
        return CheckResult(
            "gpus",
            title,
            Status.FAIL if ctx.gpus_required else Status.WARN,
            f"{_seen(ctx, 0)}: the job will run without a GPU.",
            "Unset CUDA_VISIBLE_DEVICES, or set it to the GPU indices or UUIDs to use.",
            details,
        )
    names = _describe(tuple(shown)) if shown else "MIG devices"
    return CheckResult("gpus", title, Status.PASS, f"{_seen(ctx, count)}: {names}.", None, details)


def check_cuda_visible_devices(ctx: CheckContext) -> CheckResult:
    """``CUDA_VISIBLE_DEVICES`` names only GPUs that exist."""
    check_id, title = "cuda-visible-devices", "CUDA_VISIBLE_DEVICES names existing GPUs"
    value = ctx.snapshot.environment.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return CheckResult(check_id, title, Status.PASS, "CUDA_VISIBLE_DEVICES is not set.")
    skip = ctx.gpu_skip_reason()
    if skip is not None:
        return CheckResult(check_id, title, Status.SKIP, f"{skip}; cannot compare with it.")
    visible = ctx.visible
    if visible.invalid is None:
        return CheckResult(
            check_id,
            title,
            Status.PASS,
            f"CUDA_VISIBLE_DEVICES={value} names {visible.count} existing GPU(s).",
        )
    if not visible.kept and visible.invalid in HIDE_ALL:
        return CheckResult(
            check_id,
            title,
            Status.FAIL,
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU: the job will see no CUDA device "
            "(cudaErrorNoDevice, 100).",
            "Unset CUDA_VISIBLE_DEVICES, or set it to the GPU indices or UUIDs to use.",
        )
    entries = [e.strip() for e in value.split(",")]
    bad = [e for e in entries[len(visible.kept) :] if visible_devices(e, ctx.snapshot.gpus).invalid]
    effect = (
        f"CUDA stops at the first invalid entry, so the job sees only {', '.join(visible.kept)}"
        if visible.kept
        else "CUDA stops at the first invalid entry, so the job sees no GPU "
        "(cudaErrorNoDevice, 100)"
    )
    indices = ", ".join(str(g.index) for g in ctx.snapshot.gpus)
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
