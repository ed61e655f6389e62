"""Where a snapshot's facts come from: the live machine or a named scenario, behind one interface.

:class:`MachineSource` is what :func:`~gpudoctor.snapshot.collect.collect_snapshot` reads:
NVML, the process lookup, the installed versions, the host, the environment variables and
the kernel log. :class:`LiveSource` reads this machine (each part replaceable for tests);
:class:`~gpudoctor.snapshot.scenario.ScenarioSource` serves a whole simulated machine.

:func:`machine_source` is the one place that chooses between them, from
``GPUDOCTOR_FAKE_NVML`` (:data:`SCENARIO_ENV`). The scenario module, and the YAML parser it
needs, load only when a scenario is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from gpudoctor.snapshot.host import collect_host
from gpudoctor.snapshot.kernel_reader import KernelLogReader, boot_time, default_readers
from gpudoctor.snapshot.model import HostInfo, SourceStatus, VersionsInfo
from gpudoctor.snapshot.nvml import InitResult, NvmlSession, real_session
from gpudoctor.snapshot.processes import ProcessInspector, inspect_process
from gpudoctor.snapshot.versions import collect_environment, collect_versions

SCENARIO_ENV = "GPUDOCTOR_FAKE_NVML"
"""Names a bundled scenario to use instead of this machine (tests, demos)."""


class MachineSource(Protocol):
    """Everything a snapshot is collected from. No method raises for what it cannot read."""

    @property
    def label(self) -> str:
        """``live`` or ``scenario:<name>``."""
        ...

    def nvml(self) -> tuple[NvmlSession | None, InitResult | None]:
        """An NVML session, or ``None`` and why NVML cannot be used at all."""
        ...

    def process_inspector(self) -> ProcessInspector:
        """Describes the pids NVML lists."""
        ...

    def versions(self) -> tuple[VersionsInfo, list[SourceStatus]]:
        """Python, the frameworks and the NVIDIA wheels installed."""
        ...

    def host(self) -> tuple[HostInfo, list[SourceStatus]]:
        """Memory, /dev/shm, cgroup, limits, container, host name."""
        ...

    def environment(self) -> tuple[dict[str, str], list[SourceStatus]]:
        """The GPU-related environment variables that are set."""
        ...

    def kernel_log_readers(self) -> Sequence[KernelLogReader]:
        """Kernel log sources, in the order they are tried."""
        ...

    def boot_time(self) -> datetime | None:
        """When the machine booted (for dmesg's relative timestamps), if known."""
        ...


class LiveSource:
    """This machine. Every argument replaces one live part (tests); ``None`` keeps it live."""

    label = "live"

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        nvml: Any | None = None,
        process_inspector: ProcessInspector | None = None,
        kernel_log_readers: Sequence[KernelLogReader] | None = None,
        host_root: Path = Path("/"),
        site_paths: list[str] | None = None,
        booted_at: datetime | None = None,
    ) -> None:
        """Read this machine.

        Args:
            env: environment to read (default ``os.environ``).
            nvml: an NVML binding to use instead of ``pynvml``.
            process_inspector: replaces the psutil process lookup.
            kernel_log_readers: replaces the dmesg / journalctl / kern.log readers.
            host_root: filesystem root for host facts.
            site_paths: where to look for installed packages (default ``sys.path``).
            booted_at: boot time for dmesg timestamps (default: from the system).
        """
        self._env = os.environ if env is None else env
        self._nvml = nvml
        self._inspector = process_inspector
        self._readers = kernel_log_readers
        self._host_root = host_root
        self._site_paths = site_paths
        self._booted_at = booted_at

    def nvml(self) -> tuple[NvmlSession | None, InitResult | None]:
        """The real ``pynvml`` (or the binding given)."""
        if self._nvml is not None:
            return NvmlSession(self._nvml, "custom"), None
        return real_session()

    def process_inspector(self) -> ProcessInspector:
        """psutil (or the lookup given)."""
        return self._inspector or inspect_process

    def versions(self) -> tuple[VersionsInfo, list[SourceStatus]]:
        """Package metadata on ``sys.path`` (or the paths given)."""
        return collect_versions(paths=self._site_paths), [SourceStatus("package metadata", True)]

    def host(self) -> tuple[HostInfo, list[SourceStatus]]:
        """``/proc``, ``/sys``, ``/dev/shm`` below the host root."""
        return collect_host(root=self._host_root, env=self._env)

    def environment(self) -> tuple[dict[str, str], list[SourceStatus]]:
        """The GPU-related variables of the environment."""
        return collect_environment(self._env), []

    def kernel_log_readers(self) -> Sequence[KernelLogReader]:
        """dmesg, journalctl, kern.log, messages (or the readers given)."""
        return self._readers if self._readers is not None else default_readers()

    def boot_time(self) -> datetime | None:
        """``btime`` from ``/proc/stat`` (or the time given)."""
        return self._booted_at if self._booted_at is not None else boot_time()


def machine_source(env: Mapping[str, str] | None = None) -> MachineSource:
    """The source ``env`` asks for: the scenario named by ``GPUDOCTOR_FAKE_NVML``, else live.

    Raises:
        UnknownScenarioError: the variable names no bundled scenario (the message lists the
            valid names).
    """
    environ = os.environ if env is None else env
    name = environ.get(SCENARIO_ENV, "").strip()
    if not name:
        return LiveSource(env=environ)
    from gpudoctor.snapshot.scenario import ScenarioSource, UnknownScenarioError

    try:
        return ScenarioSource(name)
    except UnknownScenarioError as exc:
        raise UnknownScenarioError(f"{SCENARIO_ENV}={name}: {exc}") from None
