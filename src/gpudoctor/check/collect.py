"""The live side of ``gpudoctor check``: this machine's snapshot, collected fast.

It is :func:`gpudoctor.snapshot.collect_snapshot` without the kernel log (no ``dmesg`` or
``journalctl`` subprocess: no check reads it), so a check costs NVML, package metadata and
a few ``/proc`` reads. No framework is imported and no package manager is run.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.check.model import CheckSource
from gpudoctor.snapshot.collect import FAKE_NVML_ENV, collect_snapshot
from gpudoctor.snapshot.model import Snapshot


def collect_live(env: Mapping[str, str] | None = None) -> tuple[Snapshot, CheckSource]:
    """Collect this machine's snapshot for the checks, and describe its source.

    Args:
        env: the environment (default ``os.environ``); ``GPUDOCTOR_FAKE_NVML=<scenario>``
            in it selects a simulated machine instead of this one.

    Raises:
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    snapshot = collect_snapshot(env=env, read_kernel_log=False)
    source = CheckSource(
        "live",
        hostname=snapshot.host.hostname,
        nvml_backend=snapshot.driver.backend,
    )
    return snapshot, source


__all__ = ["FAKE_NVML_ENV", "collect_live"]
