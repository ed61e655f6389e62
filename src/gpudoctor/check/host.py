"""Host checks that need no GPU: ``/dev/shm`` size and the open-files limit.

PyTorch DataLoader workers hand every batch to the main process through shared memory
(``/dev/shm``) and one file descriptor per shared tensor. Docker's default 64 MiB
``/dev/shm`` kills workers with "Bus error"; a low ``ulimit -n`` gives "Too many open
files" or "received 0 items of ancdata".

Thresholds: below ``FAIL_SHM_BYTES`` (256 MiB) or ``FAIL_NOFILE`` (1024) fails; below the
caller's ``--min-shm`` (default 1 GiB) or ``--min-nofile`` (default 4096) warns.
"""

from __future__ import annotations

from gpudoctor.check.context import CheckContext
from gpudoctor.check.model import CheckResult, Status
from gpudoctor.units import format_size

FAIL_SHM_BYTES = 256 << 20
FAIL_NOFILE = 1024


def check_shm(ctx: CheckContext) -> CheckResult:
    """``/dev/shm`` is large enough for DataLoader workers."""
    check_id, title = "shm", "/dev/shm large enough for DataLoader workers"
    host = ctx.snapshot.host
    total = host.shm_total_bytes
    if total is None:
        why = host.unavailable.get("shm_total_bytes", "not collected")
        return CheckResult(check_id, title, Status.SKIP, f"/dev/shm size unknown ({why}).")
    want = ctx.options.min_shm_bytes
    floor = min(FAIL_SHM_BYTES, want)
    free = f", {format_size(host.shm_free_bytes)} free" if host.shm_free_bytes is not None else ""
    size = f"/dev/shm is {format_size(total)}{free}"
    if total >= want:
        return CheckResult(check_id, title, Status.PASS, f"{size}.")
    status = Status.FAIL if total < floor else Status.WARN
    limit = format_size(floor if status is Status.FAIL else want)
    return CheckResult(
        check_id,
        title,
        status,
        f"{size}, below {limit}: DataLoader workers (num_workers > 0) pass batches through it "
        "and die with 'Bus error' or 'No space left on device' when it fills.",
        "Give the container more shared memory: docker run --shm-size=16g (or --ipc=host); on "
        "Kubernetes mount an emptyDir with medium: Memory at /dev/shm.",
    )


def check_nofile(ctx: CheckContext) -> CheckResult:
    """The soft open-files limit (``ulimit -n``) is high enough."""
    check_id, title = "nofile", "Open-files limit (ulimit -n)"
    host = ctx.snapshot.host
    soft, hard = host.ulimit_nofile_soft, host.ulimit_nofile_hard
    if soft is None:
        why = host.unavailable.get("ulimit_nofile_soft", "not collected")
        return CheckResult(check_id, title, Status.SKIP, f"ulimit -n unknown ({why}).")
    want = ctx.options.min_nofile
    hard_text = f" (hard limit {hard})" if hard is not None else ""
    if soft >= want:
        return CheckResult(check_id, title, Status.PASS, f"ulimit -n is {soft}{hard_text}.")
    status = Status.FAIL if soft < min(FAIL_NOFILE, want) else Status.WARN
    limit = min(FAIL_NOFILE, want) if status is Status.FAIL else want
    hard_ok = hard is None or hard < 0 or hard >= want  # a negative hard limit is unlimited
    raise_soft = (
        f"Raise it with `ulimit -n {want}` in the job script"
        if hard_ok
        else f"The hard limit {hard} is below {want}: raise it (limits.conf, "
        "docker --ulimit nofile=65536:65536, or the scheduler's settings)"
    )
    return CheckResult(
        check_id,
        title,
        status,
        f"ulimit -n is {soft}{hard_text}, below {limit}: "
        "DataLoader workers share tensors through file descriptors and fail with 'Too many "
        "open files' or 'received 0 items of ancdata'.",
        f"{raise_soft}, or call torch.multiprocessing.set_sharing_strategy('file_system').",
    )
