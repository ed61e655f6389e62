"""Running the checks: the registry of checks, in the order they are reported.

:data:`CHECKS` is a plain mapping from check id to function, checked once at import; a check
that raises is reported as failed with the exception (a bug in gpudoctor must not pass a CI
gate silently).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gpudoctor.check.archs import check_gpu_arch
from gpudoctor.check.context import CheckContext, ListDir
from gpudoctor.check.driver import check_driver_runtime
from gpudoctor.check.gpus import (
    check_cuda_visible_devices,
    check_gpus,
    check_nvml,
    check_persistence,
)
from gpudoctor.check.health import check_gpu_health
from gpudoctor.check.host import check_nofile, check_shm
from gpudoctor.check.libraries import check_cuda_majors, check_ld_library_path
from gpudoctor.check.model import CheckOptions, CheckReport, CheckResult, CheckSource, Status
from gpudoctor.snapshot.model import Snapshot

CheckFunction = Callable[[CheckContext], CheckResult]

#: Every check, by id, in report order: GPU checks first, then the static ones.
CHECKS: Mapping[str, CheckFunction] = {
    "nvml": check_nvml,
    "gpus": check_gpus,
    "gpu-health": check_gpu_health,
    "driver-runtime": check_driver_runtime,
    "gpu-arch": check_gpu_arch,
    "cuda-visible-devices": check_cuda_visible_devices,
    "cuda-majors": check_cuda_majors,
    "ld-library-path": check_ld_library_path,
    "shm": check_shm,
    "nofile": check_nofile,
    "persistence-mode": check_persistence,
}


def _run_one(check_id: str, check: CheckFunction, ctx: CheckContext) -> CheckResult:
    try:
        result = check(ctx)
    except Exception as exc:  # a crashing check must not make the whole run pass or vanish
        return CheckResult(
            check_id,
            check_id,
            Status.FAIL,
            f"The check crashed: {type(exc).__name__}: {exc}.",
            "Report this as a gpudoctor bug, with the snapshot (gpudoctor snapshot -o snap.json).",
        )
    if result.id != check_id:
        raise AssertionError(f"check {check_id!r} returned a result for {result.id!r}")
    return result


def run_checks(
    snapshot: Snapshot,
    options: CheckOptions | None = None,
    *,
    source: CheckSource | None = None,
    list_dir: ListDir | None = None,
) -> CheckReport:
    """Run every check on ``snapshot`` and return the report.

    Args:
        snapshot: the machine to judge.
        options: the caller's expectations (defaults: :class:`CheckOptions`).
        source: where the snapshot came from (default: a snapshot of unknown origin).
        list_dir: reads folders of the machine (live runs only; ``None`` for a saved
            snapshot from another node).
    """
    opts = options or CheckOptions()
    if snapshot.driver.backend is not None and snapshot.driver.backend.startswith("fake:"):
        list_dir = None  # a simulated machine's folders are not on this disk
    ctx = CheckContext(snapshot, opts, list_dir)
    results = tuple(_run_one(check_id, check, ctx) for check_id, check in CHECKS.items())
    return CheckReport(
        results,
        source or CheckSource("snapshot", hostname=snapshot.host.hostname),
        opts,
    )
