"""``gpudoctor check``: a fast CI smoke check of a machine's GPU environment.

Each check judges one thing (NVML, the GPUs, driver vs. CUDA runtimes, compiled
architectures vs. compute capability, CUDA libraries, ``/dev/shm``, ``ulimit -n``,
``CUDA_VISIBLE_DEVICES``, persistence mode) from a
:class:`~gpudoctor.snapshot.model.Snapshot` and returns a
:class:`~gpudoctor.check.model.CheckResult`. Public API::

    from gpudoctor.check import run_checks, collect_live, CheckOptions, CheckReport, Status
"""

from __future__ import annotations

from gpudoctor.check.collect import collect_live
from gpudoctor.check.context import CheckContext, list_dir
from gpudoctor.check.model import (
    CHECK_SCHEMA,
    CheckOptions,
    CheckReport,
    CheckResult,
    CheckSource,
    Status,
)
from gpudoctor.check.runner import CHECKS, run_checks

__all__ = [
    "CHECKS",
    "CHECK_SCHEMA",
    "CheckContext",
    "CheckOptions",
    "CheckReport",
    "CheckResult",
    "CheckSource",
    "Status",
    "collect_live",
    "list_dir",
    "run_checks",
]
