"""Assembling a :class:`~gpudoctor.snapshot.model.Snapshot` from all collectors.

:func:`collect_snapshot` reads NVML (real or, with ``GPUDOCTOR_FAKE_NVML=<scenario>``, the
fake), the installed versions, the host and the kernel log. Each part can be injected for
tests. It runs no package manager and starts at most the ``dmesg``/``journalctl``
subprocesses (with a short timeout); it never raises for anything it cannot read — that is
recorded in the snapshot — except for an unknown fake scenario name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from gpudoctor import __version__
from gpudoctor.snapshot.gpus import collect_gpus
from gpudoctor.snapshot.host import collect_host
from gpudoctor.snapshot.kernel_reader import KernelLogReader, collect_kernel_log, lines_reader
from gpudoctor.snapshot.model import (
    NVML_OK,
    DriverInfo,
    GpuInfo,
    HostInfo,
    Snapshot,
    SourceStatus,
    VersionsInfo,
    record_from_dict,
)
from gpudoctor.snapshot.nvml import NvmlSession, real_session
from gpudoctor.snapshot.processes import ProcessInspector, inspect_process
from gpudoctor.snapshot.versions import collect_environment, collect_versions

FAKE_NVML_ENV = "GPUDOCTOR_FAKE_NVML"
"""Names a fake NVML scenario to use instead of the real library (tests, demos)."""


def collect_snapshot(
    *,
    since: timedelta | None = None,
    env: Mapping[str, str] | None = None,
    nvml: Any | None = None,
    process_inspector: ProcessInspector | None = None,
    kernel_log_readers: Sequence[KernelLogReader] | None = None,
    host_root: Path = Path("/"),
    site_paths: list[str] | None = None,
    now: datetime | None = None,
    booted_at: datetime | None = None,
) -> Snapshot:
    """Collect a snapshot of this machine.

    Args:
        since: kernel log window (``None``: since boot).
        env: environment to read (default ``os.environ``); ``GPUDOCTOR_FAKE_NVML`` in it
            selects a fake NVML scenario, whose kernel log lines and optional host /
            versions / environment sections replace the live ones.
        nvml: an NVML binding to use instead of ``pynvml`` (tests).
        process_inspector: replaces the psutil process lookup.
        kernel_log_readers: replaces the dmesg / journalctl / kern.log readers.
        host_root: filesystem root for host facts.
        site_paths: where to look for installed packages (default ``sys.path``).
        now: the collection time (default: now, UTC).
        booted_at: boot time for dmesg timestamps (default: from the system).

    Raises:
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    environ = os.environ if env is None else env
    current = now or datetime.now(timezone.utc)
    sources: list[SourceStatus] = []
    scenario: dict[str, Any] | None = None
    scenario_name = environ.get(FAKE_NVML_ENV, "").strip()
    if nvml is None and scenario_name:
        from gpudoctor.snapshot.fake_nvml import FakeNvml, ScenarioProcesses

        fake = FakeNvml.from_name(scenario_name)
        scenario = fake.scenario
        nvml = fake
        if process_inspector is None:
            process_inspector = ScenarioProcesses(scenario.get("processes"))
        if kernel_log_readers is None:
            kernel_log_readers = [
                lines_reader(f"scenario:{scenario_name}", scenario.get("kernel_log") or [])
            ]

    if nvml is not None:
        backend = f"fake:{scenario_name}" if scenario is not None else "custom"
        session: NvmlSession | None = NvmlSession(nvml, backend)
        driver_failure = None
    else:
        session, driver_failure = real_session()
    driver, gpus = _collect_nvml(session, driver_failure, process_inspector or inspect_process)
    sources.append(SourceStatus("nvml", driver.status == NVML_OK, driver.message))

    if scenario is not None and scenario.get("versions") is not None:
        versions = record_from_dict(VersionsInfo, scenario["versions"], "versions")
        sources.append(SourceStatus("versions", True, f"from scenario {scenario_name}"))
    else:
        versions = collect_versions(paths=site_paths)
        sources.append(SourceStatus("package metadata", True))

    if scenario is not None and scenario.get("environment") is not None:
        environment = {str(k): str(v) for k, v in scenario["environment"].items()}
    else:
        environment = collect_environment(environ)

    if scenario is not None and scenario.get("host") is not None:
        host = record_from_dict(HostInfo, scenario["host"], "host")
        sources.append(SourceStatus("host", True, f"from scenario {scenario_name}"))
    else:
        host, host_sources = collect_host(root=host_root, env=environ)
        sources.extend(host_sources)

    kernel_log, kernel_sources = collect_kernel_log(
        since, readers=kernel_log_readers, now=current, booted_at=booted_at
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
