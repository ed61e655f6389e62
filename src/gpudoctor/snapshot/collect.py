"""Assembling a :class:`~gpudoctor.snapshot.model.Snapshot` from a machine source.

:func:`collect_snapshot` reads NVML, the installed versions, the host, the environment and
the kernel log from one :class:`~gpudoctor.snapshot.source.MachineSource`: this machine, or
the named scenario ``GPUDOCTOR_FAKE_NVML`` selects (:func:`~gpudoctor.snapshot.source.
machine_source` chooses). It runs no package manager and starts at most the
``dmesg``/``journalctl`` subprocesses (with a short timeout); it never raises for anything
it cannot read — that is recorded in the snapshot — except for an unknown scenario name.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from gpudoctor import __version__
from gpudoctor.snapshot.gpus import collect_gpus
from gpudoctor.snapshot.kernel_reader import collect_kernel_log
from gpudoctor.snapshot.model import NVML_OK, DriverInfo, GpuInfo, Snapshot, SourceStatus
from gpudoctor.snapshot.nvml import NvmlSession
from gpudoctor.snapshot.processes import ProcessInspector
from gpudoctor.snapshot.source import SCENARIO_ENV, MachineSource, machine_source

FAKE_NVML_ENV = SCENARIO_ENV
"""Names a bundled machine scenario to use instead of this machine (tests, demos)."""


def collect_snapshot(
    *,
    since: timedelta | None = None,
    env: Mapping[str, str] | None = None,
    source: MachineSource | None = None,
    read_kernel_log: bool = True,
    now: datetime | None = None,
) -> Snapshot:
    """Collect a snapshot of this machine, or of the scenario ``GPUDOCTOR_FAKE_NVML`` names.

    Args:
        since: kernel log window (``None``: since boot).
        env: environment that chooses the source (default ``os.environ``); ignored when
            ``source`` is given.
        source: the machine to read (default: :func:`~gpudoctor.snapshot.source.machine_source`).
        read_kernel_log: ``False`` skips the kernel log (no subprocess), recording why.
        now: the collection time (default: now, UTC).

    Raises:
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    machine = source if source is not None else machine_source(env)
    current = now or datetime.now(timezone.utc)
    sources: list[SourceStatus] = []

    session, driver_failure = machine.nvml()
    driver, gpus = _collect_nvml(session, driver_failure, machine.process_inspector())
    sources.append(SourceStatus("nvml", driver.status == NVML_OK, driver.message))

    versions, version_sources = machine.versions()
    sources.extend(version_sources)
    environment, environment_sources = machine.environment()
    sources.extend(environment_sources)
    host, host_sources = machine.host()
    sources.extend(host_sources)

    kernel_log, kernel_sources = collect_kernel_log(
        since,
        readers=machine.kernel_log_readers() if read_kernel_log else [],
        now=current,
        booted_at=machine.boot_time() if read_kernel_log else None,
    )
    sources.extend(kernel_sources)

    return Snapshot(
        created_at=current.isoformat(timespec="seconds"),
        gpudoctor_version=__version__,
        driver=driver,
        gpus=gpus,
        versions=versions,
        environment=environment,
        host=host,
        kernel_log=kernel_log,
        sources=tuple(sources),
    )


def _collect_nvml(
    session: NvmlSession | None, failure: Any, inspector: ProcessInspector
) -> tuple[DriverInfo, tuple[GpuInfo, ...]]:
    if session is None:
        return (
            DriverInfo(
                status=failure.status,
                error=failure.error,
                message=failure.message,
                backend=failure.backend,
            ),
            (),
        )
    init = session.init()
    if init.status != NVML_OK:
        return (
            DriverInfo(
                status=init.status, error=init.error, message=init.message, backend=session.backend
            ),
            (),
        )
    unavailable: dict[str, str] = {}
    driver_version, reason = session.call("nvmlSystemGetDriverVersion")
    if reason:
        unavailable["driver_version"] = reason
    cuda_int, reason = session.call("nvmlSystemGetCudaDriverVersion")
    if reason:
        unavailable["cuda_driver_version"] = reason
    nvml_version, reason = session.call("nvmlSystemGetNVMLVersion")
    if reason:
        unavailable["nvml_version"] = reason
    gpus, count_reason = collect_gpus(session, inspector)
    if count_reason:
        unavailable["gpus"] = count_reason
    driver = DriverInfo(
        status=NVML_OK,
        backend=session.backend,
        driver_version=str(driver_version) if driver_version is not None else None,
        cuda_driver_version=cuda_version_text(cuda_int) if isinstance(cuda_int, int) else None,
        nvml_version=str(nvml_version) if nvml_version is not None else None,
        unavailable=unavailable,
    )
    return driver, gpus


def cuda_version_text(value: int) -> str:
    """NVML's CUDA version integer as text: ``12040`` → ``"12.4"``, ``13000`` → ``"13.0"``."""
    return f"{value // 1000}.{value % 1000 // 10}"
