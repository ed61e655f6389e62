"""Compatibility verdicts as flat facts for rule conditions (``driver_too_old == True``).

:func:`compat_facts` reads raw facts gathered from the snapshot and returns derived ones.
Every input may be missing or ``None``; every output is ``None`` when it cannot be decided,
so a rule condition on an unknown fact simply does not hold. Nothing here raises on bad
input: unparsable values count as missing.

Inputs (the contract with the snapshot → facts layer):
    ``driver_version`` ("525.60.13"), ``driver_cuda_version`` ("12.0", the newest CUDA the
    driver supports), ``torch_version`` ("2.4.1+cu121"), ``torch_cuda_version`` ("12.1"),
    ``cuda_runtime_versions`` (list of str, e.g. runtime wheel versions "12.1.105"),
    ``gpu_names`` (list of str), ``gpu_compute_capabilities`` (list of str, "8.6"),
    optionally ``os`` ("linux" by default, or "windows") and ``torch_arch_list`` (the
    architectures read from the installed torch binary, str or list of str, e.g.
    "sm_75 sm_80 compute_80"; preferred over the table's list for official wheels).

Outputs: declared in :data:`FACTS` (``gpudoctor rules facts`` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.compat.archs import (
    ArchList,
    ArchStatus,
    arch_supported,
    parse_compute_capability,
)
from gpudoctor.compat.driver import (
    RuntimeStatus,
    driver_supports_runtime,
    max_cuda_for_driver,
    minimum_driver_for,
    normalise_os,
)
from gpudoctor.compat.forward import forward_compat_possible
from gpudoctor.compat.frameworks import (
    flavour_cuda_version,
    flavour_for_cuda,
    torch_compiled_archs,
    torch_cuda_flavour,
)
from gpudoctor.compat.gpus import compute_capability_for_gpu, is_datacenter_gpu
from gpudoctor.facts.spec import FactSpec
from gpudoctor.version_numbers import Version, parse_version

__all__ = ["COMPAT_FACT_NAMES", "FACTS", "compat_facts"]

SOURCE = "compat verdict"

FACTS: tuple[FactSpec, ...] = (
    FactSpec(
        "driver_supports_torch_cuda", "bool|None", "-", SOURCE,
        "torch's CUDA runtime starts on this driver (full or minor-version compatibility)",
    ),
    FactSpec(
        "driver_torch_cuda_status", "str|None", "-", SOURCE,
        'how the driver runs torch\'s CUDA: "full", "minor_version_compat", "unsupported" or '
        '"unknown"',
    ),
    FactSpec(
        "driver_min_for_torch_cuda", "str|None", "-", SOURCE,
        "the driver version with full support for torch's CUDA",
    ),
    FactSpec(
        "driver_too_old", "bool|None", "-", SOURCE,
        "some installed runtime (torch's or cuda_runtime_versions) cannot start on this driver",
    ),
    FactSpec(
        "driver_runtime_minor_compat", "bool|None", "-", SOURCE,
        "some runtime runs only through minor-version compatibility (PTX JIT and newer APIs "
        "fail: errors 222 / 36)",
    ),
    FactSpec(
        "driver_max_cuda_version", "str|None", "-", SOURCE,
        "the newest CUDA the driver supports (given, or derived from the driver branch)",
    ),
    FactSpec(
        "torch_cuda_flavour", "str|None", "-", SOURCE,
        'the CUDA flavour of the torch install ("cu121")',
    ),
    FactSpec(
        "torch_compiled_archs", "list[str]|None", "-", SOURCE,
        'the architectures torch has kernels for ("sm_50" ... "compute_90")',
    ),
    FactSpec(
        "torch_arch_supported", "bool|None", "-", SOURCE,
        "every GPU can run torch's kernels (natively or by PTX JIT)",
    ),
    FactSpec(
        "torch_arch_needs_ptx_jit", "bool|None", "-", SOURCE,
        "some GPU runs torch only through PTX JIT",
    ),
    FactSpec(
        "unsupported_gpu_archs", "list[str]|None", "-", SOURCE,
        'the GPUs\' architectures torch has no kernels for ("sm_120")',
    ),
    FactSpec(
        "gpu_forward_compat_possible", "bool|None", "-", SOURCE,
        "every GPU supports the cuda-compat forward-compatibility package",
    ),
    FactSpec(
        "gpu_is_datacenter", "bool|None", "-", SOURCE,
        "every GPU is a datacenter part",
    ),
)  # fmt: skip
"""Every fact :func:`compat_facts` returns (all keys are always present; unknown is ``None``)."""

COMPAT_FACT_NAMES: tuple[str, ...] = tuple(spec.name for spec in FACTS)
"""Their names, in the same order."""


def _as_text(value: object) -> str | None:
    # Log captures may arrive typed (a Version) rather than as text.
    if isinstance(value, Version):
        value = str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _text(facts: Mapping[str, object], key: str) -> str | None:
    return _as_text(facts.get(key))


def _texts(facts: Mapping[str, object], key: str) -> list[str]:
    value = facts.get(key)
    if not isinstance(value, (list, tuple)):
        return []
    return [text for text in map(_as_text, value) if text is not None]


def _version(text: str | None) -> Version | None:
    return parse_version(text) if text is not None else None


def _major_minor(version: Version) -> Version:
    return Version(f"{version.major}.{version.minor}")


def _os(facts: Mapping[str, object]) -> str:
    try:
        return normalise_os(_text(facts, "os") or "linux")
    except ValueError:
        return "linux"


def _all_or_any_false(values: list[bool | None]) -> bool | None:
    """False if any is False, True if all are True, else None (also for no values)."""
    if not values:
        return None
    if any(v is False for v in values):
        return False
    return True if all(v is True for v in values) else None


class _DriverJudge:
    """Judges runtimes against the driver, from its version or only its CUDA version."""

    def __init__(self, driver: Version | None, driver_cuda: Version | None, os: str) -> None:
        self.driver = driver
        self.driver_cuda = driver_cuda
        self.os = os

    def __call__(self, runtime: Version) -> RuntimeStatus | None:
        if self.driver is not None:
            return driver_supports_runtime(
                self.driver, runtime, os=self.os, driver_cuda=self.driver_cuda
            ).status
        if self.driver_cuda is None:
            return None
        if _major_minor(self.driver_cuda) >= _major_minor(runtime):
            return RuntimeStatus.FULL
        # Only the CUDA version is known: the driver is at least the first one reporting
        # it, a lower bound. Within one CUDA major that bound cannot prove "unsupported".
        lower_bound = minimum_driver_for(self.driver_cuda, os=self.os)
        if lower_bound is None:
            return RuntimeStatus.UNKNOWN
        status = driver_supports_runtime(lower_bound, runtime, os=self.os).status
        if status is RuntimeStatus.UNSUPPORTED and runtime.major == self.driver_cuda.major:
            return RuntimeStatus.UNKNOWN
        return status


def _torch_flavours(
    torch_version: str | None, torch_cuda: Version | None
) -> tuple[str | None, str | None]:
    """(the CUDA flavour of the install, the official-wheel flavour whose arch list applies)."""
    derived = flavour_for_cuda(torch_cuda) if torch_cuda is not None else None
    if torch_version is None:
        return derived, None
    official = torch_cuda_flavour(torch_version)
    if official is not None and torch_cuda is not None:
        official_cuda = flavour_cuda_version(official)
        if official_cuda is None or official_cuda != _major_minor(torch_cuda):
            # Not the official wheel the version suggests (source/conda build): its
            # compiled architectures are unknown.
            official = None
    return official or derived, official


def _torch_archs(
    facts: Mapping[str, object],
    torch_version: str | None,
    official: str | None,
    torch_cuda: Version | None,
) -> ArchList | None:
    """The list read from the installed binary if given, else the official wheel's."""
    given = facts.get("torch_arch_list")
    if isinstance(given, str):
        read = ArchList.from_strings(given, cuda=torch_cuda)
    else:
        read = ArchList.from_strings(_texts(facts, "torch_arch_list"), cuda=torch_cuda)
    if read.all:
        return read
    if torch_version is None or official is None:
        return None
    return torch_compiled_archs(torch_version, official)


