"""Verdicts on the NVIDIA driver versus the CUDA runtime an application ships.

Three facts from the tables decide it (cuda_driver.yaml, driver_branches.yaml):

* the toolkit driver: with a driver at or above it, every feature of that CUDA release
  works ("full" support);
* the minor-version-compatibility floor of the runtime's CUDA major (11.x ≥ 450.80.02,
  12.x ≥ 525.60.13, 13.x ≥ 580 on Linux): a driver below the toolkit driver but at or above
  the floor still runs the application, except for PTX JIT (error 222) and newer APIs (36);
* below the floor the runtime cannot start (cudaErrorInsufficientDriver, 35).

Runtime versions are compared by major.minor: ``12.4.127`` (a runtime wheel) and ``12.4``
(``torch.version.cuda``) ask the same question.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gpudoctor.compat.forward import CompatPackageStatus, compat_package_status
from gpudoctor.compat.tables import cuda_driver_table, driver_branch_table
from gpudoctor.version_numbers import Version

__all__ = [
    "RuntimeStatus",
    "RuntimeSupport",
    "driver_supports_runtime",
    "max_cuda_for_driver",
    "minimum_driver_for",
    "minor_compat_floor",
    "normalise_os",
]


class RuntimeStatus(str, Enum):
    """How well a driver supports a CUDA runtime."""

    FULL = "full"
    MINOR_VERSION_COMPAT = "minor_version_compat"
    UNSUPPORTED = "unsupported"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class RuntimeSupport:
    """The verdict of :func:`driver_supports_runtime`.

    Attributes:
        status: the verdict.
        driver: the driver version judged.
        runtime: the CUDA runtime (major.minor) judged.
        os: ``"linux"`` or ``"windows"``.
        full_support_driver: the lowest driver with full support, or ``None`` if unknown.
        full_support_exact: ``False`` when that value is only the driver branch (NVIDIA no
            longer bundles a driver with that toolkit on this OS).
        minor_compat_floor: the CUDA major's minor-version-compatibility floor, if any.
        reason: one or two sentences for a human.
        fix: what to do, or ``None`` when nothing needs doing.
        caveats: what does not work under minor-version compatibility.
    """

    status: RuntimeStatus
    driver: Version
    runtime: Version
    os: str
    full_support_driver: Version | None
    full_support_exact: bool
    minor_compat_floor: Version | None
    reason: str
    fix: str | None
    caveats: tuple[str, ...] = ()

    @property
    def runs(self) -> bool | None:
        """True if the runtime starts on this driver, False if not, None if unknown."""
        if self.status is RuntimeStatus.UNKNOWN:
            return None
        return self.status is not RuntimeStatus.UNSUPPORTED


def normalise_os(os: str) -> str:
    """Map ``"linux"``, ``"Linux"``, ``"win32"``, ``"windows"`` to ``"linux"``/``"windows"``.

    Raises:
        ValueError: for any other operating system (CUDA drivers exist only for these two).
    """
    lowered = os.strip().lower()
    if lowered.startswith("win"):
        return "windows"
    if lowered.startswith("linux"):
        return "linux"
    raise ValueError(f"no NVIDIA CUDA driver table for operating system {os!r}")


def _major_minor(version: Version) -> Version:
    return Version(f"{version.major}.{version.minor}")


def max_cuda_for_driver(driver: Version) -> Version | None:
    """The newest CUDA version a driver supports: what ``nvidia-smi`` prints as "CUDA Version".

    ``Version("525.60.13")`` → ``12.0``; Windows numbering works too (``566.36`` → ``12.7``).
    Returns ``None`` for drivers older than R410 or newer than the newest known branch.
    """
    table = driver_branch_table()
    if driver.major > table.last_known_driver_major:
        return None
    best = None
    for branch in table.branches:
        if branch.branch <= driver.major:
            best = branch
    return best.max_cuda if best is not None else None


def _branch_floor_for(runtime: Version) -> Version | None:
    """The first driver branch that reports at least ``runtime`` (e.g. 12.7 → 565)."""
    for branch in driver_branch_table().branches:
        if branch.max_cuda >= runtime:
            return Version(str(branch.branch))
    return None


def _full_support(runtime: Version, os: str) -> tuple[Version | None, bool]:
    wanted = _major_minor(runtime)
    for toolkit in cuda_driver_table().toolkits:
        if toolkit.ga and toolkit.cuda == wanted:
            exact = toolkit.linux if os == "linux" else toolkit.windows
            if exact is not None:
                return exact, True
            break
    if wanted > _newest_known():
        return None, False
    return _branch_floor_for(wanted), False


def _newest_known() -> Version:
    newest_toolkit = max(t.cuda for t in cuda_driver_table().toolkits)
    newest_branch = driver_branch_table().branches[-1].max_cuda
    return max(newest_toolkit, newest_branch)


def minimum_driver_for(runtime: Version, *, os: str = "linux") -> Version | None:
    """The lowest driver with full support for a CUDA runtime (NVIDIA's "toolkit driver").

    Uses the GA release of the runtime's major.minor (``12.4`` → ``550.54.14`` on Linux).
    Where NVIDIA no longer bundles a driver (13.x on Windows, 13.4 on Linux) or no toolkit
    exists (12.7) the first driver branch reporting that CUDA version is returned
    (``Version("615")``). ``None`` when the runtime is newer than the tables.
    """
    return _full_support(runtime, normalise_os(os))[0]


def minor_compat_floor(runtime: Version, *, os: str = "linux") -> Version | None:
    """The minor-version-compatibility floor of the runtime's CUDA major, or ``None``.

    ``None`` for CUDA 10 and older (no minor-version compatibility) and unknown majors.
    """
    system = normalise_os(os)
    for floor in cuda_driver_table().minor_version_compat:
        if floor.major == runtime.major:
            return floor.linux if system == "linux" else floor.windows
    return None


def _caveats() -> tuple[str, ...]:
    lines = []
    for item in cuda_driver_table().minor_version_compat_caveats:
        if item.error is not None and item.name is not None:
            lines.append(f"{item.caveat} ({item.name}, {item.error}: {item.text!r})")
        else:
            lines.append(item.caveat)
    return tuple(lines)


def driver_supports_runtime(
    driver: Version,
    runtime: Version,
    *,
    os: str = "linux",
    driver_cuda: Version | None = None,
) -> RuntimeSupport:
    """Judge whether ``driver`` runs applications built against CUDA ``runtime``.

    Args:
        driver: the installed driver, e.g. ``Version("525.60.13")``.
        runtime: the CUDA runtime the application ships, e.g. ``Version("12.4")``.
        os: ``"linux"`` (default) or ``"windows"``; their driver numbers differ.
        driver_cuda: the CUDA version the driver itself reports (NVML / nvidia-smi), if
            known. When it is at least ``runtime`` the verdict is FULL whatever the tables
            say, which keeps drivers newer than the tables judged correctly.

    Returns:
        FULL, MINOR_VERSION_COMPAT (runs, but PTX JIT and newer APIs fail: the caveats
        say how), UNSUPPORTED (the runtime cannot initialise) or UNKNOWN (the runtime is
        newer than gpudoctor's tables).
    """
    system = normalise_os(os)
    wanted = _major_minor(runtime)
    full, exact = _full_support(wanted, system)
    floor = minor_compat_floor(wanted, os=system)

    def verdict(
        status: RuntimeStatus, reason: str, fix: str | None, caveats: bool = False
    ) -> RuntimeSupport:
        return RuntimeSupport(
            status=status,
            driver=driver,
            runtime=wanted,
            os=system,
            full_support_driver=full,
            full_support_exact=exact,
            minor_compat_floor=floor,
            reason=reason,
            fix=fix,
            caveats=_caveats() if caveats else (),
        )

    if driver_cuda is not None and _major_minor(driver_cuda) >= wanted:
        return verdict(
            RuntimeStatus.FULL,
            f"Driver {driver} reports CUDA {driver_cuda}, which covers CUDA {wanted}.",
            None,
        )
    oldest = min(cuda_driver_table().toolkits, key=lambda t: (t.cuda, not t.ga))
    if wanted < oldest.cuda:
        oldest_driver = oldest.linux if system == "linux" else oldest.windows
        if oldest_driver is not None and driver >= oldest_driver:
            return verdict(
                RuntimeStatus.FULL,
                f"CUDA {wanted} is older than CUDA {oldest.cuda}, which driver {driver} "
                "already supports; newer drivers run older runtimes.",
                None,
            )
        return verdict(
            RuntimeStatus.UNKNOWN,
            f"CUDA {wanted} is older than gpudoctor's tables (they start at CUDA {oldest.cuda}).",
            None,
        )
    if full is None:
        table = cuda_driver_table().meta
        hint = ""
        if floor is not None and driver >= floor:
            hint = (
                f" Driver {driver} is at or above the CUDA {wanted.major}.x minor-version "
                f"compatibility floor {floor}, so it probably runs with limits."
            )
        return verdict(
            RuntimeStatus.UNKNOWN,
            f"CUDA {wanted} is newer than gpudoctor's tables (newest known CUDA "
            f"{_newest_known()}, table {table.name} {table.version}); the driver it needs "
            f"is not known.{hint}",
            "Upgrade gpudoctor for newer compatibility tables, or compare with the "
            "'CUDA Version' that nvidia-smi prints.",
        )
    branch_note = "" if exact else f" (branch R{full}; NVIDIA publishes no exact driver)"
    if driver >= full:
        return verdict(
            RuntimeStatus.FULL,
            f"Driver {driver} is at or above {full}{branch_note}, the driver with full "
            f"support for CUDA {wanted}.",
            None,
        )
    if floor is not None and driver >= floor:
        return verdict(
            RuntimeStatus.MINOR_VERSION_COMPAT,
            f"Driver {driver} is older than {full}{branch_note} (full support for CUDA "
            f"{wanted}) but at or above the CUDA {wanted.major}.x minor-version "
            f"compatibility floor {floor}: ordinary kernels run, but PTX JIT fails with "
            'cudaErrorUnsupportedPtxVersion (222, "the provided PTX was compiled with an '
            'unsupported toolchain.") and APIs newer than the driver fail with '
            "cudaErrorCallRequiresNewerDriver (36).",
            f"Upgrade the NVIDIA driver to {full} or newer for full CUDA {wanted} support.",
            caveats=True,
        )
    reported = max_cuda_for_driver(driver)
    supports = (
        f"supports at most CUDA {reported}" if reported is not None else "is not in the tables"
    )
    # 11.0's own toolkit driver (450.51.05) is below the 11.x family floor (450.80.02).
    lower = floor if floor is not None and floor < full else None
    needed = (
        f"at least {lower} (CUDA {wanted.major}.x minor-version compatibility), and "
        f"{full}{branch_note} for full support"
        if lower is not None
        else f"{full}{branch_note} or newer"
    )
    return verdict(
        RuntimeStatus.UNSUPPORTED,
        f"Driver {driver} {supports}; CUDA {wanted} needs {needed}. The runtime fails to "
        "initialise with "
        'cudaErrorInsufficientDriver (35, "CUDA driver version is insufficient for CUDA '
        'runtime version").',
        f"Upgrade the NVIDIA driver to {full} or newer"
        + (f" (at least {lower})" if lower is not None else "")
        + (
            f", or install a build made for CUDA {reported} or older"
            if reported is not None
            else ""
        )
        + "."
        + _forward_compat_hint(wanted, driver),
    )


def _forward_compat_hint(runtime: Version, driver: Version) -> str:
    if compat_package_status(runtime, driver) is not CompatPackageStatus.COMPATIBLE:
        return ""
    return (
        f" On datacenter GPUs the cuda-compat-{runtime.major}-{runtime.minor} package "
        "(forward compatibility) is an alternative to a driver upgrade."
    )
