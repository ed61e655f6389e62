"""Can a binary's compiled GPU architectures run on a GPU of a given compute capability?

The CUDA binary-compatibility rule, as torch_builds.md states it:

* SASS (cubin) ``sm_XY`` runs on a GPU of compute capability ``M.m`` when ``X == M`` and
  ``Y <= m`` (sm_80 runs on 8.6 and 8.9, sm_86 does not run on 8.0). Arch-specific
  ``sm_90a``/``sm_100a`` run only on exactly that capability; family-specific ``sm_100f``
  only within its major (10.0, 10.3). PyTorch's own exceptions (sm_80/sm_86 not on 8.7,
  sm_100 not on 10.1) come from ``torch_builds.yaml``.
* PTX ``compute_XY`` is JIT-compiled by the driver for any capability ``>= X.Y`` — slow
  on first start, and only if the driver is new enough for that PTX (else error 222).
* Otherwise kernels fail with cudaErrorNoKernelImageForDevice (209).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from gpudoctor.compat.driver import minimum_driver_for
from gpudoctor.compat.tables import torch_builds_table
from gpudoctor.version_numbers import Version

__all__ = [
    "ArchList",
    "ArchStatus",
    "ArchSupport",
    "ComputeCapability",
    "arch_supported",
    "parse_compute_capability",
]

_ARCH = re.compile(r"^(sm|compute)_(\d)(\d{1,2})([af]?)$")
_CC_DOTTED = re.compile(r"^\s*(?:sm_)?(\d{1,2})\.(\d)\s*$")
_CC_JOINED = re.compile(r"^\s*(?:sm_)?(\d{1,2})(\d)\s*$")


@dataclass(frozen=True, order=True)
class ComputeCapability:
    """A compute capability such as 8.6 (``major=8, minor=6``)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def sm(self) -> str:
        """The SASS name, ``"sm_86"``."""
        return f"sm_{self.major}{self.minor}"


def parse_compute_capability(text: str) -> ComputeCapability | None:
    """Parse ``"8.6"``, ``"86"`` or ``"sm_86"``; ``None`` when it is none of these."""
    match = _CC_DOTTED.match(text) or _CC_JOINED.match(text)
    if match is None:
        return None
    return ComputeCapability(int(match.group(1)), int(match.group(2)))


@dataclass(frozen=True)
class _Arch:
    token: str
    ptx: bool
    cc: ComputeCapability
    suffix: str  # "", "a" (arch-specific) or "f" (family-specific)


def _parse_arch(token: str) -> _Arch | None:
    # "sm_120" is 12.0: the last digit is the minor version.
    match = _ARCH.match(token.strip())
    if match is None:
        return None
    kind, first, rest, suffix = match.groups()
    digits = first + rest
    cc = ComputeCapability(int(digits[:-1]), int(digits[-1]))
    return _Arch(token=token.strip(), ptx=kind == "compute", cc=cc, suffix=suffix)


@dataclass(frozen=True)
class ArchList:
    """The GPU code compiled into a binary: SASS cubins and PTX.

    Attributes:
        sass: ``("sm_80", "sm_86", ...)``.
        ptx: ``("compute_90", ...)``.
        cuda: the CUDA toolkit that produced the PTX, when known; lets
            :func:`arch_supported` check that the driver can JIT it.
        uncertain: the list comes from an indicative source (see ``note``).
        note: where the list comes from or why it is uncertain.
    """

    sass: tuple[str, ...]
    ptx: tuple[str, ...] = ()
    cuda: Version | None = None
    uncertain: bool = False
    note: str | None = None

    @classmethod
    def from_strings(cls, items: str | Iterable[str], *, cuda: Version | None = None) -> ArchList:
        """Build from ``get_arch_list()`` output or the arch string of a binary.

        ``"sm_75 sm_80 compute_80"`` and ``["sm_75", "compute_80"]`` both work; tokens that
        are not architectures are ignored.
        """
        tokens = items.replace(",", " ").split() if isinstance(items, str) else list(items)
        sass: list[str] = []
        ptx: list[str] = []
        for token in tokens:
            arch = _parse_arch(token)
            if arch is not None:
                (ptx if arch.ptx else sass).append(arch.token)
        return cls(sass=tuple(sass), ptx=tuple(ptx), cuda=cuda)

    @property
    def all(self) -> tuple[str, ...]:
        """SASS then PTX entries, as ``get_arch_list()`` prints them."""
        return self.sass + self.ptx


