"""The ``driver-runtime`` check: does the driver run every installed CUDA runtime?

The runtimes are the CUDA versions the installed frameworks were built for (torch,
TensorFlow, JAX, CuPy) and the NVIDIA runtime wheels (``nvidia-cuda-runtime-cu12``).
Each is judged by :func:`gpudoctor.compat.driver_supports_runtime`: full support passes,
minor-version compatibility warns (it runs, but PTX JIT and newer APIs fail), no support
fails, a runtime newer than the tables warns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.check.context import CheckContext
from gpudoctor.check.model import CheckResult, Status, worst
from gpudoctor.snapshot.model import VersionsInfo
from gpudoctor.version_numbers import Version, parse_version

if TYPE_CHECKING:
    from gpudoctor.compat import RuntimeSupport

CHECK_ID = "driver-runtime"
TITLE = "Driver supports the installed CUDA runtimes"

# Keyed by RuntimeStatus values (a str enum), so that compat loads only when a runtime is judged.
_STATUS: dict[str, Status] = {
    "full": Status.PASS,
    "minor_version_compat": Status.WARN,
    "unsupported": Status.FAIL,
    "unknown": Status.WARN,
}
_WORDS: dict[str, str] = {
    "full": "full support",
    "minor_version_compat": "minor-version compatibility only",
    "unsupported": "not supported",
    "unknown": "unknown",
}


@dataclass(frozen=True)
class InstalledRuntime:
    """One CUDA runtime version (major.minor) and the installed packages that ship it."""

    version: Version
    sources: tuple[str, ...]


def installed_runtimes(versions: VersionsInfo) -> list[InstalledRuntime]:
    """The CUDA runtimes installed packages need, one per major.minor, oldest first.

    A framework that names only a CUDA major (``jax-cuda12-plugin``, ``cupy-cuda12x``) is
    covered by a runtime wheel of that major when there is one, else judged as ``X.0``.
    """
    found: dict[tuple[int, int], list[str]] = {}
    majors_only: list[tuple[int, str]] = []
    for package in versions.cuda_packages:
        if package.component != "cuda-runtime":
            continue
        parsed = parse_version(package.version)
        if parsed is not None:
            found.setdefault((parsed.major, parsed.minor), []).append(
                f"{package.name} {package.version}"
            )
    for framework in versions.frameworks:
        if framework.is_cuda_build is False or not framework.cuda_version:
            continue
        parsed = parse_version(framework.cuda_version)
        if parsed is None:
            continue
        label = f"{framework.distribution or framework.name} {framework.version or ''}".strip()
        if "." not in framework.cuda_version:
            majors_only.append((parsed.major, label))
            continue
        found.setdefault((parsed.major, parsed.minor), []).append(label)
    for major, label in majors_only:
        if not any(key[0] == major for key in found):
            found.setdefault((major, 0), []).append(f"{label} (any CUDA {major}.x)")
    return [
        InstalledRuntime(Version(f"{major}.{minor}"), tuple(sources))
        for (major, minor), sources in sorted(found.items())
    ]


def check_driver_runtime(ctx: CheckContext) -> CheckResult:
    """The driver supports every installed CUDA runtime (fully, or with minor-version limits)."""
    runtimes = installed_runtimes(ctx.snapshot.versions)
    if not runtimes:
        return CheckResult(
            CHECK_ID,
            TITLE,
            Status.SKIP,
            "No CUDA runtime is installed (no CUDA build of torch, TensorFlow, JAX or CuPy, "
            "no nvidia-cuda-runtime wheel).",
        )
    driver = ctx.snapshot.driver
    driver_version = parse_version(driver.driver_version or "") if ctx.nvml_ok else None
    if driver_version is None:
        why = "NVML is not usable" if not ctx.nvml_ok else "NVML did not report it"
        return CheckResult(
            CHECK_ID,
            TITLE,
            Status.SKIP,
            f"The driver version is unknown ({why}); cannot judge CUDA "
            f"{', '.join(str(r.version) for r in runtimes)}.",
        )
    from gpudoctor.compat import driver_supports_runtime

    driver_cuda = parse_version(driver.cuda_driver_version or "")
    verdicts: list[tuple[InstalledRuntime, RuntimeSupport]] = [
        (
            rt,
            driver_supports_runtime(driver_version, rt.version, os=ctx.os, driver_cuda=driver_cuda),
        )
        for rt in runtimes
    ]
    details = [
        f"CUDA {rt.version} ({', '.join(rt.sources)}): {_WORDS[v.status]}" for rt, v in verdicts
    ]
    status = worst(_STATUS[v.status] for _, v in verdicts)
    if status is Status.PASS:
        listed = ", ".join(str(rt.version) for rt in runtimes)
        return CheckResult(
            CHECK_ID,
            TITLE,
            Status.PASS,
            f"Driver {driver_version} fully supports CUDA {listed}.",
            None,
            tuple(details),
        )
    bad = [(rt, v) for rt, v in verdicts if _STATUS[v.status] is status]
    reason = " ".join(f"CUDA {rt.version} ({', '.join(rt.sources)}): {v.reason}" for rt, v in bad)
    fixes = list(dict.fromkeys(v.fix for _, v in bad if v.fix))
    for _, v in bad:
        details.extend(f"caveat: {c}" for c in v.caveats if f"caveat: {c}" not in details)
    return CheckResult(CHECK_ID, TITLE, status, reason, " ".join(fixes) or None, tuple(details))