def _gpu_capabilities(facts: Mapping[str, object]) -> list[str | None]:
    given = _texts(facts, "gpu_compute_capabilities")
    if given:
        parsed = [parse_compute_capability(cc) for cc in given]
        return [str(cc) if cc is not None else None for cc in parsed]
    return [compute_capability_for_gpu(name) for name in _texts(facts, "gpu_names")]


def compat_facts(facts: Mapping[str, object]) -> dict[str, object]:
    """Derive compatibility verdict facts from raw facts.

    Returns a dict with every name of :data:`COMPAT_FACT_NAMES`:

    * ``driver_supports_torch_cuda``: torch's CUDA runtime starts on this driver (full or
      minor-version compatibility).
    * ``driver_torch_cuda_status``: ``"full"``, ``"minor_version_compat"``,
      ``"unsupported"`` or ``"unknown"``.
    * ``driver_min_for_torch_cuda``: the driver with full support for torch's CUDA.
    * ``driver_too_old``: some installed runtime (torch's or ``cuda_runtime_versions``)
      cannot start on this driver.
    * ``driver_runtime_minor_compat``: some runtime runs only through minor-version
      compatibility (PTX JIT and newer APIs fail: errors 222 / 36).
    * ``driver_max_cuda_version``: the newest CUDA the driver supports (given or derived
      from the driver branch).
    * ``torch_cuda_flavour``: ``"cu121"``.
    * ``torch_compiled_archs``: the official wheel's ``["sm_50", ..., "compute_90"]``.
    * ``torch_arch_supported``: every GPU can run torch's kernels (natively or by JIT).
    * ``torch_arch_needs_ptx_jit``: some GPU runs torch only through PTX JIT.
    * ``unsupported_gpu_archs``: ``["sm_120"]`` for GPUs torch has no kernels for.
    * ``gpu_forward_compat_possible``: every GPU supports cuda-compat forward compat.
    * ``gpu_is_datacenter``: every GPU is a datacenter part.

    Unknown values are ``None``.
    """
    out: dict[str, object] = dict.fromkeys(COMPAT_FACT_NAMES)
    os = _os(facts)
    driver = _version(_text(facts, "driver_version"))
    driver_cuda = _version(_text(facts, "driver_cuda_version"))
    max_cuda = driver_cuda or (max_cuda_for_driver(driver) if driver is not None else None)
    out["driver_max_cuda_version"] = str(max_cuda) if max_cuda is not None else None

    torch_version = _text(facts, "torch_version")
    torch_cuda = _version(_text(facts, "torch_cuda_version"))
    flavour, official = _torch_flavours(torch_version, torch_cuda)
    if torch_cuda is None and flavour is not None:
        torch_cuda = flavour_cuda_version(flavour)
    out["torch_cuda_flavour"] = flavour

    judge = _DriverJudge(driver, driver_cuda, os)
    if torch_cuda is not None:
        minimum = minimum_driver_for(torch_cuda, os=os)
        out["driver_min_for_torch_cuda"] = str(minimum) if minimum is not None else None
        status = judge(torch_cuda)
        if status is not None:
            out["driver_torch_cuda_status"] = status.value
            out["driver_supports_torch_cuda"] = {
                RuntimeStatus.FULL: True,
                RuntimeStatus.MINOR_VERSION_COMPAT: True,
                RuntimeStatus.UNSUPPORTED: False,
                RuntimeStatus.UNKNOWN: None,
            }[status]

    runtimes = [torch_cuda] if torch_cuda is not None else []
    runtimes += [v for v in map(parse_version, _texts(facts, "cuda_runtime_versions")) if v]
    statuses = [judge(runtime) for runtime in runtimes]
    if statuses and None not in statuses:
        if RuntimeStatus.UNSUPPORTED in statuses:
            out["driver_too_old"] = True
        elif RuntimeStatus.UNKNOWN not in statuses:
            out["driver_too_old"] = False
        out["driver_runtime_minor_compat"] = RuntimeStatus.MINOR_VERSION_COMPAT in statuses

    archs = _torch_archs(facts, torch_version, official, torch_cuda)
    out["torch_compiled_archs"] = list(archs.all) if archs is not None else None
    capabilities = _gpu_capabilities(facts)
    known = [cc for cc in capabilities if cc is not None]
    if archs is not None and known:
        results = [arch_supported(cc, archs, driver=driver) for cc in known]
        unsupported = sorted(
            {
                f"sm_{r.compute_capability.replace('.', '')}"
                for r in results
                if r.status is ArchStatus.UNSUPPORTED
            }
        )
        out["unsupported_gpu_archs"] = unsupported
        if unsupported:
            out["torch_arch_supported"] = False
        elif len(known) == len(capabilities):
            out["torch_arch_supported"] = True
        out["torch_arch_needs_ptx_jit"] = any(r.status is ArchStatus.PTX_JIT for r in results)

    names = _texts(facts, "gpu_names")
    out["gpu_forward_compat_possible"] = _all_or_any_false(
        [forward_compat_possible(n) for n in names]
    )
    out["gpu_is_datacenter"] = _all_or_any_false([is_datacenter_gpu(n) for n in names])
    return out