class ArchStatus(str, Enum):
    """Whether a GPU can run a binary's compiled code."""

    NATIVE = "native"
    PTX_JIT = "ptx_jit"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class ArchSupport:
    """The verdict of :func:`arch_supported`.

    Attributes:
        status: NATIVE (a cubin runs as is), PTX_JIT (the driver compiles PTX at first
            start), UNSUPPORTED (no kernel image for this GPU).
        compute_capability: the GPU's capability, ``"12.0"``.
        via: the compiled entry that makes it work (``"sm_80"``, ``"compute_90"``), if any.
        reason: one or two sentences for a human.
        fix: what to do, or ``None``.
    """

    status: ArchStatus
    compute_capability: str
    via: str | None
    reason: str
    fix: str | None

    @property
    def runs(self) -> bool:
        """True unless the status is UNSUPPORTED."""
        return self.status is not ArchStatus.UNSUPPORTED


def _excluded(sass: str, cc: ComputeCapability) -> bool:
    for exclusion in torch_builds_table().sass_exclusions:
        if exclusion.sass == sass and str(cc) in exclusion.not_on:
            return True
    return False


def _sass_runs(arch: _Arch, cc: ComputeCapability) -> bool:
    if arch.suffix == "a":
        return arch.cc == cc
    if arch.cc.major != cc.major or cc.minor < arch.cc.minor:
        return False
    return arch.suffix == "f" or not _excluded(arch.token, cc)


def _ptx_runs(arch: _Arch, cc: ComputeCapability) -> bool:
    if arch.suffix == "a":
        return arch.cc == cc
    if arch.suffix == "f":
        return arch.cc.major == cc.major and cc.minor >= arch.cc.minor
    return cc >= arch.cc


def arch_supported(
    compute_capability: str, archs: ArchList, *, driver: Version | None = None
) -> ArchSupport:
    """Judge whether a GPU of ``compute_capability`` can run code compiled for ``archs``.

    Args:
        compute_capability: ``"8.6"`` (also ``"86"`` or ``"sm_86"``).
        archs: the binary's compiled architectures.
        driver: the installed driver, if known. When only PTX would work and ``archs.cuda``
            is known, a driver older than that CUDA's toolkit driver cannot JIT it
            (cudaErrorUnsupportedPtxVersion, 222) and the verdict is UNSUPPORTED.

    Raises:
        ValueError: ``compute_capability`` is not a compute capability.
    """
    cc = parse_compute_capability(compute_capability)
    if cc is None:
        raise ValueError(f"not a compute capability: {compute_capability!r}")
    parsed = [a for a in (_parse_arch(t) for t in archs.all) if a is not None]
    compiled = " ".join(archs.all) or "none"
    # The closest cubin (highest compiled capability that runs) is the one the driver picks.
    for arch in sorted(parsed, key=lambda a: a.cc, reverse=True):
        if not arch.ptx and _sass_runs(arch, cc):
            return ArchSupport(
                ArchStatus.NATIVE,
                str(cc),
                arch.token,
                f"The GPU ({cc.sm}) runs the compiled {arch.token} kernels natively.",
                None,
            )
    no_image = (
        f"Compute capability {cc} ({cc.sm}) is not covered by the compiled architectures "
        f'({compiled}); kernels fail with cudaErrorNoKernelImageForDevice (209, "no kernel '
        'image is available for execution on the device").'
    )
    fix = (
        f"Install a build compiled for {cc.sm} (or with PTX for compute capability {cc} or "
        "lower), or rebuild with TORCH_CUDA_ARCH_LIST / -gencode including "
        f"{cc.major}.{cc.minor}."
    )
    for arch in sorted(
        (a for a in parsed if a.ptx and _ptx_runs(a, cc)), key=lambda a: a.cc, reverse=True
    ):
        if driver is not None and archs.cuda is not None:
            needed = minimum_driver_for(archs.cuda)
            if needed is not None and driver < needed:
                return ArchSupport(
                    ArchStatus.UNSUPPORTED,
                    str(cc),
                    arch.token,
                    f"No cubin for {cc.sm}; only {arch.token} PTX from CUDA {archs.cuda} "
                    f"could be JIT-compiled, but driver {driver} is older than {needed} and "
                    'refuses it with cudaErrorUnsupportedPtxVersion (222, "the provided PTX '
                    'was compiled with an unsupported toolchain.").',
                    f"Upgrade the NVIDIA driver to {needed} or newer, or install a build "
                    f"with SASS for {cc.sm}.",
                )
        return ArchSupport(
            ArchStatus.PTX_JIT,
            str(cc),
            arch.token,
            f"No cubin for {cc.sm}; the driver JIT-compiles the {arch.token} PTX, so it "
            "works, but the first start is slow while the driver compiles.",
            f"For native kernels install a build compiled for {cc.sm}.",
        )
    return ArchSupport(ArchStatus.UNSUPPORTED, str(cc), None, no_image, fix)
